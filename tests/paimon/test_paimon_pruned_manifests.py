"""A partition-pruned scan's first read of a manifest decodes only the entries of the partitions it
keeps (the others' file records skipped undecoded, as pypaimon skips them); the entries are the
ones the whole decode gives, for manifests icefloe and pypaimon wrote, and the plans agree."""
import os

import pyarrow as pa

from icefloe.catalog import Catalog
from icefloe.paimon import manifest as mf
from tests.paimon.test_paimon_interop import pypaimon_write


def _rows(start, n):
    ids = range(start, start + n)
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "p": pa.array([i % 5 for i in ids], pa.int32())})


def _manifests(t) -> list:
    store = t.store
    return [m.file_name for m in store.data_manifests(t.current_snapshot())]


def _check_every_manifest(t) -> int:
    """Each manifest's kept records are its whole decode's records of the kept partitions."""
    seen = 0
    for name in _manifests(t):
        path = t.store.manifest_path(name)
        with open(path, "rb") as f:
            data = f.read()
        whole = mf.read_manifest_records(data, path)
        for keep in (lambda b: b == whole[0]["_PARTITION"][4:], lambda b: False, lambda b: True):
            kept = mf.read_kept_records(data, path, keep)
            assert kept is not None, "Paimon's manifest layout is read without the whole decode"
            assert kept == [r for r in whole if keep(r["_PARTITION"][4:])]
            seen += len(kept)
    return seen


def test_kept_entries_of_our_manifests_and_the_plan(paimon_warehouse):
    cat = Catalog(paimon_warehouse, "paimon")
    t = cat.create_table("db.t", "id bigint not null, name string, p int", partitioned_by=["p"])
    for i in range(6):
        t.append(_rows(i * 10, 10))
    assert _check_every_manifest(t) > 0
    everything = sorted(f.file_path for f in cat.load_table("db.t").plan_files())
    fresh = cat.load_table("db.t")
    pruned = sorted(f.file_path for f in fresh.plan_files(where="p = 3"))
    assert pruned and len(pruned) < len(everything)
    assert pruned == sorted(p for p in everything if os.path.basename(os.path.dirname(os.path.dirname(p))) == "p=3")
    assert not fresh.store._raw_cache                  # the first pruned read kept nothing
    assert sorted(f.file_path for f in fresh.plan_files(where="p = 3")) == pruned     # read whole and kept
    assert fresh.store._raw_cache
    assert sorted(f.file_path for f in fresh.plan_files(where="p = 1 OR p = 3")) == sorted(
        p for p in everything if os.path.basename(os.path.dirname(os.path.dirname(p))) in ("p=1", "p=3"))


def test_kept_entries_of_manifests_pypaimon_wrote(paimon_warehouse, pypaimon_catalog):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema

    pypaimon_catalog.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("p", pa.int32())])
    pypaimon_catalog.create_table("db.p", Schema.from_pyarrow_schema(schema, partition_keys=["p"]), False)
    for i in range(3):
        pypaimon_write(pypaimon_catalog, "db.p", _rows(i * 10, 10).cast(schema))
    t = Catalog(paimon_warehouse, "paimon").load_table("db.p")
    assert _check_every_manifest(t) > 0
    assert sorted(r["id"] for r in t.to_arrow(where="p = 2").to_pylist()) == [i for i in range(30) if i % 5 == 2]
