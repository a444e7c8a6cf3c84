# pyright: strict
"""A client of the Iceberg REST catalog protocol: ``icefloe.Catalog(type="rest", uri=...)``.

Tables are loaded from the server (their metadata location and document); a commit sends the
table updates and requirements its producer made (the typed objects of
``icefloe.iceberg.metadata_builder`` and ``table_requirements``, which the server checks and
applies with the same builder the library uses). A 409 is ``VersionConflict``, so the producer
re-applies its change on the new metadata and tries again, as with the other catalogs.
Data and metadata files are read and written through the catalog's ``FileIO`` (the server's
warehouse must be reachable from here: a shared file system).
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, NoReturn, Optional, Protocol, Sequence, cast

from icefloe.core.io import FileIO, LOCAL
from icefloe.core.names import check_name_part, split_name
from icefloe.errors import (
    IcefloeError, NamespaceAlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError,
    NoSuchViewError, TableAlreadyExistsError, VersionConflict,
    RestCatalogError, NotAuthorizedError, ForbiddenError,
)
from icefloe.iceberg.operations import Changes, Committed
from icefloe.iceberg.schema import schema_to_json
from icefloe.iceberg.table import BaseTable
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.view_metadata import AssertViewUuid, ViewMetadata
from icefloe.iceberg.view_store import LoadedView

if TYPE_CHECKING:
    import requests

    from icefloe.iceberg.scan import FileScanTask
    from icefloe.iceberg.snapshot import Snapshot
    from icefloe.iceberg.transaction import TableCommit

Json = dict[str, Any]       # a JSON object of the REST spec's answers


class _ToJson(Protocol):
    """An update or requirement the REST spec's request bodies carry as JSON."""

    def to_json(self) -> Any: ...


_ERRORS = {"NoSuchViewException": NoSuchViewError, "NoSuchTableException": NoSuchTableError, "NoSuchNamespaceException": NoSuchNamespaceError,
           "NamespaceNotEmptyException": NamespaceNotEmptyError, "CommitFailedException": VersionConflict,
           "AlreadyExistsException": TableAlreadyExistsError}
_BY_STATUS = {401: NotAuthorizedError, 403: ForbiddenError}
TOKEN_PATH = "/v1/oauth/tokens"
PLAN_ENDPOINT = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"
CANCEL_ENDPOINT = "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"
SCAN_PLANNING_MODE = "scan-planning-mode"       # the property's name in Java's RESTCatalog and the REST spec
PLANNING_MODES = ("client", "server")
PLAN_POLL_SECONDS = 300


class _Http:
    """Requests to the server, authenticated as configured: ``credential`` (``"id:secret"``, the
    OAuth2 client-credentials grant against the server's token endpoint; the token is fetched again
    before it expires or when the server says it has) or ``token`` (a bearer token as it is)."""

    def __init__(self, uri: str, credential: Optional[str] = None, token: Optional[str] = None,
                 scope: str = "catalog"):
        import requests

        if credential and token:
            raise IcefloeError("give a REST catalog either credential= or token=, not both")
        self.base = uri.rstrip("/")
        self.session = requests.Session()
        self.credential, self.scope = credential, scope
        self._expires_at: Optional[float] = None
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        if credential:
            self._fetch_token()

    def _fetch_token(self) -> None:
        import requests

        credential = self.credential or ""
        client_id, _, secret = credential.partition(":") if ":" in credential else ("", "", credential)
        form = {"grant_type": "client_credentials", "client_secret": secret, "scope": self.scope}
        if client_id:
            form["client_id"] = client_id
        started = time.time()
        try:
            r = requests.post(f"{self.base}{TOKEN_PATH}", data=form, timeout=60)
        except requests.RequestException as e:
            raise RestCatalogError(f"REST catalog {self.base} cannot be reached: {e}") from None
        doc = _object(_json(r))
        if r.status_code != 200 or doc is None or not doc.get("access_token"):
            if doc is not None and isinstance(doc.get("error"), str):     # RFC 6749 section 5.2
                detail = str(doc["error"]) + (f": {doc['error_description']}" if doc.get("error_description") else "")
            else:
                detail = _not_rest(r)
            raise NotAuthorizedError(f"REST catalog {self.base}: no token for the credential: {detail} "
                                     f"(HTTP {r.status_code})")
        self.session.headers["Authorization"] = f"Bearer {doc['access_token']}"
        lifetime: Any = doc.get("expires_in")
        # fetch the next one a little before this one expires (a tenth of its life, at most a minute)
        self._expires_at = started + lifetime - min(60.0, lifetime / 10) if isinstance(lifetime, int) else None

    def call(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200,)) -> Any:
        """The JSON document the server answered (None for an empty answer)."""
        import requests

        if self._expires_at is not None and time.time() >= self._expires_at:
            self._fetch_token()
        r = None
        for attempt in (1, 2):
            try:
                r = self.session.request(method, f"{self.base}{path}", json=body, timeout=60)
            except requests.RequestException as e:
                raise RestCatalogError(f"REST catalog {self.base} cannot be reached: {e}") from None
            if r.status_code == 401 and self.credential and attempt == 1:
                self._fetch_token()                      # the token expired or the server restarted
                continue
            break
        assert r is not None
        if r.status_code in ok:
            doc = _json(r) if r.content else None
            if r.content and doc is None:
                raise RestCatalogError(f"{self.base} is not an Iceberg REST catalog: {method} {path} answered "
                                       f"{_not_rest(r)}")
            return doc
        doc = _object(_json(r))
        err = _object(doc.get("error")) if doc is not None else None
        if err is None:
            if r.status_code == 404 and method == "HEAD":      # HEAD answers carry no body
                kind = NoSuchTableError if "/tables/" in path else NoSuchViewError if "/views/" in path \
                    else NoSuchNamespaceError
                raise kind(f"{path} does not exist")
            raise RestCatalogError(f"{self.base} is not an Iceberg REST catalog: {method} {path} answered "
                                   f"{_not_rest(r)}")
        kind, msg = str(err.get("type") or ""), str(err.get("message") or "(no message)")
        cls = _ERRORS.get(kind) or _BY_STATUS.get(r.status_code, RestCatalogError)
        raise cls(f"{msg} ({kind or 'error'}, HTTP {r.status_code})")


