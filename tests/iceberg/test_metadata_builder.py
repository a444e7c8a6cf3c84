"""The validating metadata builder (``icefloe.iceberg.metadata_builder``): every update kind of the
REST spec round-trips through JSON, and random lists of valid and invalid updates, checked against
a small model of the spec's rules, either leave metadata pyiceberg loads (with what the model
predicts) or are refused whole, the base metadata untouched."""
import json
import uuid
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.core.types import Schema
from icefloe.core.schema_input import to_schema
from icefloe.iceberg.metadata_builder import UPDATES, BadUpdate, apply_changes, update_from_json
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.table_metadata import new_table_metadata
from icefloe.iceberg.table_requirements import REQUIREMENTS, RequirementFailed, requirement_from_json


def _base(version: int = 2):
    schema: Schema = to_schema("id bigint, s string")
    return new_table_metadata("/warehouse/db/t", schema, PartitionSpec([], 0), {"format-version": str(version)})


def _pyiceberg_loads(meta) -> object:
    from pyiceberg.table.metadata import TableMetadataUtil

    return TableMetadataUtil.parse_raw(json.dumps(meta.to_json()))


def test_every_update_and_requirement_round_trips():
    samples = {
        "assign-uuid": {"uuid": str(uuid.uuid4())}, "upgrade-format-version": {"format-version": 3},
        "add-schema": {"schema": {"type": "struct", "schema-id": 1, "fields": []}, "last-column-id": 2},
        "set-current-schema": {"schema-id": -1}, "add-spec": {"spec": {"spec-id": 1, "fields": []}},
        "set-default-spec": {"spec-id": 0}, "add-sort-order": {"sort-order": {"order-id": 1, "fields": []}},
        "set-default-sort-order": {"sort-order-id": 0}, "add-snapshot": {"snapshot": {"snapshot-id": 1}},
        "remove-snapshots": {"snapshot-ids": [1, 2]},
        "set-snapshot-ref": {"ref-name": "b", "snapshot-id": 1, "type": "tag", "max-ref-age-ms": 5},
        "remove-snapshot-ref": {"ref-name": "b"}, "set-location": {"location": "/x"},
        "set-properties": {"updates": {"a": "b"}}, "remove-properties": {"removals": ["a"]},
        "set-statistics": {"statistics": {"snapshot-id": 1}, "snapshot-id": 1}, "remove-statistics": {"snapshot-id": 1},
        "set-partition-statistics": {"partition-statistics": {"snapshot-id": 1}},
        "remove-partition-statistics": {"snapshot-id": 1},
    }
    assert set(samples) == set(UPDATES)
    for action, body in samples.items():
        doc = {"action": action, **body}
        assert update_from_json(doc).to_json() == doc
    reqs = [{"type": "assert-create"}, {"type": "assert-table-uuid", "uuid": "u"},
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
            {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 2},
            {"type": "assert-current-schema-id", "current-schema-id": 0},
            {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
            {"type": "assert-default-spec-id", "default-spec-id": 0},
            {"type": "assert-default-sort-order-id", "default-sort-order-id": 0}]
    assert {r["type"] for r in reqs} == set(REQUIREMENTS)
    base = _base()
    for r in reqs:
        req = requirement_from_json(r)
        assert req.to_json() == r
        if r["type"] in ("assert-create", "assert-table-uuid"):
            with pytest.raises(RequirementFailed):
                req.check(base)
        else:
            req.check(base)
    for bad in (1, "x", [], {"action": 5}, {"action": "set-properties", "updates": "x"},
                {"action": "set-properties", "updates": {"a": 1}}, {"action": "remove-snapshots", "snapshot-ids": ["1"]},
                {"action": "set-current-schema", "schema-id": True}):
        with pytest.raises(BadUpdate):
            update_from_json(bad)
    for bad in (1, ["x"], {"type": "wibble"}, {"type": "assert-current-schema-id"},
                {"type": "assert-ref-snapshot-id", "snapshot-id": 1}):
        with pytest.raises(BadUpdate):
            requirement_from_json(bad)


# --------------------------------------------------------------------------- the model
@dataclass
class Model:
    """What the spec's rules say about the table, kept beside the builder."""
    format_version: int = 2
    schema_ids: set = field(default_factory=lambda: {0})
    current_schema: int = 0
    last_column_id: int = 2
    spec_ids: set = field(default_factory=lambda: {0})
    default_spec: int = 0
    order_ids: set = field(default_factory=lambda: {0})
    default_order: int = 0
    snapshots: list = field(default_factory=list)
    last_seq: int = 0
    next_row_id: int = 0
    main: object = None
    added_schema: object = None
    added_spec: object = None
    added_order: object = None

    def step(self, kind: str, good: bool):
        """(update JSON, whether the spec allows it), and the model moved on when it does."""
        if kind == "props":
            return {"action": "set-properties", "updates": {"k": "v"}}, True
        if kind == "uuid":
            return {"action": "assign-uuid", "uuid": str(uuid.uuid4()) if good else "not-a-uuid"}, good
        if kind == "upgrade":
            v = 3 if good else 1
            ok = self.format_version <= v <= 3
            if ok:
                self.format_version = v
            return {"action": "upgrade-format-version", "format-version": v}, ok
        if kind == "schema":
            if not good:       # a different schema under a taken id
                return {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
                    {"id": 1, "name": "other", "required": False, "type": "int"}]}}, False
            sid, col = max(self.schema_ids) + 1, self.last_column_id + 1
            fields = [{"id": 1, "name": "id", "required": False, "type": "long"},
                      {"id": 2, "name": "s", "required": False, "type": "string"}]
            fields += [{"id": i, "name": f"c{i}", "required": False, "type": "int"} for i in range(3, col + 1)]
            self.schema_ids.add(sid)
            self.last_column_id, self.added_schema = col, sid
            return {"action": "add-schema", "schema": {"type": "struct", "schema-id": sid, "fields": fields},
                    "last-column-id": col}, True
        if kind == "current-schema":
            sid = -1 if good else 99
            target = self.added_schema if sid == -1 else sid
            ok = target is not None and target in self.schema_ids
            if ok:
                self.current_schema = target
            return {"action": "set-current-schema", "schema-id": sid}, ok
        if kind == "spec":
            src = 1 if good else 99
            sid = max(self.spec_ids) + 1
            if good:             # the same spec again is the first one, reused (as Java does)
                self.added_spec = min(self.spec_ids - {0}, default=sid)
                self.spec_ids.add(self.added_spec)
            return {"action": "add-spec", "spec": {"spec-id": sid, "fields": [
                {"source-id": src, "field-id": 1000, "name": "p", "transform": "identity"}]}}, good
        if kind == "default-spec":
            sid = -1 if good else 99
            target = self.added_spec if sid == -1 else sid
            ok = target is not None and target in self.spec_ids
            if ok:
                self.default_spec = target
            return {"action": "set-default-spec", "spec-id": sid}, ok
        if kind == "order":
            oid = max(self.order_ids) + 1
            if good:             # reused too
                self.added_order = min(self.order_ids - {0}, default=oid)
                self.order_ids.add(self.added_order)
            return {"action": "add-sort-order", "sort-order": {"order-id": oid, "fields": [
                {"source-id": 1, "transform": "identity", "direction": "asc" if good else "up",
                 "null-order": "nulls-first"}]}}, good
        if kind == "default-order":
            oid = -1 if good else 99
            target = self.added_order if oid == -1 else oid
            ok = target is not None and target in self.order_ids
            if ok:
                self.default_order = target
            return {"action": "set-default-sort-order", "sort-order-id": oid}, ok
        if kind == "snapshot":
            sid = len(self.snapshots) + 100
            parent = self.main
            seq = self.last_seq + 1 if good else self.last_seq
            snap = {"snapshot-id": sid, "timestamp-ms": 1700000000000 + sid, "sequence-number": seq,
                    "manifest-list": f"/warehouse/db/t/metadata/snap-{sid}.avro", "summary": {"operation": "append"},
                    "schema-id": self.current_schema}
            if parent is not None:
                snap["parent-snapshot-id"] = parent
            if self.format_version >= 3:
                snap["first-row-id"], snap["added-rows"] = self.next_row_id, 5
            ok = good or parent is None          # Java: a snapshot without a parent may repeat a number
            if ok:
                self.snapshots.append(sid)
                self.last_seq = max(self.last_seq, seq)
                if self.format_version >= 3:
                    self.next_row_id += 5
            return {"action": "add-snapshot", "snapshot": snap}, ok
        if kind == "ref":
            target = self.snapshots[-1] if self.snapshots else 424242
            ok = good and bool(self.snapshots)
            if ok:
                self.main = target
            return {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": target,
                    "type": "branch" if good else "wibble"}, ok
        raise AssertionError(kind)


