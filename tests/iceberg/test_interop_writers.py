"""They write, we read: tables written by pyiceberg, registered with icefloe.

pyiceberg creates and changes tables (appends, overwrites, copy-on-write
deletes, schema changes; partitioned and not). For every pyiceberg snapshot,
icefloe's ``to_spark(snapshot_id=...)`` must return exactly pyiceberg's own
scan. Then icefloe appends to the registered table and pyiceberg (and DuckDB),
opening icefloe's new metadata file, must read the old rows and the new ones.

sqlalchemy is not installed, so pyiceberg's SqlCatalog/InMemoryCatalog cannot
be used; ``DictCatalog`` below is the smallest pyiceberg ``MetastoreCatalog``:
it keeps table -> metadata location in a dict and relies on pyiceberg's own
staging and metadata writing for every commit.
"""
from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.interop_util import arrow_column_values, duckdb_connection, pyiceberg_table

UTC = dt.timezone.utc


# --------------------------------------------------------------------------- a minimal pyiceberg catalog
def _dict_catalog_class():
    from pyiceberg.catalog import Catalog, MetastoreCatalog
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError, TableAlreadyExistsError
    from pyiceberg.io import load_file_io
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.serializers import FromInputFile
    from pyiceberg.table import CommitTableResponse, Table
    from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

    class DictCatalog(MetastoreCatalog):
        """Tables and namespaces in dicts; metadata files written by pyiceberg itself."""

        def __init__(self, name: str, **properties: str):
            super().__init__(name, **properties)
            self._tables: dict = {}
            self._namespaces: dict = {}

        def create_namespace(self, namespace, properties=None) -> None:
            self._namespaces[Catalog.namespace_to_string(namespace)] = dict(properties or {})

        def load_namespace_properties(self, namespace):
            ns = Catalog.namespace_to_string(namespace)
            if ns not in self._namespaces:
                raise NoSuchNamespaceError(ns)
            return self._namespaces[ns]

        def create_table(self, identifier, schema, location=None, partition_spec=UNPARTITIONED_PARTITION_SPEC,
                         sort_order=UNSORTED_SORT_ORDER, properties=None):
            ident = self.identifier_to_tuple(identifier)
            if ident in self._tables:
                raise TableAlreadyExistsError(str(ident))
            staged = self._create_staged_table(identifier, schema, location, partition_spec, sort_order,
                                               properties or {})
            self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
            self._tables[ident] = staged.metadata_location
            return self.load_table(identifier)

        def load_table(self, identifier):
            ident = self.identifier_to_tuple(identifier)
            if ident not in self._tables:
                raise NoSuchTableError(str(ident))
            loc = self._tables[ident]
            md = FromInputFile.table_metadata(load_file_io(self.properties, loc).new_input(loc))
            return Table(ident, md, loc, self._load_file_io(md.properties, loc), self)

        def register_table(self, identifier, metadata_location, overwrite=False):
            self._tables[self.identifier_to_tuple(identifier)] = metadata_location
            return self.load_table(identifier)

        def commit_table(self, table, requirements, updates):
            ident = self.identifier_to_tuple(table.name())
            current = self.load_table(ident) if ident in self._tables else None
            staged = self._update_and_stage_table(current, ident, requirements, updates)
            self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
            self._tables[ident] = staged.metadata_location
            return CommitTableResponse(metadata=staged.metadata, metadata_location=staged.metadata_location)

        def list_tables(self, namespace):
            ns = self.identifier_to_tuple(namespace)
            return [t for t in self._tables if t[:-1] == ns]

        def list_namespaces(self, namespace=()):
            return [self.identifier_to_tuple(n) for n in self._namespaces]

        def _unsupported(self, *args, **kwargs):
            raise NotImplementedError("not needed by these tests")

        drop_table = rename_table = drop_namespace = update_namespace_properties = _unsupported
        list_views = load_view = register_view = drop_view = view_exists = _unsupported

    return DictCatalog


