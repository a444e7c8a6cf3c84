"""Reliability of Paimon tables: corrupt inputs, faults at every write, a random model, concurrency.

Everything writes with pyarrow (``PaimonTable.append(pyarrow.Table)``): no Spark.

1. A corrupt or truncated snapshot, schema, manifest list, manifest or data file is an
   icefloe error naming the file; broken hint files change nothing a reader sees.
2. A fault (raised, or the process killed) at every mutating file operation of an append
   and an overwrite leaves the old or the new state in full; a retry succeeds.
3. Random appends/overwrites with random faults agree with an in-memory model.
4. Several OS processes committing at once: every commit exactly once, ids continuous.
"""
import json
import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.core.faults import FaultInjectingFileIO, InjectedFault
from icefloe.errors import CorruptMetadataError, IcefloeError
from icefloe.catalog import Catalog
from tests.reliability.rel_util import faulty_io

NAME = "db.t"
# a small merge-min-count makes commits compact manifests too (more write points)
OPTIONS = {"manifest.merge-min-count": "2"}


def rows(start, n):
    ids = range(start, start + n)
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "p": pa.array([i % 2 for i in ids], pa.int32())})


STORAGE: dict = {}   # warehouse on an object store -> its settings


def make_table(wh, options=None):
    return Catalog(wh, "paimon", **STORAGE.get(wh, {})).create_table(
        NAME, "id bigint not null, name string, p int", partitioned_by=["p"],
        properties={**OPTIONS, **(options or {})})


def load(wh, io=None):
    return Catalog(wh, "paimon", io=io, **({} if io is not None else STORAGE.get(wh, {}))).load_table(NAME)


def read_ids(wh):
    return sorted(load(wh).to_arrow()["id"].to_pylist())


def snapshot_ids(wh):
    return [s.id for s in load(wh).snapshots()]


def referenced_files(t):
    """Every file the table's snapshots reach: manifest lists, manifests, live data files."""
    store = t.refresh().store
    out = set()
    for s in t.snapshots():
        for lst in (s.base_manifest_list, s.delta_manifest_list):
            out.add(store.manifest_path(lst))
            for m in store.read_manifest_list(lst):
                out.add(store.manifest_path(m.file_name))
        out.update(f.file_path for f in t.plan_files(snapshot_id=s.id))
    return out


def table_files(t):
    """Manifests and data files on disk (not schema, snapshot or hint files)."""
    root = t.location.rstrip("/")
    return {p for p in t.io.walk_files(root) if p[len(root) + 1:].split("/")[0] not in ("schema", "snapshot")}


def check_consistent(wh):
    """Snapshot ids continuous (1..N unless expired), every referenced file present."""
    t = load(wh)
    ids = [s.id for s in t.snapshots()]
    assert ids == list(range(ids[0], ids[0] + len(ids))) if ids else True
    refs = referenced_files(t)
    missing = [p for p in refs if not t.io.exists(p)]
    assert not missing, missing
    return t, refs


# =========================================================================== 1. corrupt inputs
def _table_with_history(tmp_path):
    wh = str(tmp_path / "wh")
    t = make_table(wh)
    for k in range(3):
        t.append(rows(10 * k, 4))
    return wh, load(wh)


def _garbage(path):
    with open(path, "wb") as f:
        f.write(b"\x00\xffnot what you think\x13\x37" * 3)


def _truncate_half(path):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])


def _empty(path):
    open(path, "wb").close()


def _text(text):
    def corrupt(path):
        with open(path, "w") as f:
            f.write(text)
    return corrupt


def _json_without(*keys):
    def corrupt(path):
        with open(path) as f:
            doc = json.load(f)
        for k in keys:
            doc.pop(k)
        with open(path, "w") as f:
            json.dump(doc, f)
    return corrupt


def _json_set(key, value):
    def corrupt(path):
        with open(path) as f:
            doc = json.load(f)
        doc[key] = value
        with open(path, "w") as f:
            json.dump(doc, f)
    return corrupt


def _avro_header_only(path):
    """Cut an Avro file after its header: a valid file with no records (silently empty)."""
    import fastavro

    with open(path, "rb") as f:
        data = f.read()
    with open(path, "rb") as f:
        fastavro.reader(f)   # reads the header only
        header_end = f.tell()
    with open(path, "wb") as f:
        f.write(data[:header_end])


def _avro_without_last_byte(path):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-1])


def _latest_snapshot_file(t):
    return f"{t.location}/snapshot/snapshot-3"


def _delta_list_file(t):
    return t.store.manifest_path(t.current_snapshot().delta_manifest_list)


