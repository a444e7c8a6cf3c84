"""The Iceberg view of a Paimon table beyond its metadata directory: Paimon's tags as Iceberg tags,
and the view registered in an Iceberg REST catalog (``metadata.iceberg.storage = rest-catalog``,
``icefloe serve`` over a SQL catalog as the server), read by name through pyiceberg's RestCatalog
and icefloe's; a failed registration is repaired by the next commit."""
from __future__ import annotations

import os

import pyarrow as pa

from tests.interop_util import pyiceberg_table

VIEW = {"metadata.iceberg.storage": "table-location"}
SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("p", pa.string())])


def rows(data: pa.Table, cols=("id", "s", "p")) -> list[tuple]:
    return sorted(tuple(r.get(c) for c in cols) for r in data.to_pylist())


def batch(*ids, p="x") -> pa.Table:
    return pa.table({"id": list(ids), "s": [f"s{i}" for i in ids], "p": [p] * len(ids)}, schema=SCHEMA)


def metadata_files(t) -> list[str]:
    return sorted(n for n in os.listdir(os.path.join(t.location, "metadata")) if n.endswith(".metadata.json"))


# --------------------------------------------------------------------------- tags
def test_paimon_tags_are_iceberg_tags_created_deleted_and_expired_with_their_snapshot(paimon_catalog):
    t = paimon_catalog.create_table("db.tg", SCHEMA, properties={
        **VIEW, "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2"})
    t.append(batch(1))
    t.append(batch(2))
    t.create_tag("first", 1)
    t.create_tag("second")                                   # the latest snapshot, 2
    before = metadata_files(t)
    it = t.iceberg()
    assert {k: (r.snapshot_id, r.type) for k, r in it.metadata.refs.items()} == {
        "main": (2, "branch"), "first": (1, "tag"), "second": (2, "tag")}
    assert metadata_files(t) == before == ["v2.metadata.json"]   # the latest version, rewritten in place
    py = pyiceberg_table(it.metadata_location)
    assert py.metadata.refs["first"].snapshot_id == 1 and py.metadata.refs["first"].snapshot_ref_type == "tag"
    first = py.snapshot_by_name("first")
    assert first is not None
    assert rows(py.scan(snapshot_id=first.snapshot_id).to_arrow()) == rows(t.to_arrow(tag="first")) == [(1, "s1", "x")]
    assert rows(it.to_arrow(ref="first")) == [(1, "s1", "x")]
    # deleting a tag removes its ref; a tag of a snapshot the view no longer keeps has none
    t.delete_tag("second")
    assert set(t.iceberg().metadata.refs) == {"main", "first"}
    t.append(batch(3))                                       # snapshot 1 expires (2 retained)
    it = t.iceberg()
    assert [s.snapshot_id for s in it.snapshots()] == [2, 3]
    assert set(it.metadata.refs) == {"main"}                 # "first" still reads in Paimon, not in Iceberg
    assert rows(t.to_arrow(tag="first")) == [(1, "s1", "x")]
    t.create_tag("third", 2)
    assert pyiceberg_table(t.iceberg().metadata_location).metadata.refs["third"].snapshot_id == 2
    # the tag procedures move the view the same way
    t.rename_tag("third", "renamed")
    assert set(t.iceberg().metadata.refs) == {"main", "renamed"}
