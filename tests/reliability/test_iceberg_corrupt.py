"""Corrupt inputs of Iceberg tables: every damaged file is an icefloe error that names it.

A small partitioned table gets three pyarrow appends; then one file is damaged (the current
``vN.metadata.json``, the current manifest list, a manifest, a data file) and the table is
loaded, planned and read. Each case says at which stage the damage must surface:

* ``load``: ``load_table`` already fails (table metadata);
* ``plan``: loading works, ``plan_files()`` and ``to_arrow()`` fail (manifest lists, manifests);
* ``read``: planning works, ``to_arrow()`` fails (data files).

The error is an :class:`IcefloeError` (never a ``KeyError``, ``fastavro`` or ``pyarrow`` error
escaping from deep inside a library), its message holds the damaged file's name and a short
reason, and snapshots that do not reach the damaged file still read in full. Broken
``version-hint.text`` files neither hide the committed snapshot nor invent one.

A few cases read through Spark (``to_spark().collect()``), for Iceberg and Paimon tables.
"""
import json
import os
import shutil

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.catalog import to_schema
from icefloe.errors import CorruptDataFileError, CorruptMetadataError, IcefloeError
from icefloe.catalog import Catalog
from icefloe.iceberg import manifest_reader

NAME = "db.t"
SCHEMA = "id bigint not null, name string, p int"
BATCHES = [list(range(10 * k, 10 * k + 4)) for k in range(3)]
EXPECTED = sorted(i for b in BATCHES for i in b)


def rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "p": pa.array([i % 2 for i in ids], pa.int32())})


def load(wh):
    return Catalog(wh).load_table(NAME)


def _forget_cached_metadata():
    """Manifests and manifest lists are cached by path (they are immutable); a test that damages
    one after this process read it must drop the cache to see the damage, as a new process would."""
    manifest_reader.clear_manifest_cache()


def build(tmp_path):
    wh = str(tmp_path / "wh")
    t = Catalog(wh).create_table(NAME, to_schema(SCHEMA), partitioned_by=["p"])
    for ids in BATCHES:
        t.append(rows(ids))
    return wh, load(wh)


def reachable(t, snap):
    """Every file a read of ``snap`` opens: manifest list, manifests, data files."""
    out = {snap.manifest_list}
    for m in manifest_reader.load_manifest_list(t.io, snap.manifest_list):
        out.add(m.manifest_path)
        out.update(e.data_file.file_path for e in manifest_reader.load_manifest_entries(t.io, t.metadata, m))
    return out


# --------------------------------------------------------------------------- where
def _current_metadata(t):
    return t.metadata_location


def _manifest_list(t):
    return t.current_snapshot().manifest_list


def _manifest_of(t, snap):
    return next(m.manifest_path for m in manifest_reader.load_manifest_list(t.io, _manifest_list(t))
                if m.added_snapshot_id == snap.snapshot_id)


def _oldest_manifest(t):
    """The first append's manifest: every snapshot reaches it."""
    return _manifest_of(t, t.snapshots()[0])


def _newest_manifest(t):
    return _manifest_of(t, t.current_snapshot())


def _newest_data_file(t):
    snap = t.current_snapshot()
    return sorted(f.file_path for f in t.plan_files() if f.file_path in _newest_files(t, snap))[0]


def _newest_files(t, snap):
    m = next(m for m in manifest_reader.load_manifest_list(t.io, snap.manifest_list)
             if m.added_snapshot_id == snap.snapshot_id)
    return {e.data_file.file_path for e in manifest_reader.load_manifest_entries(t.io, t.metadata, m)}


# --------------------------------------------------------------------------- damage
def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _empty(path):
    _write(path, b"")


def _garbage(path):
    _write(path, b"\x00\xffnot what you think\x13\x37" * 5)


def _keep(n):
    """Truncate to the first ``n`` bytes (negative: drop the last ``-n``)."""
    def corrupt(path):
        _write(path, _read(path)[:n])
    return corrupt


