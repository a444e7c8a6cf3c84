"""Paimon's ``CALL sys.copy(source_table, target_table[, where])`` (procedures page): the source's
live data files copied byte for byte into the target, created like the source when missing, and
committed there as an OVERWRITE of the partitions copied."""
import json
import os

import pytest

from icefloe.errors import IcefloeError
from icefloe.sql.errors import SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _data_files(location):
    return sorted(f for _, _, fs in os.walk(location) for f in fs if f.startswith("data-"))


def test_copy_creates_the_target_and_copies_partitions(pcat):
    pcat.sql("CREATE TABLE default.src (id bigint, v string, dt string) PARTITIONED BY (dt) "
             "TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2', 'write-only' = 'true')")
    pcat.sql("INSERT INTO default.src VALUES (1, 'a', 'd1'), (2, 'b', 'd1'), (3, 'c', 'd2')")
    pcat.sql("INSERT INTO default.src VALUES (1, 'a2', 'd1')")
    assert _rows(pcat.sql("CALL sys.copy(source_table => 'default.src', target_table => 'default.dst')")) == [(True,)]
    src, dst = pcat.load_table("default.src"), pcat.load_table("default.dst")
    # the same schema (field ids, keys, options) as schema-0; the files copied byte for byte, new names
    s0 = json.load(open(os.path.join(dst.location, "schema", "schema-0")))
    latest = json.load(open(os.path.join(src.location, "schema", "schema-0")))
    assert (s0["fields"], s0["partitionKeys"], s0["primaryKeys"], s0["options"]) == \
        (latest["fields"], latest["partitionKeys"], latest["primaryKeys"], latest["options"])
    def contents(t):
        return sorted(open(os.path.join(d, f), "rb").read() for d, _, fs in os.walk(t.location) for f in fs
                      if f.startswith("data-"))
    assert contents(dst) == contents(src) and not set(_data_files(dst.location)) & set(_data_files(src.location))
    assert dst.current_snapshot().commit_kind == "OVERWRITE"
    want = [(1, "a2", "d1"), (2, "b", "d1"), (3, "c", "d2")]
    assert _rows(pcat.sql("SELECT * FROM default.dst")) == want

    # where: the partitions it selects replace the target's, the others stay
    pcat.sql("INSERT INTO default.src VALUES (3, 'c2', 'd2'), (1, 'a3', 'd1')")
    pcat.sql("CALL sys.copy(source_table => 'default.src', target_table => 'default.dst', where => \"dt = 'd2'\")")
    assert _rows(pcat.sql("SELECT * FROM default.dst")) == [(1, "a2", "d1"), (2, "b", "d1"), (3, "c2", "d2")]


def test_copy_refusals_leave_the_target_as_it_was(pcat, warehouse):
    pcat.sql("CREATE TABLE default.s (id bigint, dt string) PARTITIONED BY (dt)")
    pcat.sql("INSERT INTO default.s VALUES (1, 'd1')")
    pcat.sql("CREATE TABLE default.other (id bigint, name string)")
    snaps = len(pcat.load_table("default.other").snapshots())
    with pytest.raises(IcefloeError, match="other columns or keys"):
        pcat.sql("CALL sys.copy('default.s', 'default.other')")
    assert len(pcat.load_table("default.other").snapshots()) == snaps
    with pytest.raises(IcefloeError, match="where names id, which are not partition columns"):
        pcat.sql("CALL sys.copy('default.s', 'default.fresh', 'id = 1')")
    assert not pcat.table_exists("default.fresh")           # made for the copy, gone with it
    assert not os.path.exists(os.path.join(warehouse, "default.db", "fresh"))


def test_a_refused_copy_is_the_statements_error_and_row_ids_of_untracked_tables_are_explained(pcat):
    """A copy the format refuses (a ``where`` on a column that is not a partition column) is an error of
    the statement; ``_ROW_ID`` on a table without row tracking says why it is missing."""
    pcat.sql("CREATE TABLE default.src_r (id BIGINT, day STRING)")
    pcat.sql("INSERT INTO default.src_r VALUES (1, '2025-08-17')")
    with pytest.raises(SqlError, match=r"CALL sys.copy: .*day.*not partition columns") as e:
        pcat.sql("CALL sys.copy(source_table => 'default.src_r', target_table => 'default.dst_r', "
                      "where => \"day = '2025-08-17'\")")
    assert e.value.statement is not None
    with pytest.raises(SqlError, match="_ROW_ID does not exist here: .*row-tracking.enabled"):
        pcat.sql("SELECT *, _ROW_ID FROM default.src_r")
