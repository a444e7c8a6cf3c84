"""The view routes of ``icefloe serve`` (``/v1/namespaces/{namespace}/views...``, ``register-view``,
``/v1/views/rename``): the view spec's metadata, kept by a SQL catalog. A view's location, like every
file the server writes, stays inside the warehouse (or one of the server's allowed locations)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.responses import JSONResponse, Response

from icefloe.errors import CorruptMetadataError, LocationError, SchemaError
from icefloe.iceberg.locations import is_inside, normalize
from icefloe.iceberg.schema import schema_from_json
from icefloe.iceberg.view_metadata import (
    SetViewLocation, SetViewProperties, ViewUpdateError, ViewVersion, new_view_metadata, view_requirement_from_json,
    view_update_from_json,
)
from icefloe.iceberg.view_store import read_view_metadata
from icefloe.rest.error_model import post_route, route
from icefloe.rest.request_body import (
    Json, ServerSettings, bad, check_properties, field, identifier_name, namespace_of, unregistrable, view_name,
)
from icefloe.rest.table_routes import registration

if TYPE_CHECKING:
    from starlette.requests import Request

    from icefloe.catalog import Catalog
    from icefloe.iceberg.view_store import LoadedView


def view_result(loaded: LoadedView) -> JSONResponse:
    """The spec's ``LoadViewResult`` of a view."""
    return JSONResponse({"metadata-location": loaded.metadata_location, "metadata": loaded.metadata.to_json(),
                         "config": {}})


class ViewRoutes:
    """The view routes over one catalog (module doc)."""

    def __init__(self, catalog: Catalog, warehouse: str, settings: ServerSettings) -> None:
        self.catalog, self.warehouse, self.settings = catalog, warehouse, settings

    def _properties(self, props: object, what: str) -> dict[str, str]:
        return check_properties(props, what, self.settings.max_property_bytes)

    def _check_view_location(self, location: str) -> str:
        """A view location a request names: absolute, inside the warehouse (or an allowed location)."""
        refused = bad("a view's location must be a directory inside the warehouse")
        try:
            path = normalize(location, "location")
        except LocationError:
            raise refused from None
        if not any(is_inside(path, normalize(r)) for r in self.settings.allowed_roots(self.warehouse)):
            raise refused
        return path

    @route
    def list_views(self, request: Request) -> Response:
        ns = namespace_of(request.path_params["namespace"])
        return JSONResponse({"identifiers": [{"namespace": [ns], "name": n.split(".", 1)[1]}
                                             for n in self.catalog.list_views(ns)]})

    @post_route
    def create_view(self, request: Request, body: Json) -> Response:
        ns = namespace_of(request.path_params["namespace"])
        name = f"{ns}.{field(body, 'name', str)}"
        props = self._properties(body.get("properties"), "properties")
        location = field(body, "location", str, required=False)
        location = self._check_view_location(location) if location else self.catalog.view_location(name)
        try:
            schema = schema_from_json(field(body, "schema", dict))
            version = ViewVersion.from_json(field(body, "view-version", dict), bad=ViewUpdateError)
            meta = new_view_metadata(location, schema, version, props)
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise bad(f"the view's schema or version is malformed ({type(e).__name__}: {e})") from None
        return view_result(self.catalog.create_view(name, meta))

    @route
    def load_view(self, request: Request) -> Response:
        loaded = self.catalog.load_view(view_name(request))
        if request.method == "HEAD":
            return Response(status_code=204)
        return view_result(loaded)

    @post_route
    def replace_view(self, request: Request, body: Json) -> Response:
        name = view_name(request)
        try:
            requirements = [view_requirement_from_json(r) for r in
                            field(body, "requirements", list, required=False) or []]
            updates = [view_update_from_json(u) for u in field(body, "updates", list)]
        except ViewUpdateError as e:
            raise bad(str(e)) from None
        for u in updates:
            if isinstance(u, SetViewProperties):
                self._properties(u.updates, "set-properties")
            if isinstance(u, SetViewLocation):
                self._check_view_location(u.location)
        return view_result(self.catalog.commit_view(name, updates, requirements))

    @route
    def drop_view(self, request: Request) -> Response:
        self.catalog.drop_view(view_name(request))
        return Response(status_code=204)

    @post_route
    def register_view(self, request: Request, body: Json) -> Response:
        name, path = registration(request, body, self.settings.allowed_roots(self.warehouse))
        try:
            # the view's next metadata files go to its location: it must be one the server writes to
            self._check_view_location(read_view_metadata(self.catalog.io, path).location)
            return view_result(self.catalog.register_view(name, path))
        except (OSError, LocationError):
            raise unregistrable("view ") from None
        except CorruptMetadataError:
            raise bad("metadata-location is not valid Iceberg view metadata") from None

    @post_route
    def rename_view(self, request: Request, body: Json) -> Response:
        names = [identifier_name(field(body, key, dict), key) for key in ("source", "destination")]
        self.catalog.rename_view(*names)
        return Response(status_code=204)
