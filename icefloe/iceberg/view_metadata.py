# pyright: strict
"""Iceberg view metadata (the view spec, ``format/view-spec.md``): the JSON document, its
validation, and the updates that make a view's next version.

A view's metadata file holds ``view-uuid``, ``format-version`` (1), ``location``, the ``schemas``
its versions refer to, the ``versions`` (each: ``version-id``, ``timestamp-ms``, ``schema-id``,
``summary``, ``representations`` of type ``sql`` with a ``dialect``, ``default-namespace`` and an
optional ``default-catalog``), ``current-version-id``, the ``version-log`` of which version was
current since when, and ``properties``.

Updates follow the spec's rules and Java's ``ViewMetadata.Builder``: a version equal to a kept one
(same summary, representations, schema, default catalog and namespace) reuses its id, a new one
gets the highest id + 1; a schema equal to a kept one reuses its id; ``schema-id`` -1 and
``set-current-view-version`` -1 mean "the last one added"; making a version current appends to
the version log; at most ``version.history.num-entries`` (default 10) versions are kept, the
newest, always with the current one and those added by the same commit.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional, Sequence, cast

from icefloe.core.types import Schema
from icefloe.errors import CorruptMetadataError, IcefloeError, SchemaError, VersionConflict
from icefloe.iceberg.schema import schema_from_json, schema_to_json
from icefloe.iceberg.table_metadata import metadata_json

VIEW_FORMAT_VERSION = 1
SQL = "sql"
HISTORY_SIZE = "version.history.num-entries"
HISTORY_SIZE_DEFAULT = 10
LAST_ADDED = -1

Json = dict[str, Any]       # a JSON object of the view spec or the REST spec


class ViewUpdateError(IcefloeError):
    """A view update or requirement that cannot apply (an unknown schema or version, two queries of
    one dialect, a wrong uuid...)."""


@dataclass(frozen=True)
class SqlRepresentation:
    """One version's query in one SQL dialect (``spark``, ``trino``...)."""
    sql: str
    dialect: str

    def to_json(self) -> Json:
        return {"type": SQL, "sql": self.sql, "dialect": self.dialect}


def duplicate_dialect(representations: Iterable[SqlRepresentation]) -> Optional[str]:
    """The first dialect (lower case) that more than one of ``representations`` is in, if any
    (a view version has at most one query per dialect, compared without case)."""
    seen: set[str] = set()
    for r in representations:
        d = r.dialect.lower()
        if d in seen:
            return d
        seen.add(d)
    return None


@dataclass(frozen=True)
class ViewVersion:
    version_id: int
    timestamp_ms: int
    schema_id: int
    summary: dict[str, str]
    representations: tuple[SqlRepresentation, ...]
    default_namespace: tuple[str, ...]
    default_catalog: Optional[str] = None

    def sql_for(self, dialect: str) -> Optional[str]:
        """The query in ``dialect`` (compared without case), if this version has one."""
        return next((r.sql for r in self.representations if r.dialect.lower() == dialect.lower()), None)

    def same_as(self, other: "ViewVersion") -> bool:
        return (self.summary == other.summary and self.representations == other.representations
                and self.default_catalog == other.default_catalog
                and self.default_namespace == other.default_namespace and self.schema_id == other.schema_id)

    def to_json(self) -> Json:
        d: Json = {"version-id": self.version_id, "timestamp-ms": self.timestamp_ms, "schema-id": self.schema_id,
             "summary": dict(self.summary), "representations": [r.to_json() for r in self.representations]}
        if self.default_catalog is not None:
            d["default-catalog"] = self.default_catalog
        d["default-namespace"] = list(self.default_namespace)
        return d

    @staticmethod
    def from_json(obj: object, bad: Optional[Callable[[str], Exception]] = None) -> "ViewVersion":
        bad = bad or (lambda reason: ViewUpdateError(f"view version: {reason}"))
        if not isinstance(obj, dict):
            raise bad(f"a view version must be a JSON object, not {type(obj).__name__}")
        obj = cast(Json, obj)
        for key in ("version-id", "timestamp-ms", "schema-id"):
            if type(obj.get(key)) is not int:
                raise bad(f"view version: {key!r} must be an integer, not {obj.get(key)!r}")
        summary: object = obj.get("summary")
        if not isinstance(summary, dict) or not all(isinstance(v, str) for v in cast(Json, summary).values()):
            raise bad(f"view version {obj['version-id']}: 'summary' must be a JSON object of strings")
        reps: object = obj.get("representations")
        if not isinstance(reps, list):
            raise bad(f"view version {obj['version-id']}: 'representations' must be a JSON array")
        out: list[SqlRepresentation] = []
        for r in cast(list[object], reps):
            if not isinstance(r, dict) or cast(Json, r).get("type") != SQL:
                raise bad(f"view version {obj['version-id']}: unknown representation {r!r} (the spec has type 'sql')")
            r = cast(Json, r)
            if not isinstance(r.get("sql"), str) or not isinstance(r.get("dialect"), str):
                raise bad(f"view version {obj['version-id']}: a sql representation needs the strings 'sql' and "
                          "'dialect'")
            out.append(SqlRepresentation(r["sql"], r["dialect"]))
        twice = duplicate_dialect(out)
        if twice:
            raise bad(f"Invalid view version: Cannot add multiple queries for dialect {twice}")
        ns: object = obj.get("default-namespace")
        if not isinstance(ns, list) or not all(isinstance(p, str) for p in cast(list[object], ns)):
            raise bad(f"view version {obj['version-id']}: 'default-namespace' must be a JSON array of strings")
        cat = obj.get("default-catalog")
        if cat is not None and not isinstance(cat, str):
            raise bad(f"view version {obj['version-id']}: 'default-catalog' must be a string")
        return ViewVersion(obj["version-id"], obj["timestamp-ms"], obj["schema-id"],
                           dict(cast(dict[str, str], summary)), tuple(out), tuple(cast(list[str], ns)), cat)