@pytest.fixture
def pycat(request, tmp_path):
    """A pyiceberg catalog whose warehouse is a file: URI (default) or a plain path."""
    root = tmp_path / "pyiceberg-warehouse"
    root.mkdir()
    style = getattr(request, "param", "file-uri")
    warehouse = f"file://{root}" if style == "file-uri" else str(root)
    cat = _dict_catalog_class()("interop", warehouse=warehouse)
    cat.create_namespace("db")
    return cat


@pytest.fixture(scope="module")
def duck():
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    yield con
    con.close()


# --------------------------------------------------------------------------- data
ARROW_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("i", pa.int32()),
    pa.field("name", pa.string()),
    pa.field("d", pa.float64()),
    pa.field("flag", pa.bool_()),
    pa.field("dt", pa.date32()),
    pa.field("ts", pa.timestamp("us", tz="UTC")),
    pa.field("ts_ntz", pa.timestamp("us")),
    pa.field("amount", pa.decimal128(10, 2)),
    pa.field("payload", pa.binary()),
    pa.field("info", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
])
COLUMNS = ARROW_SCHEMA.names
NAMES = ["north", "south", "east", "wëst", None]


def make_rows(start: int, n: int) -> list[dict]:
    rows = []
    for k in range(start, start + n):
        rows.append({
            "id": k,
            "i": None if k % 7 == 0 else (k * 31) % 90 - 45,
            "name": NAMES[k % len(NAMES)],
            "d": float("nan") if k % 13 == 4 else (None if k % 11 == 0 else k / 4 - 3),
            "flag": None if k % 5 == 2 else k % 3 == 0,
            "dt": None if k % 9 == 0 else dt.date(1969, 12, 20) + dt.timedelta(days=(k % 4) * 200),
            "ts": None if k % 10 == 3 else dt.datetime(1969, 12, 31, 20, tzinfo=UTC) + dt.timedelta(hours=k * 50),
            "ts_ntz": None if k % 6 == 0 else dt.datetime(2001, 2, 3, 4, 5, 6) + dt.timedelta(minutes=k * 97),
            "amount": None if k % 8 == 0 else Decimal(k * 777 - 9000).scaleb(-2),
            "payload": None if k % 10 == 0 else bytes([k % 256, 0, 255, (k * 3) % 256]),
            "info": None if k % 12 == 0 else {"a": None if k % 4 == 0 else -k, "b": f"v{k}"},
        })
    return rows


def arrow_table(rows, schema=ARROW_SCHEMA):
    return pa.Table.from_pylist(rows, schema=schema)


_EPOCH = dt.datetime(1970, 1, 1)