def _half(path):
    data = _read(path)
    _write(path, data[: len(data) // 2])


def _zero_middle(path):
    data = bytearray(_read(path))
    mid = len(data) // 2
    data[mid - 16: mid + 16] = bytes(32)
    _write(path, bytes(data))


def _text(text):
    def corrupt(path):
        _write(path, text.encode("utf-8") if isinstance(text, str) else text)
    return corrupt


def _json_edit(fn):
    def corrupt(path):
        with open(path) as f:
            doc = json.load(f)
        fn(doc)
        with open(path, "w") as f:
            json.dump(doc, f)
    return corrupt


def _without(*keys):
    return _json_edit(lambda d: [d.pop(k) for k in keys])


def _set(key, value):
    return _json_edit(lambda d: d.__setitem__(key, value))


def _edit_first_snapshot_entry(fn):
    """Edit the current snapshot's entry in the metadata's ``snapshots`` list."""
    def edit(doc):
        snap = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
        fn(snap)
    return _json_edit(edit)


def _schema_field(fn):
    return _json_edit(lambda d: fn(d["schemas"][0]["fields"][0]))


def _spec_field(fn):
    return _json_edit(lambda d: fn(d["partition-specs"][0]["fields"][0]))


def _avro_header_only(path):
    """Cut an Avro file right after its header: a valid container with no records."""
    with open(path, "rb") as f:
        fastavro.reader(f)
        end = f.tell()
    _write(path, _read(path)[:end])


def _avro_other_schema(path):
    """A valid Avro file of some other record type."""
    schema = fastavro.parse_schema({"type": "record", "name": "other",
                                    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}]})
    with open(path, "wb") as f:
        fastavro.writer(f, schema, [{"a": i, "b": "x"} for i in range(3)])


def _avro_records(path, fn):
    """Rewrite an Avro file with its own schema and metadata, each record passed through ``fn``."""
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        schema, meta = reader.writer_schema, dict(reader.metadata)
        records = [fn(dict(r)) for r in reader]
    meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in meta.items() if not k.startswith("avro.")}
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, codec="deflate", metadata=meta)


def _list_entries(**changes):
    return lambda path: _avro_records(path, lambda r: {**r, **changes})


def _list_points_to_missing_manifest(path):
    _avro_records(path, lambda r: {**r, "manifest_path": r["manifest_path"].replace("-m0.avro", "-gone.avro")})


def _parquet_other_columns(path):
    pq.write_table(pa.table({"x": [1, 2], "y": ["a", "b"]}), path)


def _parquet_fewer_rows(path):
    """A valid data file with the table's columns (and field ids) but one row less."""
    table = pq.ParquetFile(path).read()
    pq.write_table(table.slice(0, table.num_rows - 1), path)


def _parquet_flipped_value_with_checksums(path):
    """Rewrite the file as a writer that stores page checksums would (parquet-mr does by
    default), then flip a bit inside an ``id`` value: without the checksum that reads as a
    different number, silently."""
    table = pq.ParquetFile(path).read()
    pq.write_table(table, path, write_page_checksum=True, compression="none", use_dictionary=False)
    col = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert col.path_in_schema == "id"
    data = bytearray(_read(path))
    data[col.data_page_offset + col.total_compressed_size - 3] ^= 0x10   # in the last id's 8 bytes
    _write(path, bytes(data))


def _list_manifest_path_with_nul(path):
    _avro_records(path, lambda r: {**r, "manifest_path": r["manifest_path"][:-6] + "\x00.avro"})


