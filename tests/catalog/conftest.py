"""A PostgreSQL server of the system's packages, started for the catalog tests that need one
(in a fresh data directory, on a Unix socket and the loopback address) and stopped after them."""
import os
import shutil
import subprocess
import tempfile

import pytest

from tests.interop_util import free_port as _free_port


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

