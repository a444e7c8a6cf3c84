"""What a request to ``icefloe serve`` carries, read and checked before a route acts on it: the
JSON body under the server's size and depth limits (413 past them), its fields of the JSON kinds
the REST spec gives them, namespaces and names from the path (icefloe namespaces have one level),
and properties under their size limit. ``ServerSettings`` holds those limits and the rest of what
the server allows."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional, TypeVar, overload

from icefloe.errors import NoSuchNamespaceError, NoSuchTableError, NoSuchViewError, RequestError
from icefloe.iceberg.metadata_builder import json_kind
from icefloe.rest.planning import PLAN_TASK_FILES

if TYPE_CHECKING:
    from starlette.requests import Request

Json = dict[str, Any]         # a JSON object of a request or an answer (the REST spec's bodies)
_K = TypeVar("_K")
SEPARATOR = "\x1f"            # namespace levels in a URL path


@dataclass(frozen=True)
class ServerSettings:
    """What the server allows (``icefloe serve`` options; see docs/configuration.md).

    ``allow_purge``: ``DELETE .../tables/t?purgeRequested=true`` deletes the table's files (off by
    default: a drop forgets the table and keeps its files). ``allowed_locations``: directories a
    registered table may live in besides the warehouse. The limits make a request past them a
    413 (body, JSON depth) or a 400 (a property larger than ``max_property_bytes``).
    ``plan_task_files``: file scan tasks in one answer of server-side scan planning (the rest
    come as plan tasks, ``icefloe.rest.planning``)."""
    allow_purge: bool = False
    allowed_locations: tuple[str, ...] = ()
    max_body_bytes: int = 16 * 1024 * 1024
    max_json_depth: int = 200
    max_property_bytes: int = 1024 * 1024
    plan_task_files: int = PLAN_TASK_FILES

    def allowed_roots(self, warehouse: str) -> list[str]:
        """Where a registered table or view, and a view's location, may be: the warehouse and
        ``allowed_locations``."""
        return [warehouse, *self.allowed_locations]


def bad(message: str) -> RequestError:
    """The spec's ``BadRequestException`` (400) with ``message``."""
    return RequestError(400, "BadRequestException", message)


def unregistrable(kind: str) -> RequestError:
    """One answer for a metadata file to register that is missing, unreadable, not regular, or
    outside the allowed locations: the server is not an oracle of which files exist."""
    return bad(f"metadata-location must name a readable Iceberg {kind}metadata file (an absolute path, a regular "
               "file) inside the warehouse or the server's allowed locations")


def json_depth_exceeds(data: bytes, limit: int) -> bool:
    """Whether the JSON text ``data`` nests arrays and objects deeper than ``limit`` (brackets
    inside strings do not count), checked before the text is parsed."""
    depth, in_string, escaped = 0, False, False
    for b in data:
        if in_string:
            if escaped:
                escaped = False
            elif b == 0x5C:          # backslash
                escaped = True
            elif b == 0x22:          # quote
                in_string = False
        elif b == 0x22:
            in_string = True
        elif b in (0x5B, 0x7B):      # [ {
            depth += 1
            if depth > limit:
                return True
        elif b in (0x5D, 0x7D):
            depth -= 1
    return False