@dataclass(frozen=True)
class ViewMetadata:
    view_uuid: str
    location: str
    schemas: tuple[Schema, ...]
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[tuple[int, int], ...]                # ((timestamp-ms, version-id), ...)
    properties: dict[str, str] = field(default_factory=dict[str, str])
    format_version: int = VIEW_FORMAT_VERSION

    # ------------------------------------------------------------------ lookups
    @property
    def current_version(self) -> ViewVersion:
        return next(v for v in self.versions if v.version_id == self.current_version_id)

    def version(self, version_id: int) -> Optional[ViewVersion]:
        return next((v for v in self.versions if v.version_id == version_id), None)

    def schema_by_id(self, schema_id: int) -> Optional[Schema]:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    @property
    def schema(self) -> Schema:
        """The current version's schema."""
        s = self.schema_by_id(self.current_version.schema_id)
        assert s is not None       # checked when read and when built
        return s

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> Json:
        return {"view-uuid": self.view_uuid, "format-version": self.format_version, "location": self.location,
                "schemas": [schema_to_json(s) for s in self.schemas],
                "current-version-id": self.current_version_id,
                "versions": [v.to_json() for v in self.versions],
                "version-log": [{"timestamp-ms": ts, "version-id": vid} for ts, vid in self.version_log],
                "properties": dict(self.properties)}

    def dumps(self) -> bytes:
        return json.dumps(self.to_json(), indent=2).encode()

    @staticmethod
    def loads(data: bytes, path: str) -> "ViewMetadata":
        return ViewMetadata.from_json(metadata_json(data, path, "view"), path)

    @staticmethod
    def from_json(obj: object, path: str = "<memory>") -> "ViewMetadata":
        """The metadata of ``obj``, checked by the spec's rules; ``CorruptMetadataError`` naming
        ``path`` and what is wrong."""
        def bad(reason: str) -> CorruptMetadataError:
            return CorruptMetadataError(path, reason)

        if not isinstance(obj, dict):
            raise bad(f"view metadata must be a JSON object, not {type(obj).__name__}")
        obj = cast(Json, obj)
        fv = obj.get("format-version")
        if fv != VIEW_FORMAT_VERSION:
            raise bad(f"view format-version {fv!r} is not supported (the view spec has version 1)")
        for key in ("view-uuid", "location"):
            if not isinstance(obj.get(key), str) or not obj[key]:
                raise bad(f"{key!r} must be a non-empty string")
        if not isinstance(obj.get("schemas"), list) or not isinstance(obj.get("versions"), list):
            raise bad("'schemas' and 'versions' must be JSON arrays")
        try:
            schemas = tuple(schema_from_json(s) for s in obj["schemas"])
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise bad(f"a schema is malformed ({type(e).__name__}: {e})") from None
        versions = tuple(ViewVersion.from_json(v, bad) for v in obj["versions"])
        log: object = obj.get("version-log")
        if not isinstance(log, list) or not all(isinstance(e, dict) and type(cast(Json, e).get("timestamp-ms")) is int
                                                and type(cast(Json, e).get("version-id")) is int
                                                for e in cast(list[object], log)):
            raise bad("'version-log' must be a JSON array of {timestamp-ms, version-id}")
        props: object = obj.get("properties") or {}
        if not isinstance(props, dict) or not all(isinstance(v, str) for v in cast(Json, props).values()):
            raise bad("'properties' must be a JSON object of strings")
        meta = ViewMetadata(obj["view-uuid"], obj["location"], schemas, cast(int, obj.get("current-version-id")), versions,
                            tuple((e["timestamp-ms"], e["version-id"]) for e in cast(list[Json], log)),
                            dict(cast(dict[str, str], props)), fv)
        problem = meta.problem()
        if problem:
            raise bad(problem)
        return meta

    def problem(self) -> Optional[str]:
        """What breaks the spec's rules, or None."""
        if type(self.current_version_id) is not int:
            return "'current-version-id' must be an integer"
        ids = [v.version_id for v in self.versions]
        if len(set(ids)) != len(ids):
            return f"duplicate version ids {ids}"
        if self.current_version_id not in ids:
            return f"current-version-id {self.current_version_id} is not one of the versions {ids}"
        schema_ids = [s.schema_id for s in self.schemas]
        if len(set(schema_ids)) != len(schema_ids):
            return f"duplicate schema ids {schema_ids}"
        for v in self.versions:
            if v.schema_id not in schema_ids:
                return f"version {v.version_id} refers to schema {v.schema_id}, which is not one of {schema_ids}"
        return None