def _base_list_file(t):
    return t.store.manifest_path(t.current_snapshot().base_manifest_list)


def _delta_manifest_file(t):
    store = t.store
    return store.manifest_path(store.read_manifest_list(t.current_snapshot().delta_manifest_list)[0].file_name)


def _data_file(t):
    return t.plan_files()[0].file_path


CORRUPT_METADATA = {
    # snapshot-N (the latest)
    "snapshot-garbage": (_latest_snapshot_file, _garbage, "snapshot"),
    "snapshot-truncated": (_latest_snapshot_file, _truncate_half, "snapshot"),
    "snapshot-empty": (_latest_snapshot_file, _empty, "snapshot"),
    "snapshot-not-an-object": (_latest_snapshot_file, _text("[1, 2, 3]"), "snapshot"),
    "snapshot-null": (_latest_snapshot_file, _text("null"), "snapshot"),
    "snapshot-missing-id": (_latest_snapshot_file, _json_without("id"), "id"),
    "snapshot-missing-schemaId": (_latest_snapshot_file, _json_without("schemaId"), "schemaId"),
    "snapshot-missing-baseManifestList": (_latest_snapshot_file, _json_without("baseManifestList"),
                                          "baseManifestList"),
    "snapshot-missing-deltaManifestList": (_latest_snapshot_file, _json_without("deltaManifestList"),
                                           "deltaManifestList"),
    "snapshot-missing-timeMillis": (_latest_snapshot_file, _json_without("timeMillis"), "timeMillis"),
    "snapshot-null-deltaManifestList": (_latest_snapshot_file, _json_set("deltaManifestList", None),
                                        "deltaManifestList"),
    "snapshot-wrong-id": (_latest_snapshot_file, _json_set("id", 7), "id"),
    "snapshot-id-not-a-number": (_latest_snapshot_file, _json_set("id", "three"), "snapshot"),
    # manifest lists
    "delta-list-garbage": (_delta_list_file, _garbage, "Avro"),
    "delta-list-truncated": (_delta_list_file, _truncate_half, ""),
    "delta-list-empty": (_delta_list_file, _empty, ""),
    "delta-list-header-only": (_delta_list_file, _avro_header_only, ""),
    "delta-list-last-byte-cut": (_delta_list_file, _avro_without_last_byte, ""),
    "base-list-garbage": (_base_list_file, _garbage, "Avro"),
    "base-list-header-only": (_base_list_file, _avro_header_only, ""),
    # manifests
    "manifest-garbage": (_delta_manifest_file, _garbage, "Avro"),
    "manifest-truncated": (_delta_manifest_file, _truncate_half, ""),
    "manifest-empty": (_delta_manifest_file, _empty, ""),
    "manifest-header-only": (_delta_manifest_file, _avro_header_only, ""),
    "manifest-last-byte-cut": (_delta_manifest_file, _avro_without_last_byte, ""),
    "manifest-deleted": (_delta_manifest_file, os.unlink, "missing"),
    "delta-list-deleted": (_delta_list_file, os.unlink, "missing"),
    # data files
    "data-truncated": (_data_file, _truncate_half, "Parquet"),
    "data-empty": (_data_file, _empty, "Parquet"),
    "data-garbage": (_data_file, _garbage, "Parquet"),
    "data-deleted": (_data_file, os.unlink, "missing"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT_METADATA))
def test_corrupt_file_is_named(tmp_path, case):
    where, corrupt, reason = CORRUPT_METADATA[case]
    wh, t = _table_with_history(tmp_path)
    path = where(t)
    corrupt(path)
    with pytest.raises(IcefloeError) as info:
        load(wh).to_arrow()
    err = info.value
    assert path in str(err), str(err)
    if isinstance(err, CorruptMetadataError):
        assert err.path == path
    assert reason.lower() in str(err).lower(), str(err)
    # a commit on top of the broken state fails the same way rather than building on it
    if not case.startswith("data-"):
        with pytest.raises(IcefloeError):
            load(wh).append(rows(1000, 2))


def _schema_file(tmp_path):
    wh = str(tmp_path / "wh")
    make_table(wh).append(rows(0, 3))
    return wh, f"{Catalog(wh, 'paimon').table_location(NAME)}/schema/schema-0"


CORRUPT_SCHEMA = {
    "garbage": (_garbage, "schema"),
    "truncated": (_truncate_half, "schema"),
    "empty": (_empty, "schema"),
    "not-an-object": (_text('"a string"'), "schema"),
    "missing-fields": (_json_without("fields"), "fields"),
    "missing-id": (_json_without("id"), "id"),
    "bad-field-type": (_json_set("fields", [{"id": 0, "name": "id", "type": "NOT A TYPE"}]), "schema"),
    "fields-not-a-list": (_json_set("fields", 5), "schema"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT_SCHEMA))
