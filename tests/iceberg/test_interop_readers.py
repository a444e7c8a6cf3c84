"""We write, they read: pyiceberg and DuckDB must see exactly the rows we (and Spark) see.

Every table below is written by icefloe through both write paths (a Spark
DataFrame and a pyarrow.Table), then overwritten; for every snapshot the rows
that Spark reads through ``to_spark(snapshot_id=...)``, that pyiceberg's
``StaticTable`` scan returns and that DuckDB's ``iceberg_scan`` returns must
all equal the rows we generated. Independent checks on the metadata use
pyiceberg's parsed objects: partition values are recomputed with pyiceberg's
own transforms, column metrics are compared with the files' contents, and
manifest entries, sequence numbers, summaries and partition summaries are
checked against the spec.
"""
from __future__ import annotations

import datetime as dt
import math
import uuid
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.interop_util import arrow_column_values, duckdb_connection, pyiceberg_table

UTC = dt.timezone.utc

SCHEMA_DDL = (
    "id bigint not null, i int, name string, d double, flag boolean, dt date, "
    "ts timestamp not null, ts_ntz timestamp_ntz, amount decimal(10,2), payload binary, "
    "info struct<a: int, b: string>"
)
COLUMNS = ["id", "i", "name", "d", "flag", "dt", "ts", "ts_ntz", "amount", "payload", "info"]

ARROW_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("i", pa.int32()),
    pa.field("name", pa.string()),
    pa.field("d", pa.float64()),
    pa.field("flag", pa.bool_()),
    pa.field("dt", pa.date32()),
    pa.field("ts", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("ts_ntz", pa.timestamp("us")),
    pa.field("amount", pa.decimal128(10, 2)),
    pa.field("payload", pa.binary()),
    pa.field("info", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
])

NAMES = ["alpha", "beta", "gamma", "δέλτα", "z", "", "épsilon-long-name-over-sixteen-chars"]
N = 40  # rows per write: small, the point is coverage, not volume


# --------------------------------------------------------------------------- data
def make_rows(start: int, n: int) -> list[dict]:
    """Deterministic rows with nulls, negative numbers, pre-1970 dates/times and unicode."""
    rows = []
    for k in range(start, start + n):
        d = None if k % 11 == 0 else k * 1.5 - 20.25
        if k % 13 == 5:
            d = float("nan")
        rows.append({
            "id": k,
            "i": None if k % 7 == 0 else (k * 37) % 200 - 100,
            "name": None if k % 5 == 0 else f"{NAMES[k % len(NAMES)]}{k % 3}",
            "d": d,
            "flag": None if k % 4 == 3 else k % 2 == 0,
            "dt": None if k % 9 == 0 else dt.date(1969, 12, 25) + dt.timedelta(days=k * 3),
            "ts": dt.datetime(1969, 12, 31, 22, 0, tzinfo=UTC) + dt.timedelta(days=k * 13, hours=k, minutes=k),
            "ts_ntz": None if k % 6 == 0 else dt.datetime(1969, 12, 31, 23, 30) + dt.timedelta(hours=k * 5),
            "amount": None if k % 8 == 0 else Decimal(k * 123 - 5000).scaleb(-2),
            "payload": None if k % 10 == 0 else bytes([k % 256, (k * 7) % 256, 0, 255]),
            "info": None if k % 12 == 0 else {"a": None if k % 3 == 0 else k, "b": f"s{k}"},
        })
    return rows


def read_file(path) -> pa.Table:
    """One Parquet data file as written (no Hive-style partition inference from its path)."""
    return pq.ParquetFile(path).read()


def spark_df(spark, rows):
    from pyspark.sql import Row

    spark_rows = [Row(**{**r, "info": None if r["info"] is None else Row(**r["info"])}) for r in rows]
    return spark.createDataFrame(spark_rows, SCHEMA_DDL)


def arrow_table(rows):
    return pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)


# --------------------------------------------------------------------------- canonical rows
_EPOCH = dt.datetime(1970, 1, 1)
_US = dt.timedelta(microseconds=1)


