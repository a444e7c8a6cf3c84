"""Manifests and manifest lists: write, read back, and read with an independent reader.

Writes a v2 manifest for a spec with year/month/day/hour, bucket, truncate and
identity (date, decimal, uuid, timestamp, time) partition fields, plus a manifest
list pointing at it, then checks

* icefloe's own readers give back exactly what was written, with ADDED entries
  inheriting snapshot id and sequence numbers from the manifest-list entry;
* the Avro schemas in the file headers carry the spec's field ids;
* the manifest's key/value metadata (schema, partition-spec, ...);
* pyiceberg, reading the same files with its own Avro decoder, sees the same values.
"""
import datetime as dt
import decimal
import json
import uuid

import pytest

from icefloe.core.io import FileIO
from icefloe.core.types import parse_schema
from icefloe.iceberg import conversions as C
from icefloe.iceberg.manifest import (
    ADDED, DATA, DELETED, EQUALITY_DELETES, EXISTING, POSITION_DELETES, DataFile, ManifestEntry,
)
from icefloe.iceberg.manifest_avro import entries_from_records, read_manifest_raw, write_manifest
from icefloe.iceberg.manifest_list import (
    DATA_MANIFEST, DELETE_MANIFEST, FieldSummary, manifest_file_for, read_manifest_list,
    write_manifest_list,
)
from icefloe.iceberg.partitioning import UNPARTITIONED, build_spec
from icefloe.iceberg.schema import schema_from_json, schema_to_json

SNAPSHOT_ID = 8_123_456_789_012_345_678
PARENT_ID = 4_000_000_000_000_000_001
SEQ = 5

SCHEMA = parse_schema(
    "id bigint not null, name string, ts timestamp, ntz timestamp_ntz, d date, "
    "amount decimal(10,2), u uuid, t time")
TERMS = ["years(ts)", "months(ntz)", "days(ts)", "hours(ts)", "bucket(16, id)", "truncate(3, name)",
         "d", "amount", "u", "ntz", "t"]
SPEC = build_spec(SCHEMA, TERMS, spec_id=3)
PTYPE = SPEC.partition_type(SCHEMA)

U1 = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
U2 = uuid.UUID("00000000-0000-4000-8000-000000000001")


def _row(id_, name, ts, d, amount, u, t):
    """Internal values by field id; ``ts`` is a UTC wall time used for both ts and ntz."""
    names = {"id": id_, "name": name, "ts": None if ts is None else ts + "+00:00", "ntz": ts, "d": d,
             "amount": amount, "u": u, "t": t}
    return {SCHEMA.find_field(k).field_id: C.to_internal(SCHEMA.find_field(k).field_type, v)
            for k, v in names.items()}


ROWS = {
    "new_2023": _row(1, "iceberg", "2023-12-31T00:12:00", "2023-12-31", "12.34", str(U1), "22:31:08"),
    "new_1969": _row(-5, "épée日本", "1969-12-31T23:59:59.999999", "1969-12-31", "-0.01", str(U2), "00:00:00"),
    "new_nulls": _row(7, None, None, None, None, None, None),
    "new_explicit": _row(8, "x", "2024-02-29T12:00:00", "2024-02-29", "0.00", str(U1), "12:00:00"),
    "existing_2022": _row(2, "ice", "2022-06-01T10:00:00", "2022-06-01", "99999999.99", str(U2), "01:00:00"),
    "deleted_2021": _row(3, "old", "2021-01-01T00:00:00", "2021-01-01", "1.00", str(U1), "02:00:00"),
}


def _data_file(key, content=DATA, **extra):
    row = ROWS[key]
    id_field = SCHEMA.find_field("id").field_id
    return DataFile(
        file_path=f"file:/warehouse/db/t/data/{key}.parquet", file_format="PARQUET",
        partition=SPEC.partition_for_row(SCHEMA, row), record_count=10 + len(key),
        file_size_in_bytes=1000 + len(key), content=content,
        column_sizes={id_field: 40, 2: 77}, value_counts={id_field: 10, 2: 10},
        null_value_counts={id_field: 0, 2: 1}, nan_value_counts={},
        lower_bounds={id_field: C.to_bytes(SCHEMA.find_field("id").field_type, row[id_field])},
        upper_bounds={id_field: C.to_bytes(SCHEMA.find_field("id").field_type, row[id_field] + 100)},
        split_offsets=[4], sort_order_id=0, spec_id=SPEC.spec_id, **extra)


