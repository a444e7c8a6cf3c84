"""``icefloe serve --auth``: principals sign in through the OAuth2 token endpoint (pyiceberg's and
icefloe's ``credential=``) or with a static token (``token=``), and may do only what their grants
allow; every other request is 401, a missing grant 403 with nothing changed; the access log names
who did what and never a secret; a non-loopback address is refused without authentication."""
import logging
import os
import time

import pyarrow as pa
import pytest
import requests

import icefloe
from icefloe.rest.auth import Authenticator, classify, hash_secret, load_auth, new_static_token

from tests.interop_util import served

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.string())])
SECRETS = {"admin": "admin-secret-1", "writer": "writer-secret-2", "reader": "reader-secret-3"}


def _rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"r{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture(scope="module")
def auth_file(tmp_path_factory):
    """An auth file: admin (everything), writer (db: read, write, create), reader (db: read), a
    static token for a script (db: read, write), and a key file so a test can sign its own tokens."""
    base = tmp_path_factory.mktemp("auth")
    (base / "token.key").write_bytes(os.urandom(48))
    token, digest = new_static_token()
    from argon2 import PasswordHasher

    # argon2 with a small cost, so the many sign-ins here are quick (icefloe auth hash-secret uses
    # the library's defaults; a hash carries its parameters, and verification follows them)
    cheap = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    hashes = {name: cheap.hash(secret) for name, secret in SECRETS.items()}
    assert hash_secret("x").startswith("$argon2id$")
    (base / "auth.yaml").write_text(f"""
token-key-file: token.key
principals:
  admin: {{secret: "{hashes['admin']}", grants: {{"*": [admin]}}}}
  writer: {{secret: "{hashes['writer']}", grants: {{db: [read, write, create], other: [read]}}}}
  reader: {{secret: "{hashes['reader']}", grants: {{"d*": [read]}}}}
  script: {{tokens: ["{digest}"], grants: {{db: [write]}}}}
""")
    return base / "auth.yaml", token


def _secured(kind, tmp_path, auth_file):
    path, token = auth_file
    kw = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}"} if kind == "sql" else {}
    cat = icefloe.Catalog(str(tmp_path / "wh"), **kw)
    auth = Authenticator(load_auth(str(path)))
    with served(cat, auth=auth) as uri:
        yield cat, uri, token, auth


@pytest.fixture
def secured(tmp_path, auth_file):
    """(the served catalog (SQL), its URI, the static token, the authenticator)."""
    yield from _secured("sql", tmp_path, auth_file)


@pytest.fixture(params=["sql", "hadoop"])
def secured_each(request, tmp_path, auth_file):
    """``secured`` over each kind of catalog."""
    yield from _secured(request.param, tmp_path, auth_file)


def _rest(uri, **kw):
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog("rest", uri=uri, **kw)