def test_corrupt_schema_is_named(tmp_path, case):
    corrupt, reason = CORRUPT_SCHEMA[case]
    wh, path = _schema_file(tmp_path)
    corrupt(path)
    with pytest.raises(CorruptMetadataError) as info:
        load(wh).to_arrow()
    assert info.value.path == path
    assert reason.lower() in str(info.value).lower(), str(info.value)


HINTS = {
    "latest-garbage": ("LATEST", b"\x00\xffgarbage"),
    "latest-empty": ("LATEST", b""),
    "latest-missing-snapshot": ("LATEST", b"99"),
    "latest-next-id": ("LATEST", b"4"),
    "latest-stale": ("LATEST", b"1"),
    "latest-zero": ("LATEST", b"0"),
    "latest-negative": ("LATEST", b"-3"),
    "latest-huge": ("LATEST", b"99999999999999999999999"),
    "latest-deleted": ("LATEST", None),
    "earliest-garbage": ("EARLIEST", b"zz"),
    "earliest-empty": ("EARLIEST", b""),
    "earliest-missing-snapshot": ("EARLIEST", b"42"),
    "earliest-too-late": ("EARLIEST", b"3"),
    "earliest-deleted": ("EARLIEST", None),
    "both-garbage": ("BOTH", b"??"),
}


@pytest.mark.parametrize("case", sorted(HINTS))
def test_broken_hints_hide_nothing_and_invent_nothing(tmp_path, case):
    name, content = HINTS[case]
    wh, t = _table_with_history(tmp_path)
    for n in (["LATEST", "EARLIEST"] if name == "BOTH" else [name]):
        path = f"{t.location}/snapshot/{n}"
        if content is None:
            if os.path.exists(path):
                os.unlink(path)
        else:
            with open(path, "wb") as f:
                f.write(content)
    expected = [i for k in range(3) for i in range(10 * k, 10 * k + 4)]
    t = load(wh)
    assert t.current_snapshot().id == 3
    assert [s.id for s in t.snapshots()] == [1, 2, 3]
    assert t.store.snapshots.earliest_id() == 1
    assert read_ids(wh) == expected
    assert sorted(t.to_arrow(snapshot_id=2)["id"].to_pylist()) == expected[:8]
    # the next commit takes the next id, and the hints are repaired
    assert t.append(rows(100, 2)).id == 4
    assert snapshot_ids(wh) == [1, 2, 3, 4]
    assert read_ids(wh) == sorted(expected + [100, 101])
    snaps = load(wh).store.snapshots
    assert snaps.read_hint("LATEST") == 4 and snaps.read_hint("EARLIEST") == 1


def test_case_counts():
    """The corrupt-input matrix stays as large as documented."""
    assert len(CORRUPT_METADATA) + len(CORRUPT_SCHEMA) + len(HINTS) >= 50


# =========================================================================== 2. faults at every point
def _expected(op):
    old = list(range(5))   # the setup commits
    new = sorted(old + list(range(100, 105))) if op == "append" else list(range(100, 105))
    return old, new


# snapshot.num-retained.max 1: every commit expires the snapshots before it (deletes too)
EXPIRE = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}


def _setup(wh, expire=False):
    """Two commits of ids 0..4: the next commit compacts their manifests (merge-min-count 2)."""
    t = make_table(wh, EXPIRE if expire else None)
    t.append(rows(0, 3))
    t.append(rows(3, 2))


def _count_ops(tmp_path, op, expire=False):
    wh = str(tmp_path / f"probe-{op}-{expire}")
    _setup(wh, expire)
    io = FaultInjectingFileIO()
    getattr(load(wh, io), op)(rows(100, 5))
    return io.count, io.log