def _entries():
    return [
        ManifestEntry(ADDED, None, None, None, _data_file("new_2023")),
        ManifestEntry(ADDED, None, None, None, _data_file("new_1969")),
        ManifestEntry(ADDED, None, None, None, _data_file("new_nulls")),
        # an added entry with explicit numbers keeps them (inheritance only fills nulls)
        ManifestEntry(ADDED, SNAPSHOT_ID, 3, 4, _data_file("new_explicit")),
        ManifestEntry(EXISTING, 11, 2, 2, _data_file("existing_2022")),
        ManifestEntry(DELETED, SNAPSHOT_ID, 1, 1, _data_file("deleted_2021")),
    ]


def _expected_after_inheritance(entries):
    out = []
    for e in entries:
        snap = SNAPSHOT_ID if e.snapshot_id is None else e.snapshot_id
        seq, fseq = e.sequence_number, e.file_sequence_number
        if e.status == ADDED:
            seq = SEQ if seq is None else seq
            fseq = SEQ if fseq is None else fseq
        out.append(ManifestEntry(e.status, snap, seq, fseq, e.data_file))
    return out


@pytest.fixture(params=["plain", "uri"])
def written(request, tmp_path):
    base = str(tmp_path) if request.param == "plain" else f"file://{tmp_path}"
    io = FileIO()
    entries = _entries()
    mpath = f"{base}/metadata/m0.avro"
    length = write_manifest(io, mpath, SCHEMA, SPEC, entries)
    mf = manifest_file_for(mpath, length, SPEC.spec_id, DATA_MANIFEST, SNAPSHOT_ID, SEQ, entries, PTYPE)
    lpath = f"{base}/metadata/snap-{SNAPSHOT_ID}.avro"
    write_manifest_list(io, lpath, [mf], SNAPSHOT_ID, PARENT_ID, SEQ)
    return {"io": io, "entries": entries, "mpath": mpath, "length": length, "mf": mf, "lpath": lpath}


# ------------------------------------------------------------------ the partition tuples themselves
def test_partition_tuples_are_spec_values():
    by_name = dict(zip([f.name for f in SPEC.fields], SPEC.partition_for_row(SCHEMA, ROWS["new_1969"])))
    assert by_name["ts_year"] == -1 and by_name["ntz_month"] == -1
    assert by_name["ts_day"] == -1 and by_name["ts_hour"] == -1
    assert by_name["name_trunc"] == "épé"
    assert by_name["d"] == -1 and by_name["amount"] == decimal.Decimal("-0.01")
    assert by_name["u"] == U2 and by_name["ntz"] == -1 and by_name["t"] == 0
    new = dict(zip([f.name for f in SPEC.fields], SPEC.partition_for_row(SCHEMA, ROWS["new_2023"])))
    assert (new["ts_year"], new["ntz_month"], new["ts_day"], new["ts_hour"]) == (53, 647, 19722, 473328)
    assert SPEC.partition_path(SCHEMA, SPEC.partition_for_row(SCHEMA, ROWS["new_2023"])).startswith(
        "ts_year=2023/ntz_month=2023-12/ts_day=2023-12-31/ts_hour=2023-12-31-00/")
    assert all(v is None for v in SPEC.partition_for_row(SCHEMA, ROWS["new_nulls"])[:4])