# --------------------------------------------------------------------------- building
def now_ms() -> int:
    return int(time.time() * 1000)


def new_version(sql: str, schema_id: int, default_namespace: Iterable[str], default_catalog: Optional[str],
                summary: dict[str, str], dialect: str = "spark") -> ViewVersion:
    """A version to add (its id is given when it is added)."""
    return ViewVersion(LAST_ADDED, now_ms(), schema_id, dict(summary), (SqlRepresentation(sql, dialect),),
                       tuple(default_namespace), default_catalog)


def new_view_metadata(location: str, schema: Schema, version: ViewVersion, properties: Optional[dict[str, str]] = None,
                      view_uuid: Optional[str] = None) -> ViewMetadata:
    """The first metadata of a new view: ``schema`` as schema 0, ``version`` as version 1."""
    empty = ViewMetadata(view_uuid or str(uuid.uuid4()), location.rstrip("/"), (), LAST_ADDED, (), (), {})
    return apply_view_updates(empty, [SetViewProperties(dict(properties or {})), AddViewSchema(schema),
                                      AddViewVersion(replace(version, schema_id=LAST_ADDED)),
                                      SetCurrentViewVersion(LAST_ADDED)], creating=True)


@dataclass(frozen=True)
class AssignViewUuid:
    uuid: str

    def to_json(self) -> Json:
        return {"action": "assign-uuid", "uuid": self.uuid}


@dataclass(frozen=True)
class UpgradeViewFormatVersion:
    format_version: int

    def to_json(self) -> Json:
        return {"action": "upgrade-format-version", "format-version": self.format_version}


@dataclass(frozen=True)
class AddViewSchema:
    schema: Schema

    def to_json(self) -> Json:
        return {"action": "add-schema", "schema": schema_to_json(self.schema)}


@dataclass(frozen=True)
class SetViewLocation:
    location: str

    def to_json(self) -> Json:
        return {"action": "set-location", "location": self.location}


@dataclass(frozen=True)
class SetViewProperties:
    updates: dict[str, str]

    def to_json(self) -> Json:
        return {"action": "set-properties", "updates": dict(self.updates)}


@dataclass(frozen=True)
class RemoveViewProperties:
    removals: tuple[str, ...]

    def to_json(self) -> Json:
        return {"action": "remove-properties", "removals": list(self.removals)}