# name -> (where, damage, stage, reason that must appear in the message)
METADATA_CASES = {
    "meta-empty": (_empty, "JSON"),
    "meta-first-byte": (_keep(1), "JSON"),
    "meta-first-10-bytes": (_keep(10), "JSON"),
    "meta-half": (_half, "JSON"),
    "meta-last-byte-cut": (_keep(-1), "JSON"),
    "meta-garbage": (_garbage, "JSON"),
    "meta-not-utf8": (_text(b'{"format-version": 2, "location": "\xff\xfe"}'), "JSON"),
    "meta-deeply-nested": (_text("[" * 100_000 + "]" * 100_000), "JSON"),
    "meta-null": (_text("null"), "object"),
    "meta-array": (_text("[1, 2, 3]"), "object"),
    "meta-zeroed-middle": (_zero_middle, "JSON"),
    "meta-missing-format-version": (_without("format-version"), "format-version"),
    "meta-format-version-3": (_set("format-version", 3), "format-version"),
    "meta-format-version-string": (_set("format-version", "2"), "format-version"),
    "meta-missing-location": (_without("location"), "location"),
    "meta-missing-schemas": (_without("schemas"), "schemas"),
    "meta-schemas-empty": (_set("schemas", []), "schemas"),
    "meta-schemas-not-a-list": (_set("schemas", {"a": 1}), "schemas"),
    "meta-missing-current-schema-id": (_without("current-schema-id"), "current-schema-id"),
    "meta-unknown-current-schema-id": (_set("current-schema-id", 42), "current-schema-id"),
    "meta-schema-bad-type": (_schema_field(lambda f: f.__setitem__("type", "NOT A TYPE")), "schemas"),
    "meta-schema-field-without-id": (_schema_field(lambda f: f.pop("id")), "id"),
    "meta-missing-partition-specs": (_without("partition-specs"), "partition-specs"),
    "meta-unknown-default-spec-id": (_set("default-spec-id", 7), "default-spec-id"),
    "meta-spec-bad-transform": (_spec_field(lambda f: f.__setitem__("transform", "frobnicate[3]")), "transform"),
    "meta-spec-unknown-source-column": (_spec_field(lambda f: f.__setitem__("source-id", 99)), "99"),
    "meta-missing-last-column-id": (_without("last-column-id"), "last-column-id"),
    "meta-missing-last-updated-ms": (_without("last-updated-ms"), "last-updated-ms"),
    "meta-properties-not-an-object": (_set("properties", ["a", "b"]), "properties"),
    "meta-snapshots-not-a-list": (_set("snapshots", 5), "snapshots"),
    "meta-snapshot-not-an-object": (_set("snapshots", ["snap"]), "snapshot"),
    "meta-snapshot-without-id": (_edit_first_snapshot_entry(lambda s: s.pop("snapshot-id")), "snapshot-id"),
    "meta-snapshot-without-manifest-list": (_edit_first_snapshot_entry(lambda s: s.pop("manifest-list")),
                                            "manifest-list"),
    "meta-snapshot-manifest-list-null": (_edit_first_snapshot_entry(lambda s: s.__setitem__("manifest-list", None)),
                                         "manifest-list"),
    "meta-unknown-current-snapshot-id": (_set("current-snapshot-id", 123456789), "123456789"),
    "meta-current-snapshot-id-not-a-number": (_set("current-snapshot-id", "latest"), "current-snapshot-id"),
    "meta-ref-to-unknown-snapshot": (_json_edit(lambda d: d["refs"].__setitem__(
        "audit", {"snapshot-id": 987654321, "type": "tag"})), "987654321"),
    "meta-refs-not-an-object": (_set("refs", [1]), "refs"),
}

