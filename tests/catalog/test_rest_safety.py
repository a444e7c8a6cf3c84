"""``icefloe serve`` tried as an attacker on the loopback address would, on a Hadoop warehouse and
an SQL catalog: every attempt gets a 4xx in the spec's ErrorModel (never a trace or a file's
content), and no file outside the attacked table changes (checksums of the warehouse's other
tables and of a sentinel tree outside it, before and after). Also the library's own maintenance
(expire, remove-orphans, drop with purge), which must never delete outside a table."""
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
import requests

import icefloe
from icefloe.errors import LocationError, MaintenanceError
from icefloe.rest.server import ServerSettings
from tests.interop_util import served

IDS = pa.schema([pa.field("id", pa.int64())])


def _ids(*v):
    return pa.table({"id": pa.array(list(v), pa.int64())}, schema=IDS)


@dataclass
class Env:
    kind: str
    cat: object
    uri: str
    root: Path
    wh: Path
    sentinel: Path

    def url(self, path: str) -> str:
        return f"{self.uri}/v1/namespaces/{path}"

    def table(self, name: str, rows=(1, 2)):
        t = self.cat.create_table(f"db.{name}", "id bigint")
        t.append(_ids(*rows))
        return self.cat.load_table(f"db.{name}")


def _sums(root: Path, skip=()) -> dict:
    """sha256 of every file under ``root``, except under the directories ``skip``."""
    skip = [str(s) for s in skip]
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            if p.endswith(".db") or any(p == s or p.startswith(s + os.sep) for s in skip):
                continue
            if os.path.isfile(p):
                with open(p, "rb") as fh:
                    out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.fixture(scope="module", params=["hadoop", "sql"])
def env(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"safety-{request.param}")
    kw = {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}"} if request.param == "sql" else {}
    cat = icefloe.Catalog(str(root / "wh"), **kw)
    cat.create_namespace("db")
    sentinel = root / "sentinel"
    (sentinel / "keep").mkdir(parents=True)
    (sentinel / "keep" / "secret.txt").write_text("TOP-SECRET-CONTENT")
    outside = icefloe.Catalog(str(sentinel / "otherwh"))      # a table of another warehouse
    outside.create_namespace("db")
    outside.create_table("db.o", "id bigint").append(_ids(7))
    e = Env(request.param, cat, "", root, root / "wh", sentinel)
    e.table("victim", (1, 2, 3))
    with served(cat) as uri:
        e.uri = uri
        yield e


def _is_error(r, status: int) -> dict:
    assert r.status_code == status, (r.status_code, r.text)
    err = r.json()["error"]
    assert set(err) == {"message", "type", "code"} and err["code"] == status
    assert "Traceback" not in r.text and "TOP-SECRET" not in r.text
    return err


def _guarded(env, attacked=()):
    return _sums(env.root, skip=attacked)


# --------------------------------------------------------------------------- register
def test_register_is_no_oracle_and_confined(env):
    before = _guarded(env)
    other_meta = icefloe.Catalog(str(env.sentinel / "otherwh")).load_table("db.o").metadata_location
    victim_meta = env.cat.load_table("db.victim").metadata_location
    fifo = env.wh / "db" / "fifo.metadata.json"
    os.mkfifo(fifo)
    cases = [str(other_meta),                                   # a real metadata file outside the warehouse
             str(env.sentinel / "keep" / "secret.txt"),        # any file outside
             str(env.wh / "db" / "missing.metadata.json"),     # a missing file inside
             str(env.wh / "db"),                               # a directory
             "wh/db/victim/metadata/v1.metadata.json",         # relative: never against the server's cwd
             str(fifo),                                        # would block a read forever
             "/dev/zero"]                                      # would be read until memory runs out
    for route in ("db/register", "db/register-view"):        # tables and views alike
        messages = set()
        for i, loc in enumerate(cases):
            started = time.monotonic()
            r = requests.post(env.url(route), json={"name": f"r{i}", "metadata-location": loc}, timeout=20)
            assert time.monotonic() - started < 10
            messages.add(_is_error(r, 400)["message"])
        assert len(messages) == 1, messages      # the same answer for missing, not allowed, not a file
    assert not env.cat.list_views("db")
    # the victim's own metadata by a path with '..': the alias would share the victim's location
    alias = victim_meta.replace("/metadata/", "/metadata/../metadata/")
    err = _is_error(requests.post(env.url("db/register"), json={"name": "alias", "metadata-location": alias},
                                  timeout=20), 400)
    assert "share a location" in err["message"]
    assert requests.delete(env.url("db/tables/alias"), timeout=20).status_code == 404
    os.unlink(fifo)
    assert _guarded(env) == before
    assert sorted(r["id"] for r in env.cat.load_table("db.victim").to_arrow().to_pylist()) == [1, 2, 3]