def _json(r: requests.Response) -> Any:
    try:
        return r.json()
    except ValueError:
        return None


def _object(doc: Any) -> Optional[Json]:
    """``doc`` if it is a JSON object, else None."""
    return cast(Json, doc) if isinstance(doc, dict) else None


def _not_rest(r: requests.Response) -> str:
    """What a response that is not the protocol's looks like, for an error message."""
    kind = r.headers.get("content-type", "no content type").split(";")[0]
    text = " ".join(r.text.split())[:120]
    return f"HTTP {r.status_code} ({kind})" + (f": {text}" if text else "")


class RestTableOperations:
    """One table through the REST server (the ``TableOperations`` protocol)."""

    uses_version_hint = False

    def __init__(self, http: _Http, io: FileIO, namespace: str, table: str, planning: Optional[str] = None,
                 endpoints: frozenset[str] = frozenset()):
        self.http, self.io = http, io
        self.path = f"/v1/namespaces/{namespace}/tables/{table}"
        self.name = f"{namespace}.{table}"
        self._paths: dict[int, str] = {}
        self._version = 0
        self.location = self.metadata_dir = ""
        self.planning, self.endpoints = planning, endpoints
        self._table_planning: Optional[str] = None      # what the server's table config asks for

    def exists(self) -> bool:
        try:
            self.http.call("HEAD", self.path, ok=(200, 204))
            return True
        except NoSuchTableError:
            return False

    def load(self, version: Optional[int] = None) -> tuple[int, TableMetadata]:
        res: Json = self.http.call("GET", self.path)
        loc: str = res["metadata-location"]
        v = self._loaded(res)
        config: Json = res.get("config") or {}
        self._table_planning = config.get(SCAN_PLANNING_MODE)
        meta = TableMetadata.from_json(res["metadata"], loc)
        self.location = meta.location.rstrip("/")
        self.metadata_dir = os.path.dirname(loc)
        return v, meta

    def metadata_path(self, version: int) -> str:
        return self._paths.get(version, "")

    def _list_versions(self) -> list[int]:
        return sorted(self._paths)

    def current(self) -> TableMetadata:
        return self.load()[1]

    def commit(self, base_version: Optional[int], base: Optional[TableMetadata], new: TableMetadata) -> int:
        raise IcefloeError(f"{self.name}: a REST catalog commits a table's changes (updates and requirements), "
                           "not a whole metadata document; tables are created with create_table")

    def commit_changes(self, base_version: int, base: TableMetadata, changes: Changes) -> Committed:
        """Send the changes as they were produced; the server checks the requirements against the
        table's current metadata and applies the updates with the same builder (a 409 is
        ``VersionConflict``: the producer runs again on the newer metadata)."""
        if self._paths.get(base_version) is None:
            raise VersionConflict(f"{self.name}: unknown base version")
        res: Json = self.http.call("POST", self.path, changes_body(changes))
        return Committed(self._loaded(res), TableMetadata.from_json(res["metadata"], res["metadata-location"]))

    def plan_scan(self, meta: TableMetadata, snapshot: Optional[Snapshot],
                  where: Any = None) -> Optional[list[FileScanTask]]:
        """The scan tasks of ``snapshot`` that may match ``where``, planned by the server when
        server-side planning is on (the table's config from the server decides, else the catalog's
        ``scan-planning-mode``, as Java's ``RESTCatalog`` chooses); None: plan here."""
        from icefloe.iceberg import scan as scan_mod
        from icefloe.iceberg.rest_scan import filter_to_json, partition_types, tasks_from_json

        mode = _planning_mode(self._table_planning or self.planning or "client", f"table {self.name}")
        if mode == "client":
            return None
        if PLAN_ENDPOINT not in self.endpoints:
            raise IcefloeError(f"table {self.name}: server-side scan planning is asked for, but the REST server "
                               f"does not offer it (its config lists no {PLAN_ENDPOINT})")
        if snapshot is None:
            return []
        body = {"snapshot-id": snapshot.snapshot_id, "filter": filter_to_json(scan_mod.bind_row_filter(meta, where)),
                "case-sensitive": True}
        answer: Json = self.http.call("POST", f"{self.path}/plan", body)
        plan_id: Optional[str] = answer.get("plan-id")
        deadline = time.monotonic() + PLAN_POLL_SECONDS
        delay = 0.2
        while answer.get("status") == "submitted":
            if time.monotonic() > deadline:
                self._cancel(plan_id)
                raise RestCatalogError(f"table {self.name}: the server did not finish planning the scan in "
                                       f"{PLAN_POLL_SECONDS} s (plan {plan_id})")
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
            answer = self.http.call("GET", f"{self.path}/plan/{plan_id}")
        if answer.get("status") != "completed":
            error = _object(answer.get("error")) or {}
            raise RestCatalogError(f"table {self.name}: the server's scan planning {answer.get('status')!r}: "
                                   f"{error.get('message', '(no message)')}")
        docs: list[Json] = [answer]
        pending: list[Any] = list(answer.get("plan-tasks") or [])
        try:
            while pending:
                doc: Json = self.http.call("POST", f"{self.path}/tasks", {"plan-task": pending.pop(0)})
                docs.append(doc)
                pending.extend(doc.get("plan-tasks") or [])
        finally:
            self._cancel(plan_id)
        return tasks_from_json(docs, partition_types(meta), meta.specs_by_id())

    def _cancel(self, plan_id: Optional[str]) -> None:
        """Tell the server it may forget the plan (a plan that is gone already is no error)."""
        if plan_id and CANCEL_ENDPOINT in self.endpoints:
            try:
                self.http.call("DELETE", f"{self.path}/plan/{plan_id}", ok=(200, 204))
            except RestCatalogError:
                pass

    def _loaded(self, res: Json) -> int:
        loc: str = res["metadata-location"]
        if loc not in self._paths.values():
            self._version += 1
            self._paths[self._version] = loc
        return next(k for k, p in self._paths.items() if p == loc)


