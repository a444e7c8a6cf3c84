"""The command line of the REST catalog: ``icefloe serve`` and ``icefloe auth`` (registered on the
``icefloe`` group by ``icefloe.cli``, which puts the warehouse's catalog opener in
``ctx.obj["open_catalog"]``)."""
from __future__ import annotations

import sys
from typing import Any, Optional

import click

from icefloe.rest.auth import hash_secret, new_static_token
from icefloe.rest.serving import check_exposure

_SERVE_OPTIONS = {"host": "host", "port": "port", "auth_file": "auth", "insecure": "insecure",
                  "ssl_certfile": "ssl-certfile", "ssl_keyfile": "ssl-keyfile", "allow_purge": "allow-purge",
                  "allowed_locations": "allowed-locations", "max_body_bytes": "max-body-bytes",
                  "max_json_depth": "max-json-depth", "max_property_bytes": "max-property-bytes"}
_LIMITS = ("max_body_bytes", "max_json_depth", "max_property_bytes")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="the address to listen on; one other machines can reach needs --auth (or --insecure)")
@click.option("--port", default=8181, show_default=True, type=int)
@click.option("--auth", "auth_file", default=None, type=click.Path(dir_okay=False),
              help="the auth file: principals, their hashed secrets and tokens, and their grants")
@click.option("--insecure", is_flag=True, help="serve a non-loopback address without authentication")
@click.option("--ssl-certfile", default=None, type=click.Path(dir_okay=False), help="TLS certificate (PEM)")
@click.option("--ssl-keyfile", default=None, type=click.Path(dir_okay=False), help="TLS private key (PEM)")
@click.option("--allow-purge", is_flag=True, help="let a drop with purgeRequested=true delete the table's files")
@click.option("--allowed-location", "allowed_locations", multiple=True,
              help="a directory registered tables may live in besides the warehouse (repeatable)")
@click.option("--max-body-bytes", type=int, default=None, help="largest request body (413 past it)")
@click.option("--max-json-depth", type=int, default=None, help="deepest JSON nesting of a request (413 past it)")
@click.option("--max-property-bytes", type=int, default=None, help="largest table or namespace property")
@click.pass_context
def serve(ctx: click.Context, **options: Any) -> None:
    """Serve the warehouse's Iceberg tables over the Iceberg REST catalog protocol.

    Settings not given here come from the `serve:` section of .icefloe.yaml."""
    from click.core import ParameterSource

    from icefloe.config import serve_properties
    from icefloe.core.io import normalize_location
    from icefloe.rest.server import ServerSettings, check_servable
    from icefloe.rest.server import serve as run_server

    conf = serve_properties()
    for name, key in _SERVE_OPTIONS.items():
        if ctx.get_parameter_source(name) is ParameterSource.DEFAULT and key in conf:
            options[name] = conf[key]
    host, port = str(options.pop("host")), int(options.pop("port"))
    options["insecure"] = bool(options["insecure"])
    limits = {k: int(v) for k in _LIMITS if (v := options.pop(k)) is not None}
    if any(v < 1 for v in limits.values()):
        raise click.BadParameter("the limits (--max-body-bytes, --max-json-depth, --max-property-bytes) must be "
                                 "positive")
    allowed = options.pop("allowed_locations") or ()
    if isinstance(allowed, str):
        allowed = (allowed,)
    settings = ServerSettings(allow_purge=bool(options.pop("allow_purge")),
                              allowed_locations=tuple(normalize_location(str(a)) for a in allowed), **limits)
    check_exposure(host, options["auth_file"], options["insecure"])     # before the warehouse is opened
    cat = ctx.obj["open_catalog"]("iceberg")
    check_servable(cat)                                                  # before it is announced
    scheme = "https" if options["ssl_certfile"] else "http"
    mode = f"auth from {options['auth_file']}" if options["auth_file"] else "no authentication"
    click.echo(f"icefloe REST catalog on {scheme}://{host}:{port} ({cat.warehouse}, {cat.type} catalog, {mode})",
               err=True)
    run_server(cat, host, port, settings, **options)


@click.group()
def auth() -> None:
    """Credentials for `icefloe serve --auth FILE`."""


@auth.command("hash-secret")
@click.option("--secret", default=None, help="the secret (else asked for unechoed, or read from a pipe)")
def hash_secret_cmd(secret: Optional[str]) -> None:
    """Print the argon2 hash of a client secret, for a principal's `secret:` in the auth file."""
    if secret is None:
        if sys.stdin.isatty():
            secret = str(click.prompt("secret", hide_input=True, confirmation_prompt=True))
        else:
            line: str = sys.stdin.readline()
            secret = line.rstrip("\n")
    click.echo(hash_secret(secret))


@auth.command("new-token")
def new_token_cmd() -> None:
    """Make a static bearer token: the token (give it to the script; it is shown once) and its
    digest (for a principal's `tokens:` in the auth file)."""
    token, digest = new_static_token()
    click.echo(f"token:  {token}")
    click.echo(f"digest: {digest}")