# --------------------------------------------------------------------------- drop
def test_drop_never_purges_unless_asked_and_allowed(env):
    t1, t2, t3 = env.table("d1"), env.table("d2"), env.table("d3")
    data1, data2 = [f.file_path for f in t1.plan_files()], [f.file_path for f in t2.plan_files()]
    before = _guarded(env, [t1.location, t2.location])
    r = requests.delete(env.url("db/tables/d1"), timeout=20)            # no parameter: the spec's "no purge"
    assert r.status_code == 204 and not env.cat.table_exists("db.d1")
    assert data1 and all(os.path.exists(p) for p in data1)
    r = requests.delete(env.url("db/tables/d2?purgeRequested=false"), timeout=20)
    assert r.status_code == 204 and data2 and all(os.path.exists(p) for p in data2)
    err = _is_error(requests.delete(env.url("db/tables/d3?purgeRequested=true"), timeout=20), 403)
    assert "purge is off" in err["message"] and env.cat.table_exists("db.d3")
    _is_error(requests.delete(env.url("db/tables/d3?purgeRequested=maybe"), timeout=20), 400)
    assert env.cat.load_table("db.d3").to_arrow().num_rows == 2 and t3.plan_files()
    assert _guarded(env, [t1.location, t2.location]) == before


def test_purge_deletes_the_referenced_files_only(env):
    t = env.table("p", (1,))
    t.append(_ids(2))
    stray = [Path(t.location) / "data" / "not-ours.parquet", Path(t.location) / "notes.txt"]
    for p in stray:
        p.write_bytes(b"someone else's file")
    referenced = [f.file_path for f in t.plan_files()] + [t.metadata_location]
    before = _guarded(env, [t.location])
    with served(env.cat, ServerSettings(allow_purge=True)) as uri:
        r = requests.delete(f"{uri}/v1/namespaces/db/tables/p?purgeRequested=true", timeout=20)
    assert r.status_code == 204 and not env.cat.table_exists("db.p")
    assert not any(os.path.exists(p) for p in referenced)
    assert all(p.read_bytes() == b"someone else's file" for p in stray)      # never a directory tree
    assert _guarded(env, [t.location]) == before


def test_namespace_drop_keeps_files_that_are_no_table(env):
    env.cat.create_namespace("junk")
    ns_dir = env.wh / "junk"
    (ns_dir / "plain").mkdir(parents=True)
    pa_file = ns_dir / "plain" / "part-0.parquet"
    import pyarrow.parquet as pq

    pq.write_table(_ids(1), pa_file)
    (ns_dir / "half" / "metadata").mkdir(parents=True)          # a half-created table: no metadata version
    (ns_dir / "half" / "data").mkdir(parents=True)
    (ns_dir / "half" / "data" / "x.parquet").write_bytes(b"x")
    before = _sums(ns_dir)
    r = requests.delete(env.url("junk"), timeout=20)
    if env.kind == "hadoop":
        assert _is_error(r, 409)["type"] == "NamespaceNotEmptyException"
    else:            # the SQL catalog forgets the namespace's rows; its directory's files stay
        assert r.status_code == 204
    assert _sums(ns_dir) == before


