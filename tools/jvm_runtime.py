"""The Java engines, set up beside icefloe as oracles and benchmark peers: Apache Iceberg's Spark
runtime and Apache Paimon's Spark runtime.

Both runtimes are built for Spark 3.5, and icefloe runs on Spark 4, so they live in a second virtual
environment (``.venv-jvm``) holding ``pyspark`` 3.5 (``requirements-jvm.txt``); the jars come from
Maven Central, pinned with their SHA-256 in ``jvm-jars.txt`` (``tools/maven_jars.py``). ``make jvm``
builds the environment and fetches the jars; tests and sessions only check them.

``JvmRuntime`` starts one long-lived worker process in that environment (``tools/jvm_worker.py``) and
sends it requests: SQL statements, or short Python snippets run with ``spark`` in scope. One Spark 3.5
session serves a whole test module, test session or benchmark run. ``engine="iceberg"`` (the default)
gives it the ``jvm`` catalog, Iceberg's Hadoop catalog over the warehouse; ``engine="paimon"`` the
``paimon`` catalog, Paimon's filesystem catalog over it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from tools import maven_jars, venvs

ROOT = Path(__file__).resolve().parent.parent
ENV_DIR = ROOT / ".venv-jvm"
REQUIREMENTS = ROOT / "requirements-jvm.txt"
WORKER = Path(__file__).resolve().parent / "jvm_worker.py"

class JvmRuntimeUnavailable(RuntimeError):
    """The runtime's environment could not be built or started."""


def _env_python() -> Path:
    return ENV_DIR / "bin" / "python"


def ensure_env(quiet: bool = True) -> Path:
    """Build ``.venv-jvm`` (once per change of ``requirements-jvm.txt``), fetch the pinned jars
    (``jvm-jars.txt``) into the jar cache and compile ``tools/paimon_java``'s program there: what
    ``make jvm`` runs."""
    venvs.build(ENV_DIR, REQUIREMENTS, JvmRuntimeUnavailable, quiet)
    try:
        maven_jars.fetch(quiet=quiet)
    except maven_jars.JarError as e:
        raise JvmRuntimeUnavailable(str(e)) from None
    from tools import paimon_java

    try:
        paimon_java.helper_jar()            # the program that drives Paimon's Java engine without Spark
    except paimon_java.PaimonJavaUnavailable as e:
        raise JvmRuntimeUnavailable(str(e)) from None
    return ENV_DIR


def _check_env() -> None:
    """The environment ``make jvm`` built, without reaching the network."""
    stamp = ENV_DIR / ".installed"
    if not stamp.exists() or stamp.stat().st_mtime < REQUIREMENTS.stat().st_mtime:
        raise JvmRuntimeUnavailable(f"{ENV_DIR} is missing or older than {REQUIREMENTS.name}: run `make jvm`")


def _jar(artifact: str, version: str | None = None) -> Path:
    try:
        return maven_jars.path(artifact, version=version)
    except maven_jars.JarError as e:
        raise JvmRuntimeUnavailable(str(e)) from None