# ------------------------------------------------------------------ icefloe reads back
def test_manifest_list_round_trip(written):
    got = read_manifest_list(written["io"], written["lpath"])
    assert got == [written["mf"]]
    mf = got[0]
    assert mf.manifest_path == written["mpath"]
    assert mf.manifest_length == written["length"] == written["io"].size(written["mpath"])
    assert (mf.partition_spec_id, mf.content, mf.sequence_number) == (3, DATA_MANIFEST, SEQ)
    assert mf.added_snapshot_id == SNAPSHOT_ID
    assert (mf.added_files_count, mf.existing_files_count, mf.deleted_files_count) == (4, 1, 1)
    rows = {k: 10 + len(k) for k in ROWS}
    assert mf.added_rows_count == rows["new_2023"] + rows["new_1969"] + rows["new_nulls"] + rows["new_explicit"]
    assert mf.existing_rows_count == rows["existing_2022"]
    assert mf.deleted_rows_count == rows["deleted_2021"]
    # lowest data sequence number of the live entries: the existing entry's 2
    assert mf.min_sequence_number == 2


def test_partition_summaries(written):
    mf = read_manifest_list(written["io"], written["lpath"])[0]
    assert len(mf.partitions) == len(SPEC.fields)
    tuples = [e.data_file.partition for e in written["entries"]]
    for i, f in enumerate(PTYPE.fields):
        values = [t[i] for t in tuples if t[i] is not None]
        s = mf.partitions[i]
        # the row of nulls; the bucket of the required id is never null
        assert s.contains_null is (f.name != "id_bucket"), f.name
        assert s.contains_nan is False
        assert s.lower_bound == C.to_bytes(f.field_type, min(values)), f.name
        assert s.upper_bound == C.to_bytes(f.field_type, max(values)), f.name
    year = mf.partitions[0]
    assert year.lower_bound == b"\xff\xff\xff\xff"  # -1: 1969
    assert year.upper_bound == b"6\x00\x00\x00"  # 54: 2024


def test_year_52_summary_seed_value(tmp_path):
    io = FileIO()
    schema = parse_schema("id bigint, ts timestamp")
    spec = build_spec(schema, ["years(ts)"])
    entries = [ManifestEntry(ADDED, None, None, None,
                             DataFile(f"/d/{y}.parquet", "PARQUET", (y,), 1, 10)) for y in (53, 52)]
    p = str(tmp_path / "m.avro")
    n = write_manifest(io, p, schema, spec, entries)
    mf = manifest_file_for(p, n, 0, DATA_MANIFEST, 1, 1, entries, spec.partition_type(schema))
    assert mf.partitions == [FieldSummary(False, False, b"4\x00\x00\x00", b"5\x00\x00\x00")]
    write_manifest_list(io, str(tmp_path / "l.avro"), [mf], 1, None, 1)
    assert read_manifest_list(io, str(tmp_path / "l.avro"))[0].partitions == mf.partitions


def test_manifest_entries_round_trip_with_inheritance(written):
    io = written["io"]
    mf = read_manifest_list(io, written["lpath"])[0]
    meta, records = read_manifest_raw(io, mf.manifest_path)
    # on disk, the ADDED entries written with nulls keep their nulls ...
    assert [(r["status"], r["snapshot_id"], r["sequence_number"], r["file_sequence_number"])
            for r in records] == [(1, None, None, None)] * 3 + [
        (1, SNAPSHOT_ID, 3, 4), (0, 11, 2, 2), (2, SNAPSHOT_ID, 1, 1)]
    # ... and reading inherits from the manifest-list entry
    got = entries_from_records(records, PTYPE, mf.partition_spec_id, mf.added_snapshot_id, mf.sequence_number)
    assert got == _expected_after_inheritance(written["entries"])
    for e in got[:3]:
        assert (e.snapshot_id, e.sequence_number, e.file_sequence_number) == (SNAPSHOT_ID, SEQ, SEQ)
    assert got[1].data_file.partition == SPEC.partition_for_row(SCHEMA, ROWS["new_1969"])
    assert got[0].data_file.lower_bounds == {1: b"\x01" + b"\x00" * 7}


