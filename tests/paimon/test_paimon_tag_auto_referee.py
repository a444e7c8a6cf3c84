"""Apache Paimon 1.4's Java engine (``paimon-bundle``, ``tools/paimon_java.py``) as the referee of
icefloe's automatic tags and of its incremental reads between tags: Paimon reads the tags icefloe
made, reads the same rows between them (``incremental-between``, ``incremental-to-auto-tag``), and its
own commit goes on tagging from where icefloe's tags left off; and of ``CALL sys.copy``."""
from __future__ import annotations

import datetime as dt
import json
import os

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog


def _utc_ms(text):
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


@pytest.mark.long
def test_paimon_java_reads_and_continues_icefloes_automatic_tags(paimon_bundle, paimon_spark):
    pj = paimon_bundle
    ice = Catalog(pj.warehouse, "paimon", paimon_spark)
    t = ice.create_table("db.auto_tags", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "write-only": "true"})
    writes = [[(1, "a"), (2, "b"), (3, "c")], [(1, "a2"), (4, "d")], [(1, "a")], [(2, "b2"), (5, "e")]]
    times = ["2024-12-01 10:00", "2024-12-02 10:00", "2024-12-03 09:00", "2024-12-05 10:00"]
    for i, (rows, when) in enumerate(zip(writes, times), start=1):
        t.append(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "v": [r[1] for r in rows]}))
        sid = t.refresh().current_snapshot().id
        path = os.path.join(t.location, "snapshot", f"snapshot-{sid}")
        doc = json.load(open(path))
        doc["timeMillis"] = _utc_ms(when)
        json.dump(doc, open(path, "w"))
    with t.update_schema() as u:
        u.set_option("write-only", "false")
        u.set_option("tag.automatic-creation", "process-time")
        u.set_option("sink.process-time-zone", "UTC")
        u.set_option("tag.default-time-retained", "30 d")
    t.refresh().trigger_tag_automatic_creation()
    tags = {n: g.snapshot.id for n, g in t.refresh().tags().items()}
    assert tags == {"2024-11-30": 1, "2024-12-01": 2, "2024-12-02": 3, "2024-12-04": 4}
    assert sorted(r[0] for r in pj.rows("db.auto_tags$tags", columns=("tag_name",))) == sorted(tags)

    for start, end in (("2024-11-30", "2024-12-02"), ("2024-12-01", "2024-12-04"), ("2024-11-30", "2024-12-04")):
        java = sorted(pj.rows("db.auto_tags", {"incremental-between": f"{start},{end}"}))
        ours = sorted(tuple(r) for r in t.diff_between_tags(start, end).collect())
        assert ours == java, (start, end)
    java = sorted(pj.rows("db.auto_tags", {"incremental-to-auto-tag": "2024-12-04"}))
    assert sorted(tuple(r) for r in t.diff_to_auto_tag("2024-12-04").collect()) == java == [(2, "b2"), (5, "e")]

    # Paimon's own commit now carries on from icefloe's newest automatic tag: the tag of yesterday (UTC)
    assert pj.write("db.auto_tags", [(9, "z")]) >= 5
    yesterday = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).strftime("%Y-%m-%d")
    after = {n: g.snapshot.id for n, g in t.refresh().tags().items()}
    assert after == {**tags, yesterday: 5}


@pytest.mark.long
def test_paimon_java_reads_a_copy(paimon_bundle, paimon_spark):
    """``CALL sys.copy`` of a partitioned primary-key table: Paimon reads the copy's rows, as the
    source's, partition by partition (the copied files keep their sequence numbers)."""
    pj = paimon_bundle
    ice = Catalog(pj.warehouse, "paimon", paimon_spark)
    src = ice.create_table("db.copy_src", "id bigint not null, v string, dt string not null", partitioned_by=["dt"],
                           properties={"primary-key": "dt,id", "bucket": "2"})
    for rows in ([(1, "a", "d1"), (2, "b", "d1"), (3, "c", "d2")], [(1, "a2", "d1"), (4, "d", "d2")]):
        src.append(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "v": [r[1] for r in rows],
                             "dt": [r[2] for r in rows]}))
    ice.sql("CALL sys.copy(source_table => 'db.copy_src', target_table => 'db.copy_dst')")
    assert sorted(pj.rows("db.copy_dst")) == sorted(pj.rows("db.copy_src")) == \
        [(1, "a2", "d1"), (2, "b", "d1"), (3, "c", "d2"), (4, "d", "d2")]
    pj.write("db.copy_dst", [(5, "e", "d2")])        # and writes on after it
    ours = sorted(tuple(r.values()) for r in ice.load_table("db.copy_dst").to_arrow().to_pylist())
    assert ours == [(1, "a2", "d1"), (2, "b", "d1"), (3, "c", "d2"), (4, "d", "d2"), (5, "e", "d2")]