@dataclass(frozen=True)
class AddViewVersion:
    version: ViewVersion

    def to_json(self) -> Json:
        return {"action": "add-view-version", "view-version": self.version.to_json()}


@dataclass(frozen=True)
class SetCurrentViewVersion:
    version_id: int

    def to_json(self) -> Json:
        return {"action": "set-current-view-version", "view-version-id": self.version_id}


@dataclass(frozen=True)
class AssertViewUuid:
    """The requirement of a view commit: the view is still the one the client loaded."""
    uuid: str

    def to_json(self) -> Json:
        return {"type": "assert-view-uuid", "uuid": self.uuid}

    def check(self, meta: ViewMetadata) -> None:
        if meta.view_uuid != self.uuid:          # a failed requirement: a conflict (HTTP 409), as for tables
            raise VersionConflict(f"requirement failed: the view's uuid is {meta.view_uuid}, not {self.uuid} "
                                  "(it was replaced)")


def _strings(obj: Json, key: str, what: str) -> dict[str, str]:
    v: object = obj.get(key)
    if not isinstance(v, dict) or not all(isinstance(k, str) and isinstance(x, str)
                                          for k, x in cast(dict[object, object], v).items()):
        raise ViewUpdateError(f"{what}: {key!r} must be a JSON object of strings")
    return cast(dict[str, str], v)


def view_update_from_json(obj: object) -> object:
    """One update of the REST spec's ``ViewUpdate`` (``ViewUpdateError`` for anything else)."""
    if not isinstance(obj, dict):
        raise ViewUpdateError(f"a view update must be a JSON object, not {type(obj).__name__}")
    obj = cast(Json, obj)
    action = obj.get("action")
    if action == "assign-uuid" and isinstance(obj.get("uuid"), str):
        return AssignViewUuid(obj["uuid"])
    if action == "upgrade-format-version" and type(obj.get("format-version")) is int:
        return UpgradeViewFormatVersion(obj["format-version"])
    if action == "add-schema" and isinstance(obj.get("schema"), dict):
        try:
            return AddViewSchema(schema_from_json(obj["schema"]))
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise ViewUpdateError(f"add-schema: the schema is malformed ({type(e).__name__}: {e})") from None
    if action == "set-location" and isinstance(obj.get("location"), str):
        return SetViewLocation(obj["location"])
    if action == "set-properties":
        return SetViewProperties(_strings(obj, "updates", action))
    if action == "remove-properties":
        rem: object = obj.get("removals")
        if not isinstance(rem, list) or not all(isinstance(k, str) for k in cast(list[object], rem)):
            raise ViewUpdateError("remove-properties: 'removals' must be a JSON array of strings")
        return RemoveViewProperties(tuple(cast(list[str], rem)))
    if action == "add-view-version":
        return AddViewVersion(ViewVersion.from_json(obj.get("view-version")))
    if action == "set-current-view-version" and type(obj.get("view-version-id")) is int:
        return SetCurrentViewVersion(obj["view-version-id"])
    known = ("assign-uuid", "upgrade-format-version", "add-schema", "set-location", "set-properties",
             "remove-properties", "add-view-version", "set-current-view-version")
    if action in known:
        raise ViewUpdateError(f"view update {action!r} lacks a field or has one of the wrong type")
    raise ViewUpdateError(f"unknown view update {str(action)[:60]!r} (a view takes {', '.join(known)})")


def view_requirement_from_json(obj: object) -> AssertViewUuid:
    if isinstance(obj, dict):
        doc = cast(Json, obj)
        if doc.get("type") == "assert-view-uuid" and isinstance(doc.get("uuid"), str):
            return AssertViewUuid(doc["uuid"])
    text = str(cast(object, obj))
    raise ViewUpdateError(f"unknown view requirement {text[:80]} (a view takes assert-view-uuid)")


def _same_schema(a: Schema, b: Schema) -> bool:
    ja, jb = schema_to_json(a), schema_to_json(b)
    ja.pop("schema-id")
    jb.pop("schema-id")
    return ja == jb


