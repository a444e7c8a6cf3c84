"""What a Paimon chain table (main read as main, snapshot and delta branches merged) lists, as Paimon's
``ChainTableFileStoreTable`` lists it: ``SHOW PARTITIONS`` and ``$partitions`` are main's partitions, then
the snapshot branch's and the delta branch's not listed yet; ``$files`` plans main's partitions only, so it
lists main's files; the changes of main (``paimon_incremental_query``, ``changes``) are refused, pointing to
the branch Paimon's docs read a chain table's increments from."""
import pyarrow as pa
import pytest

from icefloe.errors import IcefloeError, NotSupportedError
from icefloe.paimon.types import to_arrow_schema
from icefloe.sql.errors import SqlError

BRANCHES = {"scan.fallback-snapshot-branch": "snapshot", "scan.fallback-delta-branch": "delta"}


def _put(table, rows, partition=None):
    names = [f.name for f in table.table_schema.fields]
    data = pa.Table.from_pylist([dict(zip(names, r)) for r in rows],
                                schema=to_arrow_schema(table.table_schema.fields, with_ids=False))
    if partition is None:
        table.append(data)
    else:               # an overwrite of the delta branch would truncate the snapshot branch's partition
        table.overwrite(data, partition={"dt": partition})


@pytest.fixture
def chain_t(pcat):
    pcat.sql("CREATE DATABASE IF NOT EXISTS db")
    t = pcat.create_table("db.t", "t1 string not null, t2 string, dt string not null", partitioned_by=["dt"],
                          properties={"chain-table.enabled": "true", "primary-key": "dt,t1", "sequence.field": "t2",
                                      "bucket-key": "t1", "bucket": "2", "partition.timestamp-pattern": "$dt",
                                      "partition.timestamp-formatter": "yyyyMMdd"})
    t.create_branch("snapshot")
    t.create_branch("delta")
    for b in (t, t.branch_table("snapshot"), t.branch_table("delta")):
        b.update_properties(set=BRANCHES)
    t.refresh()
    _put(t, [("0", "1", "20250809")], "20250809")                                     # main's own partition
    _put(t.branch_table("snapshot"), [("1", "1", "20250810"), ("2", "1", "20250810")], "20250810")
    _put(t.branch_table("delta"), [("3", "1", "20250810")])                           # under the snapshot's
    _put(t.branch_table("delta"), [("4", "1", "20250811")], "20250811")
    return t.refresh()


def test_partitions_are_mains_then_the_snapshot_and_delta_branches(pcat, chain_t):
    shown = [r[0] for r in pcat.sql("SHOW PARTITIONS db.t").collect()]
    assert shown == ["dt=20250809", "dt=20250810", "dt=20250811"]
    listed = {r["partition"]: r["record_count"] for r in chain_t.metadata_table("partitions").to_pylist()}
    assert list(listed.values()) == [1, 2, 1]            # 20250810: the snapshot branch's two rows, not the delta's
    assert [r[0] for r in pcat.sql("SHOW PARTITIONS db.t PARTITION (dt = '20250811')").collect()] == ["dt=20250811"]
    # a branch lists its own
    assert [r[0] for r in pcat.sql("SHOW PARTITIONS db.`t$branch_delta`").collect()] == ["dt=20250810", "dt=20250811"]
    # $files: main's files only (Paimon plans the files table by main's partitions)
    files = {r[0] for r in pcat.sql("SELECT file_path FROM db.`t$files`").collect()}
    assert {p.rsplit("/", 1)[-1] for p in files} == {e.file.file_name for e in chain_t.plan()}
    assert len(files) == 1
    delta = {r[0] for r in pcat.sql("SELECT file_path FROM db.`t$branch_delta$files`").collect()}
    assert len(delta) == 2 and not delta & files                   # a branch's files are its own table's


def test_changes_of_main_are_refused_for_the_branches(pcat, chain_t):
    with pytest.raises(SqlError, match=r"delta branch: query db.`t\$branch_delta`"):
        pcat.sql("SELECT * FROM paimon_incremental_query('db.t', 0, 1)")
    with pytest.raises(NotSupportedError, match="snapshots are numbered apart"):
        chain_t.changes()
    chain_t.create_tag("a", 1)
    with pytest.raises(NotSupportedError, match="snapshots are numbered apart"):
        chain_t.diff_between_tags("a", "a")
    _put(chain_t, [("5", "1", "20250808")], "20250808")
    with pytest.raises(IcefloeError, match="at an earlier snapshot"):
        chain_t.metadata_table("partitions", ref="a")
