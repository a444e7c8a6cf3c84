"""Who may do what through ``icefloe serve``: principals, their credentials and grants (the auth
file), the OAuth2 token endpoint of the Iceberg REST protocol, and the guard in front of every route.

The auth file (YAML; ``icefloe serve --auth FILE``)::

    token-lifetime: 3600            # seconds a token from /v1/oauth/tokens is valid (default 3600)
    token-key-file: token.key       # HS256 key of those tokens, >= 32 bytes; default: a new one per start
    principals:
      etl:
        secret: $argon2id$v=19$...  # icefloe auth hash-secret
        grants: {sales: [read, write, create], "*": [read]}
      nightly-report:
        tokens: [sha256:...]        # icefloe auth new-token: a static bearer token for scripts
        grants: {"*": [read]}

A client authenticates as the REST spec's OAuth2 flow has it: ``POST /v1/oauth/tokens`` with the
client-credentials grant (``credential="id:secret"`` in pyiceberg and Java's ``RESTCatalog``; RFC
6749 section 4.4) returns a signed, expiring bearer token; a token-exchange grant (RFC 8693) with a
still-valid token returns a fresh one (Java's ``RESTCatalog`` refreshes so). A static token is sent
as it is (``token=``). Secrets are kept as argon2 hashes (verified only at the token endpoint);
static tokens as SHA-256 digests, since they are random 256-bit values checked on every request.

Every other route needs a valid bearer token (401 without, the ErrorModel's
``NotAuthorizedException``) and the grant its action needs on the namespace (403,
``ForbiddenException``): ``read`` (load and list), ``write`` (commit to a table, set namespace
properties), ``create`` (create or register a table, create a namespace), ``drop`` (drop a table or
namespace; a rename needs ``drop`` on the source and ``create`` on the destination namespace),
``admin`` (all of them). ``write``, ``create`` and ``drop`` include ``read``. A grant's key is a
namespace name or a shell-style pattern (``*``, ``sales_*``).

The guard also writes the access log (logger ``icefloe.rest.access``): principal, method, route,
table, status and duration of every request; never a header, a query string or a body, so never
a secret or a token. The body of every error response is redacted (``icefloe.core.redact``).
"""
from __future__ import annotations

import base64
import binascii
import fnmatch
import hashlib
import json
import logging
import os
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Optional, TypedDict
from urllib.parse import parse_qs

from icefloe.core.redact import redact
from icefloe.errors import AuthConfigError, Unauthenticated

if TYPE_CHECKING:
    from typing import Awaitable

    from anyio import CapacityLimiter
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

PRIVILEGES = ("read", "write", "create", "drop", "admin")
TOKEN_PATH = "/v1/oauth/tokens"
ISSUER = "icefloe"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
SCOPES = ("", "catalog")            # the scope pyiceberg and Java's RESTCatalog ask for by default
MAX_FORM_BYTES = 64 * 1024
MAX_ROUTED_BODY_BYTES = 1024 * 1024  # bodies the guard reads to find a namespace (create namespace, rename)
STATIC_TOKEN_PREFIX = "icefloe_"
HASHING_THREADS = 4
ACCESS_LOG = logging.getLogger("icefloe.rest.access")


# ---------------------------------------------------------------------- credentials
def hash_secret(secret: str) -> str:
    """The argon2id hash of a client secret, as the auth file keeps it."""
    from argon2 import PasswordHasher

    if not secret:
        raise AuthConfigError("an empty secret cannot be hashed")
    return PasswordHasher().hash(secret)


def token_digest(token: str) -> str:
    """How the auth file keeps a static bearer token: its SHA-256 digest."""
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


def new_static_token() -> tuple[str, str]:
    """A new random static bearer token (256 bits) and its digest for the auth file."""
    token = STATIC_TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_digest(token)


@dataclass(frozen=True)
class Principal:
    name: str
    secret_hash: Optional[str] = None
    grants: tuple[tuple[str, frozenset[str]], ...] = ()     # ((namespace pattern, privileges), ...)

    def privileges(self, namespace: str) -> set[str]:
        found: set[str] = set()
        for pattern, privs in self.grants:
            if fnmatch.fnmatchcase(namespace, pattern):
                found |= privs
        if "admin" in found:
            return set(PRIVILEGES)
        if found & {"write", "create", "drop"}:
            found.add("read")
        return found

    def may(self, privilege: str, namespace: str) -> bool:
        return privilege in self.privileges(namespace)