def debian_jar(package: str, version: str, pattern: str, target: Path) -> Path:
    """A jar from a package of the system's archive (Debian), unpacked with ``apt-get download`` and
    ``dpkg-deb`` (nothing is installed): the pinned version, else the one the archive now serves."""
    if target.exists():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        for spec in (f"{package}={version}", package):
            got = subprocess.run(["apt-get", "download", spec], cwd=tmp, capture_output=True, text=True)
            if got.returncode == 0:
                break
        else:
            raise JvmRuntimeUnavailable(f"apt-get download {package} failed: {got.stderr.strip()}")
        deb = next(Path(tmp).glob("*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(Path(tmp) / "x")], check=True, capture_output=True)
        found = [j for j in (Path(tmp) / "x").rglob(pattern) if not j.is_symlink()]
        if not found:
            raise JvmRuntimeUnavailable(f"no {pattern} in {deb.name}")
        shutil.copyfile(found[0], target.with_suffix(".tmp"))
        target.with_suffix(".tmp").replace(target)
    return target


def postgres_jdbc_jar() -> Path:
    """PostgreSQL's JDBC driver, for Iceberg's JdbcCatalog."""
    return debian_jar("libpostgresql-jdbc-java", "42.5.5-0+deb12u1", "postgresql*.jar", ENV_DIR / "postgresql-jdbc.jar")


ICEBERG_RUNTIME = "iceberg-spark-runtime-3.5_2.12"
PAIMON_RUNTIME = "paimon-spark-3.5"


def runtime_jars(engine: str = "iceberg", iceberg_version: str | None = None) -> list[Path]:
    """The jars a Spark 3.5 session needs for the engine: its runtime jar, checked against its pin
    (for Iceberg the default referee's, or ``iceberg_version``'s: another pinned release)."""
    if engine not in ("iceberg", "paimon"):
        raise ValueError(f"unknown JVM engine {engine!r} (iceberg or paimon)")
    if engine == "paimon":
        if iceberg_version is not None:
            raise ValueError(f"iceberg_version={iceberg_version!r} is for engine='iceberg', not {engine!r}")
        return [_jar(PAIMON_RUNTIME)]
    return [_jar(ICEBERG_RUNTIME, iceberg_version)]


def newest_iceberg_version() -> str:
    """The newest Iceberg runtime pinned in ``jvm-jars.txt`` (the referee for format v3)."""
    versions = [j.version for j in maven_jars.pins().values() if j.artifact == ICEBERG_RUNTIME]
    return max(versions, key=lambda v: tuple(int(p) for p in v.split(".")))


class JvmRuntime:
    """A Spark 3.5 session with Apache Iceberg's runtime, in its own process, driven by requests.

    ``sql(text)`` returns the rows as lists of JSON values; ``run(code)`` executes Python with
    ``spark`` in scope and returns the value the snippet assigns to ``result``. ``iceberg_version``
    picks another pinned Iceberg runtime than the default referee (``newest_iceberg_version()``).
    """

    def __init__(self, warehouse: str | os.PathLike, conf: dict[str, str] | None = None,
                 extra_jars: tuple[Path, ...] = (), engine: str = "iceberg", iceberg_version: str | None = None):
        _check_env()
        jars = ",".join(str(j) for j in [*runtime_jars(engine, iceberg_version), *extra_jars])
        config = {"warehouse": str(warehouse), "jars": jars, "conf": conf or {}, "engine": engine}
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.pop("SPARK_HOME", None)
        env["PYSPARK_PYTHON"] = str(_env_python())
        env["PYSPARK_DRIVER_PYTHON"] = str(_env_python())
        self._proc = subprocess.Popen(
            [str(_env_python()), str(WORKER), json.dumps(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self._stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self._lock = threading.Lock()
        ready = self._receive()
        if not ready.get("ready"):
            raise JvmRuntimeUnavailable(f"the runtime did not start: {ready}")
        self.spark_version = ready["spark"]
        self.engine = engine
        self.version = ready["version"]
        self.warehouse = str(warehouse)

    @property
    def pid(self) -> int:
        """The worker process's id (its Spark driver's JVM is a child of it)."""
        return self._proc.pid

    def use_warehouse(self, warehouse: str | os.PathLike) -> "JvmRuntime":
        """Point the ``jvm`` catalog at another warehouse, as a runtime started over it would have it
        (the catalog is loaded again, with nothing of the last one cached): a test module's own
        warehouse on a runtime shared by several."""
        if self.engine != "iceberg":
            raise ValueError(f"use_warehouse is for the Iceberg runtime's jvm catalog, not {self.engine!r}")
        self.run("spark.conf.set('spark.sql.catalog.jvm.warehouse', warehouse)\n"
                 "spark._jsparkSession.sessionState().catalogManager().reset()\n"
                 "result = None", warehouse=str(warehouse))
        self.warehouse = str(warehouse)
        return self

    def table_location(self, name: str) -> str:
        """Where the ``jvm`` catalog (a Hadoop catalog over the warehouse) keeps table ``db.t``."""
        return os.path.join(self.warehouse, *name.split("."))

    def _drain(self) -> None:
        for line in self._proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-200]

    def _receive(self) -> dict:
        line = self._proc.stdout.readline()
        if not line:
            raise JvmRuntimeUnavailable("the runtime's process ended:\n" + "".join(self._stderr[-60:]))
        return json.loads(line)

    def _request(self, request: dict):
        with self._lock:
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            reply = self._receive()
        if "error" in reply:
            raise JvmRuntimeError(reply["error"])
        return reply["result"]

    def sql(self, text: str) -> list[list]:
        return self._request({"sql": text})

    def run(self, code: str, **params):
        return self._request({"code": code, "params": params})

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write(json.dumps({"stop": True}) + "\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()

    def __enter__(self) -> "JvmRuntime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class JvmRuntimeError(RuntimeError):
    """The runtime refused a request; the message is the Java or Python error it raised."""


if __name__ == "__main__":
    ensure_env(quiet=False)
    print(ENV_DIR)
