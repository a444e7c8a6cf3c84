"""``icefloe serve``: the Iceberg REST catalog protocol over an icefloe catalog (a Starlette ASGI
app, served by uvicorn), so pyiceberg's ``RestCatalog`` and Iceberg's Java ``RESTCatalog`` create,
commit to and read the warehouse's Iceberg tables.

Routes (``/v1``): config; namespaces (list, create, load, exists, drop); tables (list, create,
load, exists, drop, commit, rename, register). A commit checks the request's requirements against
the table's current metadata, applies its updates (``icefloe.rest.updates``) and commits the
result through the catalog's table operations (the Hadoop layout's create-if-absent or the SQL
catalog's compare-and-swap), retrying on a lost race; a failed requirement is HTTP 409.
"""
from __future__ import annotations

import json
from typing import Optional

from icefloe.errors import (
    IcefloeError, NamespaceAlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError,
    TableAlreadyExistsError, VersionConflict,
)
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.schema import schema_from_json
from icefloe.iceberg.table_metadata import TableMetadata, new_table_metadata
from icefloe.rest.auth import Authenticator, Guard, visible_namespaces
from icefloe.rest.updates import BadUpdate, RequirementFailed, apply_updates, check_requirements

SEPARATOR = "\x1f"          # namespace levels in a URL path
COMMIT_ATTEMPTS = 10


