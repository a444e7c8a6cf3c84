"""The JVM referees' jars, pinned in ``jvm-jars.txt`` (coordinates and SHA-256), fetched by ``make jvm``.

``fetch()`` asks Maven (``mvn dependency:copy``, with the machine's own settings, so no registry host
is named here) for each jar missing from the cache and keeps it only if its SHA-256 is the pinned
one. ``path(artifact)`` is what tests and sessions use: it never reaches the network, and it checks
the cached file's checksum again, so a changed or truncated jar is an error naming both sums.

Pins are keyed by their full coordinates (``group:artifact:version[:classifier]``), so one artifact may
be pinned at several versions (the default Iceberg referee and the newest release beside it);
``path(artifact)`` without a version is the artifact's first pin in the file, its default.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "jvm-jars.txt"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


class JarError(RuntimeError):
    """A pinned jar is missing, could not be fetched, or is not the pinned file."""


@dataclass(frozen=True)
class Jar:
    group: str
    artifact: str
    version: str
    sha256: str
    classifier: str = ""

    @property
    def coordinates(self) -> str:
        base = f"{self.group}:{self.artifact}:{self.version}"
        return f"{base}:{self.classifier}" if self.classifier else base

    @property
    def maven_artifact(self) -> str:
        """The ``-Dartifact`` of ``mvn dependency:copy`` (``group:artifact:version[:packaging:classifier]``)."""
        base = f"{self.group}:{self.artifact}:{self.version}"
        return f"{base}:jar:{self.classifier}" if self.classifier else base

    @property
    def file_name(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"


def cache_dir() -> Path:
    return Path(os.environ.get("ICEFLOE_JAR_CACHE") or Path.home() / ".cache" / "icefloe" / "jars")


def pins(file: Path = PINS) -> dict[str, Jar]:
    """The pinned jars by coordinates (``group:artifact:version[:classifier]``), in the file's order."""
    jars: dict[str, Jar] = {}
    for number, line in enumerate(file.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        coords = parts[0].split(":") if parts else []
        if len(parts) != 2 or len(coords) not in (3, 4) or not all(coords) or len(parts[1]) != 64:
            raise JarError(f"{file.name}:{number}: expected 'group:artifact:version[:classifier] sha256', got {line!r}")
        jar = Jar(*coords[:3], parts[1].lower(), coords[3] if len(coords) == 4 else "")
        if jar.coordinates in jars:
            raise JarError(f"{file.name}:{number}: {jar.coordinates} is pinned twice")
        jars[jar.coordinates] = jar
    return jars


def pinned(artifact: str, version: str | None = None, classifier: str = "", pins_file: Path = PINS) -> Jar:
    """The pin of an artifact: at ``version``, or its first pin in the file (its default) without one."""
    found = [j for j in pins(pins_file).values() if j.artifact == artifact and j.classifier == classifier]
    if version is not None:
        found = [j for j in found if j.version == version]
    if not found:
        what = artifact + (f" {version}" if version else "") + (f" ({classifier})" if classifier else "")
        others = sorted(j.version for j in pins(pins_file).values() if j.artifact == artifact)
        hint = f" (pinned: {', '.join(others)})" if others else ""
        raise JarError(f"{what} is not pinned in {pins_file.name}{hint}")
    return found[0]


def sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checked(jar: Jar, file: Path) -> Path:
    actual = sha256(file)
    if actual != jar.sha256:
        raise JarError(f"{file} is not the pinned {jar.coordinates}: its SHA-256 is {actual}, "
                       f"{PINS.name} pins {jar.sha256} (delete the file and run `make jvm` again)")
    return file


def path(artifact: str, cache: Path | None = None, pins_file: Path = PINS, *, version: str | None = None,
         classifier: str = "") -> Path:
    """The cached, checksum-checked jar of a pinned artifact (its default version unless ``version``
    names another pinned one); never fetches."""
    jar = pinned(artifact, version, classifier, pins_file)
    file = (cache or cache_dir()) / jar.file_name
    if not file.exists():
        raise JarError(f"{jar.coordinates} is not in {file.parent}: run `make jvm` to fetch it")
    return _checked(jar, file)


def fetch(cache: Path | None = None, quiet: bool = True, mvn: str = "mvn", pins_file: Path = PINS) -> list[Path]:
    """Every pinned jar in the cache, fetching the missing ones; a wrong checksum is an error and the
    fetched file is not kept."""
    cache = cache or cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    for jar in pins(pins_file).values():
        file = cache / jar.file_name
        if not file.exists():
            if shutil.which(mvn) is None:
                raise JarError(f"fetching {jar.coordinates} needs Maven (`{mvn}` is not on PATH)")
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                cmd = [mvn, "-B", "-q" if quiet else "-ntp", f"{DEPENDENCY_PLUGIN}:copy",
                       f"-Dartifact={jar.maven_artifact}", f"-DoutputDirectory={tmp}", "-Dmdep.overWriteReleases=true"]
                done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
                got = Path(tmp) / jar.file_name
                if done.returncode != 0 or not got.exists():
                    raise JarError(f"mvn could not fetch {jar.coordinates}:\n{(done.stdout + done.stderr)[-3000:]}")
                _checked(jar, got)
                got.replace(file)
        out.append(_checked(jar, file))
    return out


if __name__ == "__main__":
    for f in fetch(quiet=False):
        print(f)
