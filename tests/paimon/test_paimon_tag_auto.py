"""Paimon's automatic tags (manage-tags: tag.automatic-creation, tag.creation-period,
tag.creation-delay, tag.period-formatter, tag.num-retained-max, tag.default-time-retained,
tag.automatic-completion, batch tags) made at commit and by trigger_tag_automatic_creation, and
tag expiry by retention time at commit. The snapshots' commit times are set in their files to
known instants, as a writer at that time would have written them."""
import datetime as dt
import json
import os

import pyarrow as pa
import pytest

from icefloe.errors import SchemaError
from icefloe.paimon.tag_period import auto_tag_options, period_handler


def _rows(i):
    return pa.table({"id": pa.array([i], pa.int64()), "v": [f"v{i}"]})


def _utc_ms(text):
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


def _set_snapshot(t, sid, **fields):
    path = os.path.join(t.location, "snapshot", f"snapshot-{sid}")
    doc = json.load(open(path))
    doc.update(fields)
    json.dump(doc, open(path, "w"))


def _tags(t):
    return {name: tag.snapshot.id for name, tag in t.refresh().tags().items()}


def _table_with_history(cat, times, **props):
    """A table whose snapshots 1..n were committed at ``times`` (UTC), then given ``props``."""
    t = cat.create_table("db.t", "id bigint, v string")
    for i, when in enumerate(times, start=1):
        t.append(_rows(i))
        _set_snapshot(t, i, timeMillis=_utc_ms(when))
    with t.update_schema() as u:
        for k, v in props.items():
            u.set_option(k, v)
    return t.refresh()


DAYS = ["2024-12-01 10:00", "2024-12-02 10:00", "2024-12-02 15:00", "2024-12-04 10:00"]
UTC = {"tag.automatic-creation": "process-time", "sink.process-time-zone": "UTC"}


def test_process_time_daily_tags_as_paimon_names_and_places_them(paimon_catalog):
    t = _table_with_history(paimon_catalog, DAYS, **UTC)
    assert _tags(t) == {}           # setting the option commits nothing, so makes no tag
    t.trigger_tag_automatic_creation()
    # the first snapshot closes the day before it; then a tag each time a snapshot passes the next
    # period's end: 12-02 10:00 closes 12-01; 12-02 15:00 closes nothing new; 12-04 closes 12-03
    assert _tags(t) == {"2024-11-30": 1, "2024-12-01": 2, "2024-12-03": 4}
    tag = t.tag("2024-12-01")
    assert tag.create_time is None and tag.time_retained is None      # no tag.default-time-retained
    # a commit now makes the tag of yesterday (UTC) on its own snapshot
    t.append(_rows(5))
    yesterday = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).strftime("%Y-%m-%d")
    assert _tags(t)[yesterday] == 5
    # the next commit today closes no new day
    t.append(_rows(6))
    assert len(_tags(t)) == 4


def test_completion_delay_retention_and_default_time_retained(paimon_catalog):
    t = _table_with_history(paimon_catalog, DAYS, **UTC, **{"tag.automatic-completion": "true",
                                                           "tag.num-retained-max": "2",
                                                           "tag.default-time-retained": "1 d"})
    t.create_tag("manual", 1)           # not an automatic tag: never counted nor deleted by retention
    t.trigger_tag_automatic_creation()
    # completion: 12-04 takes the period after the last tag (12-02), not the one it closes (12-03);
    # retention keeps the two newest automatic tags
    assert _tags(t) == {"2024-12-01": 2, "2024-12-02": 4, "manual": 1}
    auto = t.tag("2024-12-02")
    assert auto.time_retained == dt.timedelta(days=1) and auto.create_time is not None
    raw = json.load(open(os.path.join(t.location, "tag", "tag-2024-12-02")))
    assert raw["tagTimeRetained"] == 86400.0 and raw["id"] == 4
    # tag.default-time-retained is also what a tag made by hand keeps
    assert t.create_tag("by-hand").time_retained == dt.timedelta(days=1)


def test_creation_delay_holds_a_tag_back_until_the_period_plus_delay(paimon_catalog):
    t = _table_with_history(paimon_catalog, ["2024-12-01 10:00", "2024-12-02 01:00", "2024-12-02 03:00"],
                            **UTC, **{"tag.creation-delay": "2 h"})
    t.trigger_tag_automatic_creation()
    # 12-02 01:00 minus 2 h is still 12-01: only 12-02 03:00 closes 12-01
    assert _tags(t) == {"2024-11-30": 1, "2024-12-01": 3}


@pytest.mark.parametrize("props, names", [
    ({"tag.creation-period": "hourly"}, {"2024-12-01 09": 1, "2024-12-02 09": 2, "2024-12-02 14": 3}),
    ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"},
     {"20241201 09": 1, "20241202 09": 2, "20241202 14": 3}),
    ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"},
     {"2024120109": 1, "2024120209": 2, "2024120214": 3}),
    ({"tag.creation-period": "daily", "tag.period-formatter": "without_dashes"}, {"20241130": 1, "20241201": 2}),
    ({"tag.creation-period": "two-hours"}, {"2024-12-01 08": 1, "2024-12-02 08": 2, "2024-12-02 12": 3}),
    ({"tag.creation-period-duration": "30 min"}, {"202412010930": 1, "202412020930": 2, "202412021430": 3}),
])
def test_periods_and_formatters(paimon_catalog, props, names):
    t = _table_with_history(paimon_catalog, DAYS[:3], **UTC, **props)
    t.trigger_tag_automatic_creation()
    assert _tags(t) == names


