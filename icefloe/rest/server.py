"""``icefloe serve``: the Iceberg REST catalog protocol over an icefloe catalog (a Starlette ASGI
app, served by uvicorn), so pyiceberg's ``RestCatalog`` and Iceberg's Java ``RESTCatalog`` create,
commit to and read the warehouse's Iceberg tables.

Routes (``/v1``): config; namespaces (list, create, load, exists, drop, properties: here); tables
(list, create, load, exists, drop, commit, rename, register, server-side scan planning) and
multi-table transactions (``icefloe.rest.table_routes``, planning in ``icefloe.rest.planning``);
views (list, create, load, exists, replace, drop, rename: ``icefloe.rest.view_routes``). Every
route's body is read under the server's limits and its errors answered as the spec's
``ErrorModel`` (``icefloe.rest.request_body``, ``icefloe.rest.error_model``); ``icefloe.rest.auth``
guards them all.

The server serves the warehouse of a Hadoop (directory or object-store) or SQL catalog: it decides
where a new table goes and checks every file a commit names against that. A catalog that is itself
a REST catalog keeps its tables' locations and commits on its own server, so it is refused
(``check_servable``): clients connect to that server directly.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from icefloe.errors import IcefloeError, NoSuchNamespaceError, NotSupportedError
from icefloe.rest.auth import Authenticator, Guard, visible_namespaces
from icefloe.rest.error_model import post_route, route
from icefloe.rest.planning import ScanPlans
from icefloe.rest.request_body import (
    SEPARATOR, Json, ServerSettings, bad, check_properties, field, json_depth_exceeds, namespace_of, one_level,
)
from icefloe.rest.table_routes import COMMIT_ATTEMPTS, TableRoutes
from icefloe.rest.view_routes import ViewRoutes

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import Receive, Scope, Send

    from icefloe.catalog import Catalog

__all__ = ["COMMIT_ATTEMPTS", "ENDPOINTS", "SEPARATOR", "RestCatalogApp", "ServerSettings", "check_servable",
           "json_depth_exceeds", "serve"]

# the routes this server offers, as the config response lists them (the REST spec's ``endpoints``)
ENDPOINTS = [f"{m} /v1/{{prefix}}/{p}" for m, p in (
    ("GET", "namespaces"), ("POST", "namespaces"), ("GET", "namespaces/{namespace}"),
    ("HEAD", "namespaces/{namespace}"), ("DELETE", "namespaces/{namespace}"),
    ("POST", "namespaces/{namespace}/properties"), ("GET", "namespaces/{namespace}/tables"),
    ("POST", "namespaces/{namespace}/tables"), ("GET", "namespaces/{namespace}/tables/{table}"),
    ("HEAD", "namespaces/{namespace}/tables/{table}"), ("POST", "namespaces/{namespace}/tables/{table}"),
    ("DELETE", "namespaces/{namespace}/tables/{table}"), ("POST", "namespaces/{namespace}/register"),
    ("POST", "tables/rename"), ("POST", "transactions/commit"),
    ("GET", "namespaces/{namespace}/views"), ("POST", "namespaces/{namespace}/views"),
    ("GET", "namespaces/{namespace}/views/{view}"), ("HEAD", "namespaces/{namespace}/views/{view}"),
    ("POST", "namespaces/{namespace}/views/{view}"), ("DELETE", "namespaces/{namespace}/views/{view}"),
    ("POST", "views/rename"), ("POST", "namespaces/{namespace}/register-view"),
    ("POST", "namespaces/{namespace}/tables/{table}/plan"), ("GET", "namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
    ("DELETE", "namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
    ("POST", "namespaces/{namespace}/tables/{table}/tasks"))]


def check_servable(catalog: Catalog) -> str:
    """The warehouse the server serves ``catalog``'s tables in; refuses a catalog it cannot serve:
    a Paimon one (the protocol is Iceberg's) and a REST one (module doc)."""
    if catalog.format != "iceberg":
        raise IcefloeError("the REST catalog serves Iceberg tables; open the warehouse with format='iceberg'")
    if catalog.type == "rest" or catalog.warehouse is None:
        raise NotSupportedError("icefloe serve over a REST catalog", reason=(
            "the server puts new tables in its warehouse and checks every file a commit names against their "
            "locations, while a REST catalog's tables, their locations and their commits belong to its own server: "
            "connect clients to that server directly, or serve a warehouse (a directory, an object store, or a SQL "
            "catalog)"))
    return catalog.warehouse


class RestCatalogApp:
    """The ASGI application for one icefloe ``Catalog`` (Iceberg format; ``check_servable``)."""

    def __init__(self, catalog: Catalog, settings: Optional[ServerSettings] = None,
                 auth: Optional[Authenticator] = None) -> None:
        """``settings``: what the server accepts (``ServerSettings``); ``auth``: who may do what
        (``icefloe.rest.auth``); None serves everyone."""
        warehouse = check_servable(catalog)
        self.catalog = catalog
        self.settings = settings or ServerSettings()
        self.plans = ScanPlans(self.settings.plan_task_files)
        tables = TableRoutes(catalog, warehouse, self.settings, self.plans)
        views = ViewRoutes(catalog, warehouse, self.settings)
        ns, tbl = "/v1/namespaces/{namespace}", "/v1/namespaces/{namespace}/tables/{table}"
        self.routes = Starlette(routes=[
            Route("/v1/config", self.config, methods=["GET"]),
            Route("/v1/namespaces", self.list_namespaces, methods=["GET"]),
            Route("/v1/namespaces", self.create_namespace, methods=["POST"]),
            Route(ns, self.load_namespace, methods=["GET", "HEAD"]),
            Route(ns, self.drop_namespace, methods=["DELETE"]),
            Route(f"{ns}/properties", self.namespace_properties, methods=["POST"]),
            Route(f"{ns}/tables", tables.list_tables, methods=["GET"]),
            Route(f"{ns}/tables", tables.create_table, methods=["POST"]),
            Route(f"{ns}/register", tables.register_table, methods=["POST"]),
            Route(tbl, tables.load_table, methods=["GET", "HEAD"]),
            Route(tbl, tables.commit_table, methods=["POST"]),
            Route(tbl, tables.drop_table, methods=["DELETE"]),
            Route(f"{tbl}/plan", tables.plan_scan, methods=["POST"]),
            Route(f"{tbl}/plan/{{plan_id}}", tables.plan_result, methods=["GET", "DELETE"]),
            Route(f"{tbl}/tasks", tables.plan_tasks, methods=["POST"]),
            Route("/v1/tables/rename", tables.rename_table, methods=["POST"]),
            Route("/v1/transactions/commit", tables.commit_transaction, methods=["POST"]),
            Route(f"{ns}/views", views.list_views, methods=["GET"]),
            Route(f"{ns}/views", views.create_view, methods=["POST"]),
            Route(f"{ns}/views/{{view}}", views.load_view, methods=["GET", "HEAD"]),
            Route(f"{ns}/views/{{view}}", views.replace_view, methods=["POST"]),
            Route(f"{ns}/views/{{view}}", views.drop_view, methods=["DELETE"]),
            Route("/v1/views/rename", views.rename_view, methods=["POST"]),
            Route(f"{ns}/register-view", views.register_view, methods=["POST"]),
        ])
        self.app = Guard(self.routes, auth)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    def _properties(self, props: object, what: str) -> dict[str, str]:
        return check_properties(props, what, self.settings.max_property_bytes)

    # ------------------------------------------------------------------ config and namespaces
    async def config(self, request: Request) -> Response:
        return JSONResponse({"defaults": {}, "overrides": {}, "endpoints": ENDPOINTS})

    @route
    def list_namespaces(self, request: Request) -> Response:
        parent = request.query_params.get("parent")
        if parent:
            if not self.catalog.namespace_exists(namespace_of(parent)):
                raise NoSuchNamespaceError(f"namespace {parent.replace(SEPARATOR, '.')} does not exist")
            return JSONResponse({"namespaces": []})        # one level: nothing below a namespace
        names = visible_namespaces(request.scope, sorted(self.catalog.list_namespaces()))
        return JSONResponse({"namespaces": [[n] for n in names]})

    @post_route
    def create_namespace(self, request: Request, body: Json) -> Response:
        ns = one_level(body.get("namespace"))
        props = self._properties(body.get("properties"), "properties")
        if props and not self.catalog.keeps_namespace_properties:
            raise bad("namespace properties are kept by the SQL catalog only (a Hadoop warehouse "
                      "namespace is a directory)")
        self.catalog.create_namespace(ns, properties=props or None)
        return JSONResponse({"namespace": [ns], "properties": props})

    @route
    def load_namespace(self, request: Request) -> Response:
        ns = namespace_of(request.path_params["namespace"])
        if not self.catalog.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {ns} does not exist")
        if request.method == "HEAD":
            return Response(status_code=204)
        props = self.catalog.namespace_properties(ns)
        return JSONResponse({"namespace": [ns], "properties": props})

    @route
    def drop_namespace(self, request: Request) -> Response:
        self.catalog.drop_namespace(namespace_of(request.path_params["namespace"]))
        return Response(status_code=204)

    @post_route
    def namespace_properties(self, request: Request, body: Json) -> Response:
        ns = namespace_of(request.path_params["namespace"])
        updates = self._properties(body.get("updates"), "updates")
        removals = field(body, "removals", list, required=False) or []
        if not all(isinstance(k, str) for k in removals):
            raise bad("removals must be a JSON array of strings")
        if updates and not self.catalog.keeps_namespace_properties:
            raise bad("namespace properties are kept by the SQL catalog only")
        updated, removed, missing = self.catalog.update_namespace_properties(ns, updates, removals)
        return JSONResponse({"updated": updated, "removed": removed, "missing": missing})


def serve(catalog: Catalog, host: str = "127.0.0.1", port: int = 8181, settings: Optional[ServerSettings] = None,
          auth_file: Optional[str] = None, insecure: bool = False, ssl_certfile: Optional[str] = None,
          ssl_keyfile: Optional[str] = None) -> None:   # pragma: no cover - blocks
    """Serve ``catalog`` until stopped, accepting what ``settings`` allows. Without ``auth_file`` only
    a loopback address is served, unless ``insecure`` (see ``icefloe.rest.serving``); TLS with
    ``ssl_certfile``/``ssl_keyfile``."""
    import uvicorn

    from icefloe.rest.serving import prepare

    auth, tls = prepare(host, auth_file, insecure, ssl_certfile, ssl_keyfile)
    uvicorn.run(RestCatalogApp(catalog, settings, auth), host=host, port=port, log_level="warning",
                access_log=False, **tls)