async def read_body(request: Request, settings: ServerSettings) -> Json:
    """The request's JSON object, read under the size and depth limits (413 past them)."""
    limit = settings.max_body_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestError(413, "RequestTooLargeException", f"the request body is larger than the limit "
                                                            f"of {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(413, "RequestTooLargeException", f"the request body is larger than the limit "
                                                                f"of {limit} bytes")
        chunks.append(chunk)
    data = b"".join(chunks)
    if json_depth_exceeds(data, settings.max_json_depth):
        raise RequestError(413, "RequestTooLargeException", f"the request body nests JSON deeper than the "
                                                            f"limit of {settings.max_json_depth} levels")
    try:
        body: object = json.loads(data)
    except (ValueError, RecursionError):
        raise bad("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise bad(f"the request body must be a JSON object, not {json_kind(body)}")
    return body


# a JSON object's field is a Json, an array's elements are JSON values of any kind (Any)
@overload
def field(body: Json, key: str, kind: type[dict[Any, Any]], required: Literal[True] = True, what: str = "") -> Json: ...


@overload
def field(body: Json, key: str, kind: type[dict[Any, Any]], required: bool, what: str = "") -> Optional[Json]: ...


@overload
def field(body: Json, key: str, kind: type[list[Any]], required: Literal[True] = True,
          what: str = "") -> list[Any]: ...


@overload
def field(body: Json, key: str, kind: type[list[Any]], required: bool, what: str = "") -> Optional[list[Any]]: ...


@overload
def field(body: Json, key: str, kind: type[_K], required: Literal[True] = True, what: str = "") -> _K: ...


@overload
def field(body: Json, key: str, kind: type[_K], required: bool, what: str = "") -> Optional[_K]: ...


def field(body: Json, key: str, kind: type[Any], required: bool = True, what: str = "") -> Any:
    """``body[key]`` of JSON kind ``kind`` (``int`` excludes booleans); a missing or null field is
    None unless ``required``; otherwise a 400 naming the field (``what``: whose field it is)."""
    v = body.get(key)
    if v is None:
        if required:
            raise bad(f"{what or 'the request'} lacks the field {key!r}")
        return None
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        names: dict[type, str] = {str: "a string", dict: "a JSON object", list: "a JSON array", bool: "a boolean",
                                  int: "a number"}
        raise bad(f"{what or 'the request'}: {key!r} must be {names.get(kind, kind)}, not {json_kind(v)}")
    return v


def namespace_of(raw: str) -> str:
    """The namespace a path segment names (levels joined by ``SEPARATOR``)."""
    parts = raw.split(SEPARATOR)
    if not all(parts):
        raise bad(f"namespace {parts}: a namespace level is empty")
    if len(parts) != 1:     # no such namespace can exist (clients probe them: Spark's `t.snapshots`)
        raise NoSuchNamespaceError(f"namespace {'.'.join(parts)} does not exist: icefloe namespaces have one level")
    return parts[0]


def one_level(levels: object) -> str:
    """The namespace of a body's identifier (a JSON array of one string)."""
    if not isinstance(levels, list) or len(levels) != 1 or not isinstance(levels[0], str):
        raise bad("a namespace is a JSON array of one string: icefloe namespaces have one level")
    return levels[0]


def identifier_name(ident: Json, what: str) -> str:
    """``namespace.name`` of a body's ``TableIdentifier`` (``what``: where it is in the body)."""
    return f"{one_level(ident.get('namespace'))}.{field(ident, 'name', str, what=what)}"


def table_name(request: Request) -> str:
    """``namespace.table`` of a table route's path; a namespace that cannot exist is a missing table."""
    try:
        namespace = namespace_of(request.path_params["namespace"])
    except NoSuchNamespaceError:
        name = request.path_params["namespace"].replace(SEPARATOR, ".") + "." + request.path_params["table"]
        raise NoSuchTableError(f"table {name} does not exist") from None
    return f"{namespace}.{request.path_params['table']}"


def view_name(request: Request) -> str:
    """``namespace.view`` of a view route's path; a namespace that cannot exist is a missing view."""
    try:
        namespace = namespace_of(request.path_params["namespace"])
    except NoSuchNamespaceError:
        raise NoSuchViewError(f"view {request.path_params['namespace']}.{request.path_params['view']} does not "
                              "exist") from None
    return f"{namespace}.{request.path_params['view']}"


def check_properties(props: object, what: str, limit: int) -> dict[str, str]:
    """``props`` (absent: none) as a JSON object of strings, each entry at most ``limit`` bytes."""
    if props is None:
        return {}
    if not isinstance(props, dict):
        raise bad(f"{what} must be a JSON object of strings, not {json_kind(props)}")
    checked: dict[str, str] = props
    for k, v in checked.items():
        if not isinstance(v, str):
            raise bad(f"{what}: the value of {k!r} must be a string, not {json_kind(v)}")
        if len(k.encode()) + len(v.encode()) > limit:
            raise bad(f"{what}: property {k[:100]!r} is larger than the limit of {limit} bytes")
    return checked