LIST_CASES = {
    "list-missing": (os.unlink, "missing"),
    "list-empty": (_empty, "Avro"),
    "list-garbage": (_garbage, "Avro"),
    "list-first-8-bytes": (_keep(8), "Avro"),
    "list-half": (_half, "Avro"),
    "list-last-64-bytes-cut": (_keep(-64), "Avro"),
    "list-header-only": (_avro_header_only, "data files"),
    "list-last-byte-cut": (_keep(-1), "Avro"),
    "list-zeroed-middle": (_zero_middle, "Avro"),
    "list-other-avro-schema": (_avro_other_schema, "manifest_path"),
    "list-is-a-manifest": (None, "manifest_path"),   # a manifest copied over the list
    "list-names-missing-manifest": (_list_points_to_missing_manifest, "missing"),
    "list-unknown-spec-id": (_list_entries(partition_spec_id=42), "42"),
    "list-manifest-path-with-nul": (_list_manifest_path_with_nul, "manifest path"),
    "list-counts-too-high": (_list_entries(added_files_count=9), "entries"),
}

# readable manifest lists whose entries are wrong: an append carries them over unopened
LIST_CARRIED_OVER = {"list-names-missing-manifest", "list-counts-too-high"}

MANIFEST_CASES = {
    "manifest-missing": (os.unlink, "missing"),
    "manifest-empty": (_empty, "Avro"),
    "manifest-garbage": (_garbage, "Avro"),
    "manifest-first-8-bytes": (_keep(8), "Avro"),
    "manifest-half": (_half, "Avro"),
    "manifest-last-64-bytes-cut": (_keep(-64), "Avro"),
    "manifest-header-only": (_avro_header_only, "entries"),
    "manifest-last-byte-cut": (_keep(-1), "Avro"),
    "manifest-zeroed-middle": (_zero_middle, "Avro"),
    "manifest-other-avro-schema": (_avro_other_schema, "data_file"),
    "manifest-is-a-manifest-list": (None, "data_file"),   # the manifest list copied over the manifest
    "newest-manifest-garbage": (_garbage, "Avro"),
    "newest-manifest-header-only": (_avro_header_only, "entries"),
}

DATA_CASES = {
    "data-missing": (os.unlink, "missing"),
    "data-empty": (_empty, "Parquet"),
    "data-garbage": (_garbage, "Parquet"),
    "data-half": (_half, "Parquet"),
    "data-magic-only": (_text(b"PAR1"), "Parquet"),
    "data-last-byte-cut": (_keep(-1), "Parquet"),
    "data-footer-cut": (_keep(-8), "Parquet"),
    "data-zeroed-middle": (_zero_middle, "Parquet"),
    "data-other-columns": (_parquet_other_columns, "id"),
    "data-fewer-rows": (_parquet_fewer_rows, "rows"),
    "data-bit-flip-with-page-checksums": (_parquet_flipped_value_with_checksums, "checksum"),
}


def _cases():
    out = {}
    for name, (damage, reason) in METADATA_CASES.items():
        out[name] = (_current_metadata, damage, "load", reason)
    for name, (damage, reason) in LIST_CASES.items():
        if name == "list-is-a-manifest":
            damage = "copy-manifest"
        out[name] = (_manifest_list, damage, "plan", reason)
    for name, (damage, reason) in MANIFEST_CASES.items():
        if name == "manifest-is-a-manifest-list":
            damage = "copy-list"
        out[name] = (_newest_manifest if name.startswith("newest") else _oldest_manifest, damage, "plan", reason)
    for name, (damage, reason) in DATA_CASES.items():
        out[name] = (_newest_data_file, damage, "read", reason)
    return out


CASES = _cases()
LEAKED = (KeyError, IndexError, TypeError, AttributeError, RecursionError, UnicodeDecodeError,
          json.JSONDecodeError, pa.ArrowException, OSError)


def check_error(err, path, reason):
    """An icefloe error, naming the file and the reason, not a library's error in disguise."""
    assert isinstance(err, IcefloeError), f"{type(err).__module__}.{type(err).__name__}: {err}"
    assert not isinstance(err, LEAKED), type(err).__mro__
    msg = str(err)
    assert os.path.basename(path) in msg, msg
    assert reason.lower() in msg.lower(), msg
    if isinstance(err, (CorruptMetadataError, CorruptDataFileError)):
        assert err.path and err.reason, err   # the file the error is about, and what is wrong


