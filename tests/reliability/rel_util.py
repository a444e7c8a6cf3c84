"""Shared helpers of the reliability suite (Iceberg side)."""
import os

import pyarrow as pa

from icefloe.catalog import to_schema
from icefloe.catalog import Catalog

SCHEMA = "id bigint not null, name string"


def rows(start, n):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": [f"n{i}" for i in range(start, start + n)]})


def make_table(wh, props=None, storage=None):
    """``storage``: an object store's settings when ``wh`` is on one."""
    return Catalog(wh, **(storage or {})).create_table("db.t", to_schema(SCHEMA), properties=props or {})


def read_ids(wh, storage=None):
    t = Catalog(wh, **(storage or {})).load_table("db.t")
    return sorted(t.to_arrow()["id"].to_pylist())


def faulty_io(fail_at=None, storage=None):
    """A FileIO failing at its ``fail_at``-th write, rename or delete: local, or the object store of
    ``storage``."""
    from icefloe.core.faults import FaultInjectingFileIO

    if not storage:
        return FaultInjectingFileIO(fail_at=fail_at)
    from icefloe.core.object_store import ObjectStoreIO

    class ObjectStoreFaults(FaultInjectingFileIO, ObjectStoreIO):
        def __init__(self):
            ObjectStoreIO.__init__(self, storage)
            FaultInjectingFileIO.__init__(self, fail_at)

        def for_tasks(self):            # Spark tasks write to the same store, without the driver's count
            return ObjectStoreIO(storage)

    return ObjectStoreFaults()


def referenced_files(t):
    """Every file the table's metadata needs, from all snapshots (not the files that
    DELETED manifest entries name: expiry may have removed those, as the spec allows)."""
    from icefloe.iceberg.manifest_reader import load_manifest_entries, load_manifest_list

    out = set()
    meta = t.refresh().metadata
    for s in meta.snapshots:
        out.add(s.manifest_list)
        for m in load_manifest_list(t.io, s.manifest_list):
            out.add(m.manifest_path)
            for e in load_manifest_entries(t.io, meta, m):
                if e.status != 2:
                    out.add(e.data_file.file_path)
    return out


def all_files(root):
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}