@dataclass
class AuthSettings:
    """The auth file, read (see the module doc)."""

    principals: dict[str, Principal] = field(default_factory=dict[str, Principal])
    tokens: dict[str, str] = field(default_factory=dict[str, str])     # static token digest -> principal name
    key: bytes = b""
    lifetime: int = 3600
    source: str = ""


def _grants(where: str, raw: object) -> tuple[tuple[str, frozenset[str]], ...]:
    if not isinstance(raw, dict):
        raise AuthConfigError(f"{where}: grants must map a namespace (or pattern) to a list of {', '.join(PRIVILEGES)}")
    out: list[tuple[str, frozenset[str]]] = []
    for pattern, privs in raw.items():
        privs = [privs] if isinstance(privs, str) else privs
        if not isinstance(privs, list) or not privs:
            raise AuthConfigError(f"{where}: the grant on {pattern!r} must be a list of {', '.join(PRIVILEGES)}")
        unknown = sorted({str(p) for p in privs} - set(PRIVILEGES))
        if unknown:
            raise AuthConfigError(f"{where}: unknown privilege(s) {', '.join(unknown)} on {pattern!r} "
                                  f"(known: {', '.join(PRIVILEGES)})")
        out.append((str(pattern), frozenset(str(p) for p in privs)))
    return tuple(out)


