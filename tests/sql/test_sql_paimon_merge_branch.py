"""Paimon's ``CALL sys.merge_branch(table, source_branch[, target_branch])`` (procedures page): the
data files of one branch that another lacks, appended to it as one APPEND snapshot, for append tables
whose branches have complete append-only histories."""
import pytest

from icefloe.sql.errors import SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _kinds(pcat, name):
    return [r.commit_kind for r in pcat.sql(f"SELECT commit_kind FROM default.`{name}$snapshots` "
                                            "ORDER BY snapshot_id").collect()]


def test_merge_branch_into_main_and_into_another_branch(pcat):
    pcat.sql("CREATE TABLE default.m (id bigint, v string)")
    pcat.sql("INSERT INTO default.m VALUES (1, 'base')")
    pcat.sql("CALL sys.create_tag('default.m', 't1')")
    pcat.sql("CALL sys.create_branch('default.m', 'b1', 't1')")
    pcat.sql("INSERT INTO default.`m$branch_b1` VALUES (2, 'branch'), (3, 'branch')")
    pcat.sql("INSERT INTO default.m VALUES (4, 'main')")
    assert _rows(pcat.sql("CALL sys.merge_branch(table => 'default.m', source_branch => 'b1')")) == [(True,)]
    assert _rows(pcat.sql("SELECT * FROM default.m")) == [(1, "base"), (2, "branch"), (3, "branch"), (4, "main")]
    assert _kinds(pcat, "m") == ["APPEND", "APPEND", "APPEND"]
    # again: nothing the source has is missing, so no snapshot
    pcat.sql("CALL sys.merge_branch(table => 'default.m', source_branch => 'b1')")
    assert len(_kinds(pcat, "m")) == 3
    # into a branch: main's files b1 lacks (its own row and none twice)
    pcat.sql("CALL sys.merge_branch(table => 'default.m', source_branch => 'main', target_branch => 'b1')")
    assert _rows(pcat.sql("SELECT * FROM default.`m$branch_b1`")) == \
        [(1, "base"), (2, "branch"), (3, "branch"), (4, "main")]


def test_merge_branch_refusals_change_nothing(pcat):
    pcat.sql("CREATE TABLE default.k (id bigint, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'a')")
    pcat.sql("CALL sys.create_tag('default.k', 't1')")
    pcat.sql("CALL sys.create_branch('default.k', 'b', 't1')")
    with pytest.raises(SqlError, match="append tables.*primary key id"):
        pcat.sql("CALL sys.merge_branch('default.k', 'b')")

    pcat.sql("CREATE TABLE default.c (id bigint)")
    pcat.sql("INSERT INTO default.c VALUES (1)")
    pcat.sql("CALL sys.create_tag('default.c', 't1')")
    pcat.sql("CALL sys.create_branch('default.c', 'b', 't1')")
    pcat.sql("INSERT INTO default.c VALUES (2)")
    pcat.sql("INSERT INTO default.`c$branch_b` VALUES (3)")
    pcat.sql("CALL sys.compact(table => 'default.c')")
    kinds = _kinds(pcat, "c")
    assert kinds[-1] == "COMPACT"
    with pytest.raises(SqlError, match="snapshot 3 on branch 'main' is a COMPACT"):
        pcat.sql("CALL sys.merge_branch('default.c', 'b')")
    assert _kinds(pcat, "c") == kinds and _rows(pcat.sql("SELECT * FROM default.c")) == [(1,), (2,)]
    # a branch made from a tag of a later snapshot does not start at snapshot 1 (Paimon's rule)
    pcat.sql("CALL sys.create_tag('default.c', 't3', 3)")
    pcat.sql("CALL sys.create_branch('default.c', 'late', 't3')")
    with pytest.raises(SqlError, match="branch 'late' does not start at snapshot 1"):
        pcat.sql("CALL sys.merge_branch('default.c', 'late', 'b')")
    with pytest.raises(SqlError, match="no branch 'nope'"):
        pcat.sql("CALL sys.merge_branch('default.c', 'nope')")


def test_merge_branch_gives_a_row_tracking_tables_merged_files_fresh_row_ids(pcat):
    # both branches gave out row ids 1.. after the fork: the merged files get new ones from main's range
    pcat.sql("CREATE TABLE default.rt (id bigint, v string) TBLPROPERTIES ('row-tracking.enabled' = 'true')")
    pcat.sql("INSERT INTO default.rt VALUES (1, 'base')")
    pcat.sql("CALL sys.create_tag('default.rt', 't1')")
    pcat.sql("CALL sys.create_branch('default.rt', 'b', 't1')")
    pcat.sql("INSERT INTO default.`rt$branch_b` VALUES (2, 'branch'), (3, 'branch')")
    pcat.sql("INSERT INTO default.rt VALUES (4, 'main')")
    pcat.sql("CALL sys.merge_branch('default.rt', 'b')")
    ids = _rows(pcat.sql("SELECT _ROW_ID, id FROM default.rt"))
    assert sorted(r[0] for r in ids) == [0, 1, 2, 3]            # one id per row, none given twice
    assert dict((i, r) for r, i in ids)[1] == 0
    t = pcat.load_table("default.rt")
    assert t.current_snapshot().next_row_id == 4
    pcat.sql("INSERT INTO default.rt VALUES (5, 'after')")      # the next commit starts past the merged rows
    assert _rows(pcat.sql("SELECT _ROW_ID FROM default.rt WHERE id = 5")) == [(4,)]
