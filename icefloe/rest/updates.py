"""The Iceberg REST protocol's table commits on icefloe's metadata: requirements checked against
the table as it is, updates applied to its metadata document (the spec's ``TableRequirement``
and ``TableUpdate`` objects), one new metadata version per commit."""
from __future__ import annotations

import copy
from typing import Optional

from icefloe.errors import IcefloeError
from icefloe.iceberg.table_metadata import MAIN_BRANCH, MAX_FORMAT_VERSION, TableMetadata, now_ms


class RequirementFailed(IcefloeError):
    """A commit's requirement does not hold for the table's current metadata (HTTP 409)."""


class BadUpdate(IcefloeError):
    """An update icefloe does not know or cannot apply (HTTP 400)."""


def check_requirements(base: Optional[TableMetadata], requirements: list) -> None:
    doc = base.to_json() if base is not None else None
    for r in requirements or []:
        kind = r.get("type")
        if kind == "assert-create":
            if doc is not None:
                raise RequirementFailed("the table already exists")
            continue
        if doc is None:
            raise RequirementFailed(f"requirement {kind}: the table does not exist")
        if kind == "assert-table-uuid":
            ok = doc["table-uuid"] == r.get("uuid")
        elif kind == "assert-ref-snapshot-id":
            ref = doc["refs"].get(r.get("ref"))
            want = r.get("snapshot-id")
            ok = (ref is None) if want is None else (ref is not None and ref["snapshot-id"] == want)
        elif kind == "assert-last-assigned-field-id":
            ok = doc["last-column-id"] == r.get("last-assigned-field-id")
        elif kind == "assert-current-schema-id":
            ok = doc["current-schema-id"] == r.get("current-schema-id")
        elif kind == "assert-last-assigned-partition-id":
            ok = doc["last-partition-id"] == r.get("last-assigned-partition-id")
        elif kind == "assert-default-spec-id":
            ok = doc["default-spec-id"] == r.get("default-spec-id")
        elif kind == "assert-default-sort-order-id":
            ok = doc["default-sort-order-id"] == r.get("default-sort-order-id")
        else:
            raise BadUpdate(f"unknown requirement {kind!r}")
        if not ok:
            raise RequirementFailed(f"requirement failed: {kind} {r}")


def apply_updates(base: TableMetadata, updates: list) -> TableMetadata:
    """``base`` with ``updates`` applied, as a new (validated) metadata object."""
    doc = copy.deepcopy(base.to_json())
    last_schema = last_spec = last_order = None
    for u in updates or []:
        action = u.get("action")
        if action == "assign-uuid":
            doc["table-uuid"] = u["uuid"]
        elif action == "upgrade-format-version":
            v = int(u["format-version"])
            if v < doc["format-version"] or v > MAX_FORMAT_VERSION:
                raise BadUpdate(f"format-version {v}: a version {doc['format-version']} table can be upgraded "
                                f"to at most {MAX_FORMAT_VERSION}, never downgraded")
            if v >= 3 and doc["format-version"] < 3:
                doc["next-row-id"] = 0
            doc["format-version"] = v
        elif action == "add-schema":
            schema = u["schema"]
            doc["schemas"].append(schema)
            highest = max([f.get("id", 0) for f in _all_fields(schema)] + [0])
            doc["last-column-id"] = max(doc["last-column-id"], u.get("last-column-id") or 0, highest)
            last_schema = schema["schema-id"]
        elif action == "set-current-schema":
            sid = u["schema-id"]
            doc["current-schema-id"] = last_schema if sid == -1 else sid
        elif action == "add-spec":
            spec = u["spec"]
            doc["partition-specs"].append(spec)
            doc["last-partition-id"] = max([doc["last-partition-id"]] + [f["field-id"] for f in spec["fields"]])
            last_spec = spec["spec-id"]
        elif action == "set-default-spec":
            sid = u["spec-id"]
            doc["default-spec-id"] = last_spec if sid == -1 else sid
        elif action == "add-sort-order":
            doc["sort-orders"].append(u["sort-order"])
            last_order = u["sort-order"]["order-id"]
        elif action == "set-default-sort-order":
            oid = u["sort-order-id"]
            doc["default-sort-order-id"] = last_order if oid == -1 else oid
        elif action == "set-location":
            doc["location"] = u["location"]
        elif action == "set-properties":
            doc["properties"].update({str(k): str(v) for k, v in u["updates"].items()})
        elif action == "remove-properties":
            for k in u["removals"]:
                doc["properties"].pop(k, None)
        elif action == "add-snapshot":
            snap = u["snapshot"]
            if any(s["snapshot-id"] == snap["snapshot-id"] for s in doc["snapshots"]):
                raise BadUpdate(f"snapshot {snap['snapshot-id']} already exists")
            doc["snapshots"].append(snap)
            doc["last-sequence-number"] = max(doc["last-sequence-number"], snap.get("sequence-number", 0))
        elif action == "set-snapshot-ref":
            name = u["ref-name"]
            ref = {"snapshot-id": u["snapshot-id"], "type": u["type"]}
            for k in ("max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep"):
                if u.get(k) is not None:
                    ref[k] = u[k]
            doc["refs"][name] = ref
            if name == MAIN_BRANCH:
                doc["current-snapshot-id"] = u["snapshot-id"]
                ts = next((s["timestamp-ms"] for s in doc["snapshots"] if s["snapshot-id"] == u["snapshot-id"]),
                          now_ms())
                doc["snapshot-log"].append({"timestamp-ms": ts, "snapshot-id": u["snapshot-id"]})
        elif action == "remove-snapshots":
            gone = set(u["snapshot-ids"])
            doc["snapshots"] = [s for s in doc["snapshots"] if s["snapshot-id"] not in gone]
            doc["snapshot-log"] = [e for e in doc["snapshot-log"] if e["snapshot-id"] not in gone]
        elif action == "remove-snapshot-ref":
            doc["refs"].pop(u["ref-name"], None)
            if u["ref-name"] == MAIN_BRANCH:
                doc["current-snapshot-id"] = -1
        elif action == "set-statistics":
            stats = u["statistics"]
            doc["statistics"] = [s for s in doc["statistics"] if s["snapshot-id"] != stats["snapshot-id"]] + [stats]
        elif action == "remove-statistics":
            doc["statistics"] = [s for s in doc["statistics"] if s["snapshot-id"] != u["snapshot-id"]]
        else:
            raise BadUpdate(f"unknown table update {action!r}")
    doc["last-updated-ms"] = max(now_ms(), doc["last-updated-ms"] + 1)
    return TableMetadata.from_json(doc, "REST commit")


def _all_fields(schema: dict):
    def walk(t):
        if isinstance(t, dict):
            if t.get("type") == "struct":
                for f in t.get("fields", []):
                    yield f
                    yield from walk(f.get("type"))
            elif t.get("type") == "list":
                yield {"id": t.get("element-id", 0)}
                yield from walk(t.get("element"))
            elif t.get("type") == "map":
                yield {"id": t.get("key-id", 0)}
                yield {"id": t.get("value-id", 0)}
                yield from walk(t.get("key"))
                yield from walk(t.get("value"))
    yield from walk({"type": "struct", "fields": schema.get("fields", [])})