# --------------------------------------------------------------------------- commits naming other files
def test_commits_may_not_point_outside_the_table(env):
    t = env.table("c")
    victim = env.cat.load_table("db.victim")
    secret = str(env.sentinel / "keep" / "secret.txt")
    snap = t.current_snapshot()
    new_snap = {"snapshot-id": 4242, "parent-snapshot-id": snap.snapshot_id, "timestamp-ms": snap.timestamp_ms + 1,
                "sequence-number": t.metadata.last_sequence_number + 1, "summary": {"operation": "append"}}
    attacks = [
        [{"action": "set-location", "location": str(env.sentinel)}],
        [{"action": "set-location", "location": victim.location}],
        [{"action": "set-location", "location": t.location + "/../victim"}],
        [{"action": "add-snapshot", "snapshot": {**new_snap, "manifest-list": victim.current_snapshot().manifest_list}}],
        [{"action": "add-snapshot", "snapshot": {**new_snap, "manifest-list": secret}}],
        [{"action": "add-snapshot", "snapshot": {**new_snap, "manifest-list": "metadata/snap.avro"}}],
        [{"action": "set-statistics", "snapshot-id": snap.snapshot_id, "statistics": {
            "snapshot-id": snap.snapshot_id, "statistics-path": secret, "file-size-in-bytes": 1,
            "file-footer-size-in-bytes": 1, "blob-metadata": []}}],
    ]
    before, meta_before = _guarded(env), t.metadata_location
    for updates in attacks:
        err = _is_error(requests.post(env.url("db/tables/c"), json={"requirements": [], "updates": updates}, timeout=20), 400)
        assert "location" in err["message"] or "manifest list" in err["message"], err
        assert env.cat.load_table("db.c").metadata_location == meta_before
    # the owner's maintenance afterwards deletes nothing outside the table
    tbl = env.cat.load_table("db.c")
    tbl.expire_snapshots(older_than=2 ** 62, retain_last=1)
    tbl.remove_orphan_files(older_than=2 ** 62)
    assert _guarded(env, [t.location]) == {k: v for k, v in before.items() if not k.startswith(t.location + "/")}


# --------------------------------------------------------------------------- commit validation
def test_invalid_commits_are_refused_and_change_nothing(env):
    from pyiceberg.catalog.rest import RestCatalog

    t = env.table("v", (1,))
    t.append(_ids(2))
    snap = t.current_snapshot()
    bad = [
        {"action": "assign-uuid", "uuid": "not-a-uuid"},
        {"action": "set-snapshot-ref", "ref-name": "b", "snapshot-id": snap.snapshot_id, "type": "wibble"},
        {"action": "set-statistics", "statistics": {"x": 1}},
        {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "other", "required": False, "type": "string"}]}},
        {"action": "add-spec", "spec": {"spec-id": 5, "fields": [
            {"source-id": 99, "field-id": 1000, "name": "p", "transform": "identity"}]}},
        {"action": "set-default-sort-order", "sort-order-id": 99},
        {"action": "add-snapshot", "snapshot": {"snapshot-id": 77, "parent-snapshot-id": snap.snapshot_id,
                                                "sequence-number": 1, "timestamp-ms": 1,
                                                "manifest-list": snap.manifest_list,
                                                "summary": {"operation": "append"}}},
        {"action": "add-snapshot", "snapshot": {"snapshot-id": 78, "parent-snapshot-id": 12345,
                                                "sequence-number": 99, "timestamp-ms": 1,
                                                "manifest-list": snap.manifest_list,
                                                "summary": {"operation": "append"}}},
        {"action": "upgrade-format-version", "format-version": 1},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "no-such-update"},
    ]
    before = env.cat.load_table("db.v").metadata_location
    for u in bad:
        _is_error(requests.post(env.url("db/tables/v"), json={"requirements": [], "updates": [u]}, timeout=20), 400)
        # with a valid update before it: all or nothing
        body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}, u]}
        _is_error(requests.post(env.url("db/tables/v"), json=body, timeout=20), 400)
        assert env.cat.load_table("db.v").metadata_location == before
    loaded = RestCatalog("r", uri=env.uri).load_table("db.v")           # pyiceberg still loads it
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == [1, 2]