def canon(v):
    """A comparable form of one Python value (timestamps become ("tz"|"ntz", micros))."""
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return "tz", (v - _EPOCH.replace(tzinfo=UTC)) // _US
        return "ntz", (v - _EPOCH) // _US
    if isinstance(v, dict):
        return tuple((k, canon(x)) for k, x in v.items())
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


def arrow_rows(table: pa.Table, columns=COLUMNS) -> list[tuple]:
    cols = [arrow_column_values(table.column(c), canon) for c in columns]
    return sort_rows(list(zip(*cols)) if cols else [])


def py_rows(rows: list[dict], columns=COLUMNS) -> list[tuple]:
    return sort_rows([tuple(canon(r[c]) for c in columns) for r in rows])


def sort_rows(rows):
    return sorted(rows, key=lambda r: (r[0], repr(r)))


def spark_rows(df, columns=COLUMNS):
    return arrow_rows(df.toArrow(), columns)


def pyiceberg_rows(metadata_location, snapshot_id, row_filter=None, columns=COLUMNS):
    tbl = pyiceberg_table(metadata_location)
    kw = {"snapshot_id": snapshot_id}
    if row_filter is not None:
        kw["row_filter"] = row_filter
    return arrow_rows(tbl.scan(**kw).to_arrow(), columns)


def duckdb_rows(con, metadata_location, snapshot_id, where=None, columns=COLUMNS):
    cols = ", ".join(f'"{c}"' for c in columns)
    sql = f"SELECT {cols} FROM iceberg_scan('{metadata_location}', snapshot_from_id => {snapshot_id})"
    if where:
        sql += f" WHERE {where}"
    return arrow_rows(con.execute(sql).fetch_arrow_table(), columns)


@pytest.fixture(scope="module")
def duck():
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    yield con
    con.close()


# --------------------------------------------------------------------------- the cases
def _ts(*a):
    return dt.datetime(*a, tzinfo=UTC)


def _filter(pyice, duck_sql, pred, spark_sql=None):
    return {"pyiceberg": pyice, "duckdb": duck_sql, "pred": pred, "spark": spark_sql or duck_sql}


def _filters():
    from pyiceberg import expressions as E

    return {
        "id_lt": _filter(E.LessThan("id", 25), "id < 25", lambda r: r["id"] < 25),
        "ts_ge_1972": _filter(E.GreaterThanOrEqual("ts", "1972-01-01T00:00:00+00:00"),
                              "ts >= TIMESTAMPTZ '1972-01-01 00:00:00+00'",
                              lambda r: r["ts"] >= _ts(1972, 1, 1),
                              "ts >= TIMESTAMP '1972-01-01 00:00:00+00:00'"),
        "ts_lt_1970_03": _filter(E.LessThan("ts", "1970-03-01T00:00:00+00:00"),
                                 "ts < TIMESTAMPTZ '1970-03-01 00:00:00+00'",
                                 lambda r: r["ts"] < _ts(1970, 3, 1),
                                 "ts < TIMESTAMP '1970-03-01 00:00:00+00:00'"),
        "ts_eq": _filter(E.EqualTo("ts", "1970-05-11T08:10:00+00:00"),
                         "ts = TIMESTAMPTZ '1970-05-11 08:10:00+00'",
                         lambda r: r["ts"] == _ts(1970, 5, 11, 8, 10),
                         "ts = TIMESTAMP '1970-05-11 08:10:00+00:00'"),
        "id_eq": _filter(E.EqualTo("id", 17), "id = 17", lambda r: r["id"] == 17),
        "name_eq": _filter(E.EqualTo("name", "beta1"), "name = 'beta1'", lambda r: r["name"] == "beta1"),
        "name_null": _filter(E.IsNull("name"), "name IS NULL", lambda r: r["name"] is None),
        "name_unicode": _filter(E.EqualTo("name", "δέλτα0"), "name = 'δέλτα0'", lambda r: r["name"] == "δέλτα0"),
        "dt_ge": _filter(E.GreaterThanOrEqual("dt", "1970-06-01"), "dt >= DATE '1970-06-01'",
                         lambda r: r["dt"] is not None and r["dt"] >= dt.date(1970, 6, 1)),
        "i_lt0": _filter(E.LessThan("i", 0), "i < 0", lambda r: r["i"] is not None and r["i"] < 0),
        "ntz_lt": _filter(E.LessThan("ts_ntz", "1970-01-05T00:00:00"),
                          "ts_ntz < TIMESTAMP '1970-01-05 00:00:00'",
                          lambda r: r["ts_ntz"] is not None and r["ts_ntz"] < dt.datetime(1970, 1, 5),
                          "ts_ntz < TIMESTAMP_NTZ '1970-01-05 00:00:00'"),
    }


