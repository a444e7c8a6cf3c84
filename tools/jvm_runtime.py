"""Apache Iceberg's own Spark runtime (Java), set up beside icefloe as an oracle and a benchmark peer.

The runtime is built for Spark 3.5, and icefloe runs on Spark 4, so it lives in a second virtual
environment (``.venv-jvm``) holding ``pyspark`` 3.5 and the runtime jars from the package index
(``requirements-jvm.txt``). That package's ``iceberg-spark-runtime`` jar lacks the Jackson classes
Iceberg relocates into ``org.apache.iceberg.shaded.com.fasterxml.jackson``; :func:`relocate_jars`
builds them from Spark 3.5's own Jackson jars by rewriting class names in each class file's constant
pool (what a shading plugin does), and the session adds the result to ``spark.jars``.

``JvmRuntime`` starts one long-lived worker process in that environment (``tools/jvm_worker.py``) and
sends it requests: SQL statements, or short Python snippets run with ``spark`` in scope. One Spark 3.5
session serves a whole test session or benchmark run.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import zipfile
from pathlib import Path

from icefloe.spark.javac import JavacError, compile_jar
from tools import venvs

ROOT = Path(__file__).resolve().parent.parent
ENV_DIR = ROOT / ".venv-jvm"
REQUIREMENTS = ROOT / "requirements-jvm.txt"
WORKER = Path(__file__).resolve().parent / "jvm_worker.py"

SHADED = "org/apache/iceberg/shaded/"
JACKSON = "com/fasterxml/jackson/"
HTTPCORE5 = "org/apache/hc/core5/"
JACKSON_JARS = ("jackson-core", "jackson-databind", "jackson-annotations", "jackson-datatype-jsr310")


class JvmRuntimeUnavailable(RuntimeError):
    """The runtime's environment could not be built or started."""


def _relocate_bytes(data: bytes, package: str = JACKSON) -> bytes:
    old, dotted = package.encode(), package.replace("/", ".").encode()
    new = (SHADED + package).encode()
    return data.replace(old, new).replace(dotted, new.replace(b"/", b"."))


def relocate_class(data: bytes, package: str = JACKSON) -> bytes:
    """The class file with every name under ``package`` in its constant pool moved under Iceberg's
    shaded package.

    Only ``CONSTANT_Utf8`` entries hold names (class entries, descriptors, signatures and string
    literals all point at them), so those are rewritten and every other entry is copied as it is.
    """
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise ValueError("not a class file")
    count = struct.unpack_from(">H", data, 8)[0]
    out = io.BytesIO()
    out.write(data[:10])
    pos, index = 10, 1
    fixed = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}
    while index < count:
        tag = data[pos]
        if tag == 1:
            length = struct.unpack_from(">H", data, pos + 1)[0]
            text = _relocate_bytes(data[pos + 3:pos + 3 + length], package)
            out.write(struct.pack(">BH", 1, len(text)))
            out.write(text)
            pos += 3 + length
        elif tag in fixed:
            out.write(data[pos:pos + 1 + fixed[tag]])
            pos += 1 + fixed[tag]
        else:
            raise ValueError(f"unknown constant pool tag {tag} at entry {index}")
        index += 2 if tag in (5, 6) else 1
    out.write(data[pos:])
    return out.getvalue()


def relocate_jars(jars: list[Path], target: Path, package: str = JACKSON) -> Path:
    """One jar with the given jars' classes and services under ``package`` moved under Iceberg's
    shaded package (what Iceberg's build does to the libraries it bundles)."""
    tmp = target.with_suffix(".tmp")
    seen: set[str] = set()
    services = "META-INF/services/" + package.replace("/", ".")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for jar in jars:
            with zipfile.ZipFile(jar) as src:
                for name in src.namelist():
                    if name.endswith("/") or name.endswith("module-info.class"):
                        continue
                    data = src.read(name)
                    if name.endswith(".class"):
                        if package not in name:
                            continue
                        new_name = name.replace(package, SHADED + package)
                        data = relocate_class(data, package)
                    elif name.startswith(services):
                        new_name = "META-INF/services/" + SHADED.replace("/", ".") + name[len("META-INF/services/"):]
                        data = _relocate_bytes(data, package)
                    else:
                        continue
                    if new_name in seen:
                        continue
                    seen.add(new_name)
                    out.writestr(new_name, data)
    tmp.replace(target)
    return target