def _damage(t, path, damage):
    if damage == "copy-manifest":
        shutil.copyfile(_oldest_manifest(t), path)
    elif damage == "copy-list":
        shutil.copyfile(_manifest_list(t), path)
    else:
        damage(path)
    _forget_cached_metadata()


@pytest.mark.parametrize("case", sorted(CASES))
def test_corrupt_file_is_named(tmp_path, case):
    where, damage, stage, reason = CASES[case]
    wh, t = build(tmp_path)
    first = t.snapshots()[0]
    path = where(t)
    first_unaffected = path not in reachable(t, first)
    current_list = _manifest_list(t)
    _damage(t, path, damage)

    if stage == "load":
        with pytest.raises(IcefloeError) as info:
            load(wh)
        check_error(info.value, path, reason)
        # a writer that loaded the table before cannot commit on top of metadata it cannot read
        with pytest.raises(IcefloeError) as info:
            t.append(rows([500, 501]))
        check_error(info.value, path, reason)
        assert not os.path.exists(path.replace("/v4.metadata.json", "/v5.metadata.json"))
        return

    t = load(wh)
    if stage == "plan":
        with pytest.raises(IcefloeError) as info:
            t.plan_files()
        check_error(info.value, path, reason)
    else:
        assert len(t.plan_files()) == 6
    with pytest.raises(IcefloeError) as info:
        t.to_arrow()
    check_error(info.value, path, reason)
    if stage == "plan":
        _forget_cached_metadata()
        with pytest.raises(IcefloeError) as info:
            t.plan_files(where="p = 0")   # pruning by partition does not skip the check
        check_error(info.value, path, reason)

    # snapshots that do not reach the damaged file still read in full
    if first_unaffected:
        assert sorted(t.to_arrow(snapshot_id=first.snapshot_id)["id"].to_pylist()) == BATCHES[0]

    # a commit on top never hides the damage: it fails naming the file, or (a fast append
    # that carries the damaged manifest over without opening it) reads of it still fail
    _forget_cached_metadata()
    try:
        load(wh).append(rows([500, 501]))
    except IcefloeError as e:
        check_error(e, path, reason)
    else:
        # (a readable list whose entries are wrong is carried over like its manifests)
        assert path != current_list or case in LIST_CARRIED_OVER, "an append built on a list it could not read"
        _forget_cached_metadata()
        with pytest.raises(IcefloeError):
            load(wh).to_arrow()


# --------------------------------------------------------------------------- damage that changes nothing
def _old_metadata(t):
    return f"{os.path.dirname(t.metadata_location)}/v2.metadata.json"


HARMLESS = {
    "old-metadata-garbage": (_old_metadata, _garbage),
    "old-metadata-truncated": (_old_metadata, _half),
    "old-metadata-deleted": (_old_metadata, os.unlink),
    "unrelated-file-in-metadata-dir": (lambda t: f"{os.path.dirname(t.metadata_location)}/v9.metadata.json.tmp",
                                       _garbage),
}


@pytest.mark.parametrize("case", sorted(HARMLESS))
def test_harmless_damage_reads_committed_state(tmp_path, case):
    where, damage = HARMLESS[case]
    wh, t = build(tmp_path)
    damage(where(t))
    _forget_cached_metadata()
    t = load(wh)
    assert sorted(t.to_arrow()["id"].to_pylist()) == EXPECTED
    assert len(t.snapshots()) == 3


# --------------------------------------------------------------------------- version-hint.text
HINTS = {
    "hint-missing": None,
    "hint-empty": b"",
    "hint-garbage": b"\x00\xffgarbage\n",
    "hint-stale-v1": b"1",
    "hint-stale-v3": b"3",
    "hint-next-version": b"5",
    "hint-future-version": b"99",
    "hint-zero": b"0",
    "hint-negative": b"-4",
    "hint-huge": b"99999999999999999999999999",
    "hint-with-whitespace": b" 4 \n",
    "hint-superscript-digit": "\u00b2".encode(),
    "hint-float": b"4.0",
    "hint-is-a-directory": "dir",
}


