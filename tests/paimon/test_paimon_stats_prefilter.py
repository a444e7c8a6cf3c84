"""A filtered scan of an append table drops files by their value statistics while it decodes the
manifests: an ADD whose statistics rule it out is never built into an entry. The early verdict,
read from the raw statistics' bytes, never drops a file the exact check would keep, equals it for
files of the read schema, and the plans are the same as without it (over DELETE entries left by a
compaction, an added column, statistics switched off, and every column type the statistics hold)."""
import datetime as dt
import decimal

import pyarrow as pa
import pytest

from icefloe.paimon import manifest as mf
from icefloe.paimon import predicate as pr
from icefloe.paimon import scan as sc
from icefloe.paimon.schema import SchemaHistory

SCHEMA = ("id bigint not null, name string, v double, d date, ts timestamp, amount decimal(10,2), "
          "ok boolean, small int, p int")

WHERE = ["id = 15", "id > 40", "id < 3 OR id > 55", "id IN (1, 33)", "id != 7", "name = 'n7'",
         "name IS NULL", "name > 'n5'", "v < 0.5", "d = DATE '2024-01-12'",
         "ts >= TIMESTAMP '2024-01-01 00:00:40'", "amount = 12.50", "ok = false", "small BETWEEN 10 AND 12",
         "id = 15 AND p = 0", "id = 15 OR p = 1", "extra = 3", "extra IS NULL", "NOT (id > 5)"]


def _rows(start, n, with_extra=False):
    ids = list(range(start, start + n))
    cols = {
        "id": pa.array(ids, pa.int64()),
        "name": [None if i % 6 == 0 else f"n{i}" for i in ids],
        "v": [i / 10 for i in ids],
        "d": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids],
        "ts": [dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i) for i in ids],
        "amount": pa.array([decimal.Decimal(i) / 2 for i in ids], pa.decimal128(10, 2)),
        "ok": [i % 2 == 0 for i in ids],
        "small": pa.array([i % 20 for i in ids], pa.int32()),
        "p": pa.array([i % 2 for i in ids], pa.int32()),
    }
    if with_extra:
        cols["extra"] = pa.array([i % 4 for i in ids], pa.int32())
    return pa.table(cols)


def _table(cat, name="db.t", properties=None):
    t = cat.create_table(name, SCHEMA, partitioned_by=["p"], properties={"write-only": "true", **(properties or {})})
    for i in range(4):
        t.append(_rows(i * 10, 10))
    t.rewrite_data_files()                      # DELETE entries for the files it merged
    for i in range(4, 6):
        t.append(_rows(i * 10, 10))
    t.update_schema().add_column("extra", "int").commit()
    t = cat.load_table(name)
    t.append(_rows(60, 10, with_extra=True))
    return cat.load_table(name)


def _plan(cat, name, where):
    return sorted(f.file_path for f in cat.load_table(name).plan_files(where=where))


@pytest.mark.parametrize("properties", [{}, {"metadata.stats-mode": "none"}, {"metadata.stats-mode": "full"}])
def test_plans_equal_the_exact_check_alone(paimon_catalog, monkeypatch, properties):
    t = _table(paimon_catalog, properties=properties)
    early = {w: _plan(paimon_catalog, "db.t", w) for w in WHERE}
    monkeypatch.setattr(sc, "_raw_stats_filter", lambda pred, schema, schemas: None)
    exact = {w: _plan(paimon_catalog, "db.t", w) for w in WHERE}
    assert early == exact
    everything = _plan(paimon_catalog, "db.t", None)
    pruned = [w for w in WHERE if len(exact[w]) < len(everything)]
    if properties.get("metadata.stats-mode") == "none":
        assert pruned == ["id = 15 AND p = 0", "extra = 3"]   # by partition, and a column old files lack
    else:
        assert len(pruned) >= 10, pruned    # the statistics do prune: the comparison is not vacuous
    assert t.to_arrow(where="id = 15").column("id").to_pylist() == [15]


def test_early_verdict_never_drops_what_the_exact_check_keeps(paimon_catalog):
    t = _table(paimon_catalog)
    store, schema = t.store, t.store.schema
    schemas = SchemaHistory(store.io, store.table_path, [schema])
    records = [r for m in store.data_manifests(t.current_snapshot())
               for r in mf.read_manifest_records(store.io.read_bytes(store.manifest_path(m.file_name)))]
    adds = [r for r in records if r["_KIND"] == mf.ADD]
    assert len(adds) > len({r["_FILE"]["_SCHEMA_ID"] for r in adds}) > 1   # files of two schemas
    dropped = 0
    for where in WHERE:
        pred = pr.bind(pr.parse_where(where), schema.fields)
        keep = sc._raw_stats_filter(pred, schema, schemas)
        if keep is None:
            assert pr.referenced_columns(pred) <= {"p"}
            continue
        for r in adds:
            early = keep(r["_FILE"])
            exact = sc._file_may_match(pred, mf.entry_from_avro(r).file, schema, {}, schemas)
            assert early or not exact, (where, r["_FILE"]["_FILE_NAME"])
            if "p" not in pr.referenced_columns(pred):
                assert early == exact, (where, r["_FILE"]["_FILE_NAME"])
            dropped += not early
    assert dropped >= 15        # the early verdict does drop files: the comparison is not vacuous


def test_the_first_filtered_plan_builds_only_the_files_it_keeps(paimon_catalog, monkeypatch):
    t = _table(paimon_catalog)
    adds = deletes = 0
    for m in t.store.data_manifests(t.current_snapshot()):
        for r in mf.read_manifest_records(t.store.io.read_bytes(t.store.manifest_path(m.file_name))):
            adds += r["_KIND"] == mf.ADD
            deletes += r["_KIND"] != mf.ADD
    assert deletes > 0
    built = []
    real = mf.entry_from_avro
    monkeypatch.setattr(mf, "entry_from_avro", lambda r: built.append(r["_KIND"]) or real(r))
    fresh = paimon_catalog.load_table("db.t")
    files = fresh.plan_files(where="id = 15")
    assert len(files) == 2               # the compacted file of each partition spans ids 0-39
    # built: those two, and the two files of ids 10-19 the compaction replaced (their DELETEs cancel them)
    assert built.count(mf.ADD) == 4 and adds == 16
    assert len(built) - built.count(mf.ADD) == deletes          # every DELETE is built, to cancel its ADD
    built.clear()
    assert [f.file_path for f in fresh.plan_files(where="id = 15")] == [f.file_path for f in files]
    assert built.count(mf.ADD) == 4                             # the records stay cached, undecoded
    assert len(fresh.plan_files()) == len(paimon_catalog.load_table("db.t").plan_files())