def test_manifest_key_value_metadata(written):
    meta, _ = read_manifest_raw(written["io"], written["mpath"])
    for key in ("schema", "schema-id", "partition-spec", "partition-spec-id", "format-version", "content"):
        assert key in meta, key
    assert json.loads(meta["schema"]) == schema_to_json(SCHEMA)
    assert schema_from_json(json.loads(meta["schema"])) == SCHEMA
    assert meta["schema-id"] == str(SCHEMA.schema_id)
    assert json.loads(meta["partition-spec"]) == SPEC.fields_json()
    assert [f["field-id"] for f in json.loads(meta["partition-spec"])] == list(range(1000, 1000 + len(TERMS)))
    assert json.loads(meta["partition-spec"])[0] == {
        "name": "ts_year", "transform": "year", "source-id": SCHEMA.find_field("ts").field_id, "field-id": 1000}
    assert meta["partition-spec-id"] == "3"
    assert meta["format-version"] == "2"
    assert meta["content"] == "data"


def _walk_fields(avro_type, path=()):
    """Yield (path, field dict) of every record field in an Avro schema, nested ones too."""
    if isinstance(avro_type, list):
        for branch in avro_type:
            yield from _walk_fields(branch, path)
    elif isinstance(avro_type, dict):
        if avro_type.get("type") == "record":
            for f in avro_type["fields"]:
                yield path + (f["name"],), f
                yield from _walk_fields(f["type"], path + (f["name"],))
        elif avro_type.get("type") == "array":
            yield from _walk_fields(avro_type["items"], path)


def _arrays(avro_type):
    if isinstance(avro_type, list):
        for b in avro_type:
            yield from _arrays(b)
    elif isinstance(avro_type, dict):
        if avro_type.get("type") == "array":
            yield avro_type
            yield from _arrays(avro_type["items"])
        elif avro_type.get("type") == "record":
            for f in avro_type["fields"]:
                yield from _arrays(f["type"])


def _nonnull(t):
    return next(b for b in t if b != "null") if isinstance(t, list) else t


def test_manifest_avro_schema_keeps_field_ids(written):
    meta, _ = read_manifest_raw(written["io"], written["mpath"])
    schema = json.loads(meta["avro.schema"])
    assert schema["name"] == "manifest_entry"
    fields = dict(_walk_fields(schema))
    missing = [p for p, f in fields.items() if "field-id" not in f]
    assert not missing, f"fields without field-id: {missing}"
    ids = {p: f["field-id"] for p, f in fields.items()}
    assert ids[("status",)] == 0 and ids[("snapshot_id",)] == 1 and ids[("data_file",)] == 2
    assert ids[("sequence_number",)] == 3 and ids[("file_sequence_number",)] == 4
    df = {p[1]: i for p, i in ids.items() if len(p) == 2 and p[0] == "data_file"}
    assert df == {"content": 134, "file_path": 100, "file_format": 101, "partition": 102,
                  "record_count": 103, "file_size_in_bytes": 104, "column_sizes": 108,
                  "value_counts": 109, "null_value_counts": 110, "nan_value_counts": 137,
                  "lower_bounds": 125, "upper_bounds": 128, "key_metadata": 131, "split_offsets": 132,
                  "equality_ids": 135, "sort_order_id": 140, "referenced_data_file": 143}
    # map key/value ids (spec: map<117: int, 118: long> ...)
    kv = {p[1:]: i for p, i in ids.items() if p[0] == "data_file" and len(p) == 3 and p[1] != "partition"}
    assert kv == {("column_sizes", "key"): 117, ("column_sizes", "value"): 118,
                  ("value_counts", "key"): 119, ("value_counts", "value"): 120,
                  ("null_value_counts", "key"): 121, ("null_value_counts", "value"): 122,
                  ("nan_value_counts", "key"): 138, ("nan_value_counts", "value"): 139,
                  ("lower_bounds", "key"): 126, ("lower_bounds", "value"): 127,
                  ("upper_bounds", "key"): 129, ("upper_bounds", "value"): 130}
    # partition fields: the partition field ids
    part = {p[2]: f for p, f in fields.items() if p[:2] == ("data_file", "partition") and len(p) == 3}
    assert {n: f["field-id"] for n, f in part.items()} == {f.name: f.field_id for f in PTYPE.fields}
    # int-keyed maps are arrays of records with logicalType map; lists carry element-id
    arrays = list(_arrays(schema))
    maps = [a for a in arrays if a.get("logicalType") == "map"]
    assert len(maps) == 6
    assert sorted(a["element-id"] for a in arrays if "element-id" in a) == [133, 136]
    # partition value types
    types = {n: _nonnull(f["type"]) for n, f in part.items()}
    assert types["ts_year"] == "int" and types["id_bucket"] == "int" and types["name_trunc"] == "string"
    assert types["ts_day"]["logicalType"] == "date" and types["d"]["logicalType"] == "date"
    assert types["amount"]["type"] == "fixed" and types["amount"]["logicalType"] == "decimal"
    assert (types["amount"]["precision"], types["amount"]["scale"], types["amount"]["size"]) == (10, 2, 5)
    assert types["u"]["type"] == "fixed" and types["u"]["size"] == 16 and types["u"]["logicalType"] == "uuid"
    assert types["ntz"]["logicalType"] == "timestamp-micros" and types["ntz"]["adjust-to-utc"] is False
    assert types["t"]["logicalType"] == "time-micros"


