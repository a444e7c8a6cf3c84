"""A PostgreSQL server of the system's packages, started for the catalog tests that need one
(in a fresh data directory, on a Unix socket and the loopback address) and stopped after them;
``served`` runs ``icefloe serve``'s app over a catalog in a thread."""
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_url():
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL (initdb, pg_ctl) is not installed")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    base = tempfile.mkdtemp(prefix="icefloe-pg-")
    if as_user:
        shutil.chown(base, "postgres")
    data, port = os.path.join(base, "data"), _free_port()
    subprocess.run(as_user + [initdb, "-D", data, "-A", "trust", "-U", "postgres"], check=True,
                   capture_output=True, timeout=120)
    subprocess.run(as_user + [pg_ctl, "-D", data, "-w", "-l", os.path.join(base, "log"), "-o",
                              f"-p {port} -k {base} -c listen_addresses=127.0.0.1", "start"],
                   check=True, capture_output=True, timeout=120)
    try:
        yield f"postgresql+psycopg://postgres@/postgres?host={base}&port={port}"
    finally:
        subprocess.run(as_user + [pg_ctl, "-D", data, "-m", "fast", "stop"], capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def served(catalog):
    """The REST catalog app over ``catalog`` on a free loopback port; yields its base URI."""
    import uvicorn

    from icefloe.rest.server import RestCatalogApp

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(RestCatalogApp(catalog), host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
