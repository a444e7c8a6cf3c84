"""Distributed scan planning (``read.data-planning-mode`` / ``read.delete-planning-mode``): manifests
read in Spark tasks give exactly the local planner's tasks, in the same order, with the same delete
files; bad settings and corrupt manifests give the same clear errors."""
from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import icefloe
from icefloe.errors import CorruptMetadataError, IcefloeError
from icefloe.iceberg import manifest_reader
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest import DataFile, EQUALITY_DELETES, POSITION_DELETES
from icefloe.iceberg.manifest_list import DELETE_MANIFEST, ManifestFile
from icefloe.iceberg.row_delta import RowDelta
from icefloe.spark import iceberg_plan


def _data_file(loc: str, n: int, p: int, lo: int, hi: int, with_bounds: bool) -> DataFile:
    bounds = {1: struct.pack("<q", lo), 3: f"s{lo:04d}".encode()}
    uppers = {1: struct.pack("<q", hi), 3: f"s{hi:04d}".encode()}
    return DataFile(file_path=f"{loc}/data/p={p}/f{n:05d}.parquet", file_format="PARQUET", partition=(p,),
                    record_count=10, file_size_in_bytes=1000 + n,
                    value_counts={1: 10, 2: 10, 3: 10}, null_value_counts={1: 0, 2: 0, 3: n % 3},
                    lower_bounds=bounds if with_bounds else None, upper_bounds=uppers if with_bounds else None)


def _delete_file(loc: str, n: int, p: int, kind: int, target=None) -> DataFile:
    return DataFile(file_path=f"{loc}/data/p={p}/d{n:05d}.parquet", file_format="PARQUET", partition=(p,),
                    record_count=1, file_size_in_bytes=500 + n, content=kind,
                    equality_ids=[1] if kind == EQUALITY_DELETES else None, referenced_data_file=target)


# one commit: ("append", [(p, lo, width, with_bounds)]), ("deletes", [(p, equality?, target a data file?)]),
# ("remove", index of a data file to remove)
_appends = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 500), st.integers(0, 60), st.booleans()),
                    min_size=1, max_size=6).map(lambda fs: ("append", fs))
_deletes = st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.booleans()), min_size=1, max_size=3) \
    .map(lambda ds: ("deletes", ds))
_removes = st.integers(0, 1000).map(lambda i: ("remove", i))
_histories = st.lists(st.one_of(_appends, _appends, _deletes, _removes), min_size=2, max_size=6)

_leaves = st.one_of(
    st.builds(lambda op, v: f"id {op} {v}", st.sampled_from(["=", "<", ">=", "!="]), st.integers(-5, 600)),
    st.builds(lambda v: f"p = {v}", st.integers(0, 4)),
    st.builds(lambda v: f"s < 's{v:04d}'", st.integers(0, 600)),
    st.just("s IS NULL"),
    st.builds(lambda a, b: f"id IN ({a}, {b})", st.integers(0, 600), st.integers(0, 600)),
)
_filters = st.one_of(st.none(), _leaves,
                     st.builds(lambda a, op, b: f"({a}) {op} ({b})", _leaves, st.sampled_from(["AND", "OR"]), _leaves))


def _build(tmp_path, history, partitioned: bool):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint, p int, s string", partitioned_by=["p"] if partitioned else None)
    loc = t.location.rstrip("/")
    data: list = []
    n = 0
    for kind, what in history:
        if kind == "append":
            files = []
            for p, lo, width, bounded in what:
                n += 1
                files.append(_data_file(loc, n, p if partitioned else 0, lo, lo + width, bounded))
            if not partitioned:
                files = [DataFile(**{**f.__dict__, "partition": ()}) for f in files]
            t.commit_files(files)
            data.extend(files)
        elif kind == "deletes" and data:
            deletes = []
            for p, equality, targeted in what:
                n += 1
                target = data[n % len(data)].file_path if targeted and not equality else None
                f = _delete_file(loc, n, p if partitioned else 0, EQUALITY_DELETES if equality else POSITION_DELETES,
                                 target)
                deletes.append(DataFile(**{**f.__dict__, "partition": ()}) if not partitioned else f)
            t.commit_change(RowDelta(deletes), "main")
        elif kind == "remove" and data:
            gone = data.pop(what % len(data))
            t.commit_change(RowDelta(removed_paths=[gone.file_path]), "main")
    return cat.load_table("db.t")