def test_watermark_tags_come_from_the_snapshots_watermarks(paimon_catalog):
    t = _table_with_history(paimon_catalog, DAYS[:2], **{"tag.automatic-creation": "watermark"})
    t.trigger_tag_automatic_creation()
    assert _tags(t) == {}           # icefloe's batch snapshots carry no watermark: no tag, as in Paimon
    _set_snapshot(t, 1, watermark=_utc_ms("2024-06-01 12:00"))
    _set_snapshot(t, 2, watermark=_utc_ms("2024-06-03 00:00"))
    t.trigger_tag_automatic_creation()
    assert _tags(t) == {"2024-05-31": 1, "2024-06-02": 2}


def test_batch_tags_are_made_by_writes_and_replaced(paimon_catalog):
    t = paimon_catalog.create_table("db.b", "id bigint, v string",
                                    properties={"tag.automatic-creation": "batch", "tag.num-retained-max": "2"})
    t.append(_rows(1))
    today = dt.datetime.fromtimestamp(t.current_snapshot().time_millis / 1000).strftime("%Y-%m-%d")
    assert _tags(t) == {f"batch-write-{today}": 1}
    t.trigger_tag_automatic_creation()              # a trigger is no batch: nothing new
    assert _tags(t) == {f"batch-write-{today}": 1}
    t.create_tag("old", 1)
    t.append(_rows(2))                              # same day: the tag moves to the new snapshot
    assert _tags(t) == {f"batch-write-{today}": 2, "old": 1}
    with t.update_schema() as u:
        u.set_option("tag.batch.customized-name", "nightly")
    t.append(_rows(3))
    # beyond tag.num-retained-max (any tag counts in batch mode) the oldest by snapshot goes
    assert _tags(t) == {f"batch-write-{today}": 2, "nightly": 3}


def test_tags_past_their_retention_expire_at_commit(paimon_catalog):
    t = paimon_catalog.create_table("db.e", "id bigint, v string")
    t.append(_rows(1))
    t.create_tag("short", time_retained=dt.timedelta(hours=1))
    t.create_tag("long", time_retained=dt.timedelta(days=30))
    t.create_tag("forever")
    path = os.path.join(t.location, "tag", "tag-short")
    doc = json.load(open(path))
    doc["tagCreateTime"] = [2020, 1, 1, 0, 0]
    json.dump(doc, open(path, "w"))
    t.append(_rows(2))
    assert set(_tags(t)) == {"long", "forever"}
    # tag.time-expire-enabled = false keeps them
    t.create_tag("short2", time_retained=dt.timedelta(hours=1))
    path = os.path.join(t.location, "tag", "tag-short2")
    doc = json.load(open(path))
    doc["tagCreateTime"] = [2020, 1, 1, 0, 0]
    json.dump(doc, open(path, "w"))
    with t.update_schema() as u:
        u.set_option("tag.time-expire-enabled", "false")
    t.append(_rows(3))
    assert set(_tags(t)) == {"long", "forever", "short2"}


@pytest.mark.parametrize("props, msg", [
    ({"tag.creation-period": "weekly"}, "tag.creation-period.*daily, hourly, two-hours"),
    ({"tag.period-formatter": "slashes"}, "tag.period-formatter"),
    ({"tag.creation-period-duration": "soon"}, "tag.creation-period-duration"),
    ({"tag.num-retained-max": "many"}, "tag.num-retained-max.*integer"),
    ({"tag.default-time-retained": "long"}, "tag.default-time-retained"),
    ({"sink.process-time-zone": "Mars/Olympus"}, "sink.process-time-zone.*time zone"),
    ({"tag.create-success-file": "true"}, "tag.create-success-file.*not honoured"),
])
def test_bad_tag_options_are_refused_and_the_schema_stays(paimon_catalog, props, msg):
    t = paimon_catalog.create_table("db.o", "id bigint")
    schemas = sorted(os.listdir(os.path.join(t.location, "schema")))
    with pytest.raises(SchemaError, match=msg):
        with t.update_schema() as u:
            for k, v in props.items():
                u.set_option(k, v)
    assert sorted(os.listdir(os.path.join(t.location, "schema"))) == schemas


def test_period_handler_names_round_trip_and_judge_automatic_tags():
    daily = period_handler({})
    assert daily.tag_to_time("2024-12-04") == dt.datetime(2024, 12, 4)
    assert daily.tag_to_time("2024-12-04 10") == dt.datetime(2024, 12, 4)   # Paimon reads the part before a space
    assert not daily.is_auto_tag("2024-13-01") and not daily.is_auto_tag("tag1") and not daily.is_auto_tag("2024-1-01")
    hourly = period_handler({"tag.creation-period": "hourly"})
    assert hourly.time_to_tag(hourly.previous_tag_time(dt.datetime(2024, 12, 4, 10, 59))) == "2024-12-04 09"
    assert not hourly.is_auto_tag("2024-12-04")
    assert auto_tag_options({}).mode == "none"