def test_manifest_list_avro_schema_and_metadata(written):
    import fastavro

    with open(written["lpath"].replace("file://", ""), "rb") as f:
        reader = fastavro.reader(f)
        meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in reader.metadata.items()}
    assert meta["snapshot-id"] == str(SNAPSHOT_ID)
    assert meta["parent-snapshot-id"] == str(PARENT_ID)
    assert meta["sequence-number"] == str(SEQ)
    assert meta["format-version"] == "2"
    schema = json.loads(meta["avro.schema"])
    assert schema["name"] == "manifest_file"
    fields = dict(_walk_fields(schema))
    assert not [p for p, f in fields.items() if "field-id" not in f]
    ids = {p[-1]: f["field-id"] for p, f in fields.items()}
    assert ids == {"manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502, "content": 517,
                   "sequence_number": 515, "min_sequence_number": 516, "added_snapshot_id": 503,
                   "added_files_count": 504, "existing_files_count": 505, "deleted_files_count": 506,
                   "added_rows_count": 512, "existing_rows_count": 513, "deleted_rows_count": 514,
                   "partitions": 507, "contains_null": 509, "contains_nan": 518, "lower_bound": 510,
                   "upper_bound": 511, "key_metadata": 519}
    assert [a["element-id"] for a in _arrays(schema)] == [508]


def test_manifest_list_without_parent(tmp_path):
    io = FileIO()
    p = str(tmp_path / "l.avro")
    write_manifest_list(io, p, [], 1, None, 1)
    import fastavro

    with open(p, "rb") as f:
        assert fastavro.reader(f).metadata["parent-snapshot-id"] == "null"
    assert read_manifest_list(io, p) == []


# ------------------------------------------------------------------ other manifest shapes
def test_unpartitioned_manifest(tmp_path):
    io = FileIO()
    schema = parse_schema("id bigint")
    entries = [ManifestEntry(ADDED, None, None, None, DataFile("/d/a.parquet", "PARQUET", (), 3, 30))]
    p = str(tmp_path / "m.avro")
    n = write_manifest(io, p, schema, UNPARTITIONED, entries)
    mf = manifest_file_for(p, n, 0, DATA_MANIFEST, 9, 2, entries, UNPARTITIONED.partition_type(schema))
    assert mf.partitions == []
    lp = str(tmp_path / "l.avro")
    write_manifest_list(io, lp, [mf], 9, None, 2)
    meta, records = read_manifest_raw(io, p)
    assert json.loads(meta["partition-spec"]) == []
    got = entries_from_records(records, UNPARTITIONED.partition_type(schema), 0, 9, 2)
    assert got == [ManifestEntry(ADDED, 9, 2, 2, entries[0].data_file)]
    pyi = _pyiceberg_entries(lp)
    assert [(int(e.status), e.snapshot_id, e.sequence_number, len(e.data_file.partition)) for e in pyi] == \
        [(1, 9, 2, 0)]