def _assert_same_plans(spark, t, wheres) -> None:
    snap, meta = t.current_snapshot(), t.metadata
    planner = iceberg_plan.SparkPlanner(lambda: spark, lambda: spark)
    distributed = {**meta.properties, scan_mod.DATA_PLANNING_MODE: "distributed",
                   scan_mod.DELETE_PLANNING_MODE: "distributed"}
    remote_meta = dataclasses.replace(meta, properties=distributed)
    calls = []
    real_run = planner.run

    def counted(*args):
        calls.append(len(args[3]))
        return real_run(*args)

    planner.run = counted
    for where in wheres:
        manifest_reader.clear_manifest_cache()
        local = scan_mod.plan_files(t.io, meta, snap, where)
        manifest_reader.clear_manifest_cache()
        remote = scan_mod.plan_files(t.io, remote_meta, snap, where, remote=planner)
        assert remote == local, where
        assert [x.path for x in remote] == [x.path for x in local]
        assert [sorted(d.file_path for d in x.deletes) for x in remote] == \
               [sorted(d.file_path for d in x.deletes) for x in local]
    if snap is not None and scan_mod.plan_files(t.io, meta, snap, None):
        assert calls, "no manifest was planned in Spark tasks"


def test_distributed_planning_returns_the_local_plan_with_deletes_and_removed_files(spark, tmp_path):
    history = [("append", [(0, 0, 20, True), (1, 15, 30, True), (1, 100, 5, False)]),
               ("deletes", [(1, False, True), (1, True, False), (0, False, False)]),
               ("append", [(2, 50, 10, True), (0, 300, 40, True)]), ("remove", 1),
               ("deletes", [(2, True, False)])]
    t = _build(tmp_path, history, partitioned=True)
    tasks = scan_mod.plan_files(t.io, t.metadata, t.current_snapshot(), None)
    assert len(tasks) == 4 and sum(len(x.deletes) for x in tasks) >= 3
    _assert_same_plans(spark, t, [None, "id < 40 OR p = 2"])


@pytest.mark.long
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=_histories, partitioned=st.booleans(), wheres=st.lists(_filters, min_size=1, max_size=3))
def test_distributed_planning_returns_exactly_the_local_plan(spark, tmp_path_factory, history, partitioned, wheres):
    _assert_same_plans(spark, _build(tmp_path_factory.mktemp("plan"), history, partitioned), wheres)


class _Remote:
    """A stand-in session for the ``auto`` decision: its settings and parallelism."""

    def __init__(self, parallelism: int, settings: dict = None):
        self._parallelism, self._settings = parallelism, dict(settings or {})

    def setting(self, key):
        return self._settings.get(key)

    def parallelism(self):
        return self._parallelism


def _manifests(n: int, length: int):
    return [ManifestFile(f"m{i}.avro", length, 0, 0, 1, 1, 1, 1, 0, 0, 10, 0, 0) for i in range(n)]


def test_auto_plans_in_tasks_only_many_large_manifests_on_a_larger_session(monkeypatch):
    monkeypatch.setattr(scan_mod.os, "cpu_count", lambda: 2)
    big = _manifests(5, 200 * 1024 * 1024)
    assert scan_mod._distributed("auto", big, _Remote(8), equality_deletes=False)
    assert not scan_mod._distributed("auto", big, _Remote(2), equality_deletes=False)      # no more slots than here
    assert not scan_mod._distributed("auto", big[:4], _Remote(8), equality_deletes=False)  # few manifests
    assert not scan_mod._distributed("auto", _manifests(5, 1024), _Remote(8), equality_deletes=False)    # small
    assert not scan_mod._distributed("auto", big, _Remote(8), equality_deletes=True)
    assert scan_mod._distributed("distributed", _manifests(1, 10), _Remote(0), equality_deletes=True)
    assert not scan_mod._distributed("distributed", [], _Remote(8), equality_deletes=False)
    assert not scan_mod._distributed("local", big, _Remote(8), equality_deletes=False)


def test_planning_modes_from_table_properties_and_session_settings():
    modes = scan_mod.PlanningModes.of({scan_mod.DATA_PLANNING_MODE: " Distributed "})
    assert (modes.data, modes.delete) == ("distributed", "auto")
    over = _Remote(1, {scan_mod.SESSION_DELETE_PLANNING_MODE: "local", scan_mod.SESSION_DATA_PLANNING_MODE: "LOCAL"})
    modes = scan_mod.PlanningModes.of({scan_mod.DATA_PLANNING_MODE: "distributed"}, over)
    assert (modes.data, modes.delete) == ("local", "local")
    with pytest.raises(IcefloeError, match="table property read.delete-planning-mode must be one of auto, local, "
                                           "distributed, not 'remote'"):
        scan_mod.PlanningModes.of({scan_mod.DELETE_PLANNING_MODE: "remote"})
    with pytest.raises(IcefloeError, match="Spark setting spark.sql.iceberg.data-planning-mode .* not 'x'"):
        scan_mod.PlanningModes.of({}, _Remote(1, {scan_mod.SESSION_DATA_PLANNING_MODE: "x"}))