def load_auth(path: str) -> AuthSettings:
    """Read and check the auth file at ``path``; an unknown key, a plain-text secret or an unknown
    privilege is an error naming it."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise AuthConfigError(f"cannot read the auth file {path}: {e}") from None
    if not isinstance(doc, dict):
        raise AuthConfigError(f"{path}: expected a mapping with 'principals:'")
    unknown = sorted(set(doc) - {"principals", "token-lifetime", "token-key-file"})
    if unknown:
        raise AuthConfigError(f"{path}: unknown setting(s) {', '.join(map(str, unknown))} "
                              "(known: principals, token-lifetime, token-key-file)")
    settings = AuthSettings(source=path)
    lifetime = doc.get("token-lifetime", 3600)
    if not isinstance(lifetime, int) or isinstance(lifetime, bool) or lifetime <= 0:
        raise AuthConfigError(f"{path}: token-lifetime must be a positive number of seconds, not {lifetime!r}")
    settings.lifetime = lifetime
    key_file = doc.get("token-key-file")
    if key_file:
        key_path = os.path.join(os.path.dirname(os.path.abspath(path)), str(key_file))
        try:
            with open(key_path, "rb") as f:
                settings.key = f.read().strip()
        except OSError as e:
            raise AuthConfigError(f"{path}: cannot read token-key-file {key_path}: {e.strerror}") from None
        if len(settings.key) < 32:
            raise AuthConfigError(f"{path}: token-key-file {key_path} holds {len(settings.key)} bytes; an HS256 key "
                                  "needs at least 32 (e.g. `openssl rand -hex 32 > token.key`)")
    else:
        settings.key = secrets.token_bytes(32)          # tokens last until the server restarts
    principals = doc.get("principals")
    if not isinstance(principals, dict) or not principals:
        raise AuthConfigError(f"{path}: 'principals:' must name at least one principal")
    for name, spec in principals.items():
        name, where = str(name), f"{path}: principal {name!r}"
        spec = spec or {}
        if not isinstance(spec, dict):
            raise AuthConfigError(f"{where}: expected secret, tokens and grants")
        unknown = sorted(set(spec) - {"secret", "tokens", "grants"})
        if unknown:
            raise AuthConfigError(f"{where}: unknown setting(s) {', '.join(map(str, unknown))} "
                                  "(known: secret, tokens, grants)")
        secret = spec.get("secret")
        if secret is not None and not str(secret).startswith("$argon2"):
            raise AuthConfigError(f"{where}: 'secret' must be an argon2 hash (icefloe auth hash-secret), never the "
                                  "secret itself")
        tokens = spec.get("tokens") or []
        if not isinstance(tokens, list):
            raise AuthConfigError(f"{where}: 'tokens' must be a list of sha256:<digest> (icefloe auth new-token)")
        for digest in tokens:
            d = str(digest)
            if not (d.startswith("sha256:") and len(d) == 71 and all(c in "0123456789abcdef" for c in d[7:])):
                raise AuthConfigError(f"{where}: a token must be kept as sha256:<64 hex digits> (icefloe auth "
                                      "new-token), never the token itself")
            if d in settings.tokens:
                raise AuthConfigError(f"{where}: a token digest is listed twice")
            settings.tokens[d] = name
        if secret is None and not tokens:
            raise AuthConfigError(f"{where}: has neither a secret nor a token, so it cannot sign in")
        settings.principals[name] = Principal(name, str(secret) if secret else None,
                                              _grants(where, spec.get("grants") or {}))
    return settings


class Authenticator:
    """Issues and checks bearer tokens for the principals of an auth file."""

    def __init__(self, settings: AuthSettings):
        from argon2 import PasswordHasher

        self.settings = settings
        self._hasher = PasswordHasher()
        self._dummy = self._hasher.hash(secrets.token_hex(16))   # unknown clients cost the same as known ones

    # ------------------------------------------------------------------ bearer tokens
    def issue(self, principal: str, lifetime: Optional[int] = None) -> dict[str, Any]:
        import jwt

        now = int(time.time())
        lifetime = self.settings.lifetime if lifetime is None else lifetime
        claims = {"iss": ISSUER, "sub": principal, "iat": now, "exp": now + lifetime, "jti": uuid.uuid4().hex}
        return {"access_token": jwt.encode(claims, self.settings.key, algorithm="HS256"), "token_type": "bearer",
                "expires_in": lifetime, "issued_token_type": ACCESS_TOKEN_TYPE}

    def principal(self, token: str) -> Principal:
        """The principal a bearer token stands for; ``Unauthenticated`` naming why not (never the token)."""
        import jwt

        name = self.settings.tokens.get(token_digest(token))
        if name is None:
            if token.count(".") != 2:
                raise Unauthenticated("the bearer token is not valid")
            try:
                claims = jwt.decode(token, self.settings.key, algorithms=["HS256"], issuer=ISSUER,
                                    options={"require": ["exp", "iat", "sub", "iss"]})
            except jwt.ExpiredSignatureError:
                raise Unauthenticated("the bearer token has expired; get a new one from /v1/oauth/tokens") from None
            except jwt.PyJWTError:
                raise Unauthenticated("the bearer token is not valid (not signed by this server)") from None
            name = claims["sub"]
        found = self.settings.principals.get(name)
        if found is None:
            raise Unauthenticated("the bearer token's principal is no longer known")
        return found

    def check_secret(self, client_id: Optional[str], secret: Optional[str]) -> Optional[Principal]:
        """The principal whose secret this is, else None (slow: argon2; call it off the event loop)."""
        from argon2.exceptions import VerificationError, InvalidHashError

        found = self.settings.principals.get(client_id or "")
        hashed = found.secret_hash if found is not None and found.secret_hash else self._dummy
        try:
            ok = self._hasher.verify(hashed, secret or "")
        except (VerificationError, InvalidHashError):
            ok = False
        return found if ok and hashed is not self._dummy else None

    # ------------------------------------------------------------------ the token endpoint
    def token_response(self, form: dict[str, str],
                       basic: Optional[tuple[str, str]]) -> tuple[int, dict[str, Any]]:
        """(status, body) of ``POST /v1/oauth/tokens`` for the form's fields (RFC 6749 section 4.4,
        RFC 8693; errors as RFC 6749 section 5.2's ``error``/``error_description``)."""
        def oauth_error(status: int, error: str, description: str) -> tuple[int, dict[str, Any]]:
            return status, {"error": error, "error_description": description}

        grant = form.get("grant_type", "")
        scope = form.get("scope", "")
        if scope not in SCOPES:
            return oauth_error(400, "invalid_scope", f"scope {scope!r} is not offered; grants come from the auth "
                                                     "file (ask for scope 'catalog' or none)")
        if form.get("actor_token"):
            return oauth_error(400, "invalid_request", "actor tokens (delegation) are not supported")
        client_id, secret = basic or (form.get("client_id"), form.get("client_secret"))
        if grant == "client_credentials":
            if not client_id:
                return oauth_error(401, "invalid_client", "a client id is needed: credential='<client id>:<secret>'")
            found = self.check_secret(client_id, secret)
            if found is None:
                return oauth_error(401, "invalid_client", "unknown client or wrong secret")
            return 200, self.issue(found.name)
        if grant == TOKEN_EXCHANGE:
            if basic is not None:                        # an expired token, refreshed with the client's secret
                found = self.check_secret(client_id, secret)
                if found is None:
                    return oauth_error(401, "invalid_client", "unknown client or wrong secret")
                return 200, self.issue(found.name)
            if form.get("subject_token_type", ACCESS_TOKEN_TYPE) != ACCESS_TOKEN_TYPE:
                return oauth_error(400, "invalid_request", "only access tokens are exchanged")
            try:
                found = self.principal(form.get("subject_token", ""))
            except Unauthenticated as e:
                return oauth_error(400, "invalid_grant", str(e))
            return 200, self.issue(found.name)
        return oauth_error(400, "unsupported_grant_type",
                           f"grant type {grant!r} is not supported (client_credentials or token exchange)")


