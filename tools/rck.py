"""Iceberg's REST Compatibility Kit against ``icefloe serve``: the catalog test suites of Apache Iceberg
(``CatalogTests`` and ``ViewCatalogTests``), run by JUnit's console launcher in a JVM.

Iceberg publishes the suites themselves in iceberg-core's ``tests`` jar (``TestHelpers``, which they use,
in iceberg-api's), and the kit's helpers (``RCKUtils``, ``RESTCatalogServer``, ``RESTServerExtension``) in
iceberg-open-api's ``test-fixtures`` jar; the kit's subclasses that bind the suites to a server
(``RESTCompatibilityKitSuite``, ``RESTCompatibilityKitCatalogTests``, ``RESTCompatibilityKitViewCatalogTests``)
are in the open-api module's test sources, which no published jar carries. So ``tools/rck/src`` holds
icefloe's own two subclasses, compiled by ``make jvm`` (``build()``) against the pinned jars
(``jvm-jars.txt``) and the Hadoop client of ``.venv-jvm``'s pyspark. ``run()`` points them at a server
by its URI and returns each test's outcome from JUnit's XML report.
"""

from __future__ import annotations

import glob
import os
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from tools import maven_jars
from tools.jvm_runtime import ENV_DIR, ICEBERG_RUNTIME, newest_iceberg_version

SOURCES = Path(__file__).resolve().parent / "rck" / "src"
CLASSES = ENV_DIR / "rck-classes"
SUITES = {"catalog": "icefloe.rck.IcefloeCatalogTests", "view": "icefloe.rck.IcefloeViewCatalogTests"}
TEST_JARS = [("iceberg-core", "tests"), ("iceberg-api", "tests"), ("assertj-core", ""), ("byte-buddy", "")]
LAUNCHER = "junit-platform-console-standalone"


class RckUnavailable(RuntimeError):
    """The kit's jars or compiled classes are missing, or the JVM could not run it."""


def _pyspark_jars() -> str:
    found = glob.glob(str(ENV_DIR / "lib" / "python*" / "site-packages" / "pyspark" / "jars"))
    if not found:
        raise RckUnavailable(f"no pyspark in {ENV_DIR}: run `make jvm`")
    return os.path.join(found[0], "*")


def class_path(iceberg_version: str | None = None) -> list[str]:
    """The launcher, the suites and their helpers, the Iceberg runtime (the newest pinned one: its
    ``RESTCatalog`` is the client), and pyspark's jars (Hadoop's ``Configuration``, SLF4J)."""
    try:
        jars = [maven_jars.path(LAUNCHER)]
        jars += [maven_jars.path(a, classifier=c) for a, c in TEST_JARS]
        jars.append(maven_jars.path(ICEBERG_RUNTIME, version=iceberg_version or newest_iceberg_version()))
    except maven_jars.JarError as e:
        raise RckUnavailable(str(e)) from None
    return [*(str(j) for j in jars), _pyspark_jars()]


def build(quiet: bool = True) -> Path:
    """Compile ``tools/rck/src`` into ``.venv-jvm/rck-classes`` (again when a source is newer)."""
    sources = sorted(SOURCES.rglob("*.java"))
    stamp = CLASSES / ".built"
    if stamp.exists() and all(s.stat().st_mtime <= stamp.stat().st_mtime for s in sources):
        return CLASSES
    CLASSES.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["javac", "-nowarn", "--release", "17", "-d", str(CLASSES), "-cp", os.pathsep.join(class_path()),
                           *map(str, sources)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RckUnavailable(f"javac failed on {SOURCES}:\n{done.stdout}{done.stderr}"[-4000:])
    stamp.touch()
    if not quiet:
        print(CLASSES)
    return CLASSES


@dataclass(frozen=True)
class Outcome:
    suite: str
    test: str
    status: str          # passed, failed, error or skipped
    message: str = ""


def run(uri: str, reports: Path, suite: str = "catalog", capabilities: dict[str, bool] | None = None,
        timeout: float = 600) -> list[Outcome]:
    """Every test of a suite (``catalog`` or ``view``) against the server at ``uri``; its outcomes."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r} (one of {', '.join(SUITES)})")
    if not (CLASSES / ".built").exists():
        raise RckUnavailable(f"{CLASSES} is not built: run `make jvm`")
    props = [f"-Dicefloe.rck.uri={uri}"]
    props += [f"-Dicefloe.rck.{k}={str(v).lower()}" for k, v in (capabilities or {}).items()]
    cmd = ["java", "-Xmx1g", *props, "-cp", os.pathsep.join([str(CLASSES), *class_path()]),
           "org.junit.platform.console.ConsoleLauncher", "execute", "--disable-banner", "--details=none",
           f"--select-class={SUITES[suite]}", f"--reports-dir={reports}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    report = reports / "TEST-junit-jupiter.xml"
    if not report.exists():
        raise RckUnavailable(f"the launcher wrote no report (exit {done.returncode}):\n{(done.stdout + done.stderr)[-4000:]}")
    return outcomes(report, suite)


def outcomes(report: Path, suite: str) -> list[Outcome]:
    out = []
    for case in ET.parse(report).getroot().iter("testcase"):
        status, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            node = case.find(kind)
            if node is not None:
                status = {"failure": "failed", "error": "error", "skipped": "skipped"}[kind]
                message = (node.get("message") or node.text or "").strip()
                break
        out.append(Outcome(suite, case.get("name", ""), status, message))
    return out


if __name__ == "__main__":
    build(quiet=False)