def test_pyiceberg_with_credential_and_with_token(secured):
    cat, uri, token, _ = secured
    rc = _rest(uri, credential=f"writer:{SECRETS['writer']}")
    rc.create_namespace("db")
    pt = rc.create_table("db.t", schema=SCHEMA)
    pt.append(_rows([1, 2]))
    assert sorted(rc.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 2]
    scripted = _rest(uri, token=token)                           # a static token: commits and reads
    scripted.load_table("db.t").append(_rows([3]))
    assert sorted(scripted.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert sorted(r["id"] for r in cat.load_table("db.t").to_arrow().to_pylist()) == [1, 2, 3]
    assert len(cat.load_table("db.t").snapshots()) == 2
    from pyiceberg.exceptions import OAuthError

    with pytest.raises(OAuthError, match="invalid_client"):
        _rest(uri, credential="writer:wrong-secret")
    with pytest.raises(OAuthError, match="invalid_client"):
        _rest(uri, credential=f"nobody:{SECRETS['writer']}")


def test_a_read_only_principal_cannot_change_anything(secured_each):
    cat, uri, _, _ = secured_each
    cat.create_namespace("db")
    cat.create_namespace("hidden")
    cat.create_namespace("other")
    t = cat.create_table("db.t", "id bigint not null, s string")
    t.append(_rows([1]))
    before = t.refresh().metadata_location
    from pyiceberg.exceptions import ForbiddenError

    reader = _rest(uri, credential=f"reader:{SECRETS['reader']}")
    assert reader.list_namespaces() == [("db",)]                  # the ones "d*" lets it read
    pt = reader.load_table("db.t")
    assert pt.scan().to_arrow().column("id").to_pylist() == [1]
    with pytest.raises(ForbiddenError, match="lacks the write grant on namespace 'db'"):
        pt.append(_rows([2]))
    with pytest.raises(ForbiddenError, match="drop grant"):
        reader.drop_table("db.t")
    with pytest.raises(ForbiddenError, match="create grant"):
        reader.create_table("db.u", schema=SCHEMA)
    with pytest.raises(ForbiddenError, match="read grant on namespace 'hidden'"):
        reader.list_tables("hidden")
    writer = _rest(uri, credential=f"writer:{SECRETS['writer']}")
    with pytest.raises(ForbiddenError, match="drop grant on namespace 'db'"):   # a rename drops the source
        writer.rename_table("db.t", "other.t")
    with pytest.raises(ForbiddenError, match="create grant on namespace 'x'"):
        writer.create_namespace("x")
    r = requests.post(uri + "/v1/oauth/tokens", timeout=30, data={"grant_type": "client_credentials",
                                                                  "client_id": "writer",
                                                                  "client_secret": SECRETS["writer"]})
    bearer = {"Authorization": f"Bearer {r.json()['access_token']}"}
    # the grant is checked on the name the route acts on ("%64b"), never on a second decoding of it ("db")
    r = requests.delete(uri + "/v1/namespaces/%2564b", headers=bearer, timeout=30)
    assert r.status_code == 403 and "namespace '%64b'" in r.json()["error"]["message"]
    after = cat.load_table("db.t")
    assert after.metadata_location == before and len(after.snapshots()) == 1
    assert cat.list_tables("db") == ["db.t"] and sorted(cat.list_namespaces()) == ["db", "hidden", "other"]


def test_every_route_but_the_token_endpoint_needs_a_valid_token(secured):
    import jwt

    cat, uri, _, auth = secured
    cat.create_namespace("db")
    cat.create_table("db.t", "id bigint")
    app_routes = []
    from icefloe.rest.server import RestCatalogApp

    for route in RestCatalogApp(cat).routes.routes:
        for method in sorted(route.methods - {"HEAD"}) if route.methods else ():
            path = route.path.replace("{namespace}", "db").replace("{table}", "t")
            app_routes.append((method, path))
            # every route the app serves is known to the guard, so none escapes its grant check
            assert classify(method, path).route != "(unrouted)", (method, path)
    assert len(app_routes) >= 12
    now = int(time.time())
    expired = jwt.encode({"iss": "icefloe", "sub": "admin", "iat": now - 100, "exp": now - 10}, auth.settings.key,
                         algorithm="HS256")
    foreign = jwt.encode({"iss": "icefloe", "sub": "admin", "iat": now, "exp": now + 100}, b"k" * 32,
                         algorithm="HS256")
    for method, path in app_routes + [("GET", "/v1/nothing-here")]:
        for header, why in ((None, "authentication is required"), ("Bearer nope", "not valid"),
                            (f"Bearer {expired}", "expired"), (f"Bearer {foreign}", "not signed by this server"),
                            (f"Basic {SECRETS['admin']}", "authentication is required")):
            r = requests.request(method, uri + path, json={}, timeout=30,
                                 headers={"Authorization": header} if header else {})
            assert r.status_code == 401, (method, path, header, r.status_code)
            assert r.json()["error"]["type"] == "NotAuthorizedException" and why in r.json()["error"]["message"]
    assert cat.table_exists("db.t") and cat.list_namespaces() == ["db"]
    r = requests.post(uri + "/v1/oauth/tokens", timeout=30,
                      data={"grant_type": "client_credentials", "client_id": "admin",
                            "client_secret": SECRETS["admin"], "scope": "catalog"})
    assert r.status_code == 200 and r.json()["token_type"] == "bearer" and r.json()["expires_in"] == 3600
    fresh = r.json()["access_token"]
    ok = requests.get(uri + "/v1/config", headers={"Authorization": f"Bearer {fresh}"}, timeout=30)
    assert ok.status_code == 200 and (ok.json()["defaults"], ok.json()["overrides"]) == ({}, {})
    # the token exchange (Java's RESTCatalog refreshes so) gives a new token for the same principal
    r = requests.post(uri + "/v1/oauth/tokens", timeout=30,
                      data={"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": fresh,
                            "subject_token_type": "urn:ietf:params:oauth:token-type:access_token"})
    assert r.status_code == 200 and auth.principal(r.json()["access_token"]).name == "admin"
    r = requests.post(uri + "/v1/oauth/tokens", timeout=30,
                      data={"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": expired})
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    r = requests.post(uri + "/v1/oauth/tokens", timeout=30, data={"grant_type": "password"})
    assert r.status_code == 400 and r.json()["error"] == "unsupported_grant_type"


def test_icefloe_rest_client_with_credential_and_token(secured, spark, tmp_path, monkeypatch):
    server_cat, uri, token, _ = secured
    cat = icefloe.Catalog(type="rest", uri=uri, credential=f"writer:{SECRETS['writer']}", spark=spark)
    cat.create_namespace("db")
    t = cat.create_table("db.r", "id bigint not null, s string")
    t.append(_rows([1, 2]))
    icefloe.Catalog(type="rest", uri=uri, token=token).load_table("db.r").append(_rows([3]))
    assert sorted(r["id"] for r in server_cat.load_table("db.r").to_arrow().to_pylist()) == [1, 2, 3]
    assert sorted(r["id"] for r in t.refresh().to_arrow().to_pylist()) == [1, 2, 3]
    (tmp_path / "team.yaml").write_text(f"catalog:\n  team: {{type: rest, uri: '{uri}', token: '{token}'}}\n")
    monkeypatch.setenv("ICEFLOE_CONFIG", str(tmp_path / "team.yaml"))     # a configured REST catalog signs in too
    assert icefloe.load_catalog("team").list_tables("db") == ["db.r"]
    reader = icefloe.Catalog(type="rest", uri=uri, credential=f"reader:{SECRETS['reader']}")
    from icefloe.iceberg.rest_client import ForbiddenError, NotAuthorizedError

    with pytest.raises(ForbiddenError, match=r"principal 'reader' lacks the write grant on namespace 'db' "
                                             r"\(ForbiddenException, HTTP 403\)"):
        reader.load_table("db.r").append(_rows([5]))
    assert len(server_cat.load_table("db.r").snapshots()) == 2
    with pytest.raises(NotAuthorizedError, match="invalid_client: unknown client or wrong secret"):
        icefloe.Catalog(type="rest", uri=uri, credential="reader:wrong")
    with pytest.raises(NotAuthorizedError, match="authentication is required"):
        icefloe.Catalog(type="rest", uri=uri)


def test_the_rest_client_fetches_a_new_token_when_its_token_expires(tmp_path, auth_file):
    path, _ = auth_file
    short = path.parent / "short.yaml"         # the same principals and key, tokens valid for two seconds
    short.write_text("token-lifetime: 2\n" + path.read_text())
    server_cat = icefloe.Catalog(str(tmp_path / "wh"))
    server_cat.create_namespace("db")
    with served(server_cat, auth=Authenticator(load_auth(str(short)))) as uri:
        cat = icefloe.Catalog(type="rest", uri=uri, credential=f"reader:{SECRETS['reader']}")
        first = dict(cat._impl.http.session.headers)["Authorization"]
        time.sleep(2.1)                                          # the first token has expired
        r = requests.get(uri + "/v1/namespaces", headers={"Authorization": first}, timeout=30)
        assert r.status_code == 401 and "expired" in r.json()["error"]["message"]
        assert cat.list_namespaces() == ["db"]                   # a new token, fetched before the call
        assert dict(cat._impl.http.session.headers)["Authorization"] != first
        stale = dict(cat._impl.http.session.headers)["Authorization"]
        cat._impl.http.session.headers["Authorization"] = first  # e.g. a server restarted with a new key
        cat._impl.http._expires_at = None
        assert cat.list_namespaces() == ["db"]                   # the 401 made it sign in again
        assert dict(cat._impl.http.session.headers)["Authorization"] not in (first, stale)


def test_the_rest_client_names_the_servers_error(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    with served(cat) as uri:
        client = icefloe.Catalog(type="rest", uri=uri)
        client.create_namespace("db")
        client.create_table("db.t", "id bigint")
        from icefloe.iceberg.rest_client import RestCatalogError

        with pytest.raises(RestCatalogError, match=r"a location cannot be given \(BadRequestException, HTTP 400\)"):
            client._impl.http.call("POST", "/v1/namespaces/db/tables", {"name": "u", "location": "/elsewhere"})


def test_a_uri_that_is_not_a_rest_catalog_is_named(tmp_path):
    import http.server
    import threading

    from icefloe.iceberg.rest_client import RestCatalogError
    from tests.interop_util import free_port

    (tmp_path / "index.html").write_text("<html>hello</html>")
    port = free_port()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(tmp_path), **kw)

        def log_message(self, *a):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with pytest.raises(RestCatalogError, match=r"is not an Iceberg REST catalog: GET /v1/config answered "
                                                   r"HTTP 404 \(text/html\)"):
            icefloe.Catalog(type="rest", uri=f"http://127.0.0.1:{port}")
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_access_log_names_who_did_what_and_no_secret(secured, caplog):
    cat, uri, token, _ = secured
    caplog.set_level(logging.INFO, logger="icefloe.rest.access")
    rc = _rest(uri, credential=f"writer:{SECRETS['writer']}")
    rc.create_namespace("db")
    rc.create_table("db.t", schema=SCHEMA).append(_rows([1]))
    _rest(uri, token=token).load_table("db.t")
    requests.get(uri + "/v1/namespaces", timeout=30)
    for _ in range(100):               # a request's line is written just after its answer is sent
        lines = [r.getMessage() for r in caplog.records if r.name == "icefloe.rest.access"]
        text = "\n".join(lines)
        if "status=401" in text:
            break
        time.sleep(0.02)
    assert "principal=writer method=POST route=/v1/oauth/tokens table=- status=200" in text
    assert ("principal=writer method=POST route=/v1/namespaces/{namespace}/tables/{table} table=db.t status=200"
            in text)
    assert "principal=script method=GET route=/v1/namespaces/{namespace}/tables/{table} table=db.t status=200" in text
    assert "principal=- method=GET route=/v1/namespaces table=- status=401" in text
    assert all("duration_ms=" in line for line in lines)
    assert SECRETS["writer"] not in text and token not in text and "Bearer" not in text and "ey" + "J" not in text


def test_a_non_loopback_address_needs_auth_or_insecure(tmp_path, capsys):
    from icefloe.cli import main
    from icefloe.rest.serving import check_exposure

    with pytest.raises(SystemExit) as e:
        main(["--warehouse", str(tmp_path / "wh"), "serve", "--host", "0.0.0.0", "--port", "1"])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert "refusing to serve on 0.0.0.0 without authentication" in err and "--auth FILE" in err
    assert not (tmp_path / "wh").exists()                        # refused before anything was opened
    for host in ("127.0.0.1", "127.3.4.5", "localhost", "::1"):
        check_exposure(host, None, False)
    check_exposure("0.0.0.0", None, True)
    check_exposure("192.0.2.7", "auth.yaml", False)


def test_the_auth_file_refuses_what_it_cannot_honour(tmp_path):
    from icefloe.rest.auth import AuthConfigError

    def bad(text, match):
        (tmp_path / "a.yaml").write_text(text)
        with pytest.raises(AuthConfigError, match=match):
            load_auth(str(tmp_path / "a.yaml"))
    bad("principals: {a: {secret: plain, grants: {'*': [read]}}}", "must be an argon2 hash")
    bad("principals: {a: {tokens: [abc], grants: {'*': [read]}}}", "sha256:<64 hex digits>")
    bad("principals: {a: {tokens: ['sha256:" + "0" * 64 + "'], grants: {'*': [reed]}}}", "unknown privilege.*reed")
    bad("principals: {a: {grants: {'*': [read]}}}", "neither a secret nor a token")
    bad("principal: {}", "unknown setting.*principal")
    (tmp_path / "k").write_bytes(b"short")
    bad("token-key-file: k\nprincipals: {a: {tokens: ['sha256:" + "0" * 64 + "']}}", "at least 32")


def test_tls_with_a_self_signed_certificate(tmp_path, auth_file, monkeypatch):
    cert, key = _self_signed(tmp_path)
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):   # they would override pyiceberg's own bundle
        monkeypatch.delenv(name, raising=False)
    path, token = auth_file
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    cat.create_table("db.t", SCHEMA)
    with served(cat, auth=Authenticator(load_auth(str(path))), ssl_certfile=str(cert), ssl_keyfile=str(key)) as uri:
        assert uri.startswith("https://")
        rc = _rest(uri, token=token, ssl={"cabundle": str(cert)})
        rc.load_table("db.t").append(_rows([7]))
        assert rc.load_table("db.t").scan().to_arrow().column("id").to_pylist() == [7]
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))     # how icefloe's client trusts a private CA
        ours = icefloe.Catalog(type="rest", uri=uri, credential=f"reader:{SECRETS['reader']}")   # token endpoint
        assert ours.list_tables("db") == ["db.t"]
        monkeypatch.delenv("REQUESTS_CA_BUNDLE")
        with pytest.raises(requests.exceptions.SSLError):       # an unknown certificate is refused
            requests.get(uri + "/v1/config", timeout=30)
        with pytest.raises((requests.exceptions.ConnectionError, requests.exceptions.Timeout)):
            requests.get(uri.replace("https://", "http://") + "/v1/config", timeout=2)   # no plain HTTP