# ---------------------------------------------------------------------- routes and grants
@dataclass(frozen=True)
class Action:
    """What a request does, for the grant check and the access log."""

    route: str                      # the route's template
    privilege: Optional[str]        # None: any authenticated principal
    namespace: Optional[str] = None
    table: Optional[str] = None
    body_namespaces: bool = False   # the namespaces are in the body (create namespace, rename)


_NS, _TBL = "/v1/namespaces/{namespace}", "/v1/namespaces/{namespace}/tables/{table}"
_VIEW = "/v1/namespaces/{namespace}/views/{view}"
# (path segments after /v1/namespaces/{namespace}, method) -> (route, privilege)
_NAMESPACE_ROUTES = {
    ((), "GET"): (_NS, "read"), ((), "HEAD"): (_NS, "read"), ((), "DELETE"): (_NS, "drop"),
    (("properties",), "POST"): (_NS + "/properties", "write"),
    (("tables",), "GET"): (_NS + "/tables", "read"), (("tables",), "POST"): (_NS + "/tables", "create"),
    (("register",), "POST"): (_NS + "/register", "create"),
    (("register-view",), "POST"): (_NS + "/register-view", "create"),
    (("tables", "*"), "GET"): (_TBL, "read"), (("tables", "*"), "HEAD"): (_TBL, "read"),
    (("tables", "*"), "POST"): (_TBL, "write"), (("tables", "*"), "DELETE"): (_TBL, "drop"),
    # server-side scan planning reads the table: a load's grant
    (("tables", "*", "plan"), "POST"): (_TBL + "/plan", "read"), (("tables", "*", "tasks"), "POST"): (_TBL + "/tasks", "read"),
    (("tables", "*", "plan", "*"), "GET"): (_TBL + "/plan/{plan-id}", "read"),
    (("tables", "*", "plan", "*"), "DELETE"): (_TBL + "/plan/{plan-id}", "read"),
    # views need the grants tables do
    (("views",), "GET"): (_NS + "/views", "read"), (("views",), "POST"): (_NS + "/views", "create"),
    (("views", "*"), "GET"): (_VIEW, "read"), (("views", "*"), "HEAD"): (_VIEW, "read"),
    (("views", "*"), "POST"): (_VIEW, "write"), (("views", "*"), "DELETE"): (_VIEW, "drop"),
}


def classify(method: str, path: str) -> Action:
    """The route ``method path`` takes and the grant it needs (see the module doc). A route not
    listed here needs authentication only; the app answers 404 for paths it does not serve.
    ``path`` is the ASGI scope's, already percent-decoded: decoding it again would check a grant on
    another name than the one the route acts on."""
    parts = path.rstrip("/").split("/")[1:]
    if parts == ["v1", "config"]:
        return Action("/v1/config", None)
    if parts == ["v1", "namespaces"]:
        if method == "POST":
            return Action("/v1/namespaces", "create", body_namespaces=True)
        return Action("/v1/namespaces", None)          # the list shows the namespaces the principal may read
    if parts in (["v1", "tables", "rename"], ["v1", "views", "rename"]) and method == "POST":
        return Action(f"/v1/{parts[1]}/rename", "drop", body_namespaces=True)
    if parts == ["v1", "transactions", "commit"] and method == "POST":     # a commit to each table named
        return Action("/v1/transactions/commit", "write", body_namespaces=True)
    if len(parts) >= 3 and parts[:2] == ["v1", "namespaces"]:
        namespace = parts[2].replace("\x1f", ".")
        rest = tuple(parts[3:])
        if len(rest) >= 2 and rest[0] in ("tables", "views"):     # the object's name is a wildcard
            key = (rest[:1] + ("*",) + rest[2:3] + ("*",) * len(rest[3:4]), method) if len(rest) <= 4 else (rest, method)
        else:
            key = (rest, method)
        if key in _NAMESPACE_ROUTES:
            route, privilege = _NAMESPACE_ROUTES[key]
            table = f"{namespace}.{rest[1]}" if len(rest) >= 2 else None
            return Action(route, privilege, namespace, table)
    return Action("(unrouted)", None)


