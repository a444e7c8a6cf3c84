"""A Paimon append table whose columns were renamed, reordered, added and widened after some of
its files were written, imported into Iceberg: each file's columns are matched through the
schema it was written with (Paimon keeps a field's id across renames), so the new table's
statistics and its readers (icefloe, pyiceberg, DuckDB) give each file's values to the right
columns, also where a filter prunes files by their statistics."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.errors import MigrationError
from tests.interop_util import pyiceberg_table
from tests.table.test_migration import iceberg_referees, rows_of

COLS = ("c", "a", "bb", "b")
WANT = [(10, 1, "x", None), (20, 2, "y", "new")]


def evolved_paimon_table(tmp_path, spark):
    """Schema 0: a bigint, b string, c int (a file of it); then b renamed bb, a new b, c moved
    first and widened to bigint (a file of the new schema)."""
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    p = pc.create_table("default.p", "a bigint, b string, c int")
    p.append(pa.table({"a": pa.array([1], pa.int64()), "b": ["x"], "c": pa.array([10], pa.int32())}))
    with p.update_schema() as u:
        u.rename_column("b", "bb")
        u.add_column("b", "string")
        u.update_column("c", "bigint")
        u.move_first("c")
    p = pc.load_table("default.p")
    p.append(pa.table({"c": pa.array([20], pa.int64()), "a": pa.array([2], pa.int64()), "bb": ["y"],
                       "b": ["new"]}))
    assert sorted(tuple(r[k] for k in COLS) for r in p.to_arrow().to_pylist()) == WANT
    return pc, p


def filtered(table, expr: str) -> list:
    scan = pyiceberg_table(table.refresh().metadata_location).scan(row_filter=expr)
    return sorted(tuple(r[k] for k in COLS) for r in scan.to_arrow().to_pylist())


def test_a_paimon_table_with_renamed_columns_into_iceberg(tmp_path, catalog):
    pc, p = evolved_paimon_table(tmp_path, catalog.spark)
    catalog.snapshot_table("default.p", "db.snap", source_catalog=pc)
    snap = catalog.load_table("db.snap")
    assert [f.name for f in snap.metadata.schema.fields] == list(COLS)
    assert rows_of(snap, COLS) == WANT and iceberg_referees(snap, COLS) == (WANT, WANT)
    # the old file's statistics are under its columns' field ids: no filter prunes it wrongly
    assert filtered(snap, "b IS NULL") == [WANT[0]]
    assert filtered(snap, "bb = 'x'") == [WANT[0]]
    assert filtered(snap, "c < 15") == [WANT[0]]
    assert snap.to_spark().where("b IS NULL").select("a").collect()[0][0] == 1


def test_old_files_without_field_ids_map_by_their_old_names(tmp_path, catalog):
    """Files without field ids (as other writers may leave them) are matched through the name
    mapping, which keeps a renamed column's old name; a name since given to another column
    cannot tell the two apart, and such a file is refused."""
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=catalog.spark)
    p = pc.create_table("default.p", "a bigint, b string")
    p.append(pa.table({"a": pa.array([1], pa.int64()), "b": ["x"]}))
    (old,) = [f.file_path for f in p.plan_files()]
    data = pq.read_table(old)
    pq.write_table(data.cast(pa.schema([f.remove_metadata() for f in data.schema])), old)
    with p.update_schema() as u:
        u.rename_column("b", "bb")
    pc.load_table("default.p").append(pa.table({"a": pa.array([2], pa.int64()), "bb": ["y"]}))
    catalog.snapshot_table("default.p", "db.snap", source_catalog=pc)
    snap = catalog.load_table("db.snap")
    assert '"names": ["bb", "b"]' in snap.properties["schema.name-mapping.default"]
    want = [(1, "x"), (2, "y")]
    assert rows_of(snap, ("a", "bb")) == want
    py = pyiceberg_table(snap.metadata_location).scan().to_arrow().to_pylist()
    assert sorted((r["a"], r["bb"]) for r in py) == want
    # the old name given to a new column: the old file cannot be told apart by name
    p = pc.load_table("default.p")
    with p.update_schema() as u:
        u.add_column("b", "string")
    with pytest.raises(MigrationError, match="column 'b' has no field id"):
        catalog.snapshot_table("default.p", "db.snap2", source_catalog=pc)
    assert not catalog.table_exists("db.snap2")


def test_add_files_of_a_paimon_table_needs_its_field_ids(tmp_path, catalog):
    pc, p = evolved_paimon_table(tmp_path, catalog.spark)
    t = catalog.create_table("db.t", "c bigint, a bigint, bb string, b string")     # ids 1..4, Paimon's 0..3
    with pytest.raises(MigrationError, match="column 'c' has field id 2 there but field id 1 in db.t"):
        t.add_files(p)
    assert t.refresh().current_snapshot() is None
    # a table with Paimon's ids (as snapshot makes it) takes them
    catalog.snapshot_table("default.p", "db.snap", source_catalog=pc)
    snap = catalog.load_table("db.snap")
    assert snap.add_files(p, check_duplicate_files=False)["added_files_count"] == 2
    assert rows_of(snap, COLS) == sorted(WANT + WANT)


def renamed_iceberg_table(catalog):
    """An Iceberg table whose a became id and whose b and c swapped names (the old name b is c's
    now) after a file was written; a second file under the new names."""
    t = catalog.create_table("db.ice", "a bigint, b string, c string")
    t.append(pa.table({"a": pa.array([1], pa.int64()), "b": ["bee"], "c": ["sea"]}))
    with t.update_schema() as u:
        u.rename_column("a", "id")
        u.rename_column("b", "tmp")
    with t.update_schema() as u:
        u.rename_column("c", "b")
    with t.update_schema() as u:
        u.rename_column("tmp", "c")
    t = catalog.load_table("db.ice")
    t.append(pa.table({"id": pa.array([2], pa.int64()), "b": ["b2"], "c": ["c2"]}))
    return t


def pypaimon_filtered(warehouse, name, column, value, columns=("id", "b", "c")) -> list:
    from tools.pypaimon_env import remote_module

    rb = remote_module("pypaimon").CatalogFactory.create({"warehouse": warehouse}).get_table(name).new_read_builder()
    rb = rb.with_filter(rb.new_predicate_builder().equal(column, value))
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(tuple(r[c] for c in columns) for r in rows)


def test_an_iceberg_table_with_renamed_columns_into_paimon(tmp_path, catalog):
    """Each file keeps the schema its columns' names are of: the Paimon table gets schema-0 with
    the old names and schema-1 (current) with the new ones, under the same field ids, and every
    reader matches the old file's columns through its schema by field id."""
    from tests.table.test_migration import pypaimon_rows

    t = renamed_iceberg_table(catalog)
    want = [(1, "sea", "bee"), (2, "b2", "c2")]
    assert rows_of(t, ("id", "b", "c")) == want
    pwh = str(tmp_path / "pwh")
    pc = icefloe.Catalog(pwh, format="paimon", spark=catalog.spark)
    pc.migrate_table("db.ice", source_catalog=catalog)
    p = pc.load_table("db.ice")
    assert [f.name for f in p.table_schema.fields] == ["id", "c", "b"] and p.table_schema.id == 1
    assert [f.name for f in p.schema_by_id(0).fields] == ["a", "b", "c"]
    assert [f.id for f in p.schema_by_id(0).fields] == [f.id for f in p.table_schema.fields]
    assert sorted(f.schema_id for f in p.plan_files()) == [0, 1]
    assert rows_of(p, ("id", "b", "c")) == want == pypaimon_rows(pwh, "db.ice", ("id", "b", "c"))
    # filters on renamed columns, also where the old file's statistics prune it
    assert sorted(tuple(r.values()) for r in p.to_arrow(where="c = 'bee'").select(["id", "b", "c"]).to_pylist()) \
        == [want[0]]
    assert [r[0] for r in p.to_spark().where("b = 'sea'").select("id").collect()] == [1]
    assert [r[0] for r in p.to_spark().where("b = 'bee'").select("id").collect()] == []
    assert [r[0] for r in p.to_spark().where("id < 2").select("c").collect()] == ["bee"]
    assert pypaimon_filtered(pwh, "db.ice", "c", "bee") == [want[0]]
    assert pypaimon_filtered(pwh, "db.ice", "b", "bee") == []
    assert p.check().ok, p.check().to_json()
    assert not catalog.table_exists("db.ice")