def test_table_reads_plan_in_tasks_as_the_session_says_and_refuse_an_unknown_mode(spark, tmp_path, monkeypatch):
    t = _build(tmp_path, [("append", [(1, 10, 5, True), (2, 40, 5, True)]), ("deletes", [(1, False, True)]),
                          ("append", [(1, 90, 5, True)])], partitioned=True)
    t = icefloe.Catalog(str(tmp_path / "wh"), spark=spark).load_table("db.t")
    local = t.plan_tasks(where="id < 50")
    assert sorted(x.path.rsplit("/", 1)[1] for x in local) == ["f00001.parquet", "f00002.parquet"]
    ran = []
    real = iceberg_plan.plan_in_tasks
    monkeypatch.setattr(iceberg_plan, "plan_in_tasks", lambda *a: ran.append(len(a[4])) or real(*a))
    spark.conf.set(scan_mod.SESSION_DATA_PLANNING_MODE, "distributed")
    try:
        assert t.plan_tasks(where="id < 50") == local
        assert ran == [2]           # the two data manifests; the delete manifest planned here (auto)
        spark.conf.set(scan_mod.SESSION_DATA_PLANNING_MODE, "everywhere")
        before = t.metadata_location
        with pytest.raises(IcefloeError, match="spark.sql.iceberg.data-planning-mode must be one of auto, local, "
                                               "distributed, not 'everywhere'"):
            t.plan_tasks()
        assert t.refresh().metadata_location == before
    finally:
        spark.conf.unset(scan_mod.SESSION_DATA_PLANNING_MODE)


def test_a_corrupt_manifest_planned_in_tasks_names_the_file(spark, tmp_path):
    t = _build(tmp_path, [("append", [(1, 10, 5, True)]), ("append", [(2, 40, 5, True)])], partitioned=True)
    meta = dataclasses.replace(t.metadata, properties={**t.metadata.properties,
                                                       scan_mod.DATA_PLANNING_MODE: "distributed"})
    victim = [m for m in manifest_reader.snapshot_manifests(t.io, t.current_snapshot())
              if m.content != DELETE_MANIFEST][0].manifest_path
    with open(victim.replace("file:", ""), "r+b") as fh:
        fh.truncate(len(fh.read()) - 40)            # cut inside its block of entries
    manifest_reader.clear_manifest_cache()
    planner = iceberg_plan.SparkPlanner(lambda: spark, lambda: spark)
    with pytest.raises(CorruptMetadataError) as got:
        scan_mod.plan_files(t.io, meta, t.current_snapshot(), None, remote=planner)
    assert got.value.path == victim and victim in str(got.value)


def test_matches_travel_back_from_tasks_unchanged_whatever_their_values():
    """A manifest's matches cross from the task to the driver as plain values (``marshal``), or
    pickled where a value is not one (a decimal or UUID partition): the same files either way."""
    import uuid
    from decimal import Decimal

    from icefloe.iceberg.manifest import ManifestEntry

    def matches(partition):
        f = DataFile(file_path="s3://b/t/data/a.parquet", file_format="PARQUET", partition=partition, record_count=3,
                     file_size_in_bytes=10, value_counts={1: 3}, lower_bounds={1: b"\x00\x01"}, split_offsets=[4],
                     first_row_id=7)
        d = DataFile(file_path="s3://b/t/data/d.parquet", file_format="PARQUET", partition=partition, record_count=1,
                     file_size_in_bytes=5, content=EQUALITY_DELETES, equality_ids=[1])
        return scan_mod.ManifestMatches([scan_mod.FileScanTask(f, 4)], [ManifestEntry(1, 9, 5, 5, d)])

    for partition, wire in [((3, "x", None, b"\x01"), b"m"), ((Decimal("1.50"),), b"p"), ((uuid.uuid4(),), b"p")]:
        sent = matches(partition)
        data = iceberg_plan._encoded(sent)
        assert data[:1] == wire
        kind, got = iceberg_plan._decoded(data)
        assert kind == "ok" and got == sent
        assert got.tasks[0].file.partition == partition and got.deletes[0].data_file.equality_ids == [1]


def test_a_planner_without_a_running_session_reads_the_active_one(spark):
    """``running`` is optional: without it the settings and parallelism come from the session active
    in this thread (calling the missing function was a TypeError)."""
    key = "spark.sql.iceberg.data-planning-mode"
    spark.conf.set(key, "local")
    try:
        planner = iceberg_plan.SparkPlanner(lambda: spark)
        assert planner.setting(key) == "local"
        assert planner.parallelism() == spark.sparkContext.defaultParallelism
    finally:
        spark.conf.unset(key)