@pytest.mark.parametrize("content", [POSITION_DELETES, EQUALITY_DELETES])
def test_delete_manifest(tmp_path, content):
    io = FileIO()
    extra = {"equality_ids": [1]} if content == EQUALITY_DELETES else {}
    df = DataFile("/d/del.parquet", "PARQUET", SPEC.partition_for_row(SCHEMA, ROWS["new_2023"]), 2, 20,
                  content=content, spec_id=SPEC.spec_id, **extra)
    entries = [ManifestEntry(ADDED, None, None, None, df)]
    p = str(tmp_path / "d.avro")
    n = write_manifest(io, p, SCHEMA, SPEC, entries, content=content)
    meta, records = read_manifest_raw(io, p)
    assert meta["content"] == "deletes"
    mf = manifest_file_for(p, n, SPEC.spec_id, DELETE_MANIFEST, 12, 6, entries, PTYPE)
    lp = str(tmp_path / "l.avro")
    write_manifest_list(io, lp, [mf], 12, None, 6)
    assert read_manifest_list(io, lp)[0].content == DELETE_MANIFEST
    got = entries_from_records(records, PTYPE, SPEC.spec_id, 12, 6)
    assert got == [ManifestEntry(ADDED, 12, 6, 6, df)]
    pyi_mf = _pyiceberg_manifest_list(lp)[0]
    assert int(pyi_mf.content) == DELETE_MANIFEST
    pyi = _pyiceberg_entries(lp)[0]
    assert int(pyi.data_file.content) == content
    assert pyi.data_file.equality_ids == extra.get("equality_ids")
    assert (pyi.snapshot_id, pyi.sequence_number, pyi.file_sequence_number) == (12, 6, 6)


# ------------------------------------------------------------------ pyiceberg, an independent reader
def _pyiceberg_manifest_list(path):
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list as pyi_read_manifest_list

    return list(pyi_read_manifest_list(PyArrowFileIO().new_input(path)))


def _pyiceberg_entries(list_path):
    from pyiceberg.io.pyarrow import PyArrowFileIO

    io = PyArrowFileIO()
    out = []
    for mf in _pyiceberg_manifest_list(list_path):
        out.extend(mf.fetch_manifest_entry(io, discard_deleted=False))
    return out


def _pyiceberg_type(t):
    from pyiceberg import types as pt

    s = str(t)
    if s.startswith("decimal"):
        return pt.DecimalType(t.precision, t.scale)
    return {"int": pt.IntegerType(), "long": pt.LongType(), "date": pt.DateType(), "string": pt.StringType(),
            "uuid": pt.UUIDType(), "timestamp": pt.TimestampType(), "timestamptz": pt.TimestamptzType(),
            "time": pt.TimeType()}[s]


def test_pyiceberg_reads_the_manifest_list(written):
    from pyiceberg import conversions as pyc

    [m] = _pyiceberg_manifest_list(written["lpath"])
    ours = written["mf"]
    assert m.manifest_path == ours.manifest_path
    assert m.manifest_length == ours.manifest_length
    assert m.partition_spec_id == 3
    assert int(m.content) == DATA_MANIFEST
    assert (m.sequence_number, m.min_sequence_number, m.added_snapshot_id) == (SEQ, 2, SNAPSHOT_ID)
    assert (m.added_files_count, m.existing_files_count, m.deleted_files_count) == (4, 1, 1)
    assert (m.added_rows_count, m.existing_rows_count, m.deleted_rows_count) == \
        (ours.added_rows_count, ours.existing_rows_count, ours.deleted_rows_count)
    assert m.key_metadata is None
    assert len(m.partitions) == len(PTYPE.fields)
    tuples = [e.data_file.partition for e in written["entries"]]
    for i, (p, f) in enumerate(zip(m.partitions, PTYPE.fields)):
        assert (p.contains_null, p.contains_nan) == (f.name != "id_bucket", False)
        values = [t[i] for t in tuples if t[i] is not None]
        # pyiceberg decodes the bounds to the same min/max values
        lo = pyc.from_bytes(_pyiceberg_type(f.field_type), p.lower_bound)
        hi = pyc.from_bytes(_pyiceberg_type(f.field_type), p.upper_bound)
        if str(f.field_type) == "uuid":  # pyiceberg leaves uuid bounds as their 16 bytes
            lo, hi = uuid.UUID(bytes=lo), uuid.UUID(bytes=hi)
        assert (lo, hi) == (min(values), max(values)), f.name