@pytest.mark.parametrize("expire", [False, True], ids=["keep", "expire"])
@pytest.mark.parametrize("op", ["append", "overwrite"])
def test_fault_at_every_point_raise(tmp_path, op, expire):
    n, ops = _count_ops(tmp_path, op, expire)
    # 2 data files, compacted manifest, 2 manifest lists, manifest, snapshot, LATEST hint
    # (+ with expiration: deletes of old manifests, lists, data files, snapshots; EARLIEST)
    assert n >= (10 if expire else 8), ops
    assert any(o == "delete" for o, _ in ops) == expire, ops
    old, new = _expected(op)
    before = [2] if expire else [1, 2]
    for k in range(1, n + 1):
        wh = str(tmp_path / f"{op}-{k}")
        _setup(wh, expire)
        io = FaultInjectingFileIO(fail_at=k)
        try:
            getattr(load(wh, io), op)(rows(100, 5))
            failed = False
        except InjectedFault:
            failed = True
        what = (k, io.log[k - 1])
        state = read_ids(wh)
        t, refs = check_consistent(wh)
        if failed:
            assert state == old, what
            assert snapshot_ids(wh) == before, what
            # a failed commit cleans up after itself: nothing unreferenced is left
            assert table_files(t) == refs, (what, table_files(t) - refs)
            getattr(load(wh), op)(rows(100, 5))   # the retry succeeds
            assert read_ids(wh) == new, what
        else:   # the fault hit after the snapshot was in place (hints, expiration): committed
            assert state == new, what
        ids = snapshot_ids(wh)
        assert ids[-1] == 3 and (ids == [3] or not expire or 2 in ids), (what, ids)
        if not expire:
            assert ids == [1, 2, 3], what
        check_consistent(wh)
        assert load(wh).append(rows(200, 1)).id == 4, what
        check_consistent(wh)


KILL_SCRIPT = textwrap.dedent("""
    import sys
    import pyarrow as pa
    from icefloe.core.faults import FaultInjectingFileIO
    from icefloe.catalog import Catalog
    wh, k = sys.argv[1], int(sys.argv[2])
    t = Catalog(wh, "paimon", io=FaultInjectingFileIO(fail_at=k, mode="kill")).load_table("db.t")
    ids = range(100, 105)
    t.append(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                       "p": pa.array([i % 2 for i in ids], pa.int32())}))
""")


# the kill loop with expiry after the commit is long: make test kills at every point of the commit
# (keep), and test_fault_at_every_point_raise covers the expiry's every point in this process
@pytest.mark.parametrize("expire", [False, pytest.param(True, marks=pytest.mark.long)], ids=["keep", "expire"])
def test_kill_at_every_point(tmp_path, expire):
    n, _ = _count_ops(tmp_path, "append", expire)
    old, new = _expected("append")
    whs = {}
    for k in range(1, n + 1):
        wh = whs[k] = str(tmp_path / f"kill-{k}")
        _setup(wh, expire)
    procs = {k: subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, whs[k], str(k)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(1, n + 1)}
    for k, proc in procs.items():
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 137, (k, err[-2000:])
    for k, wh in whs.items():
        state = read_ids(wh)
        assert state in (old, new), (k, state)
        t, refs = check_consistent(wh)
        ids = snapshot_ids(wh)
        assert ids[-1] == (2 if state == old else 3), (k, ids)
        if not expire:
            assert ids == ([1, 2] if state == old else [1, 2, 3]), k
        # a crash may leave unreferenced files behind, never referenced-but-missing ones
        leftovers = table_files(t) - refs
        t.append(rows(200, 1) if state == new else rows(100, 5))
        expected = sorted(new + ([200] if state == new else []))
        assert read_ids(wh) == expected, k
        t, refs = check_consistent(wh)
        assert not (leftovers & refs), k   # fresh names: a leftover never becomes live by accident


# =========================================================================== 3. model
OP_NAMES = ["append", "overwrite", "compact", "rewrite_manifests", "rollback", "expire"]


def ops_strategy(max_size):
    return st.lists(st.tuples(st.sampled_from(OP_NAMES), st.integers(1, 4),
                              st.one_of(st.none(), st.integers(1, 12))), min_size=1, max_size=max_size)