# --------------------------------------------------------------------------- client mistakes and limits
def test_client_mistakes_are_4xx_in_the_error_model(env):
    env.table("m")
    generic = ["[]", "null", '"str"', "1", "{not json"]
    commit = ["{}", '{"updates": "x", "requirements": []}', '{"updates": {}, "requirements": []}',
              '{"updates": [1], "requirements": []}', '{"updates": [], "requirements": {}}',
              '{"updates": [], "requirements": ["x"]}', '{"updates": [{"x": 1}], "requirements": []}',
              '{"updates": [{"action": "set-properties", "updates": {"a": 1}}], "requirements": []}',
              '{"updates": [], "requirements": [{"type": "assert-table-uuid"}]}', '{"updates": []}']
    cases = {"db/tables/m": commit, "db/tables": ['{"name": 5}', '{"name": "x", "schema": "s"}', '{"name": "x"}',
                                                  '{"name": "x", "schema": {"fields": 3}}',
                                                  '{"name": "x", "schema": {"type": "struct", "fields": []}, '
                                                  '"partition-spec": {"spec-id": 0, "fields": [{"source-id": 9, '
                                                  '"field-id": 1000, "name": "p", "transform": "identity"}]}}'],
             "db/register": ['{"name": "x", "metadata-location": 5}', '{"name": "x"}', '{"metadata-location": "/"}'],
             "": ['{"namespace": "db"}', '{"namespace": [1]}', '{"namespace": ["a", "b"]}',
                  '{"namespace": ["q"], "properties": []}'],
             "db/properties": ['{"removals": "a"}', '{"updates": []}', '{"updates": {"a": 1}}']}
    for path, bodies in cases.items():
        url = env.url(path) if path else f"{env.uri}/v1/namespaces"
        for body in generic + bodies:
            r = requests.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=20)
            assert 400 <= r.status_code < 500, (path, body, r.status_code, r.text)
            _is_error(r, r.status_code)
    deep = "[" * 100_000 + "]" * 100_000
    assert _is_error(requests.post(env.url("db/tables/m"), data=deep, timeout=20), 413)
    rename = {"source": {"namespace": "db", "name": "m"}, "destination": {"namespace": ["db"], "name": "n"}}
    _is_error(requests.post(f"{env.uri}/v1/tables/rename", json=rename, timeout=20), 400)
    assert env.cat.table_exists("db.m")


def test_size_limits(env):
    t = env.table("big")
    before = t.metadata_location
    huge = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "x" * (2 * 1024 * 1024)}}]}
    err = _is_error(requests.post(env.url("db/tables/big"), json=huge, timeout=60), 400)
    assert "limit" in err["message"]
    fifty = b'{"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "' + b"x" * (50 * 1024 * 1024) + b'"}}]}'
    _is_error(requests.post(env.url("db/tables/big"), data=fifty, timeout=60), 413)
    assert env.cat.load_table("db.big").metadata_location == before
    small = ServerSettings(max_body_bytes=1000, max_json_depth=5, max_property_bytes=10)
    with served(env.cat, small) as uri:
        url = f"{uri}/v1/namespaces/db/tables/big"
        body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "x" * 20}}]}
        assert "limit of 10 bytes" in _is_error(requests.post(url, json=body, timeout=20), 400)["message"]
        _is_error(requests.post(url, data=b"{" + b" " * 2000 + b"}", timeout=20), 413)
        _is_error(requests.post(url, json={"a": [[[[[[1]]]]]]}, timeout=20), 413)
        ok = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "ok"}}]}
        r = requests.post(url, json=ok, timeout=20)
        assert r.status_code == 200 and env.cat.load_table("db.big").properties["k"] == "ok"


def test_a_slow_request_does_not_hold_up_the_others(env, monkeypatch):
    impl = env.cat._impl
    slow = threading.Event()
    real = impl.list_namespaces

    def stalled():
        slow.wait(5)                     # a file system that hangs
        return real()

    monkeypatch.setattr(impl, "list_namespaces", stalled)
    waiting = threading.Thread(target=lambda: requests.get(f"{env.uri}/v1/namespaces", timeout=30))
    waiting.start()
    try:
        time.sleep(0.3)
        started = time.monotonic()
        assert requests.get(env.url("db/tables/victim"), timeout=30).status_code == 200
        assert time.monotonic() - started < 3
    finally:
        slow.set()
        waiting.join()