# (partition terms, filter names, write path of the overwrite). Transforms are combined in
# multi-field specs to keep the number of tables (and Spark jobs) small.
CASES = {
    "unpartitioned": ([], ["id_lt", "name_null"], "spark"),
    "year_ts": (["year(ts)"], ["ts_ge_1972", "ts_lt_1970_03"], "arrow"),
    "month_ts_truncate_name": (["month(ts)", "truncate(2, name)"],
                               ["ts_lt_1970_03", "name_eq", "name_null", "name_unicode"], "spark"),
    "day_ts_identity_int": (["day(ts)", "i"], ["ts_eq", "i_lt0"], "arrow"),
    "hour_ts_bucket_id": (["hour(ts)", "bucket(4, id)"], ["ts_eq", "id_eq", "id_lt"], "spark"),
    "identity_string_date": (["name", "dt"], ["name_eq", "name_null", "name_unicode", "dt_ge"], "arrow"),
    "ntz_day_bucket_name_truncate_int": (["day(ts_ntz)", "bucket(3, name)", "truncate(10, i)"],
                                         ["ntz_lt", "name_eq", "i_lt0"], "spark"),
    "month_date_year_ntz": (["month(dt)", "year(ts_ntz)"], ["dt_ge", "ntz_lt"], "arrow"),
}


