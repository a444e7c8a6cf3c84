"""Manifests merged by copying encoded data files (``manifest_merge``) give exactly what the
entry-by-entry merge gives: the same records (read back by fastavro) and the same manifest-list
entries, on random tables of format v1, v2 and v3 with removed files, delete files and several
partition specs; and a table merged this way reads the same through Apache Iceberg's readers."""
from __future__ import annotations

import io
import random
from dataclasses import replace

import fastavro
import pytest

import icefloe
from icefloe.iceberg import manifest_merge, snapshot_producer
from icefloe.iceberg.append import Append
from icefloe.iceberg.manifest import DATA, POSITION_DELETES, DataFile
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.row_delta import RowDelta
from icefloe.iceberg.snapshot_producer import PendingSnapshot, merge_manifests


def _file(loc: str, name: str, part: tuple, rng: random.Random, content: int = DATA, **kw) -> DataFile:
    n = rng.randint(1, 10_000)
    return DataFile(file_path=f"{loc}/data/{name}.parquet", file_format="PARQUET", partition=part,
                    record_count=n, file_size_in_bytes=rng.randint(100, 10**7), content=content,
                    value_counts={1: n, 2: n}, null_value_counts={1: 0, 2: rng.randint(0, n)},
                    lower_bounds={1: rng.randbytes(8)}, upper_bounds={1: rng.randbytes(8)},
                    split_offsets=[4] if rng.random() < 0.5 else None, **kw)


def _part(spec_fields: int, rng: random.Random) -> tuple:
    p = rng.choice([None, rng.randint(-5, 50)]) if rng.random() < 0.2 else rng.randint(-5, 50)
    s = rng.choice([None, "a", "zz", "é", ""])
    return (p, s)[:spec_fields]


def _table(tmp_path, version: int, seed: int):
    rng = random.Random(seed)
    cat = icefloe.Catalog(str(tmp_path / f"wh{seed}"))
    partitioned = seed % 7 != 0
    t = cat.create_table("db.t", "id bigint not null, p int, s string", partitioned_by=["p"] if partitioned else [],
                         properties={"format-version": str(version), "commit.manifest-merge.enabled": "false"})
    loc = t.location.rstrip("/")
    live: list[str] = []
    fields = 1 if partitioned else 0
    for c in range(rng.randint(3, 7)):
        if partitioned and c == 2 and rng.random() < 0.5:       # a second spec: new manifests are written with it
            t.update_spec().add_field("s").commit()
            fields = 2
        spec_id = t.refresh().metadata.default_spec_id
        files = [replace(_file(loc, f"f{c}-{i}", _part(fields, rng), rng), spec_id=spec_id)
                 for i in range(rng.randint(1, 30))]
        if live and rng.random() < 0.4:
            gone = rng.sample(live, rng.randint(1, min(5, len(live))))
            Overwrite(files, removed_paths=gone).commit(t.ops)
            live = [p for p in live if p not in gone]
        elif live and version >= 2 and rng.random() < 0.4:
            target = rng.choice(live)
            deletes = [_file(loc, f"d{c}", _part(fields, rng), rng, content=POSITION_DELETES,
                             referenced_data_file=target)]
            RowDelta([replace(f, spec_id=spec_id) for f in files + deletes]).commit(t.ops)
        else:
            Append(files).commit(t.ops)
        live += [f.file_path for f in files]
    return t.refresh(), rng


def _records(t, path: str) -> list:
    return list(fastavro.reader(io.BytesIO(t.io.read_bytes(path))))


def _merge(t, rng, fast: bool, monkeypatch, snapshot_id: int, tag: str):
    monkeypatch.setattr(snapshot_producer, "FAST_MERGE", fast)
    base = t.metadata
    pending = replace(PendingSnapshot.start(t.ops, base, "main", f"merge-{tag}", 1, []), snapshot_id=snapshot_id)
    loc = t.location.rstrip("/")
    spec = base.spec_by_id(base.default_spec_id)
    fields = len(spec.fields)
    producer = Append([_file(loc, "new", _part(fields, rng), rng)])
    producer.added = [replace(f, spec_id=spec.spec_id) for f in producer.added]
    manifests = producer.new_manifests(pending) + [m for m in pending.parent_manifests() if m.has_added_or_existing()]
    return merge_manifests(pending, manifests, 2, 8 * 1024 * 1024)


