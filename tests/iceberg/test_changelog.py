"""The changelog of an Iceberg table (``Table.changelog``, ``CALL system.create_changelog_view``)."""
import pyarrow as pa
import pytest

import icefloe


def _rows(df):
    return sorted((r["id"], r["name"], r["_change_type"], r["_change_ordinal"]) for r in df.collect())


def _data(ids, prefix="n"):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{prefix}{i}" for i in ids]})


@pytest.fixture(params=["copy-on-write", "merge-on-read"])
def table(request, catalog):
    mode = request.param
    return catalog.create_table("db.c", "id bigint not null, name string",
                                properties={"write.delete.mode": mode, "write.update.mode": mode,
                                            "write.merge.mode": mode})


def test_inserts_deletes_and_updates_per_snapshot(table):
    table.append(_data([1, 2, 3]))
    first = table.current_snapshot().snapshot_id
    table.append(_data([4]))
    table.delete("id = 2")
    table.update({"name": "'x'"}, where="id = 3")
    snaps = [s.snapshot_id for s in table.snapshots()]
    # everything: carry-over rows of copy-on-write rewrites (1 and 3 re-written unchanged) are gone
    assert _rows(table.changelog()) == [
        (1, "n1", "INSERT", 0), (2, "n2", "DELETE", 2), (2, "n2", "INSERT", 0), (3, "n3", "DELETE", 3),
        (3, "n3", "INSERT", 0), (3, "x", "INSERT", 3), (4, "n4", "INSERT", 1)]
    # a range, and updates by identifier
    df = table.changelog(start_snapshot_id=first, identifier_columns=["id"])
    assert _rows(df) == [(2, "n2", "DELETE", 1), (3, "n3", "UPDATE_BEFORE", 2), (3, "x", "UPDATE_AFTER", 2),
                         (4, "n4", "INSERT", 0)]
    assert {r["_commit_snapshot_id"] for r in df.collect()} == set(snaps[1:])
    assert df.columns == ["id", "name", "_change_type", "_change_ordinal", "_commit_snapshot_id"]
    # net changes: an insert later deleted leaves nothing
    table.delete("id = 4")
    assert _rows(table.changelog(start_snapshot_id=first, net_changes=True)) == [
        (2, "n2", "DELETE", 1), (3, "n3", "DELETE", 2), (3, "x", "INSERT", 2)]


def test_compaction_changes_no_rows(catalog):
    t = catalog.create_table("db.k", "id bigint not null, name string")
    t.append(_data([1, 2]))
    t.append(_data([3]))
    before = t.current_snapshot().snapshot_id
    t.rewrite_data_files()
    assert t.current_snapshot().snapshot_id != before
    assert _rows(t.changelog(start_snapshot_id=before)) == []


def test_updates_need_one_row_per_identifier(catalog):
    t = catalog.create_table("db.u", "id bigint not null, name string")
    t.append(_data([1, 1]))
    with pytest.raises(Exception, match="more than one row with identifier"):
        t.changelog(identifier_columns=["id"], compute_updates=True).collect()
    with pytest.raises(icefloe.SchemaError, match="not columns"):
        t.changelog(identifier_columns=["nope"])


def test_create_changelog_view_in_sql(catalog, spark, warehouse):
    t = catalog.create_table("db.v", "id bigint not null, name string")
    t.append(_data([1, 2]))
    start = t.current_snapshot().snapshot_id
    t.update({"name": "'y'"}, where="id = 1")
    out = icefloe.sql(spark, f"CALL system.create_changelog_view(table => 'db.v', options => "
                             f"map('start-snapshot-id', '{start}'), identifier_columns => array('id'))",
                      warehouse=warehouse)
    assert [r[0] for r in out.collect()] == ["v_changes"]
    rows = sorted(tuple(r) for r in spark.sql("SELECT id, name, _change_type FROM v_changes").collect())
    assert rows == [(1, "n1", "UPDATE_BEFORE"), (1, "y", "UPDATE_AFTER")]
    with pytest.raises(Exception, match="not an ancestor|no snapshot"):
        t.changelog(start_snapshot_id=12345)


def test_changes_give_the_changelog_with_paimons_row_kinds(catalog):
    """``Table.changes`` is the same contract on both formats: rowkind first (+I, -D, -U, +U)."""
    t = catalog.create_table("db.k", "id bigint not null, name string")
    t.append(_data([1, 2]))
    first = t.current_snapshot().snapshot_id
    t.append(_data([3]))
    t.delete("id = 1")
    df = t.changes(first)
    assert df.columns == ["rowkind", "id", "name"]
    assert sorted(tuple(r) for r in df.collect()) == [("+I", 3, "n3"), ("-D", 1, "n1")]