def _canon(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


def rows_of(table: pa.Table, columns=None) -> list[tuple]:
    """Sorted canonical rows (timestamps as ("tz"|"ntz", micros)) of an Arrow table."""
    columns = columns or table.column_names
    cols = [arrow_column_values(table.column(c), _canon) for c in columns]
    return sorted(zip(*cols), key=repr) if cols else []


def ours(t, snapshot_id=None, columns=None, where=None):
    df = t.to_spark(snapshot_id=snapshot_id, where=where)
    return rows_of(df.toArrow(), columns or df.columns)


def theirs(metadata_location, snapshot_id=None, columns=None, row_filter=None):
    scan_kw = {}
    if snapshot_id is not None:
        scan_kw["snapshot_id"] = snapshot_id
    if row_filter is not None:
        scan_kw["row_filter"] = row_filter
    arrow = pyiceberg_table(metadata_location).scan(**scan_kw).to_arrow()
    return rows_of(arrow, columns or arrow.column_names)


def _check_all_snapshots(t, py_tbl):
    """Our read of every pyiceberg snapshot equals pyiceberg's, file sets included."""
    md = py_tbl.metadata
    assert [s.snapshot_id for s in t.snapshots()] == [s.snapshot_id for s in md.snapshots]
    assert t.current_snapshot().snapshot_id == md.current_snapshot_id
    for s in md.snapshots:
        expected = theirs(py_tbl.metadata_location, s.snapshot_id)
        cols = [f.name for f in pyiceberg_table(py_tbl.metadata_location).scan(snapshot_id=s.snapshot_id)
                .projection().fields]
        assert ours(t, s.snapshot_id, cols) == expected, f"snapshot {s.snapshot_id} ({s.summary.operation})"
        their_files = {task.file.file_path for task in py_tbl.scan(snapshot_id=s.snapshot_id).plan_files()}
        assert {f.file_path for f in t.plan_files(snapshot_id=s.snapshot_id)} == their_files
    assert ours(t) == theirs(py_tbl.metadata_location)


def _spark_df(spark, rows, schema):
    """A Spark DataFrame with exactly ``schema``'s types, built from Python rows."""
    return spark.createDataFrame(_as_spark_rows(rows), _spark_ddl(schema))


def _as_spark_rows(rows):
    from pyspark.sql import Row

    return [Row(**{k: (Row(**v) if isinstance(v, dict) else v) for k, v in r.items()}) for r in rows]


_SPARK_TYPES = {"int64": "bigint", "int32": "int", "string": "string", "double": "double", "bool": "boolean",
                "date32[day]": "date", "timestamp[us, tz=UTC]": "timestamp", "timestamp[us]": "timestamp_ntz",
                "decimal128(10, 2)": "decimal(10,2)", "binary": "binary"}


def _spark_ddl(schema: pa.Schema) -> str:
    def typ(t):
        if pa.types.is_struct(t):
            return "struct<" + ", ".join(f"{f.name}: {typ(f.type)}" for f in t) + ">"
        return _SPARK_TYPES[str(t)]

    return ", ".join(f"{f.name} {typ(f.type)}" + ("" if f.nullable else " not null") for f in schema)


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("pycat", ["file-uri", "plain-path"], indirect=True)
def test_unpartitioned_history_then_we_append(pycat, catalog, spark, duck):
    py_tbl = pycat.create_table("db.plain", ARROW_SCHEMA)
    py_tbl.append(arrow_table(make_rows(0, 30)))
    py_tbl.append(arrow_table(make_rows(30, 30)))
    py_tbl.delete(delete_filter="id < 10")                    # copy-on-write: rewrites the first file
    py_tbl.delete(delete_filter="id >= 30")                   # drops the second file whole
    py_tbl.overwrite(arrow_table(make_rows(100, 25)))         # delete + append
    py_tbl.append(arrow_table(make_rows(200, 5)))
    py_tbl = pycat.load_table("db.plain")
    ops = [s.summary.operation.value for s in py_tbl.metadata.snapshots]
    assert ops[:2] == ["append", "append"] and "overwrite" in ops and "delete" in ops

    t = catalog.register_table("db.plain", py_tbl.metadata_location)
    _check_all_snapshots(t, py_tbl)
    assert catalog.list_tables("db") == ["db.plain"]
    assert catalog.load_table("db.plain").current_snapshot().snapshot_id == py_tbl.metadata.current_snapshot_id

    # we append (Spark, then Arrow); pyiceberg and DuckDB read our metadata
    before = theirs(py_tbl.metadata_location)
    new_spark, new_arrow = make_rows(300, 12), make_rows(400, 7)
    t.append(_spark_df(spark, new_spark, ARROW_SCHEMA))
    t.append(arrow_table(new_arrow))
    ours_meta = t.metadata_location
    expected = sorted(before + rows_of(arrow_table(new_spark + new_arrow)), key=repr)
    assert theirs(ours_meta) == expected
    assert ours(t, columns=COLUMNS) == expected
    cols = ", ".join(f'"{c}"' for c in COLUMNS)
    assert rows_of(duck.execute(f"SELECT {cols} FROM iceberg_scan('{ours_meta}')").fetch_arrow_table()) == expected
    # pyiceberg still reads every older snapshot through our metadata file
    for s in py_tbl.metadata.snapshots:
        assert theirs(ours_meta, s.snapshot_id) == theirs(py_tbl.metadata_location, s.snapshot_id)
    md = pyiceberg_table(ours_meta).metadata
    assert md.last_sequence_number == py_tbl.metadata.last_sequence_number + 2
    assert md.snapshots[-1].parent_snapshot_id == md.snapshots[-2].snapshot_id
    assert md.snapshots[-2].parent_snapshot_id == py_tbl.metadata.current_snapshot_id
    assert md.table_uuid == py_tbl.metadata.table_uuid

    # and pyiceberg can keep writing on top of our metadata, which we read again
    pycat.register_table("db.ours", ours_meta)
    again = pycat.load_table("db.ours")
    again.delete(delete_filter="id >= 400")
    again = pycat.load_table("db.ours")
    from icefloe.errors import LocationError

    with pytest.raises(LocationError, match="share a location"):     # db.plain still lives there
        catalog.register_table("db.again", again.metadata_location)
    catalog.drop_table("db.plain", purge=False)                       # forgotten; its files stay
    t2 = catalog.register_table("db.again", again.metadata_location)
    _check_all_snapshots(t2, again)


def test_evolved_identity_partitions_with_deletes_and_partial_overwrite(pycat, catalog, spark, duck):
    from pyiceberg.expressions import EqualTo

    py_tbl = pycat.create_table("db.parts", ARROW_SCHEMA)
    py_tbl.append(arrow_table(make_rows(0, 40)))     # spec 0: unpartitioned
    with py_tbl.update_spec() as u:                  # spec evolution -> spec 1 (name, dt)
        u.add_identity("name")
        u.add_identity("dt")
    py_tbl = pycat.load_table("db.parts")
    py_tbl.append(arrow_table(make_rows(40, 40)))
    py_tbl.delete(delete_filter=EqualTo("name", "east"))      # whole partitions -> DELETE
    py_tbl.delete(delete_filter="i < -30")                    # rows across partitions -> OVERWRITE
    py_tbl.delete(delete_filter="name IS NULL")               # the null partition
    py_tbl.overwrite(arrow_table([r for r in make_rows(500, 30) if r["name"] == "north"]),
                     overwrite_filter=EqualTo("name", "north"))
    py_tbl = pycat.load_table("db.parts")
    assert py_tbl.spec().spec_id == 1 and len(py_tbl.spec().fields) == 2

    t = catalog.register_table("db.parts", py_tbl.metadata_location)
    _check_all_snapshots(t, py_tbl)
    for s in py_tbl.metadata.snapshots:   # the partition tuples we decode are pyiceberg's
        ours_parts = {f.file_path: (f.spec_id, tuple(f.partition)) for f in t.plan_files(snapshot_id=s.snapshot_id)}
        their_parts = {task.file.file_path: (task.file.spec_id,
                                             tuple(task.file.partition[i] for i in range(len(task.file.partition))))
                       for task in py_tbl.scan(snapshot_id=s.snapshot_id).plan_files()}
        assert ours_parts == their_parts

    # a filtered read of a partition column
    expected = theirs(py_tbl.metadata_location, row_filter=EqualTo("name", "south"))
    assert ours(t, where="name = 'south'", columns=COLUMNS) == expected

    # we append into their partition layout (including a null partition value)
    before = theirs(py_tbl.metadata_location)
    new_rows = make_rows(700, 25)
    t.append(_spark_df(spark, new_rows[:15], ARROW_SCHEMA))
    t.append(arrow_table(new_rows[15:]))
    ours_meta = t.metadata_location
    expected = sorted(before + rows_of(arrow_table(new_rows)), key=repr)
    assert theirs(ours_meta) == expected
    assert ours(t, columns=COLUMNS) == expected
    cols = ", ".join(f'"{c}"' for c in COLUMNS)
    assert rows_of(duck.execute(f"SELECT {cols} FROM iceberg_scan('{ours_meta}')").fetch_arrow_table()) == expected
    # pyiceberg's partition pruning on our new files keeps the right rows
    for name in ("south", "wëst"):
        want = sorted((r for r in expected if r[COLUMNS.index("name")] == name), key=repr)
        assert theirs(ours_meta, row_filter=EqualTo("name", name), columns=COLUMNS) == want
    # our new files carry identity partition values equal to their rows' values
    new_files = [task.file for task in pyiceberg_table(ours_meta).scan().plan_files()
                 if task.file.file_path not in {f.file_path for f in t.plan_files(
                     snapshot_id=py_tbl.metadata.current_snapshot_id)}]
    assert new_files
    for f in new_files:
        data = pq.ParquetFile(f.file_path.replace("file://", "")).read()
        assert set(data.column("name").to_pylist()) == {f.partition[0]}
        assert {None if v is None else (v - dt.date(1970, 1, 1)).days
                for v in data.column("dt").to_pylist()} == {f.partition[1]}
    assert {f.spec_id for f in new_files} == {1}


def test_schema_evolution_by_pyiceberg(pycat, catalog, spark):
    """Renamed and added columns: files are matched by field id, old snapshots keep their schema."""
    from pyiceberg.types import LongType

    py_tbl = pycat.create_table("db.evolve", ARROW_SCHEMA)
    py_tbl.append(arrow_table(make_rows(0, 20)))
    with py_tbl.update_schema() as u:
        u.rename_column("name", "label")
        u.add_column("extra", LongType())
    py_tbl = pycat.load_table("db.evolve")
    new_schema = py_tbl.schema().as_arrow()
    rows = [{**{("label" if k == "name" else k): v for k, v in r.items()}, "extra": r["id"] * 10}
            for r in make_rows(20, 10)]
    py_tbl.append(pa.Table.from_pylist(rows, schema=new_schema))
    py_tbl = pycat.load_table("db.evolve")

    t = catalog.register_table("db.evolve", py_tbl.metadata_location)
    assert [f.name for f in t.schema.fields][-1] == "extra"
    _check_all_snapshots(t, py_tbl)
    cur = ours(t)
    labels = [r for r in cur if any(v == "north" for v in r)]
    assert labels  # the renamed column kept its data in the old file
    first = py_tbl.metadata.snapshots[0].snapshot_id
    assert "name" in t.to_spark(snapshot_id=first).columns   # old snapshot, old schema


def test_add_files_without_field_ids(pycat, catalog, spark, tmp_path):
    """pyiceberg's add_files registers plain Parquet files (no field ids) and a name mapping;
    the spec says readers must then match columns by name."""
    py_tbl = pycat.create_table("db.added", ARROW_SCHEMA)
    path = str(tmp_path / "external.parquet")
    pq.write_table(arrow_table(make_rows(0, 15)), path)
    py_tbl.add_files([path])
    py_tbl = pycat.load_table("db.added")
    assert py_tbl.metadata.name_mapping() is not None
    t = catalog.register_table("db.added", py_tbl.metadata_location)
    expected = theirs(py_tbl.metadata_location, columns=COLUMNS)
    assert expected == rows_of(arrow_table(make_rows(0, 15)))
    assert rows_of(t.to_arrow(), COLUMNS) == expected
    assert ours(t, columns=COLUMNS) == expected


def test_uuid_column_written_by_pyiceberg(pycat, catalog, spark):
    import uuid

    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, UUIDType

    py_tbl = pycat.create_table("db.uuids", Schema(NestedField(1, "id", LongType(), required=True),
                                                   NestedField(2, "u", UUIDType())))
    values = [uuid.UUID("12345678-1234-5678-1234-567812345678"), None]
    py_tbl.append(pa.Table.from_pylist([{"id": i, "u": u.bytes if u else None} for i, u in enumerate(values)],
                                       schema=py_tbl.schema().as_arrow()))
    py_tbl = pycat.load_table("db.uuids")
    t = catalog.register_table("db.uuids", py_tbl.metadata_location)
    assert sorted(tuple(r) for r in t.to_spark().collect()) == [(i, str(u) if u else None)
                                                               for i, u in enumerate(values)]