def apply_view_updates(meta: ViewMetadata, updates: Sequence[object], creating: bool = False) -> ViewMetadata:
    """``meta`` with ``updates`` applied in order, by the rules of the module doc; the result is
    checked (``ViewUpdateError`` when a rule is broken)."""
    schemas: list[Schema] = list(meta.schemas)
    versions: list[ViewVersion] = list(meta.versions)
    log: list[tuple[int, int]] = list(meta.version_log)
    props = dict(meta.properties)
    current: int = meta.current_version_id
    location, fv, view_uuid = meta.location, meta.format_version, meta.view_uuid
    last_schema: Optional[int] = None
    last_version: Optional[int] = None
    added: set[int] = set()
    for u in updates:
        if isinstance(u, AssignViewUuid):
            if not creating and u.uuid != view_uuid:
                raise ViewUpdateError(f"cannot change a view's uuid ({view_uuid} to {u.uuid})")
            view_uuid = u.uuid
        elif isinstance(u, UpgradeViewFormatVersion):
            if u.format_version != VIEW_FORMAT_VERSION:
                raise ViewUpdateError(f"view format-version {u.format_version} does not exist (the view spec has "
                                      f"version {VIEW_FORMAT_VERSION})")
        elif isinstance(u, AddViewSchema):
            same = next((s for s in schemas if _same_schema(s, u.schema)), None)
            if same is None:
                new_id = max([s.schema_id for s in schemas], default=-1) + 1
                same = Schema(u.schema.fields, new_id, u.schema.identifier_field_ids)
                schemas.append(same)
            last_schema = same.schema_id
        elif isinstance(u, SetViewLocation):
            if not u.location:
                raise ViewUpdateError("set-location: the location is empty")
            location = u.location.rstrip("/")
        elif isinstance(u, SetViewProperties):
            props.update(u.updates)
        elif isinstance(u, RemoveViewProperties):
            for k in u.removals:
                props.pop(k, None)
        elif isinstance(u, AddViewVersion):
            v: ViewVersion = u.version
            if v.schema_id == LAST_ADDED:
                if last_schema is None:
                    raise ViewUpdateError("add-view-version: schema-id -1 (the last added schema) but no schema "
                                          "was added")
                v = replace(v, schema_id=last_schema)
            if v.schema_id not in {s.schema_id for s in schemas}:
                raise ViewUpdateError(f"add-view-version: unknown schema {v.schema_id}")
            twice = duplicate_dialect(v.representations)
            if twice:
                raise ViewUpdateError(f"Invalid view version: Cannot add multiple queries for dialect {twice}")
            same = next((o for o in versions if o.same_as(v)), None)
            if same is None:
                v = replace(v, version_id=max([o.version_id for o in versions], default=0) + 1)
                versions.append(v)
            else:
                v = same
            last_version = v.version_id
            added.add(v.version_id)
        elif isinstance(u, SetCurrentViewVersion):
            vid: int = u.version_id
            if vid == LAST_ADDED:
                if last_version is None:
                    raise ViewUpdateError("set-current-view-version -1 (the last added version) but no version "
                                          "was added")
                vid = cast(int, last_version)     # (an int: pyright loses the type around the loop)
            target = next((o for o in versions if o.version_id == vid), None)
            if target is None:
                raise ViewUpdateError(f"set-current-view-version: unknown version {vid}")
            if vid != current:
                current = vid
                log.append((target.timestamp_ms if vid in added else now_ms(), vid))
        else:
            raise ViewUpdateError(f"not a view update: {type(u).__name__}")
    if current not in {v.version_id for v in versions}:
        raise ViewUpdateError("a view needs a current version")
    try:
        keep = int(props.get(HISTORY_SIZE, HISTORY_SIZE_DEFAULT))
    except ValueError:
        raise ViewUpdateError(f"{HISTORY_SIZE} must be a whole number, not {props[HISTORY_SIZE]!r}") from None
    if keep < 1:
        raise ViewUpdateError(f"{HISTORY_SIZE} must be at least 1, not {keep}")
    keep = max(keep, len(added | {current}))
    if len(versions) > keep:
        newest = sorted(versions, key=lambda v: v.version_id)[-keep:]
        kept_ids = {v.version_id for v in newest} | {current}
        versions = [v for v in versions if v.version_id in kept_ids]
        log = [e for e in log if e[1] in kept_ids]
    out = ViewMetadata(view_uuid, location, tuple(schemas), current, tuple(versions), tuple(log), props, fv)
    problem = out.problem()
    if problem:
        raise ViewUpdateError(problem)
    return out