def test_renamed_files_into_an_existing_paimon_table_need_a_schema_with_their_names(tmp_path, catalog):
    """migrate_file: a file goes under the target table's schema with its columns' names (the
    source's field ids matched to the target's columns by their current names); a table of the
    current names only has none for the old file, which is refused, nothing moved."""
    from tests.table.test_migration import state

    t = renamed_iceberg_table(catalog)
    before = state(t.location)
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=catalog.spark)
    p = pc.create_table("default.t", "id bigint, c string, b string")
    with pytest.raises(MigrationError, match=r"its columns are named \['a', 'b', 'c'\] .renamed since it was "
                                             "written., and default.t has no schema with those names"):
        p.migrate_files("db.ice", source_catalog=catalog)
    assert state(t.location) == before and p.refresh().current_snapshot() is None
    # a table that was renamed the same way has both schemas
    e = pc.create_table("default.e", "a bigint, b string, c string")
    with e.update_schema() as u:
        u.rename_column("a", "id")
        u.rename_column("b", "tmp")
        u.rename_column("c", "b")
        u.rename_column("tmp", "c")
    e = pc.load_table("default.e")
    assert e.migrate_files("db.ice", source_catalog=catalog) is True
    assert sorted(f.schema_id for f in e.plan_files()) == [0, 1]
    assert rows_of(e, ("id", "b", "c")) == [(1, "sea", "bee"), (2, "b2", "c2")]