def request_may(scope: Scope, privilege: str, namespace: str) -> bool:
    """Whether the request's principal holds ``privilege`` on ``namespace`` (always, without auth):
    for a grant the route alone does not decide (a commit that creates its table needs ``create``)."""
    principal: Optional[Principal] = scope.get("icefloe.principal")
    return principal is None or principal.may(privilege, namespace)


def visible_namespaces(scope: Scope, namespaces: Iterable[str]) -> list[str]:
    """The namespaces of a list the request's principal may read (all of them without auth)."""
    principal: Optional[Principal] = scope.get("icefloe.principal")
    if principal is None:
        return list(namespaces)
    return [n for n in namespaces if principal.may("read", n)]


def _body_namespaces(action: Action, body: bytes) -> Optional[list[tuple[str, str]]]:
    """(privilege, namespace) pairs a create-namespace or rename body asks for; None if the body
    names no namespace where it must."""
    try:
        doc = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None

    def name(levels: object) -> Optional[str]:
        return ".".join(str(x) for x in levels) if isinstance(levels, list) and levels else None

    if action.route == "/v1/transactions/commit":
        changes = doc.get("table-changes")
        if not isinstance(changes, list) or not changes:
            return None
        idents = [c.get("identifier") if isinstance(c, dict) else None for c in changes]
        named = [ns for i in idents if isinstance(i, dict) and (ns := name(i.get("namespace")))]
        if len(named) != len(idents):
            return None
        return [("write", ns) for ns in named]
    if action.route in ("/v1/tables/rename", "/v1/views/rename"):
        out: list[tuple[str, str]] = []
        for key, privilege in (("source", "drop"), ("destination", "create")):
            ident = doc.get(key)
            ns = name(ident.get("namespace")) if isinstance(ident, dict) else None
            if not ns:
                return None
            out.append((privilege, ns))
        return out
    ns = name(doc.get("namespace"))
    return [("create", ns)] if ns else None


# ---------------------------------------------------------------------- the guard (ASGI)
async def _read_body(receive: Receive, limit: int) -> Optional[bytes]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}
    return receive