@pytest.mark.parametrize("version,seed", [(2, 1), (2, 2), (2, 3), (3, 4), (2, 5), (3, 6), (2, 7), (3, 14), (2, 8), (3, 9)])
def test_copying_merge_equals_entry_merge(tmp_path, monkeypatch, version, seed):
    t, rng = _table(tmp_path, version, seed)
    snapshot_id = 10**15 + seed
    copied = []
    real = manifest_merge.merge

    def counting(*a, **kw):
        got = real(*a, **kw)
        copied.append(got is not None)
        return got

    monkeypatch.setattr(manifest_merge, "merge", counting)
    fast = _merge(t, random.Random(seed), True, monkeypatch, snapshot_id, "fast")
    slow = _merge(t, random.Random(seed), False, monkeypatch, snapshot_id, "slow")
    assert any(copied), "the copying merge was not taken"
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow):
        ignore = {"manifest_path": "", "manifest_length": 0}
        assert replace(a, **ignore) == replace(b, **ignore)
        if a.manifest_path != b.manifest_path:      # a merged manifest (the others are the parent's)
            assert _records(t, a.manifest_path) == _records(t, b.manifest_path)


@pytest.mark.parametrize("version", [2, 3])
def test_merged_table_reads_the_same_in_pyiceberg_and_duckdb(tmp_path, monkeypatch, version):
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from icefloe.iceberg.manifest import ADDED, DELETED, EXISTING
    from icefloe.iceberg.manifest_reader import load_manifest_entries, snapshot_manifests
    from tests.interop_util import duckdb_connection, pyiceberg_table

    taken = []
    real = manifest_merge.merge

    def counting(*a, **kw):
        got = real(*a, **kw)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(manifest_merge, "merge", counting)
    t = icefloe.Catalog(str(tmp_path / "wh")).create_table(
        "db.t", "id bigint not null, ts timestamp not null, k string", partitioned_by=["day(ts)", "k"],
        properties={"format-version": str(version), "commit.manifest.min-count-to-merge": "3"})
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows: dict[int, tuple] = {}
    for c in range(6):
        ids = list(range(c * 10, c * 10 + 10))
        batch = pa.table({"id": pa.array(ids, pa.int64()),
                          "ts": pa.array([base + dt.timedelta(days=i % 3 + c) for i in ids], pa.timestamp("us", "UTC")),
                          "k": pa.array([None if i % 4 == 0 else f"k{i % 2}" for i in ids])})
        t.append(batch)
        rows.update({r["id"]: (r["id"], r["ts"], r["k"]) for r in batch.to_pylist()})
        if c == 3:      # a file removed: its entry DELETED in this snapshot's merged manifest
            t = t.refresh()
            gone = next(e.data_file for m in snapshot_manifests(t.io, t.current_snapshot())
                        for e in load_manifest_entries(t.io, t.metadata, m) if e.status != DELETED)
            Overwrite([], removed_paths=[gone.file_path]).commit(t.ops)
            for r in pq.read_table(gone.file_path.removeprefix("file://")).to_pylist():
                del rows[r["id"]]
    t = t.refresh()
    assert any(taken), "no copying merge ran"
    manifests = snapshot_manifests(t.io, t.current_snapshot())
    assert len(manifests) < 6
    py = pyiceberg_table(t.metadata_location)
    got = sorted((r["id"], r["ts"], r["k"]) for r in py.scan().to_arrow().to_pylist())
    assert got == sorted(rows.values())
    assert sorted(r["id"] for r in py.scan(row_filter="k = 'k1'").to_arrow().to_pylist()) == sorted(
        i for i, r in rows.items() if r[2] == "k1")
    statuses = {r["status"] for r in py.inspect.entries().to_pylist()}
    assert statuses <= {ADDED, EXISTING, DELETED} and EXISTING in statuses
    duck = duckdb_connection()
    n = duck.execute(f"SELECT count(*), sum(id) FROM iceberg_scan('{t.metadata_location}')").fetchone()
    assert n == (len(rows), sum(rows))