@pytest.mark.parametrize("case", sorted(HINTS))
def test_broken_hint_hides_nothing_and_invents_nothing(tmp_path, case):
    wh, t = build(tmp_path)
    committed = t.current_snapshot().snapshot_id
    hint = f"{os.path.dirname(t.metadata_location)}/version-hint.text"
    content = HINTS[case]
    os.unlink(hint)
    if content == "dir":
        os.mkdir(hint)
    elif content is not None:
        _write(hint, content)
    _forget_cached_metadata()
    t = load(wh)
    assert t.metadata_location.endswith("/v4.metadata.json")
    assert t.current_snapshot().snapshot_id == committed
    assert len(t.snapshots()) == 3
    assert sorted(t.to_arrow()["id"].to_pylist()) == EXPECTED
    # the next commit takes the next version, and readers see it
    if content == "dir":
        os.rmdir(hint)
    snap = t.append(rows([500]))
    t = load(wh)
    assert t.metadata_location.endswith("/v5.metadata.json")
    assert t.current_snapshot().snapshot_id == snap.snapshot_id
    assert sorted(t.to_arrow()["id"].to_pylist()) == sorted(EXPECTED + [500])
    assert _read(hint).strip() == b"5"


def test_case_counts():
    """The corrupt-input matrix stays as large as documented."""
    assert len(CASES) >= 77
    assert len(CASES) + len(HARMLESS) + len(HINTS) >= 95


# --------------------------------------------------------------------------- through Spark
# Planning runs on the driver, so damaged metadata is the same icefloe error as above. A missing
# data file is found while the DataFrame is built (driver): an icefloe error too. A data file that
# exists but cannot be read fails later in an executor, as Spark's FAILED_READ_FILE error, which
# names the file; icefloe makes sure no session setting skips it silently.
def _spark_error_text(err):
    return f"{type(err).__name__}: {err}"


def _damaged_iceberg(tmp_path, spark, damage):
    wh, t = build(tmp_path)
    path = _newest_data_file(t)
    _damage(t, path, damage)
    return Catalog(wh, spark=spark).load_table(NAME), path


@pytest.mark.parametrize("case", ["data-half", "data-garbage"])
def test_spark_read_of_unreadable_data_file_names_it(tmp_path, spark, case):
    t, path = _damaged_iceberg(tmp_path, spark, CASES[case][1])
    with pytest.raises(Exception) as info:
        t.to_spark().collect()
    assert os.path.basename(path) in str(info.value), _spark_error_text(info.value)
    assert "FAILED_READ_FILE" in str(info.value), _spark_error_text(info.value)


def test_spark_read_of_missing_data_file_names_it(tmp_path, spark):
    t, path = _damaged_iceberg(tmp_path, spark, os.unlink)
    with pytest.raises(CorruptDataFileError) as info:
        t.to_spark()
    check_error(info.value, path, "missing")
    assert info.value.path == path


@pytest.fixture
def session_skipping_bad_files(spark):
    keys = ("spark.sql.files.ignoreCorruptFiles", "spark.sql.files.ignoreMissingFiles")
    old = {k: spark.conf.get(k, None) for k in keys}
    for k in keys:
        spark.conf.set(k, "true")
    yield spark
    for k, v in old.items():
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)


def test_spark_read_never_skips_a_corrupt_file(tmp_path, session_skipping_bad_files):
    """A session set to skip corrupt files would drop the file's rows from the result silently."""
    t, path = _damaged_iceberg(tmp_path, session_skipping_bad_files, _half)
    with pytest.raises(Exception) as info:
        t.to_spark().collect()
    assert os.path.basename(path) in str(info.value), _spark_error_text(info.value)