async def _send_json(send: Send, status: int, doc: dict[str, Any],
                     headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = json.dumps(doc).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


def _error_model(status: int, kind: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": status}}


def _basic(header: str) -> Optional[tuple[str, str]]:
    if not header.lower().startswith("basic "):
        return None
    try:
        client_id, _, secret = base64.b64decode(header[6:].strip()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return ("", "")
    return client_id, secret          # as Java sends them: the credential itself, base64-encoded


class Outcome(TypedDict):
    """What the access log says of a request: its status and its principal (``-`` before sign-in)."""
    status: int
    principal: str


class Guard:
    """The ASGI app in front of the catalog's routes: the token endpoint, authentication, grant
    checks and the access log. ``auth`` None serves everyone (loopback or ``--insecure``)."""

    def __init__(self, app: ASGIApp, auth: Optional[Authenticator]) -> None:
        self.app, self.auth = app, auth
        self._hashing: Optional[CapacityLimiter] = None     # made in the server's event loop, on the first token request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        method, path = scope["method"], scope["path"]
        action = Action(TOKEN_PATH, None) if path.rstrip("/") == TOKEN_PATH else classify(method, path)
        outcome: Outcome = {"status": 500, "principal": "-"}
        held: dict[str, Any] = {}

        async def send_status(message: Message) -> None:
            """Note the status; an error's body is redacted (``icefloe.core.redact``) before it leaves."""
            if message["type"] == "http.response.start":
                outcome["status"] = message["status"]
                if message["status"] >= 400:
                    held["start"], held["body"] = message, b""
                    return
            elif message["type"] == "http.response.body" and "start" in held:
                held["body"] += message.get("body", b"")
                if message.get("more_body"):
                    return
                body = redact(held["body"].decode("utf-8", "replace")).encode()
                headers = [(k, v) for k, v in held.pop("start")["headers"] if k.lower() != b"content-length"]
                await send({"type": "http.response.start", "status": outcome["status"],
                            "headers": headers + [(b"content-length", str(len(body)).encode())]})
                message = {"type": "http.response.body", "body": body}
            await send(message)
        try:
            await self._handle(scope, receive, send_status, action, outcome)
        finally:
            ACCESS_LOG.info("principal=%s method=%s route=%s table=%s status=%s duration_ms=%.1f",
                            outcome["principal"], method, action.route,
                            action.table or (action.namespace or "-"), outcome["status"],
                            (time.monotonic() - started) * 1000)

    async def _handle(self, scope: Scope, receive: Receive, send: Send, action: Action,
                      outcome: Outcome) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if action.route == TOKEN_PATH:
            if scope["method"] != "POST":
                await _send_json(send, 405, _error_model(405, "MethodNotAllowed", "the token endpoint takes POST"))
                return
            await self._token(receive, send, headers, outcome)
            return
        if self.auth is None:
            await self.app(scope, receive, send)
            return
        bearer = headers.get("authorization", "")
        try:
            if not bearer.lower().startswith("bearer ") or not bearer[7:].strip():
                raise Unauthenticated("authentication is required: a bearer token (credential= or token=)")
            principal = self.auth.principal(bearer[7:].strip())
        except Unauthenticated as e:
            await _send_json(send, 401, _error_model(401, "NotAuthorizedException", str(e)),
                             ((b"www-authenticate", b'Bearer realm="icefloe"'),))
            outcome["status"] = 401
            return
        outcome["principal"] = principal.name
        needs = [(action.privilege, action.namespace)] if action.privilege and action.namespace else []
        if action.body_namespaces:
            body = await _read_body(receive, MAX_ROUTED_BODY_BYTES)
            if body is None:
                await _send_json(send, 413, _error_model(413, "BadRequestException",
                                                         f"request body over {MAX_ROUTED_BODY_BYTES} bytes"))
                return
            needs = _body_namespaces(action, body)
            if needs is None:
                await _send_json(send, 400, _error_model(400, "BadRequestException",
                                                         "the request body must name its namespaces "
                                                         "(a JSON object with 'namespace', 'source' and "
                                                         "'destination', or 'table-changes' with identifiers)"))
                return
            receive = _replay(body)
        for privilege, namespace in needs:
            if not principal.may(privilege, namespace):
                await _send_json(send, 403, _error_model(
                    403, "ForbiddenException",
                    f"principal {principal.name!r} lacks the {privilege} grant on namespace {namespace!r}"))
                return
        scope = dict(scope, **{"icefloe.principal": principal})
        await self.app(scope, receive, send)

    async def _token(self, receive: Receive, send: Send, headers: dict[str, str], outcome: Outcome) -> None:
        import anyio

        def reply(status: int, doc: dict[str, Any]) -> Awaitable[None]:
            return _send_json(send, status, doc, ((b"cache-control", b"no-store"),))
        if self.auth is None:
            await reply(400, {"error": "invalid_request", "error_description":
                              "this icefloe server runs without authentication (no --auth): connect without "
                              "credential or token"})
            return
        body = await _read_body(receive, MAX_FORM_BYTES)
        if body is None:
            await reply(400, {"error": "invalid_request", "error_description": "the form is too large"})
            return
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        if self._hashing is None:       # argon2 takes 64 MiB a verification: a few at a time
            self._hashing = anyio.CapacityLimiter(HASHING_THREADS)
        status, doc = await anyio.to_thread.run_sync(self.auth.token_response, form,
                                                     _basic(headers.get("authorization", "")),
                                                     limiter=self._hashing)
        if status == 200:
            try:
                outcome["principal"] = self.auth.principal(doc["access_token"]).name
            except Unauthenticated:
                pass
        await reply(status, doc)