KINDS = ["props", "uuid", "upgrade", "schema", "current-schema", "spec", "default-spec", "order", "default-order",
         "snapshot", "ref"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 5).map(lambda i: i > 0)), max_size=10))
def test_random_update_lists_against_the_model(ops):
    base = _base()
    before = json.dumps(base.to_json(), sort_keys=True)
    model = Model()
    updates, valid = [], True
    for kind, good in ops:
        doc, ok = model.step(kind, bool(good))
        updates.append(update_from_json(doc))
        valid = valid and ok
        if not ok:
            break                        # the builder stops at the first refusal; so does the model
    if not valid:
        with pytest.raises(BadUpdate):
            apply_changes(base, updates)
    else:
        new = apply_changes(base, updates)
        assert new.format_version == model.format_version and new.current_schema_id == model.current_schema
        assert new.default_spec_id == model.default_spec and new.default_sort_order_id == model.default_order
        assert [s.snapshot_id for s in new.snapshots] == model.snapshots
        assert new.last_sequence_number == model.last_seq and new.last_column_id == model.last_column_id
        assert new.current_snapshot_id == model.main
        if model.format_version >= 3:
            assert new.next_row_id == model.next_row_id
        loaded = _pyiceberg_loads(new)
        assert loaded.current_schema_id == model.current_schema and loaded.format_version == model.format_version
    assert json.dumps(base.to_json(), sort_keys=True) == before       # the base is never changed


