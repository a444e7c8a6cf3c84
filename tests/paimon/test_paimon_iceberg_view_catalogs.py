"""The Iceberg view of a Paimon table beyond its metadata directory: Paimon's tags as Iceberg tags,
and the view registered in an Iceberg REST catalog (``metadata.iceberg.storage = rest-catalog``,
``icefloe serve`` over a SQL catalog as the server), read by name through pyiceberg's RestCatalog
and icefloe's; a failed registration is repaired by the next commit."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import IcebergViewWarning
from icefloe.rest.server import ServerSettings
from tests.interop_util import pyiceberg_table, served

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


# --------------------------------------------------------------------------- rest-catalog
@pytest.fixture
def rest_server(tmp_path, paimon_warehouse):
    """``icefloe serve`` over a SQL catalog, allowed to register tables of the Paimon warehouse."""
    cat = icefloe.Catalog(str(tmp_path / "rest-wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    with served(cat, ServerSettings(allowed_locations=(paimon_warehouse,))) as uri:
        yield cat, uri


def rest_view(uri: str, **extra) -> dict:
    return {"metadata.iceberg.storage": "rest-catalog", "metadata.iceberg.rest.uri": uri, **extra}


def pyiceberg_rest(uri: str):
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog("rest", uri=uri)


def assert_catalog_reads_as_paimon(pt, t, cols=("id", "s", "p")):
    """Every snapshot of the catalog's table reads as the Paimon snapshot of the same id."""
    assert pt.metadata.current_snapshot_id == t.refresh().current_snapshot().id
    for s in pt.snapshots():
        assert rows(pt.scan(snapshot_id=s.snapshot_id).to_arrow(), cols) == \
            rows(t.to_arrow(snapshot_id=s.snapshot_id), cols), s.snapshot_id


def test_rest_catalog_registers_the_view_and_every_commit_moves_it(paimon_catalog, paimon_warehouse, rest_server):
    server_cat, uri = rest_server
    t = paimon_catalog.create_table("db.r", SCHEMA, partitioned_by=["p"], properties=rest_view(uri))
    t.append(batch(1, 2))
    rc = pyiceberg_rest(uri)
    assert ("db", "r") in rc.list_tables("db")                # created on the first commit
    assert_catalog_reads_as_paimon(rc.load_table("db.r"), t)
    # the metadata is where hadoop-catalog writes it, and the catalog's table names Paimon's files
    mdir = os.path.join(paimon_warehouse, "iceberg", "db", "r", "metadata")
    assert os.path.exists(os.path.join(mdir, "v1.metadata.json"))
    assert not os.path.exists(os.path.join(t.location, "metadata"))
    t.append(batch(3, p="y"))
    with t.update_schema() as u:
        u.add_column("n", "bigint")
    t.refresh().append(pa.table({"id": [4], "s": ["s4"], "p": ["x"], "n": [40]}))
    t.create_tag("v1", 1)
    pt = rc.load_table("db.r")
    assert [s.snapshot_id for s in pt.snapshots()] == [1, 2, 3]        # committed to, not replaced
    assert_catalog_reads_as_paimon(pt, t, ("id", "s", "p", "n"))
    assert {f.name: f.field_id for f in pt.schema().fields} == {f.name: f.field_id for f in t.table_schema.fields}
    assert pt.metadata.refs["v1"].snapshot_id == 1 and pt.metadata.refs["v1"].snapshot_ref_type == "tag"
    assert pt.properties["write.metadata.previous-versions-max"] == "0"
    # icefloe's REST client and the server's own catalog read the same table by name
    ours = icefloe.Catalog(type="rest", uri=uri).load_table("db.r")
    assert rows(ours.to_arrow(), ("id", "s", "p", "n")) == rows(t.to_arrow(), ("id", "s", "p", "n"))
    assert rows(server_cat.load_table("db.r").to_arrow()) == rows(t.to_arrow())
    assert not t.check().problems
    # a rollback, then a new snapshot 3 of another timeline: the catalog follows Paimon
    t.rollback_to_snapshot(2)
    assert rc.load_table("db.r").metadata.current_snapshot_id == 2
    t.refresh().append(batch(9))
    pt = rc.load_table("db.r")
    assert_catalog_reads_as_paimon(pt, t)
    assert rows(pt.scan().to_arrow()) == [(1, "s1", "x"), (2, "s2", "x"), (3, "s3", "y"), (9, "s9", "x")]
    assert not t.check().problems