def _env_python() -> Path:
    return ENV_DIR / "bin" / "python"


def _site_packages() -> Path:
    found = sorted((ENV_DIR / "lib").glob("python3*/site-packages"))
    if not found:
        raise JvmRuntimeUnavailable(f"no site-packages under {ENV_DIR}")
    return found[0]


def ensure_env(quiet: bool = True) -> Path:
    """Build ``.venv-jvm`` (once per change of ``requirements-jvm.txt``) and the relocated Jackson jar."""
    venvs.build(ENV_DIR, REQUIREMENTS, JvmRuntimeUnavailable, quiet)
    shaded = ENV_DIR / "iceberg-jackson-relocated.jar"
    if not shaded.exists():
        spark_jars = _site_packages() / "pyspark" / "jars"
        jars = [j for j in sorted(spark_jars.glob("jackson-*.jar"))
                if any(j.name.startswith(prefix + "-2.") for prefix in JACKSON_JARS)]
        if len(jars) != len(JACKSON_JARS):
            raise JvmRuntimeUnavailable(f"expected the Jackson jars {JACKSON_JARS} in {spark_jars}, found {jars}")
        relocate_jars(jars, shaded)
    return ENV_DIR


JAVA_SOURCES = Path(__file__).resolve().parent / "jvm"


def rest_client_jars() -> list[Path]:
    """``icefloe.jvm.JdkRestCatalog``: Iceberg's RESTCatalog over the JDK's HTTP client, compiled here,
    and the HttpCore 5 classes Iceberg's REST code names, relocated as the runtime expects them.

    The runtime jar lacks the Apache HttpComponents 5 libraries Iceberg's REST code is built on. The
    catalog's own classes need only HttpCore's (its ``Method`` enum and URI builder), which Debian
    packages; its default transport needs HttpClient 5.4+, which no archive here carries, so the
    sources in ``tools/jvm`` carry the same requests over ``java.net.http`` (javac builds them).
    """
    core = ENV_DIR / "iceberg-httpcore5-relocated.jar"
    if not core.exists():
        plain = debian_jar("libhttpcore5-java", "5.2.1-1", "httpcore5.jar", ENV_DIR / "httpcore5.jar")
        relocate_jars([plain], core, HTTPCORE5)
    sources = sorted(JAVA_SOURCES.rglob("*.java"))
    target = ENV_DIR / "icefloe-jvm-rest.jar"
    if target.exists() and target.stat().st_mtime >= max(s.stat().st_mtime for s in sources):
        return [target, core]
    try:
        compile_jar(sources, os.pathsep.join(str(j) for j in runtime_jars()), target, release="11")
    except JavacError as e:
        raise JvmRuntimeUnavailable(f"building the REST transport in tools/jvm: {e}") from None
    return [target, core]


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


def runtime_jars() -> list[Path]:
    """The jars a Spark 3.5 session needs for Iceberg: the runtime, its SQL extensions and relocated Jackson."""
    jars_dir = _site_packages() / "snowpark_connect_deps_iceberg" / "jars"
    runtime = sorted(jars_dir.glob("iceberg-spark-runtime-3.5_2.12-*.jar"))
    if not runtime:
        raise JvmRuntimeUnavailable(f"no iceberg-spark-runtime-3.5_2.12 jar in {jars_dir}")
    return [runtime[-1], ENV_DIR / "iceberg-jackson-relocated.jar"]


class JvmRuntime:
    """A Spark 3.5 session with Apache Iceberg's runtime, in its own process, driven by requests.

    ``sql(text)`` returns the rows as lists of JSON values; ``run(code)`` executes Python with
    ``spark`` in scope and returns the value the snippet assigns to ``result``.
    """

    def __init__(self, warehouse: str | os.PathLike, conf: dict[str, str] | None = None,
                 extra_jars: tuple[Path, ...] = ()):
        ensure_env()
        jars = ",".join(str(j) for j in [*runtime_jars(), *extra_jars])
        config = {"warehouse": str(warehouse), "jars": jars, "conf": conf or {}}
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
        self.iceberg_version = ready["iceberg"]
        self.warehouse = str(warehouse)

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