def test_each_producer_commits_typed_updates_that_rebuild_its_version(tmp_path, monkeypatch):
    """Every commit the library's producers make (appends, schema, spec and sort order evolution,
    properties, tags, expiry) reaches the catalog as typed updates and requirements (what the REST
    client sends as they are): sent through JSON and applied by the builder to the version they
    were made on, they give the version that was written."""
    import pyarrow as pa

    import icefloe
    from icefloe.iceberg.hadoop import HadoopTableOperations
    from icefloe.iceberg.table_requirements import requirement_from_json

    sent = []
    real = HadoopTableOperations.commit_changes

    def record(self, base_version, base, changes):
        sent.append((base, [r.to_json() for r in changes.requirements], [u.to_json() for u in changes.updates]))
        return real(self, base_version, base, changes)

    monkeypatch.setattr(HadoopTableOperations, "commit_changes", record)
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", "id bigint, s string")
    rows = pa.table({"id": pa.array([1], pa.int64()), "s": ["a"]})
    t.append(rows)
    with t.update_schema() as u:
        u.add_column("x", "double")
    with t.update_spec() as u:
        u.add_field("s")
    t.replace_sort_order("id")
    t.update_properties(set={"a": "1"})
    t.append(pa.table({"id": pa.array([2], pa.int64()), "s": ["b"], "x": [1.0]}))
    t.create_tag("v1")
    t.update_properties(remove=["a"])
    t.expire_snapshots(older_than=2 ** 62, retain_last=1)
    ops = cat.load_table("db.t").ops
    versions = [ops.load(v)[1] for v in range(1, ops.current_version() + 1)]
    assert len(versions) >= 9 and len(sent) == len(versions) - 1
    kinds = {u["action"] for _, _, ups in sent for u in ups}
    assert {"add-snapshot", "set-snapshot-ref", "add-schema", "set-current-schema", "add-spec", "set-default-spec",
            "add-sort-order", "set-default-sort-order", "set-properties", "remove-properties",
            "remove-snapshots"} <= kinds
    keys = ("format-version", "table-uuid", "location", "last-column-id", "schemas", "current-schema-id",
            "partition-specs", "default-spec-id", "last-partition-id", "sort-orders", "default-sort-order-id",
            "properties", "current-snapshot-id", "refs", "snapshots", "last-sequence-number", "statistics")
    for (base, requirements, updates), made_on, new in zip(sent, versions, versions[1:]):
        assert base.to_json() == made_on.to_json()
        for r in requirements:
            requirement_from_json(r).check(base)
        rebuilt = apply_changes(base, [update_from_json(u) for u in updates]).to_json()
        want = new.to_json()
        assert {k: rebuilt[k] for k in keys} == {k: want[k] for k in keys}


def test_moving_main_back_logs_the_commits_time_and_expiry_keeps_the_log_after_its_last_gap(tmp_path):
    """As Java's builder: a ``set-snapshot-ref`` of main to an older snapshot logs it at the
    commit's time (the log stays in time order), one to the snapshot main is at logs nothing, and
    ``remove-snapshots`` keeps only the log entries after the last removed one."""
    import pyarrow as pa

    import icefloe
    from icefloe.iceberg.metadata_builder import RemoveSnapshots, SetSnapshotRef

    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", "id bigint")
    for i in range(3):
        t.append(pa.table({"id": pa.array([i], pa.int64())}))
    meta = t.refresh().metadata
    s1, s2, s3 = (s.snapshot_id for s in meta.snapshots)
    back = apply_changes(meta, [SetSnapshotRef("main", s1, "branch")])
    entry = back.snapshot_log[-1]
    assert entry["snapshot-id"] == s1 and entry["timestamp-ms"] >= meta.last_updated_ms
    assert [e["timestamp-ms"] for e in back.snapshot_log] == sorted(e["timestamp-ms"] for e in back.snapshot_log)
    same = apply_changes(meta, [SetSnapshotRef("main", s3, "branch")])
    assert same.snapshot_log == meta.snapshot_log
    kept = apply_changes(meta, [RemoveSnapshots([s2])])
    assert [e["snapshot-id"] for e in kept.snapshot_log] == [s3]
