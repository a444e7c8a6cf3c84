"""A plan judged over manifests held as Arrow columns (``manifest_columns``) is exactly the plan read
entry by entry (``FileStore.entries``): random tables (partitioned or not, compacted so that DELETE
entries remain, a column added, statistics modes, primary keys, data evolution) and random filters
(comparisons, IN, IS NULL, AND / OR / NOT over data and partition columns) give the same entries,
field by field, both ways."""
from __future__ import annotations

import dataclasses
import random

import pyarrow as pa
import pytest

from icefloe.paimon import manifest_columns as mc
from icefloe.paimon.data_file import DataFileMeta

FIELDS = [f.name for f in dataclasses.fields(DataFileMeta)]


def _describe(entries):
    """The entries in plan order, every field of each."""
    return [(e.kind, e.partition, e.bucket, e.total_buckets, tuple(getattr(e.file, n) for n in FIELDS))
            for e in entries]


def _plans(t, wheres, columns: bool, monkeypatch):
    """Each filter's plan, judged over columns (every manifest) or entry by entry."""
    with monkeypatch.context() as m:
        mc.clear_cache()
        if columns:
            m.setattr(mc, "COLUMNS_MIN_ENTRIES", 0)
        else:
            m.setattr(mc, "available", lambda: False)
        out = [_describe(t.plan(w)) for w in wheres]
        assert _describe(t.plan(wheres[-1])) == out[-1]     # again, from the cache
    return out


def _batch(rng: random.Random, start: int, n: int, with_extra: bool) -> pa.Table:
    ids = list(range(start, start + n))
    rng.shuffle(ids)
    cols = {
        "id": pa.array(ids, pa.int64()),
        "a": pa.array([None if rng.random() < 0.15 else rng.randint(-50, 50) for _ in ids], pa.int32()),
        "s": [None if rng.random() < 0.1 else rng.choice("abcdef") * rng.randint(1, 3) for _ in ids],
        "p": pa.array([rng.randint(0, 3) for _ in ids], pa.int32()),
    }
    if with_extra:
        cols["e"] = pa.array([rng.randint(0, 9) for _ in ids], pa.int16())
    return pa.table(cols)


def _filter(rng: random.Random, columns: list[str], depth: int = 0) -> str:
    if depth < 2 and rng.random() < 0.35:
        op = rng.choice(["AND", "OR"])
        return f"({_filter(rng, columns, depth + 1)} {op} {_filter(rng, columns, depth + 1)})"
    if depth < 2 and rng.random() < 0.08:
        return f"NOT ({_filter(rng, columns, depth + 1)})"
    col = rng.choice(columns)
    if col == "s":
        return rng.choice([f"s = '{rng.choice('abcdef')}'", "s IS NULL", f"s > '{rng.choice('abcdef')}'"])
    hi = {"id": 120, "a": 50, "p": 3, "e": 9}[col]
    v = rng.randint(-2, hi + 2)
    form = rng.choice(["=", "<", "<=", ">", ">=", "!=", "IN", "NULL"])
    if form == "IN":
        return f"{col} IN ({', '.join(str(rng.randint(-2, hi + 2)) for _ in range(rng.randint(1, 3)))})"
    if form == "NULL":
        return f"{col} IS {'NOT ' if rng.random() < 0.5 else ''}NULL"
    return f"{col} {form} {v}"


def _table(cat, rng: random.Random, kind: str):
    props = {"write-only": "true"}
    partitioned = kind == "de" or rng.random() < 0.7
    if kind == "pk":
        props.update({"bucket": str(rng.choice([1, 2])), "primary-key": "id,p" if partitioned else "id"})
    elif kind == "de":
        props.update({"row-tracking.enabled": "true", "data-evolution.enabled": "true"})
    else:
        props["metadata.stats-mode"] = rng.choice(["truncate(16)", "full", "none", "counts"])
    t = cat.create_table("db.t", "id bigint not null, a int, s string, p int not null",
                         partitioned_by=["p"] if partitioned else None, properties=props)
    start = 0
    for _ in range(rng.randint(2, 5)):
        n = rng.randint(3, 25)
        t.append(_batch(rng, start, n, False))
        start += n if kind != "pk" or rng.random() < 0.5 else 0     # a primary-key table's upserts
    if kind == "plain" and rng.random() < 0.6:      # DELETE entries of the files it replaces
        n = rng.randint(3, 12)
        batch = _batch(rng, start, n, False)
        start += n
        if partitioned:
            t.overwrite(batch, dynamic=True)
        else:
            t.overwrite(batch)
    if kind == "plain" and rng.random() < 0.5:
        t.update_schema().add_column("e", "smallint").commit()
        t = cat.load_table("db.t")
        t.append(_batch(rng, start, rng.randint(3, 25), True))
    return cat.load_table("db.t")


@pytest.mark.parametrize("seed", range(6))
def test_columnar_plans_equal_entry_plans(paimon_catalog, monkeypatch, seed):
    rng = random.Random(seed)
    t = _table(paimon_catalog, rng, ["plain", "plain", "pk", "plain", "de", "plain"][seed])
    columns = ["id", "id", "a", "p", "s"] + (["e"] if "e" in [f.name for f in t.store.schema.fields] else [])
    wheres = [None] + [_filter(rng, columns) for _ in range(25)]
    columnar = _plans(t, wheres, True, monkeypatch)
    entries = _plans(t, wheres, False, monkeypatch)
    for w, c, e in zip(wheres, columnar, entries):
        assert c == e, w
    pruned = sum(len(e) < len(entries[0]) for e in entries)
    assert pruned > 0          # some filter prunes: the comparison is not vacuous


def test_the_vectorised_bounds_rule_files_out_before_they_are_built(paimon_catalog, monkeypatch):
    """On columns, ``id = v`` builds only the files whose bounds hold ``v``."""
    t = paimon_catalog.create_table("db.t", "id bigint not null, v string", properties={"write-only": "true"})
    for i in range(8):
        t.append(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()), "v": ["x"] * 10}))
    t = paimon_catalog.load_table("db.t")
    built = []
    real = mc.ManifestColumns.entries

    def counted(self, rows):
        out = real(self, rows)
        built.extend(out)
        return out

    monkeypatch.setattr(mc, "COLUMNS_MIN_ENTRIES", 0)
    monkeypatch.setattr(mc.ManifestColumns, "entries", counted)
    mc.clear_cache()
    files = t.plan_files(where="id = 42")
    assert [f.row_count for f in files] == [10] and len(built) == 1
    built.clear()
    assert len(t.plan_files(where="id >= 75 OR id < 3")) == 2 and len(built) == 2
    built.clear()
    assert len(t.plan_files()) == 8 and len(built) == 8