def _self_signed(tmp_path):
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    return tmp_path / "cert.pem", tmp_path / "key.pem"


def test_the_documented_auth_file_and_serve_settings_work(tmp_path, monkeypatch):
    import re

    from icefloe.config import serve_properties

    page = (os.path.dirname(__file__) + "/../../docs/configuration.md")
    yaml_blocks = re.findall(r"```yaml\n(.*?)```", open(page).read(), re.S)
    auth_doc = next(b for b in yaml_blocks if "principals:" in b)
    serve_doc = next(b for b in yaml_blocks if b.startswith("serve:"))
    (tmp_path / "token.key").write_text(os.urandom(32).hex() + "\n")     # as the page says: `openssl rand -hex 32`
    (tmp_path / "auth.yaml").write_text(auth_doc)
    settings = load_auth(str(tmp_path / "auth.yaml"))
    etl, report = settings.principals["etl"], settings.principals["nightly-report"]
    assert etl.may("write", "sales") and etl.may("read", "hr") and not etl.may("write", "hr")
    assert report.may("read", "sales_eu") and not report.may("read", "sales")
    assert settings.principals["platform"].may("drop", "anything") and settings.lifetime == 3600
    (tmp_path / ".icefloe.yaml").write_text(serve_doc)
    monkeypatch.setenv("ICEFLOE_CONFIG", str(tmp_path / ".icefloe.yaml"))
    got = serve_properties()
    assert got["host"] == "0.0.0.0" and got["auth"] == str(tmp_path / "auth.yaml")
    assert got["ssl-certfile"] == str(tmp_path / "cert.pem")


