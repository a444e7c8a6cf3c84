"""What ``icefloe serve`` checks before it listens: an address reachable from other machines is
served only with authentication (``--auth``) or when told the network is trusted (``--insecure``);
TLS needs both a certificate and its key; the access log goes to standard error."""
from __future__ import annotations

import ipaddress
import logging
import sys
from typing import Optional, TypedDict

from icefloe.core.redact import RedactingFilter
from icefloe.errors import IcefloeError, UnsafeServeError
from icefloe.rest.auth import ACCESS_LOG, Authenticator, load_auth


class TlsOptions(TypedDict, total=False):
    """uvicorn's TLS options: a certificate and its key (PEM files), or neither (plain HTTP)."""
    ssl_certfile: str
    ssl_keyfile: str


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False                  # a host name: it may resolve to anything


def check_exposure(host: str, auth_file: Optional[str], insecure: bool) -> None:
    """Refuse to serve an address other machines can reach without authentication, unless told."""
    if not auth_file and not insecure and not is_loopback(host):
        raise UnsafeServeError(
            f"refusing to serve on {host} without authentication: anyone who can reach that address could read, "
            "change and drop every table. Give --auth FILE (principals and grants; see `icefloe auth --help`), or "
            "--insecure if every machine on that network may do so")


def prepare(host: str, auth_file: Optional[str], insecure: bool, ssl_certfile: Optional[str],
            ssl_keyfile: Optional[str]) -> tuple[Optional[Authenticator], TlsOptions]:
    """The authenticator (None without ``auth_file``) and uvicorn's TLS options; refuses an unsafe
    combination with an error that says what to give instead."""
    if bool(ssl_certfile) != bool(ssl_keyfile):
        raise IcefloeError("TLS needs both --ssl-certfile and --ssl-keyfile")
    check_exposure(host, auth_file, insecure)
    auth = Authenticator(load_auth(auth_file)) if auth_file else None
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s access %(message)s", "%Y-%m-%dT%H:%M:%S%z"))
    handler.addFilter(RedactingFilter())
    ACCESS_LOG.addHandler(handler)
    logging.getLogger("uvicorn.error").addFilter(RedactingFilter())     # a fault's trace, without secrets
    ACCESS_LOG.setLevel(logging.INFO)
    ACCESS_LOG.propagate = False
    if auth is not None and not ssl_certfile and not is_loopback(host):
        print(f"warning: serving {host} over plain HTTP: secrets and bearer tokens cross the network unencrypted; "
              "give --ssl-certfile and --ssl-keyfile, or put a TLS proxy in front", file=sys.stderr)
    tls: TlsOptions = {}
    if ssl_certfile and ssl_keyfile:            # both or neither (checked above)
        tls = {"ssl_certfile": ssl_certfile, "ssl_keyfile": ssl_keyfile}
    return auth, tls