def _build(catalog, spark, name, partitioned_by, overwrite_path):
    """Append via Spark, append via Arrow, overwrite; returns the table and [(snapshot, rows)]."""
    t = catalog.create_table(f"db.{name}", SCHEMA_DDL, partitioned_by=partitioned_by)
    r1, r2 = make_rows(0, N), make_rows(N, N)
    # the overwrite keeps some old ids and brings new ones
    r3 = make_rows(N // 2, N // 2) + make_rows(3 * N, N // 2)
    s1 = t.append(spark_df(spark, r1))
    s2 = t.append(arrow_table(r2))
    s3 = t.overwrite(spark_df(spark, r3) if overwrite_path == "spark" else arrow_table(r3))
    return t, [(s1, r1), (s2, r1 + r2), (s3, r3)]


@pytest.mark.parametrize("case", list(CASES))
def test_every_snapshot_reads_the_same_everywhere(case, catalog, spark, duck):
    partitioned_by, filter_names, overwrite_path = CASES[case]
    t, history = _build(catalog, spark, case, partitioned_by, overwrite_path)
    loc = t.metadata_location
    assert [s.snapshot_id for s in t.snapshots()] == [s.snapshot_id for s, _ in history]
    for snap, rows in history:
        expected = py_rows(rows)
        sid = snap.snapshot_id
        assert spark_rows(t.to_spark(snapshot_id=sid)) == expected, f"spark, snapshot {sid}"
        assert pyiceberg_rows(loc, sid) == expected, f"pyiceberg, snapshot {sid}"
        assert duckdb_rows(duck, loc, sid) == expected, f"duckdb, snapshot {sid}"
    # the current snapshot without naming it, and the table directory form (version hint)
    current = py_rows(history[-1][1])
    assert arrow_rows(pyiceberg_table(loc).scan().to_arrow()) == current
    cols = ", ".join(f'"{c}"' for c in COLUMNS)
    assert arrow_rows(duck.execute(f"SELECT {cols} FROM iceberg_scan('{loc}')").fetch_arrow_table()) == current
    assert arrow_rows(duck.execute(f"SELECT {cols} FROM iceberg_scan('{t.location}')")
                      .fetch_arrow_table()) == current

    # pruning by the other readers relies on our partition values, bounds and summaries;
    # our own pruning (plan_files/to_spark with where=) must keep every file with a matching row
    filters = _filters()
    file_rows = _FileRows()
    for fname in filter_names:
        f = filters[fname]
        selected = [sum(map(f["pred"], rows)) for _, rows in history]
        assert any(0 < n < len(rows) for n, (_, rows) in zip(selected, history)), f"{fname} selects nothing useful"
        for snap, rows in history:
            sid = snap.snapshot_id
            expected = py_rows([r for r in rows if f["pred"](r)])
            assert pyiceberg_rows(loc, sid, row_filter=f["pyiceberg"]) == expected, f"pyiceberg {fname} @ {sid}"
            assert duckdb_rows(duck, loc, sid, where=f["duckdb"]) == expected, f"duckdb {fname} @ {sid}"
            if HAVE_WHERE:
                needed = {df.file_path for df in t.plan_files(snapshot_id=sid)
                          if any(f["pred"](r) for r in file_rows[df.file_path])}
                kept = {df.file_path for df in t.plan_files(where=f["spark"], snapshot_id=sid)}
                assert needed <= kept, f"plan_files({f['spark']!r}) pruned files with matching rows @ {sid}"
        if HAVE_WHERE and fname == filter_names[0]:  # one Spark job per table is enough here
            expected = py_rows([r for r in history[-1][1] if f["pred"](r)])
            assert spark_rows(t.to_spark(where=f["spark"])) == expected, f"to_spark(where={f['spark']!r})"

    _check_partition_values(loc, history)
    _check_file_metrics(loc, history[-1][0].snapshot_id)


class _FileRows(dict):
    """Rows of data files by path (timestamps with tz as aware datetimes), read once."""

    def __missing__(self, path):
        rows = read_file(path).to_pylist()
        self[path] = rows
        return rows


def _have_where() -> bool:
    try:
        import icefloe.core.expressions  # noqa: F401  (filters are being finished separately)
        import icefloe.iceberg.evaluators  # noqa: F401
    except ImportError:
        return False
    return True


HAVE_WHERE = _have_where()


# --------------------------------------------------------------------------- independent metadata checks
def _internal_values(arr: pa.ChunkedArray) -> list:
    """Column values in pyiceberg's internal representation (micros, days, ...)."""
    arr = arr.combine_chunks()
    if pa.types.is_timestamp(arr.type):
        return arr.cast(pa.int64()).to_pylist()
    if pa.types.is_date32(arr.type):
        return arr.cast(pa.int32()).to_pylist()
    return arr.to_pylist()


def _check_partition_values(loc, history):
    """Each data file's partition tuple is what pyiceberg's transforms give for each of its rows."""
    tbl = pyiceberg_table(loc)
    spec = tbl.spec()
    schema = tbl.schema()
    for snap, _ in history:
        tasks = list(tbl.scan(snapshot_id=snap.snapshot_id).plan_files())
        assert tasks
        for task in tasks:
            f = task.file
            assert f.spec_id == spec.spec_id
            data = read_file(f.file_path)
            assert data.num_rows == f.record_count
            for pos, pf in enumerate(spec.fields):
                src = schema.find_field(pf.source_id)
                fn = pf.transform.transform(src.field_type)
                got = {fn(v) for v in _internal_values(data.column(src.name))}
                assert got == {f.partition[pos]}, (
                    f"{f.file_path}: partition field {pf.name}={f.partition[pos]!r}, rows give {got}")


def _check_file_metrics(loc, snapshot_id):
    """Record, value and null counts are exact; bounds enclose the file's values."""
    from pyiceberg.conversions import from_bytes

    tbl = pyiceberg_table(loc)
    schema = tbl.schema()
    for task in tbl.scan(snapshot_id=snapshot_id).plan_files():
        f = task.file
        data = read_file(f.file_path)
        assert f.record_count == data.num_rows
        assert f.file_format.name == "PARQUET"
        for field in schema.fields:
            if not field.field_type.is_primitive:
                continue
            fid = field.field_id
            col = data.column(field.name)
            assert f.value_counts[fid] == data.num_rows, field.name
            assert f.null_value_counts[fid] == col.null_count, field.name
            vals = [v for v in _internal_values(col) if v is not None
                    and not (isinstance(v, float) and math.isnan(v))]
            if f.nan_value_counts and fid in f.nan_value_counts:
                nans = sum(1 for v in _internal_values(col) if isinstance(v, float) and math.isnan(v))
                assert f.nan_value_counts[fid] == nans, field.name
            if not vals:
                assert fid not in (f.lower_bounds or {}), f"{field.name}: bound on an all-null column"
                continue
            if fid in (f.lower_bounds or {}):
                lo = from_bytes(field.field_type, f.lower_bounds[fid])
                assert lo <= min(vals), f"{field.name}: lower bound {lo!r} > min {min(vals)!r}"
            if fid in (f.upper_bounds or {}):
                hi = from_bytes(field.field_type, f.upper_bounds[fid])
                assert hi >= max(vals), f"{field.name}: upper bound {hi!r} < max {max(vals)!r}"
            if str(field.field_type) in ("long", "int", "date", "timestamptz", "timestamp", "boolean"):
                # exact types: both bounds must be present and tight
                assert from_bytes(field.field_type, f.lower_bounds[fid]) == min(vals), field.name
                assert from_bytes(field.field_type, f.upper_bounds[fid]) == max(vals), field.name


def _entries(io, manifest):
    return manifest.fetch_manifest_entry(io, discard_deleted=False)


def test_metadata_manifests_and_summaries(catalog, spark, duck):
    """Spec checks through pyiceberg's parsed objects: snapshots, summaries, manifest lists,
    entry statuses and sequence numbers, partition summaries - across append, append,
    overwrite and a commit that removes one file (which rewrites a manifest with EXISTING entries)."""
    from pyiceberg.conversions import from_bytes
    from pyiceberg.manifest import ManifestContent, ManifestEntryStatus
    from pyiceberg.table.snapshots import Operation

    from icefloe.iceberg.row_delta import RowDelta

    t, history = _build(catalog, spark, "meta", ["year(ts)", "name"], "arrow")
    (s1, r1), (s2, r12), (s3, r3) = history
    files_by_snap = {s.snapshot_id: t.plan_files(snapshot_id=s.snapshot_id) for s, _ in history}

    # 4th commit: remove one file of the overwrite -> its manifest is rewritten
    victim = sorted(files_by_snap[s3.snapshot_id], key=lambda f: f.file_path)[0]
    RowDelta(removed_paths={victim.file_path}).commit(t.ops)
    t.refresh()
    s4 = t.current_snapshot()
    victim_rows = {r["id"] for r in read_file(victim.file_path).to_pylist()}
    r4 = [r for r in r3 if r["id"] not in victim_rows]
    assert 0 < len(r4) < len(r3)
    history.append((s4, r4))
    ids = [s.snapshot_id for s, _ in history]

    tbl = pyiceberg_table(t.metadata_location)
    md = tbl.metadata
    io = tbl.io
    # ------------------------------------------------------------ table metadata
    assert md.format_version == 2
    assert md.last_sequence_number == 4
    assert md.current_snapshot_id == s4.snapshot_id
    assert md.refs["main"].snapshot_id == s4.snapshot_id
    assert [s.snapshot_id for s in md.snapshots] == ids
    assert [s.sequence_number for s in md.snapshots] == [1, 2, 3, 4]
    assert [s.parent_snapshot_id for s in md.snapshots] == [None] + ids[:-1]
    assert [e.snapshot_id for e in md.snapshot_log] == ids
    stamps = [s.timestamp_ms for s in md.snapshots]
    assert stamps == sorted(stamps) and md.last_updated_ms >= stamps[-1]
    assert len(md.metadata_log) == 4  # v1 (create) .. v4; the current file is not in its own log
    spec = tbl.spec()
    assert [(f.name, str(f.transform), f.field_id) for f in spec.fields] == [
        ("ts_year", "year", 1000), ("name", "identity", 1001)]
    assert md.last_partition_id == 1001

    # ------------------------------------------------------------ summaries
    def summary(s):
        return md.snapshot_by_id(s.snapshot_id).summary

    def nfiles(s):
        return len(files_by_snap[s.snapshot_id]) if s.snapshot_id in files_by_snap else None

    sm1, sm2, sm3, sm4 = (summary(s) for s, _ in history)
    assert sm1.operation == Operation.APPEND and sm2.operation == Operation.APPEND
    assert sm3.operation == Operation.OVERWRITE and sm4.operation == Operation.DELETE
    assert sm1["added-records"] == str(N) and sm1["total-records"] == str(N)
    assert sm1["added-data-files"] == str(nfiles(s1)) and sm1["total-data-files"] == str(nfiles(s1))
    assert sm2["added-records"] == str(N) and sm2["total-records"] == str(2 * N)
    assert sm2["total-data-files"] == str(nfiles(s2))
    assert int(sm2["added-data-files"]) == nfiles(s2) - nfiles(s1)
    assert sm3["deleted-records"] == str(2 * N) and sm3["deleted-data-files"] == str(nfiles(s2))
    assert sm3["added-records"] == str(len(r3)) and sm3["total-records"] == str(len(r3))
    assert sm3["added-data-files"] == str(nfiles(s3)) and sm3["total-data-files"] == str(nfiles(s3))
    assert sm4["deleted-data-files"] == "1" and sm4["deleted-records"] == str(victim.record_count)
    assert sm4["total-records"] == str(len(r4)) and sm4["total-data-files"] == str(nfiles(s3) - 1)
    f1, f2, f3 = (files_by_snap[s.snapshot_id] for s in (s1, s2, s3))
    for sm, added, removed in ((sm1, f1, []), (sm3, f3, f2)):
        assert sm["added-files-size"] == str(sum(f.file_size_in_bytes for f in added))
        assert sm.additional_properties.get("removed-files-size", "0") == str(sum(f.file_size_in_bytes for f in removed))
        # partitions with files added or removed
        assert sm["changed-partition-count"] == str(len({f.partition for f in added + removed}))
    assert sm3["total-files-size"] == str(sum(f.file_size_in_bytes for f in f3))
    for sm in (sm1, sm2, sm3, sm4):
        assert sm["total-delete-files"] == "0" and sm["total-equality-deletes"] == "0"
        assert sm["total-position-deletes"] == "0"

    # ------------------------------------------------------------ manifests and entries
    seq_of = {s.snapshot_id: i + 1 for i, (s, _) in enumerate(history)}
    for snap, rows in history:
        psnap = md.snapshot_by_id(snap.snapshot_id)
        manifests = psnap.manifests(io)
        live = 0
        for m in manifests:
            assert m.content == ManifestContent.DATA
            assert m.added_snapshot_id in seq_of
            assert m.sequence_number == seq_of[m.added_snapshot_id]
            entries = _entries(io, m)
            by_status = {st: [e for e in entries if e.status == st] for st in ManifestEntryStatus}
            assert len(by_status[ManifestEntryStatus.ADDED]) == m.added_files_count
            assert len(by_status[ManifestEntryStatus.EXISTING]) == m.existing_files_count
            assert len(by_status[ManifestEntryStatus.DELETED]) == m.deleted_files_count
            assert sum(e.data_file.record_count for e in by_status[ManifestEntryStatus.ADDED]) == m.added_rows_count
            assert sum(e.data_file.record_count for e in by_status[ManifestEntryStatus.EXISTING]) == \
                m.existing_rows_count
            assert sum(e.data_file.record_count for e in by_status[ManifestEntryStatus.DELETED]) == \
                m.deleted_rows_count
            for e in by_status[ManifestEntryStatus.ADDED]:
                # added entries inherit (or carry) the manifest's snapshot and sequence number
                assert e.snapshot_id == m.added_snapshot_id
                assert e.sequence_number == m.sequence_number
                assert e.file_sequence_number == m.sequence_number
            for e in by_status[ManifestEntryStatus.DELETED]:
                assert e.snapshot_id == m.added_snapshot_id  # the snapshot that deleted it
                assert e.sequence_number is not None and e.sequence_number < m.sequence_number
            for e in by_status[ManifestEntryStatus.EXISTING]:
                assert e.snapshot_id != m.added_snapshot_id
                assert e.sequence_number is not None and e.sequence_number < m.sequence_number
            live_entries = by_status[ManifestEntryStatus.ADDED] + by_status[ManifestEntryStatus.EXISTING]
            if live_entries:
                assert m.min_sequence_number == min(e.sequence_number for e in live_entries)
            live += sum(e.data_file.record_count for e in live_entries)
            # partition summaries enclose every entry's partition values
            ptype = spec.partition_type(tbl.schema())
            assert len(m.partitions) == len(spec.fields)
            for pos, (fs, pfield) in enumerate(zip(m.partitions, ptype.fields)):
                values = [e.data_file.partition[pos] for e in entries]
                present = [v for v in values if v is not None]
                assert fs.contains_null == (len(present) < len(values)), pfield.name
                if present:
                    assert from_bytes(pfield.field_type, fs.lower_bound) == min(present), pfield.name
                    assert from_bytes(pfield.field_type, fs.upper_bound) == max(present), pfield.name
                else:
                    assert fs.lower_bound is None and fs.upper_bound is None
        assert live == len(rows)

    # the overwrite: new files ADDED at seq 3, every earlier file DELETED keeping its own seq
    m3 = md.snapshot_by_id(s3.snapshot_id).manifests(io)
    e3 = [(m, e) for m in m3 for e in _entries(io, m)]
    added3 = {e.data_file.file_path for m, e in e3 if e.status == ManifestEntryStatus.ADDED}
    deleted3 = {e.data_file.file_path: e.sequence_number for m, e in e3 if e.status == ManifestEntryStatus.DELETED}
    assert added3 == {f.file_path for f in files_by_snap[s3.snapshot_id]}
    before = {f.file_path for f in files_by_snap[s2.snapshot_id]}
    assert set(deleted3) == before
    first = {f.file_path for f in files_by_snap[s1.snapshot_id]}
    assert {p: (1 if p in first else 2) for p in before} == deleted3
    assert not any(e.status == ManifestEntryStatus.EXISTING for m, e in e3)

    # the one-file delete: the rewritten manifest keeps the others as EXISTING (seq 3)
    m4 = md.snapshot_by_id(s4.snapshot_id).manifests(io)
    e4 = [e for m in m4 for e in _entries(io, m)]
    st4 = {e.data_file.file_path: (e.status, e.sequence_number, e.file_sequence_number, e.snapshot_id) for e in e4}
    assert st4[victim.file_path] == (ManifestEntryStatus.DELETED, 3, 3, s4.snapshot_id)
    for p in added3 - {victim.file_path}:
        assert st4[p] == (ManifestEntryStatus.EXISTING, 3, 3, s3.snapshot_id)
    assert not any(e.status == ManifestEntryStatus.ADDED for e in e4)

    # the other readers agree on every snapshot, including the EXISTING/DELETED mix
    loc = t.metadata_location
    for snap, rows in history:
        expected = py_rows(rows)
        assert spark_rows(t.to_spark(snapshot_id=snap.snapshot_id)) == expected
        assert pyiceberg_rows(loc, snap.snapshot_id) == expected
        assert duckdb_rows(duck, loc, snap.snapshot_id) == expected

    # DuckDB's own view of the snapshots and of the manifest entries
    dsnaps = duck.execute(f"SELECT sequence_number, snapshot_id FROM iceberg_snapshots('{loc}') "
                          "ORDER BY sequence_number").fetchall()
    assert dsnaps == [(i + 1, sid) for i, sid in enumerate(ids)]
    dentries = duck.execute(
        f"SELECT status, count(*) FROM iceberg_metadata('{loc}', snapshot_from_id => {s4.snapshot_id}) "
        "GROUP BY status ORDER BY status").fetchall()
    assert dict(dentries) == {"DELETED": 1, "EXISTING": len(added3) - 1}


def test_metadata_json_matches_pyiceberg_model(catalog):
    """Our metadata JSON round-trips through pyiceberg's strict model unchanged in meaning."""
    import json

    t = catalog.create_table("db.json", SCHEMA_DDL, partitioned_by=["bucket(4, id)", "day(ts)"])
    t.append(arrow_table(make_rows(0, N)))
    t.overwrite(arrow_table(make_rows(N, N)))
    raw = json.load(open(t.metadata_location))
    md = pyiceberg_table(t.metadata_location).metadata
    assert str(md.table_uuid) == raw["table-uuid"]
    assert md.location == raw["location"] == t.location
    assert md.current_schema_id == raw["current-schema-id"]
    assert md.last_column_id == raw["last-column-id"] == max(
        f.field_id for _, f in _all_fields(md.schema()))
    sch = md.schema()
    types = {f.name: str(f.field_type) for f in sch.fields}
    assert types == {
        "id": "long", "i": "int", "name": "string", "d": "double", "flag": "boolean", "dt": "date",
        "ts": "timestamptz", "ts_ntz": "timestamp", "amount": "decimal(10, 2)", "payload": "binary",
        "info": "struct<12: a: optional int, 13: b: optional string>",
    }
    assert sch.find_field("id").required and sch.find_field("ts").required
    assert not sch.find_field("name").required
    for s in md.snapshots:
        assert s.manifest_list.startswith(t.location + "/metadata/")
        rs = next(x for x in raw["snapshots"] if x["snapshot-id"] == s.snapshot_id)
        assert rs["summary"]["operation"] == s.summary.operation.value
        assert s.schema_id == raw["current-schema-id"]
    assert md.default_spec_id == raw["default-spec-id"] == 0
    assert md.sort_orders[0].order_id == 0 and md.default_sort_order_id == 0


def _all_fields(schema):
    from pyiceberg.schema import StructType

    def walk(fields, prefix=""):
        for f in fields:
            yield prefix + f.name, f
            if isinstance(f.field_type, StructType):
                yield from walk(f.field_type.fields, prefix + f.name + ".")

    return list(walk(schema.fields))


# --------------------------------------------------------------------------- uuid columns
_UUIDS = [uuid.UUID("12345678-1234-5678-1234-567812345678"), uuid.UUID(int=5), None]


def _uuid_physical_types(t):
    out = set()
    for f in t.plan_files():
        col = pq.ParquetFile(f.file_path).schema.column(1)
        out.add(col.physical_type + ("" if col.physical_type != "FIXED_LEN_BYTE_ARRAY" else f"({col.length})"))
    return out


def test_uuid_column_arrow_path(catalog, duck):
    """uuid values given as 16-byte binaries are stored as fixed[16]; the other readers see UUIDs."""
    t = catalog.create_table("db.uuid_arrow", "id bigint not null, u uuid")
    t.append(pa.table({"id": pa.array(range(3), pa.int64()),
                       "u": pa.array([u.bytes if u else None for u in _UUIDS], pa.binary(16))}))
    assert _uuid_physical_types(t) == {"FIXED_LEN_BYTE_ARRAY(16)"}
    got = pyiceberg_table(t.metadata_location).scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["u"]) for r in got) == list(enumerate(_UUIDS))
    dgot = duck.execute(f"SELECT id, u FROM iceberg_scan('{t.metadata_location}') ORDER BY id").fetchall()
    assert dgot == list(enumerate(_UUIDS))


def test_uuid_column_spark_path(catalog, spark, duck):
    t = catalog.create_table("db.uuid_spark", "id bigint not null, u uuid")
    df = spark.createDataFrame([(i, str(u) if u else None) for i, u in enumerate(_UUIDS)], "id bigint, u string")
    t.append(df)
    assert _uuid_physical_types(t) == {"FIXED_LEN_BYTE_ARRAY(16)"}
    got = pyiceberg_table(t.metadata_location).scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["u"]) for r in got) == list(enumerate(_UUIDS))


def test_uuid_column_read_back_by_spark(catalog, spark):
    t = catalog.create_table("db.uuid_read", "id bigint not null, u uuid")
    t.append(pa.table({"id": pa.array(range(3), pa.int64()),
                       "u": pa.array([u.bytes if u else None for u in _UUIDS], pa.binary(16))}))
    got = sorted(tuple(r) for r in t.to_spark().collect())
    assert got == [(i, str(u) if u else None) for i, u in enumerate(_UUIDS)]