def test_pyiceberg_reads_the_manifest(written):
    got = _pyiceberg_entries(written["lpath"])
    expected = _expected_after_inheritance(written["entries"])
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert int(g.status) == e.status
        # pyiceberg's own sequence-number and snapshot-id inheritance agrees with ours
        assert (g.snapshot_id, g.sequence_number, g.file_sequence_number) == \
            (e.snapshot_id, e.sequence_number, e.file_sequence_number)
        f, df = g.data_file, e.data_file
        assert int(f.content) == df.content
        assert f.file_path == df.file_path
        assert f.file_format.value == df.file_format
        assert tuple(f.partition[i] for i in range(len(f.partition))) == df.partition
        assert (f.record_count, f.file_size_in_bytes) == (df.record_count, df.file_size_in_bytes)
        assert dict(f.column_sizes) == df.column_sizes
        assert dict(f.value_counts) == df.value_counts
        assert dict(f.null_value_counts) == df.null_value_counts
        assert dict(f.nan_value_counts or {}) == df.nan_value_counts
        assert dict(f.lower_bounds) == df.lower_bounds
        assert dict(f.upper_bounds) == df.upper_bounds
        assert f.key_metadata == df.key_metadata
        assert f.split_offsets == df.split_offsets
        assert f.equality_ids == df.equality_ids
        assert f.sort_order_id == df.sort_order_id
        assert f.spec_id == df.spec_id == SPEC.spec_id


def test_pyiceberg_parses_the_manifest_metadata(written):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema as PySchema

    meta, _ = read_manifest_raw(written["io"], written["mpath"])
    py_schema = PySchema.model_validate_json(meta["schema"])
    assert [(f.field_id, f.name, f.required) for f in py_schema.fields] == \
        [(f.field_id, f.name, f.required) for f in SCHEMA.fields]
    assert [str(f.field_type) for f in py_schema.fields] == \
        ["long", "string", "timestamptz", "timestamp", "date", "decimal(10, 2)", "uuid", "time"]
    py_spec = PartitionSpec(*[PartitionField.model_validate(f) for f in json.loads(meta["partition-spec"])],
                            spec_id=int(meta["partition-spec-id"]))
    assert [(f.field_id, f.name, str(f.transform)) for f in py_spec.fields] == \
        [(f.field_id, f.name, str(f.transform)) for f in SPEC.fields]
    # pyiceberg's partition type for this schema and spec matches ours
    py_ptype = py_spec.partition_type(py_schema)
    assert [(f.field_id, f.name, str(f.field_type)) for f in py_ptype.fields] == \
        [(f.field_id, f.name, str(f.field_type)) for f in PTYPE.fields]


def test_pyiceberg_computes_the_same_partition_tuples():
    """pyiceberg's transforms, applied to the same rows, give the tuples written above."""
    from pyiceberg.transforms import parse_transform as pyi_parse

    for key, row in ROWS.items():
        ours = SPEC.partition_for_row(SCHEMA, row)
        theirs = []
        for pf in SPEC.fields:
            src = SCHEMA.find_field(pf.source_id).field_type
            v = row[pf.source_id]
            theirs.append(pyi_parse(str(pf.transform)).transform(_pyiceberg_type(src))(v))
        assert tuple(theirs) == ours, key


def test_partition_values_keep_their_types_through_avro(written):
    """Dates, timestamps, times, decimals and uuids come back as internal values, not Python objects."""
    meta, records = read_manifest_raw(written["io"], written["mpath"])
    got = entries_from_records(records, PTYPE, 3, SNAPSHOT_ID, SEQ)
    names = [f.name for f in PTYPE.fields]
    p = dict(zip(names, got[0].data_file.partition))
    assert isinstance(p["ts_day"], int) and isinstance(p["d"], int) and isinstance(p["ntz"], int)
    assert isinstance(p["t"], int) and isinstance(p["u"], uuid.UUID)
    assert p["amount"] == decimal.Decimal("12.34") and p["amount"].as_tuple().exponent == -2
    assert p["ntz"] == C.to_internal(SCHEMA.find_field("ntz").field_type, dt.datetime(2023, 12, 31, 0, 12))