def test_iceberg_files_without_field_ids_into_paimon_map_by_name(tmp_path, catalog):
    """A file without field ids matches by its column names, through the source's name mapping
    (old names too); one whose column without an id has the name another of its columns is by
    field id cannot be told apart: refused, nothing moved."""
    from tests.table.test_migration import state

    def strip_ids(path, keep=()):
        data = pq.read_table(path)
        pq.write_table(data.cast(pa.schema([f if f.name in keep else f.remove_metadata() for f in data.schema])),
                       path)

    import json

    from icefloe.iceberg.schema import name_mapping

    t = catalog.create_table("db.plain", "id bigint, b string")
    t.append(pa.table({"id": pa.array([1], pa.int64()), "b": ["x"]}))
    (f,) = [f.file_path for f in t.plan_files()]
    strip_ids(f)
    # the table's name mapping keeps b as bb's old name: the file's b is bb's, as Iceberg reads it
    t.update_properties(set={"schema.name-mapping.default": json.dumps(name_mapping(t.metadata.schema))})
    with t.update_schema() as u:
        u.rename_column("b", "bb")
    t = catalog.load_table("db.plain")
    t.append(pa.table({"id": pa.array([2], pa.int64()), "bb": ["y"]}))
    assert rows_of(t, ("id", "bb")) == [(1, "x"), (2, "y")]
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=catalog.spark)
    pc.migrate_table("db.plain", source_catalog=catalog)
    p = pc.load_table("db.plain")
    assert rows_of(p, ("id", "bb")) == [(1, "x"), (2, "y")]
    assert [f.name for f in p.schema_by_id(0).fields] == ["id", "b"] and p.table_schema.id == 1
    t = renamed_iceberg_table(catalog)
    old = [f.file_path for f in t.plan_files() if "b2" not in str(pq.read_table(f.file_path).to_pylist())]
    strip_ids(old[0], keep=("a", "b"))          # its b (now c) by id; its c, now named b, without an id
    before = state(t.location)
    with pytest.raises(MigrationError, match="its column 'c' has no field id and its name is the one the table's "
                                             "column 'c' has now, which the file's column 'b' is by its field id"):
        pc.migrate_table("db.ice", source_catalog=catalog)
    assert state(t.location) == before and not pc.table_exists("db.ice")



def test_fields_renamed_inside_a_column_are_refused_into_paimon(tmp_path, catalog):
    """A struct's field renamed after a file was written would read as null under the new name:
    refused, nothing moved; nested columns without renames migrate with their values."""
    from tests.table.test_migration import state

    ddl = "id bigint, s struct<x: int, z: string>, l array<struct<x: int>>, m map<string, struct<x: int>>"
    row = {"id": 1, "s": {"x": 5, "z": "q"}, "l": [{"x": 6}], "m": [("k", {"x": 7})]}
    t = catalog.create_table("db.n", ddl)
    t.append(pa.Table.from_pylist([row], t.to_arrow().schema))
    t2 = catalog.create_table("db.n2", ddl)
    t2.append(pa.Table.from_pylist([row], t2.to_arrow().schema))
    with t2.update_schema() as u:
        u.rename_column("l.element.x", "y")
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=catalog.spark)
    pc.migrate_table("db.n", source_catalog=catalog)
    got = pc.load_table("db.n").to_arrow().to_pylist()
    assert got == [{"id": 1, "s": {"x": 5, "z": "q"}, "l": [{"x": 6}], "m": [("k", {"x": 7})]}]
    before = state(t2.location)
    with pytest.raises(MigrationError, match="the field 'x' inside its column 'l' is named 'y' in the source "
                                             "table now"):
        pc.migrate_table("db.n2", source_catalog=catalog)
    assert state(t2.location) == before and not pc.table_exists("db.n2")


