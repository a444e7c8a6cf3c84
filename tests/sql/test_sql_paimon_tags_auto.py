"""Paimon's automatic tags and the incremental queries between tags in SQL (manage-tags,
procedures, sql-query): ``tag.automatic-creation`` at INSERT, ``CALL sys.trigger_tag_automatic_creation``,
``paimon_incremental_query('t', 'tag1', 'tag2')`` and ``paimon_incremental_to_auto_tag``."""
import datetime as dt
import json
import os

import pytest

from icefloe.sql.errors import SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _tags(pcat, table):
    return dict(_rows(pcat.sql(f"SELECT tag_name, snapshot_id FROM default.`{table}$tags`")))


def test_insert_makes_the_hourly_tag_and_the_trigger_procedure_runs(pcat):
    pcat.sql("CREATE TABLE default.h (id bigint, v string) TBLPROPERTIES ('tag.automatic-creation' = 'process-time', "
             "'tag.creation-period' = 'hourly', 'sink.process-time-zone' = 'UTC', 'tag.num-retained-max' = '5')")
    pcat.sql("INSERT INTO default.h VALUES (1, 'a')")
    now = dt.datetime.now(dt.timezone.utc).replace(minute=0, second=0, microsecond=0)
    assert _tags(pcat, "h") == {(now - dt.timedelta(hours=1)).strftime("%Y-%m-%d %H"): 1}
    assert _rows(pcat.sql("CALL sys.trigger_tag_automatic_creation(table => 'default.h')")) == [(True,)]
    assert len(_tags(pcat, "h")) == 1
    with pytest.raises(SqlError, match="tag.creation-period.*daily, hourly, two-hours"):
        pcat.sql("ALTER TABLE default.h SET TBLPROPERTIES ('tag.creation-period' = 'weekly')")
    assert pcat.load_table("default.h").options["tag.creation-period"] == "hourly"


def _backdate(pcat, table, times):
    t = pcat.load_table(f"default.{table}")
    for sid, when in times.items():
        path = os.path.join(t.location, "snapshot", f"snapshot-{sid}")
        doc = json.load(open(path))
        doc["timeMillis"] = int(dt.datetime.fromisoformat(when).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
        json.dump(doc, open(path, "w"))


def test_incremental_between_tags_and_to_auto_tag(pcat):
    # a primary-key table: the rows whose key is new or whose value changed between the tags
    pcat.sql("CREATE TABLE default.k (id bigint, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'a2'), (4, 'd')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'a')")
    pcat.sql("DELETE FROM default.k WHERE id = 3")
    pcat.sql("INSERT INTO default.k VALUES (2, 'b2')")
    _backdate(pcat, "k", {1: "2024-12-01 10:00", 2: "2024-12-02 10:00", 3: "2024-12-02 12:00",
                          4: "2024-12-03 09:00", 5: "2024-12-05 10:00", 6: "2024-12-05 11:00"})
    pcat.sql("ALTER TABLE default.k SET TBLPROPERTIES ('tag.automatic-creation' = 'process-time', "
             "'sink.process-time-zone' = 'UTC')")
    pcat.sql("CALL sys.trigger_tag_automatic_creation(table => 'default.k')")
    assert _tags(pcat, "k") == {"2024-11-30": 1, "2024-12-01": 2, "2024-12-02": 4, "2024-12-04": 5}
    # Paimon's difference of the tags' files: the files only the end tag has, merged by key (key 1 went
    # a -> a2 -> a in them, so it is there; key 3's delete is dropped); the files both have are left out
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.k', '2024-11-30', '2024-12-02')")) == \
        [(1, "a"), (4, "d")]
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.k', '2024-11-30', '2024-12-04')")) == \
        [(1, "a"), (2, "b2"), (4, "d")]
    # to an automatic tag: from the newest automatic tag of an earlier period (12-03 was never made)
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_to_auto_tag('default.k', '2024-12-04')")) == [(2, "b2")]
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_to_auto_tag('default.k', '2024-11-30')")) == []
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_to_auto_tag('default.k', '2024-12-03')")) == []
    with pytest.raises(SqlError, match="is older than tag"):
        pcat.sql("SELECT * FROM paimon_incremental_query('default.k', '2024-12-04', '2024-11-30')")
    with pytest.raises(SqlError, match="not an automatic tag"):
        pcat.sql("SELECT * FROM paimon_incremental_to_auto_tag('default.k', 'tag1')")
    with pytest.raises(SqlError, match="neither a tag.*nor a snapshot id"):
        pcat.sql("SELECT * FROM paimon_incremental_query('default.k', '2024-11-30', 'nope')")

    # an append table: the rows of the data files the end tag has and the start tag has not
    pcat.sql("CREATE TABLE default.a (id bigint, v string)")
    pcat.sql("INSERT INTO default.a VALUES (1, 'x')")
    pcat.sql("CALL sys.create_tag('default.a', 'tag1')")
    pcat.sql("INSERT INTO default.a VALUES (1, 'x'), (2, 'y')")
    pcat.sql("INSERT INTO default.a VALUES (3, 'z')")
    pcat.sql("CALL sys.create_tag('default.a', 'tag2')")
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.a', 'tag1', 'tag2')")) == \
        [(1, "x"), (2, "y"), (3, "z")]
    # snapshot ids still work when the arguments are not both tags
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.a', 2, 3)")) == [(3, "z")]