@pytest.mark.parametrize("version", ["1", "2"])
def test_manifests_of_another_writer_merge_the_same(tmp_path, monkeypatch, version):
    """pyiceberg's manifests (format v1's own layout among them): where their data file is not
    encoded as icefloe writes it the merge goes entry by entry; either way the result is the same."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField

    uri = f"sqlite:///{tmp_path / 'c.db'}"
    py = SqlCatalog("default", uri=uri, warehouse=f"file://{tmp_path}")
    py.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "p", LongType(), required=False))
    pt = py.create_table("db.t", schema=schema, properties={"format-version": version},
                         partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p")))
    for c in range(3):
        pt.append(pa.table({"id": pa.array(range(c * 5, c * 5 + 5), pa.int64()),
                            "p": pa.array([c, c, None, c + 1, c + 1], pa.int64())}))
    t = icefloe.Catalog(str(tmp_path), type="sql", uri=uri).load_table("db.t")
    rng = random.Random(7)
    fast = _merge(t, random.Random(7), True, monkeypatch, 10**15, "fast")
    slow = _merge(t, rng, False, monkeypatch, 10**15, "slow")
    assert len(fast) == len(slow) == 1
    ignore = {"manifest_path": "", "manifest_length": 0}
    assert replace(fast[0], **ignore) == replace(slow[0], **ignore)
    assert _records(t, fast[0].manifest_path) == _records(t, slow[0].manifest_path)


_JAVA_READ_AND_APPEND = """
tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
t = tables.load(location)
def live():
    it = t.newScan().planFiles().iterator()
    out = []
    while it.hasNext():
        f = it.next().file()
        out.append([str(f.path()), f.recordCount(), f.firstRowId() if version >= 3 else None])
    return sorted(out)
before = live()
entries = sorted((r[0], r[1]) for r in rows(spark.read.format('iceberg').load(location + '#entries')
                                           .selectExpr('status', 'data_file.file_path')))
t.updateProperties().set('commit.manifest.min-count-to-merge', '2').commit()
f = (spark._jvm.org.apache.iceberg.DataFiles.builder(t.spec()).withPath(location + '/data/java.parquet')
     .withFormat('PARQUET').withFileSizeInBytes(10).withRecordCount(7).withPartitionPath('p=3').build())
t.newAppend().appendFile(f).commit()
t.refresh()
result = {"before": before, "entries": entries, "after": len(live()), "manifests": t.currentSnapshot().allManifests(t.io()).size()}
"""


@pytest.mark.long
@pytest.mark.parametrize("version", [2, 3])
def test_the_java_runtime_reads_and_merges_a_copying_merge(tmp_path, monkeypatch, iceberg_runtime, version):
    """Apache Iceberg's Java runtime plans the files of manifests merged by copying (statuses,
    sequence numbers, v3 first row ids written out), and merges them again itself."""
    from icefloe.iceberg.manifest import DELETED
    from icefloe.iceberg.manifest_reader import live_entries

    taken = []
    real = manifest_merge.merge

    def counting(*a, **kw):
        got = real(*a, **kw)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(manifest_merge, "merge", counting)
    rng = random.Random(version)
    t = icefloe.Catalog(str(tmp_path / "wh")).create_table(
        "db.t", "id bigint not null, p int", partitioned_by=["p"],
        properties={"format-version": str(version), "commit.manifest.min-count-to-merge": "3"})
    loc = t.location.rstrip("/")
    for c in range(7):
        files = [_file(loc, f"f{c}-{i}", (rng.randint(0, 4),), rng) for i in range(5)]
        if c == 4:
            t = t.refresh()
            gone = [e.data_file.file_path for e in live_entries(t.io, t.metadata, t.current_snapshot())][:2]
            Overwrite(files, removed_paths=gone).commit(t.ops)
        else:
            Append(files).commit(t.ops)
    assert any(taken)
    t = t.refresh()
    ours = sorted([e.data_file.file_path, e.data_file.record_count, e.data_file.first_row_id]
                  for e in live_entries(t.io, t.metadata, t.current_snapshot()))
    assert len(ours) == 7 * 5 - 2
    jvm = iceberg_runtime(None, tmp_path / "jvm")
    got = jvm.run(_JAVA_READ_AND_APPEND, location=loc, version=version)
    assert [[p.removeprefix("file:"), n, r] for p, n, r in got["before"]] == ours
    assert sorted(p.removeprefix("file:") for s, p in got["entries"] if s != DELETED) == [o[0] for o in ours]
    assert got["after"] == len(ours) + 1
    t = t.refresh()
    assert len(list(live_entries(t.io, t.metadata, t.current_snapshot()))) == len(ours) + 1


def test_a_damaged_manifest_is_named_as_before(tmp_path, monkeypatch):
    from icefloe.errors import CorruptMetadataError
    from icefloe.iceberg.manifest_reader import clear_manifest_cache, snapshot_manifests

    t, rng = _table(tmp_path, 2, 11)
    victim = snapshot_manifests(t.io, t.current_snapshot())[-1].manifest_path
    data = t.io.read_bytes(victim)
    with open(victim, "wb") as f:
        f.write(data[: len(data) - 40])
    clear_manifest_cache()
    with pytest.raises(CorruptMetadataError) as e:
        _merge(t, rng, True, monkeypatch, 10**15, "fast")
    assert victim in str(e.value)