# --------------------------------------------------------------------------- the library's maintenance
def test_library_maintenance_refuses_overlapping_or_moved_tables(tmp_path):
    import sqlalchemy as sa

    from icefloe.iceberg.maintenance import referenced_files
    from icefloe.iceberg.metadata_commit import commit_metadata

    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    cat.create_namespace("db")
    a = cat.create_table("db.a", "id bigint")
    a.append(_ids(1))
    a.append(_ids(2))
    # an older catalog let a second row point into a's directory: maintenance of either is refused
    with cat._impl.db.engine.begin() as conn:
        conn.execute(sa.insert(cat._impl.db.tables).values(
            catalog_name="default", table_namespace="db", table_name="alias", metadata_location=a.metadata_location,
            previous_metadata_location=None, iceberg_type="TABLE"))
    before = _sums(tmp_path)
    for name in ("db.a", "db.alias"):
        t = cat.load_table(name)
        with pytest.raises(LocationError, match="share a location"):
            t.expire_snapshots(older_than=2 ** 62, retain_last=1)
        with pytest.raises(LocationError, match="share a location"):
            t.remove_orphan_files(older_than=2 ** 62)
        with pytest.raises(LocationError, match="share a location"):
            cat.drop_table(name, purge=True)
    assert _sums(tmp_path) == before and cat.table_exists("db.alias")
    cat.drop_table("db.alias", purge=False)          # forgetting it deletes nothing
    assert _sums(tmp_path) == before

    # a table whose metadata was moved outside its directory (by an older server): nothing is deleted
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    (sentinel / "old.parquet").write_bytes(b"keep")
    os.utime(sentinel / "old.parquet", (1, 1))
    from icefloe.iceberg.metadata_builder import SetLocation

    commit_metadata(a.ops, lambda m: [SetLocation(str(sentinel))])
    a = cat.load_table("db.a")
    before = _sums(tmp_path)
    for call in (lambda: a.remove_orphan_files(older_than=2 ** 62),
                 lambda: a.expire_snapshots(older_than=2 ** 62, retain_last=1),
                 lambda: cat.drop_table("db.a", purge=True)):
        with pytest.raises(LocationError, match="own directory"):
            call()
    assert _sums(tmp_path) == before
    assert referenced_files(a.ops, *a.ops.load())      # still readable, nothing lost


def test_expire_with_an_unreadable_manifest_list_fails_and_deletes_nothing(tmp_path):
    from icefloe.cli import main
    from icefloe.iceberg.manifest_reader import clear_manifest_cache

    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.e", "id bigint")
    for i in range(3):
        t.append(_ids(i))
    first = t.snapshots()[0]
    Path(first.manifest_list).write_bytes(b"not an avro file")
    clear_manifest_cache()                  # as a new process would read it
    before = _sums(tmp_path)
    with pytest.raises(MaintenanceError, match="deleted no file"):
        cat.load_table("db.e").expire_snapshots(older_than=2 ** 62, retain_last=2)
    assert os.path.exists(first.manifest_list)
    assert {k: v for k, v in before.items() if "metadata.json" not in k and "version-hint" not in k} == \
        {k: v for k, v in _sums(tmp_path).items() if "metadata.json" not in k and "version-hint" not in k}
    # the command line: a non-zero exit
    t = cat.load_table("db.e")
    t.append(_ids(9))
    Path(t.snapshots()[0].manifest_list).write_bytes(b"not an avro file either")
    clear_manifest_cache()
    with pytest.raises(SystemExit) as exit_:
        main(["--warehouse", str(tmp_path / "wh"), "expire", "db.e", "--retain-last", "1",
              "--older-than", "2100-01-01T00:00:00"])
    assert exit_.value.code != 0


def test_error_bodies_are_json_error_models(env):
    r = requests.get(env.url("db/tables/nope"), timeout=20)
    assert json.loads(r.text)["error"]["type"] == "NoSuchTableException"


def test_a_new_table_never_lands_on_a_registered_ones_files(tmp_path):
    wh = str(tmp_path / "wh")
    plain = icefloe.Catalog(wh)                           # files written at <wh>/db/n by another catalog
    plain.create_namespace("db")
    plain.create_table("db.n", "id bigint").append(_ids(1))
    cat = icefloe.Catalog(wh, type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    cat.create_namespace("db")
    cat.register_table("db.reg", plain.load_table("db.n").metadata_location)
    before = _sums(tmp_path)
    with pytest.raises(LocationError, match="share a location"):
        cat.create_table("db.n", "id bigint")
    with served(cat) as uri:
        r = requests.post(f"{uri}/v1/namespaces/db/tables", json={"name": "n", "schema": {
            "type": "struct", "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}}, timeout=20)
        assert "share a location" in _is_error(r, 400)["message"]
    assert _sums(tmp_path) == before and not cat.table_exists("db.n")


def test_a_paimon_drop_without_purge_is_refused_not_ignored(tmp_path):
    from icefloe.errors import NotSupportedError

    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    cat.create_namespace("db")
    cat.create_table("db.p", "id bigint")
    with pytest.raises(NotSupportedError, match="drop without purge"):
        cat.drop_table("db.p", purge=False)
    assert cat.table_exists("db.p")
    cat.drop_table("db.p")
    assert not cat.table_exists("db.p")