def test_secrets_are_redacted_from_errors(tmp_path, monkeypatch, capsys):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    with served(cat) as uri:                                    # error bodies about a URI with a password
        r = requests.post(uri + "/v1/namespaces/db/register", timeout=30,
                          json={"name": "x", "metadata-location": "s3://AKIA:S3cretPw@bucket/x.metadata.json"})
        assert r.status_code == 400 and "S3cretPw" not in r.text
        _rest(uri).create_table("db.t", schema=SCHEMA).append(     # another writer's summary with a secret
            _rows([1]), snapshot_properties={"source.password": "S3cretPw", "source": "mysql://u:S3cretPw@h/db"})
    from icefloe.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--warehouse", str(tmp_path / "wh"), "snapshots", "--json", "db.t"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and '"source.password": "***"' in out and "mysql://u:***@h/db" in out
    assert "S3cretPw" not in out
    (tmp_path / ".icefloe.yaml").write_text(f"""
catalog:
  pg:
    warehouse: {tmp_path / 'wh'}
    type: sql
    uri: postgresql+nodriver://alice:S3cretPw@127.0.0.1:1/db
""")
    monkeypatch.setenv("ICEFLOE_CONFIG", str(tmp_path / ".icefloe.yaml"))
    for extra in ([], ["--verbose"]):
        with pytest.raises(SystemExit):
            main(["--catalog", "pg", *extra, "tables"])
        err = capsys.readouterr().err
        assert "postgresql+nodriver://alice:***@127.0.0.1:1/db" in err and "S3cretPw" not in err


