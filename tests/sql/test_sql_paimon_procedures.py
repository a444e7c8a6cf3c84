"""Paimon's Spark procedures (``CALL sys.*``) on Paimon tables, with Paimon's argument names and
units: times in epoch milliseconds, retention as Paimon durations."""
import os
import time

import pytest

import icefloe
from icefloe.sql.errors import SqlError


@pytest.fixture
def pcat(warehouse, spark):
    return icefloe.Catalog(warehouse, format="paimon", spark=spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _three_snapshots(pcat, name="db.t"):
    pcat.sql(f"CREATE TABLE {name} (id int, v string) USING paimon")
    for i in (1, 2, 3):
        pcat.sql(f"INSERT INTO {name} VALUES ({i}, 'v{i}')")
        time.sleep(0.01)
    return pcat.load_table(name)


def test_rollback_to_timestamp_reads_epoch_milliseconds(pcat, warehouse):
    t = _three_snapshots(pcat)
    at = t.snapshot(2).time_millis
    out = pcat.sql(f"CALL sys.rollback_to_timestamp(table => 'db.t', timestamp => {at + 5})").collect()
    assert [tuple(r) for r in out] == [(3, 2)]
    snapdir = os.path.join(warehouse, "db.db", "t", "snapshot")
    assert sorted(f for f in os.listdir(snapdir) if f.startswith("snapshot-")) == ["snapshot-1", "snapshot-2"]
    assert t.refresh().current_snapshot().id == 2
    assert _rows(pcat.sql("SELECT * FROM db.t")) == [(1, "v1"), (2, "v2")]
    # before the first snapshot: an error, nothing changed
    with pytest.raises(SqlError, match="no snapshot committed at or before"):
        pcat.sql(f"CALL sys.rollback_to_timestamp('db.t', {t.snapshot(1).time_millis - 1})")
    assert t.refresh().current_snapshot().id == 2


def test_rollback_by_version_snapshot_and_tag(pcat):
    t = _three_snapshots(pcat)
    t.create_tag("first", 1)
    assert [tuple(r) for r in pcat.sql("CALL sys.rollback(table => 'db.t', version => 2)").collect()] == [(3, 2)]
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,), (2,)]
    assert [tuple(r) for r in pcat.sql("CALL sys.rollback(table => 'db.t', version => 'first')").collect()] \
        == [(2, 1)]
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,)]
    assert [s.id for s in t.refresh().snapshots()] == [1]
    with pytest.raises(SqlError, match="exactly one of version, snapshot, tag"):
        pcat.sql("CALL sys.rollback(table => 'db.t', snapshot => 1, tag => 'first')")
    pcat.sql("INSERT INTO db.t VALUES (5, 'v5')")
    pcat.sql("CALL sys.rollback(table => 'db.t', snapshot => 1)")
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,)]