def run_model(wh, ops):
    """Apply ``ops`` with injected faults; after each, the table equals the model."""
    make_table(wh, {"write-only": "true"})
    model: list = []
    states = {}            # snapshot id -> the ids it shows
    next_id = 0
    garbage: set = set()   # unreferenced files earlier failed expiries or rollbacks left
    for op, n, fault in ops:
        t = load(wh, faulty_io(fault, STORAGE.get(wh)))
        latest = t.current_snapshot()
        expected = model
        try:
            if op in ("append", "overwrite"):
                ids = list(range(next_id, next_id + n))
                getattr(t, op)(rows(next_id, n))
                next_id += n
                expected = sorted(model + ids) if op == "append" else ids
            elif op == "compact":
                t.rewrite_data_files()
            elif op == "rewrite_manifests":
                t.rewrite_manifests()
            elif op == "rollback":
                if latest is None or latest.id - 1 not in states or latest.id - 1 not in snapshot_ids(wh):
                    continue
                t.rollback_to_snapshot(latest.id - 1)
                expected = states[latest.id - 1]
            elif op == "expire":
                t.expire_snapshots(older_than=2**62, retain_last=1)
            ok = True
        except InjectedFault:
            ok = False
        if ok:
            model = expected
        ids_now = snapshot_ids(wh)
        if ids_now:
            assert ids_now == list(range(ids_now[0], ids_now[-1] + 1)), ids_now   # continuous
            if op == "rollback" and not ok:
                # a rollback cut short stops at a snapshot in between: each one is whole
                model = states[ids_now[-1]]
            states = {k: v for k, v in states.items() if k <= ids_now[-1]}
            states.setdefault(ids_now[-1], model)
        assert read_ids(wh) == model, (op, fault)
        t, refs = check_consistent(wh)
        left = table_files(t) - refs
        if not ok and op in ("append", "overwrite", "compact", "rewrite_manifests"):
            assert left <= garbage, left - garbage   # the failed commit removed what it wrote
        garbage = left
    if model:
        assert load(wh).current_snapshot().total_record_count == len(model)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy(6))
def test_random_ops_with_faults_match_model(tmp_path_factory, ops):
    run_model(str(tmp_path_factory.mktemp("model")), ops)


@pytest.mark.long
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy(6))
def test_random_ops_with_faults_match_model_on_s3(s3_server, ops):
    """The same model with the warehouse on the S3 server and faults at its object writes (long:
    ``make test`` runs the model on local files and tests/objectstore/test_s3_commits.py a fault at
    every object write of a commit on S3)."""
    wh = f"s3://{s3_server.new_bucket()}/wh"
    STORAGE[wh] = s3_server.properties
    run_model(wh, ops)


@pytest.mark.stress
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy(20))
def test_random_ops_with_faults_match_model_stress(tmp_path_factory, ops):
    run_model(str(tmp_path_factory.mktemp("model")), ops)


# =========================================================================== 4. concurrency
WRITER = textwrap.dedent("""
    import sys
    import pyarrow as pa
    from icefloe.core.faults import FaultInjectingFileIO
    from icefloe.catalog import Catalog
    wh, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    io = FaultInjectingFileIO()          # injects nothing: records every write
    t = Catalog(wh, "paimon", io=io).load_table("db.t")
    for j in range(n):
        base = w * 10000 + j * 10
        ids = range(base, base + 3)
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"w{w}"] * 3,
                           "p": pa.array([i % 2 for i in ids], pa.int32())}))
        print("ok", flush=True)
    data = sum(1 for op, p in io.log if op == "write" and p.endswith(".parquet"))
    attempts = sum(1 for op, p in io.log if op == "write" and "/snapshot/snapshot-" in p)
    print("writes", data, attempts, flush=True)
""")

CONCURRENT = {"commit.max-retries": "1000", "commit.min-retry-wait": "5 ms",
              "commit.max-retry-wait": "100 ms"}


def run_writers(wh, processes, commits):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, wh, str(w), str(commits)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(processes)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
    attempts = 0
    for out, _ in outs:
        _, data, tries = next(line for line in out.splitlines() if line.startswith("writes")).split()
        assert int(data) == 2 * commits  # two partitions a commit; a lost race re-does metadata only
        attempts += int(tries)
    print(f"{processes} processes x {commits} commits: {attempts - processes * commits} lost races retried")
    return sum(o.count("ok") for o, _ in outs)


def check_concurrent(wh, processes, commits):
    total = processes * commits
    expected = sorted(w * 10000 + j * 10 + i for w in range(processes) for j in range(commits) for i in range(3))
    assert read_ids(wh) == expected            # every commit exactly once
    t, refs = check_consistent(wh)
    snaps = t.snapshots()
    assert [s.id for s in snaps] == list(range(1, total + 1))
    assert [s.total_record_count for s in snaps] == [3 * i for i in range(1, total + 1)]
    assert all(s.delta_record_count == 3 for s in snaps)
    assert t.store.snapshots.latest_id() == total


def test_concurrent_processes_fast(tmp_path):
    wh = str(tmp_path / "wh")
    make_table(wh, CONCURRENT)
    assert run_writers(wh, 3, 5) == 15
    check_concurrent(wh, 3, 5)


@pytest.mark.stress
def test_concurrent_processes_stress(tmp_path):
    wh = str(tmp_path / "wh")
    make_table(wh, CONCURRENT)
    assert run_writers(wh, 8, 40) == 320
    check_concurrent(wh, 8, 40)
