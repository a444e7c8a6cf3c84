"""Paimon chain tables in SQL, as Paimon's chain-table page shows them: the table and its snapshot and
delta branches, full writes to ``t$branch_snapshot`` and incremental ones to ``t$branch_delta``, the
full, incremental and hybrid queries (Spark's read of the merge), and ``CALL sys.compact_chain_table``
(Paimon's argument names) writing the merged partition into the snapshot branch."""
import pytest

from icefloe.sql.errors import SqlError

# the whole documented life of a chain table in one SQL session runs over a minute: the long suite
pytestmark = pytest.mark.long

FALLBACK = "('scan.fallback-snapshot-branch' = 'snapshot', 'scan.fallback-delta-branch' = 'delta')"


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _snapshots(pcat, name):
    return [r[0] for r in pcat.sql(f"SELECT snapshot_id FROM default.`{name}$snapshots`").collect()]


def test_the_documented_chain_table(pcat):
    # (the page declares the partition column in PARTITIONED BY with its type, which icefloe's DDL does not take)
    pcat.sql("""CREATE TABLE default.t (`t1` string, `t2` string, `t3` string, `date` string) PARTITIONED BY (`date`)
                TBLPROPERTIES ('chain-table.enabled' = 'true', 'primary-key' = 'date,t1', 'sequence.field' = 't2',
                               'bucket-key' = 't1', 'bucket' = '2', 'partition.timestamp-pattern' = '$date',
                               'partition.timestamp-formatter' = 'yyyyMMdd')""")
    pcat.sql("CALL sys.create_branch('default.t', 'snapshot')")
    pcat.sql("CALL sys.create_branch('default.t', 'delta')")
    for name in ("default.t", "`default`.`t$branch_snapshot`", "`default`.`t$branch_delta`"):
        pcat.sql(f"ALTER TABLE {name} SET tblproperties {FALLBACK}")
    pcat.sql("insert overwrite `default`.`t$branch_snapshot` partition (date = '20250810') values ('1', '1', '1')")
    pcat.sql("insert overwrite `default`.`t$branch_delta` partition (date = '20250811') values ('2', '1', '1')")
    full = "select t1, t2, t3 from default.t where date = '20250811'"
    incremental = "select t1, t2, t3 from `default`.`t$branch_delta` where date = '20250811'"
    assert _rows(pcat.sql(full)) == [("1", "1", "1"), ("2", "1", "1")]
    assert _rows(pcat.sql(incremental)) == [("2", "1", "1")]
    assert _rows(pcat.sql(f"{full} union all {incremental}")) == [("1", "1", "1"), ("2", "1", "1"), ("2", "1", "1")]
    assert _rows(pcat.sql("select * from default.t")) == [("1", "1", "1", "20250810"), ("1", "1", "1", "20250811"),
                                                          ("2", "1", "1", "20250811")]

    # compaction: the merged partition written to the snapshot branch as one new snapshot there
    before = _snapshots(pcat, "t$branch_snapshot")
    call = "CALL sys.compact_chain_table(table => 'default.t', partition => 'date=\"20250811\"')"
    assert _rows(pcat.sql(call)) == [(True,)]
    assert len(_snapshots(pcat, "t$branch_snapshot")) == len(before) + 1
    assert _rows(pcat.sql("select t1, t2, t3 from `default`.`t$branch_snapshot` where date = '20250811'")) == \
        [("1", "1", "1"), ("2", "1", "1")]
    assert _rows(pcat.sql(call)) == [(False,)]                  # there already: nothing done
    assert len(_snapshots(pcat, "t$branch_snapshot")) == len(before) + 1
    # the snapshot branch's partition is now read as it is: a later delta write to it shows only once
    # it is compacted again with overwrite
    pcat.sql("insert into `default`.`t$branch_delta` values ('3', '1', '1', '20250811')")
    assert _rows(pcat.sql(full)) == [("1", "1", "1"), ("2", "1", "1")]
    assert _rows(pcat.sql(call.replace(")", ", overwrite => true)"))) == [(True,)]
    assert _rows(pcat.sql(full)) == [("1", "1", "1"), ("2", "1", "1"), ("3", "1", "1")]

    # bad input: refused by name, nothing written
    counts = [len(_snapshots(pcat, n)) for n in ("t", "t$branch_snapshot", "t$branch_delta")]
    with pytest.raises(SqlError, match="only supports a single partition"):
        pcat.sql("CALL sys.compact_chain_table(table => 'default.t', partition => 'date=1;date=2')")
    with pytest.raises(SqlError, match="Partition string cannot be empty"):
        pcat.sql("CALL sys.compact_chain_table(table => 'default.t', partition => '')")
    with pytest.raises(SqlError, match="not a partition key"):
        pcat.sql("CALL sys.compact_chain_table(table => 'default.t', partition => 't1=\"1\"')")
    with pytest.raises(SqlError, match="only supports chain table"):
        pcat.sql("CALL sys.compact_chain_table(table => 'default.t$branch_delta', partition => 'date=\"20250811\"')")
    with pytest.raises(SqlError, match="chain table"):
        pcat.sql("DELETE FROM default.t WHERE t1 = '1'")
    with pytest.raises(SqlError, match="Changelog producer must be none or input for chain table"):
        pcat.sql("ALTER TABLE default.t SET TBLPROPERTIES ('changelog-producer' = 'lookup')")
    assert [len(_snapshots(pcat, n)) for n in ("t", "t$branch_snapshot", "t$branch_delta")] == counts
