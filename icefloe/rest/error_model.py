"""How a route of ``icefloe serve`` runs and answers: its body read under the limits on the event
loop, its work (file and database I/O) in the thread pool, so a slow request never holds up the
others; icefloe's errors as the REST spec's ``ErrorModel`` (``{"error": {"message", "type",
"code"}}``) with the status and exception type Java's ``RESTCatalog`` maps back to its own
exceptions; 5xx only for the server's own faults, without a trace or a file's content."""
from __future__ import annotations

import functools
import logging
import re
from typing import TYPE_CHECKING, Awaitable, Callable, Protocol, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from icefloe.errors import (
    CorruptMetadataError, IcefloeError, NamespaceAlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError,
    NoSuchTableError, NoSuchViewError, RequestError, TableAlreadyExistsError, VersionConflict,
)
from icefloe.iceberg.table_requirements import RequirementFailed
from icefloe.iceberg.view_metadata import ViewUpdateError
from icefloe.rest.request_body import Json, ServerSettings, read_body

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

log = logging.getLogger("icefloe.rest")

# icefloe's "table db.t does not exist ..." and the like, in the words Java's catalogs use for them
# ("Table does not exist: db.t ..."), which REST clients show and their test suites expect.
_CONVENTIONS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"(table|namespace|view) (\S+) (does not exist|already exists)(.*)", re.S),
     lambda m: f"{m[1].capitalize()} {m[3]}: {m[2]}{m[4]}"),
    (re.compile(r"cannot (?:create|register) (table|view) (\S+): a (view|table) of that name exists.*", re.S),
     lambda m: f"{m[3].capitalize()} with same name already exists: {m[2]}"),
    (re.compile(r"cannot rename (?:table|view) (\S+) to (\S+): (?:a (view|table) of that name|\S+) exists", re.S),
     lambda m: f"Cannot rename {m[1]} to {m[2]}. {(m[3] or 'view').capitalize()} already exists"),
    (re.compile(r"namespace (\S+) (holds .*)", re.S), lambda m: f"Namespace is not empty: {m[1]} ({m[2]})")]


def conventional(message: str) -> str:
    """``message`` in the words Java's catalogs use for it, when it is one of theirs."""
    for pattern, render in _CONVENTIONS:
        m = pattern.fullmatch(message)
        if m:
            return render(m)
    return message


def error_response(status: int, kind: str, message: str) -> JSONResponse:
    """The spec's ``ErrorModel`` answer."""
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def answer_error(e: Exception, request: Request) -> JSONResponse:
    """The ``ErrorModel`` answer to a route that raised ``e``."""
    if isinstance(e, RequestError):
        return error_response(e.status, e.kind, str(e))
    if isinstance(e, NoSuchViewError):
        return error_response(404, "NoSuchViewException", conventional(str(e)))
    if isinstance(e, ViewUpdateError):           # what Java's view builders refuse with IllegalArgumentException
        return error_response(400, "IllegalArgumentException", str(e))
    if isinstance(e, NoSuchTableError):
        return error_response(404, "NoSuchTableException", conventional(str(e)))
    if isinstance(e, NoSuchNamespaceError):
        return error_response(404, "NoSuchNamespaceException", conventional(str(e)))
    if isinstance(e, (TableAlreadyExistsError, NamespaceAlreadyExistsError)):
        return error_response(409, "AlreadyExistsException", conventional(str(e)))
    if isinstance(e, NamespaceNotEmptyError):
        return error_response(409, "NamespaceNotEmptyException", conventional(str(e)))
    if isinstance(e, (RequirementFailed, VersionConflict)):
        return error_response(409, "CommitFailedException", str(e))
    if isinstance(e, CorruptMetadataError):      # the table's own metadata: the server's fault, not the caller's
        log.error("%s %s: %s", request.method, request.url.path, e)
        return error_response(500, "ServerErrorException", "the table's metadata cannot be read (see the server's log)")
    if isinstance(e, IcefloeError):              # an invalid update, name, schema or location; a refusal
        return error_response(400, "BadRequestException", str(e))
    log.error("%s %s failed", request.method, request.url.path, exc_info=e)     # the server's own fault
    return error_response(500, "ServerErrorException", "the server failed on this request (see its log)")


class Routes(Protocol):
    """What owns a route: the server's settings (the limits its body is read under)."""

    settings: ServerSettings


_R = TypeVar("_R", bound=Routes)
Endpoint = Callable[[_R, "Request"], Awaitable["Response"]]


def route(fn: Callable[[_R, Request], Response]) -> Endpoint[_R]:
    """A route without a body (GET, HEAD, DELETE): its work in the thread pool, its errors as the
    ``ErrorModel`` (module doc)."""
    @functools.wraps(fn)
    async def wrapped(self: _R, request: Request) -> Response:
        try:
            return await run_in_threadpool(fn, self, request)
        except Exception as e:
            return answer_error(e, request)
    return wrapped


def post_route(fn: Callable[[_R, Request, Json], Response]) -> Endpoint[_R]:
    """A POST route: its JSON body read under the limits (``request_body.read_body``), then as
    ``route``."""
    @functools.wraps(fn)
    async def wrapped(self: _R, request: Request) -> Response:
        try:
            body = await read_body(request, self.settings)
            return await run_in_threadpool(fn, self, request, body)
        except Exception as e:
            return answer_error(e, request)
    return wrapped