def _error(status: int, kind: str, message: str):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def _errors(fn):
    """Map icefloe's errors to the protocol's error responses."""
    import functools

    @functools.wraps(fn)
    async def wrapped(self, request):
        try:
            return await fn(self, request)
        except (NoSuchTableError,) as e:
            return _error(404, "NoSuchTableException", str(e))
        except NoSuchNamespaceError as e:
            return _error(404, "NoSuchNamespaceException", str(e))
        except (TableAlreadyExistsError, NamespaceAlreadyExistsError) as e:
            return _error(409, "AlreadyExistsException", str(e))
        except NamespaceNotEmptyError as e:
            return _error(409, "NamespaceNotEmptyException", str(e))
        except (RequirementFailed, VersionConflict) as e:
            return _error(409, "CommitFailedException", str(e))
        except (BadUpdate, ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
            return _error(400, "BadRequestException", f"{type(e).__name__}: {e}")
        except IcefloeError as e:
            return _error(400, "BadRequestException", str(e))
    return wrapped


class RestCatalogApp:
    """The ASGI application for one icefloe ``Catalog`` (Iceberg format)."""

    def __init__(self, catalog, auth: Optional[Authenticator] = None):
        """``auth``: who may do what (``icefloe.rest.auth``); None serves everyone."""
        from starlette.applications import Starlette
        from starlette.routing import Route

        if catalog.format != "iceberg":
            raise IcefloeError("the REST catalog serves Iceberg tables; open the warehouse with format='iceberg'")
        self.catalog = catalog
        ns, tbl = "/v1/namespaces/{namespace}", "/v1/namespaces/{namespace}/tables/{table}"
        self.routes = Starlette(routes=[
            Route("/v1/config", self.config, methods=["GET"]),
            Route("/v1/namespaces", self.list_namespaces, methods=["GET"]),
            Route("/v1/namespaces", self.create_namespace, methods=["POST"]),
            Route(ns, self.load_namespace, methods=["GET", "HEAD"]),
            Route(ns, self.drop_namespace, methods=["DELETE"]),
            Route(f"{ns}/properties", self.namespace_properties, methods=["POST"]),
            Route(f"{ns}/tables", self.list_tables, methods=["GET"]),
            Route(f"{ns}/tables", self.create_table, methods=["POST"]),
            Route(f"{ns}/register", self.register_table, methods=["POST"]),
            Route(tbl, self.load_table, methods=["GET", "HEAD"]),
            Route(tbl, self.commit_table, methods=["POST"]),
            Route(tbl, self.drop_table, methods=["DELETE"]),
            Route("/v1/tables/rename", self.rename_table, methods=["POST"]),
        ])
        self.app = Guard(self.routes, auth)

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _namespace(raw: str) -> str:
        parts = raw.split(SEPARATOR)
        if not all(parts):
            raise ValueError(f"namespace {parts}: a namespace level is empty")
        if len(parts) != 1:     # no such namespace can exist (clients probe them: Spark's `t.snapshots`)
            raise NoSuchNamespaceError(f"namespace {'.'.join(parts)} does not exist: icefloe namespaces have one level")
        return parts[0]

    @staticmethod
    def _one_level(levels: list) -> str:
        if not isinstance(levels, list) or len(levels) != 1:
            raise ValueError(f"namespace {levels}: icefloe namespaces have one level")
        return str(levels[0])

    def _name(self, request) -> str:
        try:
            namespace = self._namespace(request.path_params["namespace"])
        except NoSuchNamespaceError:
            name = request.path_params["namespace"].replace(SEPARATOR, ".") + "." + request.path_params["table"]
            raise NoSuchTableError(f"table {name} does not exist") from None
        return f"{namespace}.{request.path_params['table']}"

    def _result(self, t):
        from starlette.responses import JSONResponse

        return JSONResponse({"metadata-location": t.metadata_location, "metadata": t.metadata.to_json(),
                             "config": {}})

    # ------------------------------------------------------------------ config and namespaces
    async def config(self, request):
        from starlette.responses import JSONResponse

        return JSONResponse({"defaults": {}, "overrides": {}})

    @_errors
    async def list_namespaces(self, request):
        from starlette.responses import JSONResponse

        if request.query_params.get("parent"):
            return JSONResponse({"namespaces": []})        # one level: nothing below a namespace
        names = visible_namespaces(request.scope, sorted(self.catalog.list_namespaces()))
        return JSONResponse({"namespaces": [[n] for n in names]})

    @_errors
    async def create_namespace(self, request):
        from starlette.responses import JSONResponse

        body = await request.json()
        ns = self._one_level(body.get("namespace"))
        props = body.get("properties") or {}
        impl = self.catalog._impl
        if props and not hasattr(impl, "namespace_properties"):
            raise ValueError("namespace properties are kept by the SQL catalog only (a Hadoop warehouse "
                             "namespace is a directory)")
        if props:
            impl.create_namespace(ns, properties=props)
        else:
            self.catalog.create_namespace(ns)
        return JSONResponse({"namespace": [ns], "properties": props})

    @_errors
    async def load_namespace(self, request):
        from starlette.responses import JSONResponse, Response

        ns = self._namespace(request.path_params["namespace"])
        if not self.catalog.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {ns} does not exist")
        if request.method == "HEAD":
            return Response(status_code=204)
        impl = self.catalog._impl
        props = impl.namespace_properties(ns) if hasattr(impl, "namespace_properties") else {}
        return JSONResponse({"namespace": [ns], "properties": props})

    @_errors
    async def drop_namespace(self, request):
        from starlette.responses import Response

        self.catalog.drop_namespace(self._namespace(request.path_params["namespace"]))
        return Response(status_code=204)

    @_errors
    async def namespace_properties(self, request):
        from starlette.responses import JSONResponse

        body = await request.json()
        ns = self._namespace(request.path_params["namespace"])
        impl = self.catalog._impl
        if not hasattr(impl, "update_namespace_properties"):
            if body.get("updates"):
                raise ValueError("namespace properties are kept by the SQL catalog only")
            return JSONResponse({"updated": [], "removed": [], "missing": list(body.get("removals") or [])})
        updated, removed, missing = impl.update_namespace_properties(ns, body.get("updates"), body.get("removals"))
        return JSONResponse({"updated": updated, "removed": removed, "missing": missing})

    # ------------------------------------------------------------------ tables
    @_errors
    async def list_tables(self, request):
        from starlette.responses import JSONResponse

        ns = self._namespace(request.path_params["namespace"])
        return JSONResponse({"identifiers": [{"namespace": [ns], "name": n.split(".", 1)[1]}
                                             for n in self.catalog.list_tables(ns)]})

    @_errors
    async def create_table(self, request):
        body = await request.json()
        ns = self._namespace(request.path_params["namespace"])
        name = f"{ns}.{body['name']}"
        if body.get("stage-create"):
            raise ValueError("staged table creation (create transactions) is not supported")
        impl = self.catalog._impl
        ops = impl._ops(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists")
        if body.get("location"):
            raise ValueError("tables are created in the warehouse; a location cannot be given")
        schema = schema_from_json(body["schema"])
        spec = PartitionSpec.from_json(body.get("partition-spec") or {"spec-id": 0, "fields": []})
        meta = new_table_metadata(ops.location, schema, spec, body.get("properties") or {})
        order = body.get("write-order")
        if order and order.get("fields"):
            doc = meta.to_json()
            doc["sort-orders"] = [doc["sort-orders"][0], order]
            doc["default-sort-order-id"] = order["order-id"]
            meta = TableMetadata.from_json(doc, "REST create")
        try:
            ops.commit(None, None, meta)
        except VersionConflict:
            raise TableAlreadyExistsError(f"table {name} was created concurrently") from None
        return self._result(self.catalog.load_table(name))

    @_errors
    async def register_table(self, request):
        body = await request.json()
        ns = self._namespace(request.path_params["namespace"])
        t = self.catalog.register_table(f"{ns}.{body['name']}", body["metadata-location"])
        return self._result(t)

    @_errors
    async def load_table(self, request):
        from starlette.responses import Response

        t = self.catalog.load_table(self._name(request))
        if request.method == "HEAD":
            return Response(status_code=204)
        return self._result(t)

    @_errors
    async def drop_table(self, request):
        from starlette.responses import Response

        self.catalog.drop_table(self._name(request))
        return Response(status_code=204)

    @_errors
    async def rename_table(self, request):
        from starlette.responses import Response

        body = await request.json()
        src, dst = body["source"], body["destination"]
        self.catalog.rename_table(f"{self._one_level(src['namespace'])}.{src['name']}",
                                  f"{self._one_level(dst['namespace'])}.{dst['name']}")
        return Response(status_code=204)

    @_errors
    async def commit_table(self, request):
        from starlette.responses import JSONResponse

        body = await request.json()
        name = self._name(request)
        ops = self.catalog._impl._ops(name)
        if not ops.exists():
            raise NoSuchTableError(f"table {name} does not exist")
        new: Optional[TableMetadata] = None
        for _attempt in range(COMMIT_ATTEMPTS):
            version, base = ops.load()
            check_requirements(base, body.get("requirements"))
            new = apply_updates(base, body.get("updates"))
            try:
                ops.commit(version, base, new)
                break
            except VersionConflict:
                continue                       # another writer got there: check again on its metadata
        else:
            raise VersionConflict(f"{name}: lost the race for a new metadata version {COMMIT_ATTEMPTS} times")
        t = self.catalog.load_table(name)
        return JSONResponse({"metadata-location": t.metadata_location, "metadata": t.metadata.to_json()})


def serve(catalog, host: str = "127.0.0.1", port: int = 8181, auth_file: Optional[str] = None,
          insecure: bool = False, ssl_certfile: Optional[str] = None,
          ssl_keyfile: Optional[str] = None) -> None:   # pragma: no cover - blocks
    """Serve ``catalog`` until stopped. Without ``auth_file`` only a loopback address is served,
    unless ``insecure`` (see ``icefloe.rest.serving``); TLS with ``ssl_certfile``/``ssl_keyfile``."""
    import uvicorn

    from icefloe.rest.serving import prepare

    auth, tls = prepare(host, auth_file, insecure, ssl_certfile, ssl_keyfile)
    uvicorn.run(RestCatalogApp(catalog, auth), host=host, port=port, log_level="warning", access_log=False, **tls)