def test_spark_read_of_corrupt_manifest_names_it(tmp_path, spark):
    wh, t = build(tmp_path)
    path = _oldest_manifest(t)
    _damage(t, path, _half)
    t = Catalog(wh, spark=spark).load_table(NAME)
    with pytest.raises(CorruptMetadataError) as info:
        t.to_spark().collect()
    check_error(info.value, path, "Avro")


def _paimon_table(tmp_path, spark):
    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon", spark=spark).create_table(NAME, SCHEMA, partitioned_by=["p"])
    for ids in BATCHES:
        t.append(rows(ids))
    t = Catalog(wh, "paimon", spark=spark).load_table(NAME)
    return t, sorted(f.file_path for f in t.plan_files())[0]


def test_paimon_spark_read_of_truncated_data_file_names_it(tmp_path, session_skipping_bad_files):
    t, path = _paimon_table(tmp_path, session_skipping_bad_files)
    _half(path)
    with pytest.raises(Exception) as info:
        t.to_spark().collect()
    assert os.path.basename(path) in str(info.value), _spark_error_text(info.value)


def test_paimon_spark_read_of_missing_data_file_names_it(tmp_path, spark):
    t, path = _paimon_table(tmp_path, spark)
    os.unlink(path)
    with pytest.raises(CorruptDataFileError) as info:
        t.to_spark()
    check_error(info.value, path, "missing")


def test_paimon_data_source_read_of_truncated_data_file_names_it(tmp_path, spark):
    """The ``icefloe`` data source reads Paimon files in Python workers: the worker's error names the file."""
    t, path = _paimon_table(tmp_path, spark)
    _half(path)
    with pytest.raises(Exception) as info:
        spark.read.format("icefloe").load(t.location).collect()
    msg = str(info.value)
    assert "CorruptDataFileError" in msg and os.path.basename(path) in msg, _spark_error_text(info.value)


@pytest.mark.parametrize("case", ["data-half", "data-garbage"])
def test_iceberg_data_source_read_of_damaged_data_file_names_it(tmp_path, spark, case):
    """The ``icefloe`` data source reads Iceberg files in Python workers: the worker's error names the file."""
    t, path = _damaged_iceberg(tmp_path, spark, CASES[case][1])
    with pytest.raises(Exception) as info:
        spark.read.format("icefloe").load(t.location).collect()
    msg = str(info.value)
    assert "CorruptDataFileError" in msg and os.path.basename(path) in msg, _spark_error_text(info.value)


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_bit_flip_in_a_file_icefloe_wrote_is_caught(tmp_path, fmt):
    """icefloe's own Arrow writers store page checksums: a flipped bit inside a value is an
    error naming the file, not a silently different number."""
    import struct

    import pyarrow as pa

    marker = 0x5A5A_1234_5678_9ABC
    # neither the smallest nor the largest value: the only copy is in the data, not in page statistics
    data = pa.table({"id": pa.array([marker, -2**62, 2**63 - 1], pa.int64()), "name": ["a", "b", "c"]})
    if fmt == "iceberg":
        from icefloe.catalog import to_schema

        t = Catalog(str(tmp_path)).create_table("db.b", to_schema("id bigint not null, name string"),
                                                      properties={"write.parquet.compression-codec": "uncompressed"})
    else:
        t = Catalog(str(tmp_path), "paimon").create_table("db.b", "id bigint not null, name string",
                                                      properties={"file.compression": "none"})
    t.append(data)
    path = t.plan_files()[0].file_path
    raw = bytearray(open(path, "rb").read())
    at = raw.find(struct.pack("<q", marker))
    assert at > 0                                  # uncompressed: the value is in the file as is
    raw[at + 2] ^= 0x01
    open(path, "wb").write(bytes(raw))
    with pytest.raises(CorruptDataFileError) as info:
        t.to_arrow()
    assert os.path.basename(path) in str(info.value)