def test_the_serve_command_with_auth_from_the_configuration(tmp_path, auth_file):
    import subprocess
    import sys

    from tests.interop_util import free_port

    path, token = auth_file
    port = free_port()
    (tmp_path / ".icefloe.yaml").write_text(f"serve:\n  port: {port}\n  auth: {path}\n")
    env = {**os.environ, "ICEFLOE_CONFIG": str(tmp_path / ".icefloe.yaml")}
    proc = subprocess.Popen([sys.executable, "-m", "icefloe.cli", "--warehouse", str(tmp_path / "wh"), "serve"],
                            stderr=subprocess.PIPE, text=True, env=env)
    uri = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                r = requests.get(f"{uri}/v1/config", timeout=2)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        assert r.status_code == 401
        ok = requests.get(f"{uri}/v1/config", headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert ok.status_code == 200
    finally:
        proc.terminate()
        err = proc.communicate(timeout=30)[1]
    assert f"auth from {path}" in err
    assert "access principal=- method=GET route=/v1/config table=- status=401" in err
    assert "access principal=script method=GET route=/v1/config table=- status=200" in err
    assert token not in err


def test_committing_a_create_transaction_needs_the_create_grant(secured):
    cat, uri, token, _ = secured
    cat.create_namespace("db")
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}]}
    body = {"requirements": [{"type": "assert-create"}],
            "updates": [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}]}
    # the script's static token may write to db, not create in it: a commit that would create is refused
    r = requests.post(f"{uri}/v1/namespaces/db/tables/made", json=body, timeout=30,
                      headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 403 and "needs the create grant on namespace db" in r.json()["error"]["message"]
    assert not cat.table_exists("db.made")
    writer = requests.post(uri + "/v1/oauth/tokens", timeout=30, data={
        "grant_type": "client_credentials", "client_id": "writer", "client_secret": SECRETS["writer"]})
    r = requests.post(f"{uri}/v1/namespaces/db/tables/made", json=body, timeout=30,
                      headers={"Authorization": f"Bearer {writer.json()['access_token']}"})
    assert r.status_code == 200, r.text
    assert cat.load_table("db.made").schema.fields[0].name == "id"