def test_rest_catalog_names_and_options(paimon_catalog, rest_server):
    _, uri = rest_server
    t = paimon_catalog.create_table("db.n", SCHEMA, properties=rest_view(
        uri, **{"metadata.iceberg.database": "lake", "metadata.iceberg.table": "events",
                "metadata.iceberg.rest.clients": "1", "metadata.iceberg.table-properties.owner": "ops"}))
    t.append(batch(1))
    pt = pyiceberg_rest(uri).load_table("lake.events")
    assert rows(pt.scan().to_arrow()) == [(1, "s1", "x")] and pt.properties["owner"] == "ops"
    info = dict(t.describe_extra())
    assert info["Iceberg Storage"] == "rest-catalog"
    assert info["Iceberg Catalog"] == f"lake.events in the REST catalog {uri}"
    assert info["Iceberg Catalog In Step"] == "yes"
    assert t.check().checked["iceberg view rows"] == 1


@pytest.mark.parametrize("victim", ["register_table", "commit_changes"])
def test_a_failed_registration_is_repaired_by_the_next_commit(paimon_catalog, rest_server, monkeypatch, victim):
    from icefloe.errors import RestCatalogError
    from icefloe.iceberg import rest_client

    _, uri = rest_server
    t = paimon_catalog.create_table("db.c", SCHEMA, properties=rest_view(uri))
    if victim == "commit_changes":
        t.append(batch(1))                                      # registered
    owner = rest_client.RestCatalog if victim == "register_table" else rest_client.RestTableOperations

    def fail(*_a, **_k):
        raise RestCatalogError("connection reset by peer")

    with monkeypatch.context() as m:
        m.setattr(owner, victim, fail)
        with pytest.warns(IcebergViewWarning, match="registering it as db.c in the REST catalog"):
            t.append(batch(2))
    n = t.refresh().current_snapshot().id
    assert rows(t.to_arrow(), ("id",)) == [(i,) for i in range(1 if victim == "commit_changes" else 2, 3)]
    # the Paimon commit and the view's files stand; check says the catalog lags
    report = t.check()
    assert any("REST catalog" in p.message for p in report.problems), report
    assert dict(t.describe_extra())["Iceberg Catalog In Step"].startswith("no")
    t.append(batch(3))
    pt = pyiceberg_rest(uri).load_table("db.c")
    assert pt.metadata.current_snapshot_id == n + 1
    assert_catalog_reads_as_paimon(pt, t)
    assert not t.check().problems


def test_rest_catalog_with_deletion_vectors_and_row_lineage(paimon_catalog, rest_server):
    _, uri = rest_server
    t = paimon_catalog.create_table("db.dv", "id bigint, s string", properties=rest_view(uri, **{
        "primary-key": "id", "bucket": "1", "deletion-vectors.enabled": "true",
        "metadata.iceberg.format-version": "3"}))
    schema = t.to_arrow().schema
    t.append(pa.Table.from_pylist([{"id": i, "s": "v1"} for i in range(4)], schema=schema))
    t.append(pa.Table.from_pylist([{"id": 1, "s": "v2"}, {"id": 5, "s": "v1"}], schema=schema))
    t.append(pa.Table.from_pylist([{"id": 2, "s": "v3"}], schema=schema))
    pt = pyiceberg_rest(uri).load_table("db.dv")
    assert pt.metadata.format_version == 3
    assert pt.metadata.next_row_id == t.iceberg().metadata.next_row_id
    assert [s.snapshot_id for s in pt.snapshots()] == [s.id for s in t.snapshots()]   # writes and compactions
    assert_catalog_reads_as_paimon(pt, t, ("id", "s"))
    assert rows(pt.scan().to_arrow(), ("id", "s")) == [(0, "v1"), (1, "v2"), (2, "v3"), (3, "v1"), (5, "v1")]


def test_check_compares_the_row_counts_of_both_views(paimon_catalog):
    from dataclasses import replace

    from icefloe.core.io import LOCAL
    from icefloe.iceberg.manifest import ManifestEntry
    from icefloe.iceberg.manifest_avro import write_manifest
    from icefloe.iceberg.manifest_list import read_manifest_list
    from icefloe.iceberg.manifest_reader import clear_manifest_cache, load_manifest_entries

    t = paimon_catalog.create_table("db.cnt", SCHEMA, properties=VIEW)
    t.append(batch(1, 2))
    assert t.check().checked["iceberg view rows"] == 2 and not t.check().problems
    # the Iceberg manifest made to count a row more than Paimon's file holds
    meta = t.iceberg().metadata
    m = read_manifest_list(LOCAL, meta.current_snapshot.manifest_list)[0]
    entries = [ManifestEntry(e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                             replace(e.data_file, record_count=e.data_file.record_count + 1))
               for e in load_manifest_entries(LOCAL, meta, m)]
    os.remove(m.manifest_path)
    write_manifest(LOCAL, m.manifest_path, meta.schema, meta.spec, entries, content=0, format_version=2)
    clear_manifest_cache()
    problems = [p.message for p in t.check().problems if p.kind == "iceberg view"]
    assert any("counts 3 rows in it, the Paimon snapshot 2" in p for p in problems), problems