def _planning_mode(mode: str, what: str) -> str:
    if str(mode).lower() not in PLANNING_MODES:
        raise IcefloeError(f"{what}: {SCAN_PLANNING_MODE} {mode!r} is none of {', '.join(PLANNING_MODES)}")
    return str(mode).lower()


def changes_body(changes: Changes) -> Json:
    """The spec's ``CommitTableRequest`` body of one table's changes."""
    return {"requirements": [r.to_json() for r in changes.requirements],
            "updates": [u.to_json() for u in changes.updates]}


class RestCatalog:
    """Iceberg tables of a REST catalog server (see the module doc)."""

    def __init__(self, uri: str, io: Optional[FileIO] = None,
                 table_type: Callable[[str, RestTableOperations], BaseTable] = BaseTable, warehouse: str = "",
                 credential: Optional[str] = None, token: Optional[str] = None,
                 scan_planning_mode: Optional[str] = None):
        """``scan_planning_mode``: ``"server"`` plans reads on the server (the REST spec's
        ``planTableScan``), ``"client"`` (the default) here; the server's table config overrides it."""
        self.planning = None if scan_planning_mode is None else _planning_mode(scan_planning_mode, "the catalog")
        self.http = _Http(uri, credential, token)
        self.uri = uri
        self.io = io or LOCAL
        self.table_type = table_type
        self.warehouse = warehouse
        raw = self.http.call("GET", "/v1/config")
        config = _object(raw)
        if not (config is not None and isinstance(config.get("defaults"), dict)
                and isinstance(config.get("overrides"), dict)):
            raise RestCatalogError(f"{uri} is not an Iceberg REST catalog: GET /v1/config answered "
                                   f"{str(raw)[:120]} (the protocol's config has 'defaults' and 'overrides')")
        listed: list[Any] = config.get("endpoints") or []
        self.endpoints = frozenset(e for e in listed if isinstance(e, str))
        if self.planning is None:
            overrides: Json = config["overrides"]
            defaults: Json = config["defaults"]
            self.planning = overrides.get(SCAN_PLANNING_MODE) or defaults.get(SCAN_PLANNING_MODE)
        if self.planning == "server" and PLAN_ENDPOINT not in self.endpoints:
            raise IcefloeError(f"{SCAN_PLANNING_MODE}=server: the REST server {uri} does not offer server-side scan "
                               f"planning (its config lists no {PLAN_ENDPOINT})")

    def _ops(self, name: str) -> RestTableOperations:
        db, tbl = split_name(name)
        return RestTableOperations(self.http, self.io, db, tbl, self.planning, self.endpoints)

    def table_operations(self, name: str) -> RestTableOperations:
        """The operations (load, commit, file I/O) of table ``name``, which need not exist yet."""
        return self._ops(name)

    def table_location(self, name: str) -> str:
        return self.load_table(name).location

    def table_exists(self, name: str) -> bool:
        return self._ops(name).exists()

    def load_table(self, name: str) -> BaseTable:
        ops = self._ops(name)
        if not ops.exists():
            raise NoSuchTableError(f"table {name} does not exist in the REST catalog {self.uri}")
        return self.table_type(name, ops)

    def create_table(self, name: str, schema: object, partitioned_by: Optional[Sequence[str]] = None,
                     properties: Optional[Mapping[Any, Any]] = None, location: Optional[str] = None) -> BaseTable:
        from icefloe.core.schema_input import to_schema
        from icefloe.core.types import widen_schema_small_ints
        from icefloe.iceberg.partitioning import build_spec

        from icefloe.iceberg.catalog import writable_properties

        writable_properties({str(k): str(v) for k, v in (properties or {}).items()}, name)
        db, tbl = split_name(name)
        sch = widen_schema_small_ints(to_schema(schema))
        spec = build_spec(sch, partitioned_by)
        body: dict[str, Any] = {"name": tbl, "schema": schema_to_json(sch), "partition-spec": spec.to_json(),
                                "properties": {str(k): str(v) for k, v in (properties or {}).items()}}
        if location is not None:        # the server places the table, or refuses the location
            body["location"] = location
        self.http.call("POST", f"/v1/namespaces/{db}/tables", body)
        return self.load_table(name)

    def register_table(self, name: str, metadata_location: str) -> BaseTable:
        db, tbl = split_name(name)
        self.http.call("POST", f"/v1/namespaces/{db}/register", {"name": tbl, "metadata-location": metadata_location})
        return self.load_table(name)

    def drop_table(self, name: str, purge: Optional[bool] = None) -> None:
        """Drop the table on the server; ``purge=True`` asks it to delete the files too (left out,
        the server's default: the REST spec's no purge)."""
        db, tbl = split_name(name)
        query = "" if purge is None else f"?purgeRequested={'true' if purge else 'false'}"
        self.http.call("DELETE", f"/v1/namespaces/{db}/tables/{tbl}{query}", ok=(200, 204))

    def rename_table(self, name: str, new_name: str) -> None:
        (a, b), (c, d) = split_name(name), split_name(new_name)
        self.http.call("POST", "/v1/tables/rename", {"source": {"namespace": [a], "name": b},
                                                     "destination": {"namespace": [c], "name": d}}, ok=(200, 204))

    atomic_multi_table = True

    def commit_transaction(self, entries: list[TableCommit]) -> dict[str, TableMetadata]:
        """Send several tables' changes as one ``POST /v1/transactions/commit``: the server commits
        all of them or none (a failed requirement of any table is a 409, ``VersionConflict``)."""
        body = {"table-changes": [
            {"identifier": {"namespace": [split_name(name)[0]], "name": split_name(name)[1]},
             **changes_body(changes)} for name, _ops, _version, _base, changes in entries]}
        self.http.call("POST", "/v1/transactions/commit", body, ok=(200, 204))
        return {name: ops.load()[1] for name, ops, _version, _base, _changes in entries}

    def replace_table(self, *args: object, **kwargs: object) -> NoReturn:
        raise IcefloeError("REPLACE TABLE through a REST catalog is not supported yet")

    # ------------------------------------------------------------------ namespaces
    def namespace_path(self, namespace: str) -> str:
        return f"{self.warehouse}/{check_name_part(namespace, 'namespace')}"

    def list_namespaces(self) -> list[str]:
        return sorted(n[0] for n in self.http.call("GET", "/v1/namespaces")["namespaces"])

    def namespace_exists(self, namespace: str) -> bool:
        try:
            self.http.call("HEAD", f"/v1/namespaces/{namespace}", ok=(200, 204))
            return True
        except NoSuchNamespaceError:
            return False

    def create_namespace(self, namespace: str, exist_ok: bool = False) -> None:
        try:
            self.http.call("POST", "/v1/namespaces", {"namespace": [namespace], "properties": {}})
        except TableAlreadyExistsError:
            if not exist_ok:
                raise NamespaceAlreadyExistsError(f"namespace {namespace} already exists") from None

    def remove_namespace(self, namespace: str) -> None:
        """Drop an empty namespace on the server (``Catalog.drop_namespace`` drops its tables first)."""
        self.http.call("DELETE", f"/v1/namespaces/{namespace}", ok=(200, 204))

    def list_tables(self, namespace: str) -> list[str]:
        ids = self.http.call("GET", f"/v1/namespaces/{namespace}/tables")["identifiers"]
        return sorted(f"{i['namespace'][0]}.{i['name']}" for i in ids)

    # ------------------------------------------------------------------ views (the spec's /views routes)
    def _view_path(self, name: str) -> str:
        db, view = split_name(name)
        return f"/v1/namespaces/{db}/views/{view}"

    def _loaded_view(self, name: str, res: Json) -> LoadedView:
        return LoadedView(name, res["metadata-location"], ViewMetadata.from_json(res["metadata"],
                                                                                  res["metadata-location"]))

    def list_views(self, namespace: str) -> list[str]:
        ids = self.http.call("GET", f"/v1/namespaces/{namespace}/views")["identifiers"]
        return sorted(f"{i['namespace'][0]}.{i['name']}" for i in ids)

    def view_exists(self, name: str) -> bool:
        try:
            self.http.call("HEAD", self._view_path(name), ok=(200, 204))
            return True
        except (NoSuchViewError, NoSuchNamespaceError):
            return False

    def view_location(self, name: str) -> str:
        """The server places a new view (the location a create sends is none)."""
        return f"{self.warehouse}/{'/'.join(split_name(name))}" if self.warehouse else f"rest:{name}"

    def load_view(self, name: str) -> LoadedView:
        return self._loaded_view(name, self.http.call("GET", self._view_path(name)))

    def create_view(self, name: str, meta: ViewMetadata) -> LoadedView:
        db, view = split_name(name)
        version = meta.current_version
        res = self.http.call("POST", f"/v1/namespaces/{db}/views", {
            "name": view, "schema": schema_to_json(meta.schema), "view-version": version.to_json(),
            "properties": dict(meta.properties)})
        return self._loaded_view(name, res)

    def register_view(self, name: str, metadata_location: str) -> LoadedView:
        db, view = split_name(name)
        res = self.http.call("POST", f"/v1/namespaces/{db}/register-view",
                             {"name": view, "metadata-location": metadata_location})
        return self._loaded_view(name, res)

    def commit_view(self, name: str, updates: Sequence[_ToJson], requirements: Sequence[_ToJson] = ()) -> LoadedView:
        db, view = split_name(name)
        res = self.http.call("POST", self._view_path(name), {
            "identifier": {"namespace": [db], "name": view},
            "requirements": [r.to_json() for r in requirements], "updates": [u.to_json() for u in updates]})
        return self._loaded_view(name, res)

    def replace_view(self, name: str, updates: Sequence[_ToJson], view_uuid: str) -> LoadedView:
        return self.commit_view(name, updates, [AssertViewUuid(view_uuid)])

    def drop_view(self, name: str) -> None:
        self.http.call("DELETE", self._view_path(name), ok=(200, 204))

    def rename_view(self, name: str, new_name: str) -> None:
        (a, b), (c, d) = split_name(name), split_name(new_name)
        self.http.call("POST", "/v1/views/rename", {"source": {"namespace": [a], "name": b},
                                                    "destination": {"namespace": [c], "name": d}}, ok=(200, 204))