@pytest.mark.long
def test_a_failure_at_any_file_operation_of_an_iceberg_to_paimon_migration(tmp_path, spark):
    """Every file operation of migrate_table from the renamed Iceberg table into Paimon fails in
    turn: before the Paimon commit, the Iceberg table is as it was (files, metadata, rows) and no
    Paimon table exists; after it (dropping the source), the Paimon table is whole."""
    from icefloe.core.faults import FaultInjectingFileIO, InjectedFault
    from tests.table.test_migration import state

    want = [(1, "sea", "bee"), (2, "b2", "c2")]

    def once(run, fail_at):
        ic = icefloe.Catalog(str(run / "wh"), spark=spark)
        root = renamed_iceberg_table(ic).location
        before = state(root)
        io = FaultInjectingFileIO(fail_at=fail_at)
        try:
            icefloe.Catalog(str(run / "pwh"), format="paimon", spark=spark, io=io).migrate_table(
                "db.ice", source_catalog=icefloe.Catalog(str(run / "wh"), spark=spark, io=io))
            return io, False, before, root
        except InjectedFault:
            return io, True, before, root

    probe, _failed, _before, _root = once(tmp_path / "probe", None)
    assert probe.count >= 6
    for k in range(1, probe.count + 1):
        run = tmp_path / f"run{k}"
        _io, failed, before, root = once(run, k)
        pc = icefloe.Catalog(str(run / "pwh"), format="paimon", spark=spark)
        ic = icefloe.Catalog(str(run / "wh"), spark=spark)
        committed = pc.table_exists("db.ice") and pc.load_table("db.ice").current_snapshot() is not None
        if failed and not committed:
            assert state(root) == before, f"fault at {probe.log[k - 1]}"
            assert not pc.table_exists("db.ice"), f"fault at {probe.log[k - 1]}"
            assert rows_of(ic.load_table("db.ice"), ("id", "b", "c")) == want
        else:
            assert rows_of(pc.load_table("db.ice"), ("id", "b", "c")) == want, f"fault at {probe.log[k - 1]}"
            if not failed:
                assert not ic.table_exists("db.ice")


def test_an_iceberg_table_with_an_added_column_into_paimon(tmp_path, catalog):
    """A file written before a column was added has no such column: it gets a Paimon schema of
    its own columns (schema-0), and every reader gives the added column as null for its rows,
    as Paimon reads files of an older schema."""
    from tests.table.test_migration import pypaimon_rows

    t = catalog.create_table("db.added", "id bigint, a string")
    t.append(pa.table({"id": pa.array([1], pa.int64()), "a": ["x"]}))
    with t.update_schema() as u:
        u.add_column("n", "bigint")
    t = catalog.load_table("db.added")
    t.append(pa.table({"id": pa.array([2], pa.int64()), "a": ["y"], "n": pa.array([7], pa.int64())}))
    want = [(1, "x", None), (2, "y", 7)]
    assert rows_of(t, ("id", "a", "n")) == want
    pwh = str(tmp_path / "pwh")
    pc = icefloe.Catalog(pwh, format="paimon", spark=catalog.spark)
    pc.migrate_table("db.added", source_catalog=catalog)
    p = pc.load_table("db.added")
    assert [f.name for f in p.schema_by_id(0).fields] == ["id", "a"]
    assert [f.name for f in p.table_schema.fields] == ["id", "a", "n"] and p.table_schema.id == 1
    assert sorted(f.schema_id for f in p.plan_files()) == [0, 1]
    assert rows_of(p, ("id", "a", "n")) == want == pypaimon_rows(pwh, "db.added", ("id", "a", "n"))
    assert [r[0] for r in p.to_spark().where("n IS NULL").select("id").collect()] == [1]
    assert pypaimon_filtered(pwh, "db.added", "n", 7, ("id", "a", "n")) == [want[1]]
    assert p.check().ok, p.check().to_json()
