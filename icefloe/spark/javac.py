"""Java sources compiled into a jar with the JDK's ``javac``: icefloe's JVM extension
(``deleted_rows``), at packaging time (``setup.py``) or on first use.

Only the standard library is imported here: the packaging step loads this file on its own, before
icefloe or Spark can be imported."""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    from icefloe.errors import JavacError
else:
    try:
        from icefloe.errors import JavacError
    except ImportError:      # loaded on its own by setup.py, where icefloe is not importable yet
        class JavacError(RuntimeError):
            """``javac`` is missing, or the sources did not compile (the message holds its output)."""


def find_javac() -> Optional[str]:
    """``javac`` of ``JAVA_HOME`` when that is set and has one, else the one on the PATH."""
    home = os.environ.get("JAVA_HOME")
    return (shutil.which("javac", path=os.path.join(home, "bin")) if home else None) or shutil.which("javac")


EXTENSION_SOURCES = Path(__file__).resolve().parent / "jvm"      # icefloe's Java sources (package data)


def spark_jars() -> tuple:
    """(pyspark's version, the glob of its jars) of the pyspark installed beside this interpreter,
    found without importing it; (None, None) when there is none."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None, None
    return importlib.metadata.version("pyspark"), os.path.join(list(spec.submodule_search_locations)[0], "jars", "*")


def extension_jar_name(spark_version: str, sources: Sequence[Path]) -> str:
    """The extension jar's file name: a digest of the Spark version and the sources compiled, so a
    jar is used only with the Spark and the sources it was built from."""
    digest = hashlib.sha256(spark_version.encode())
    for s in sources:
        digest.update(s.read_bytes())
    return f"icefloe-jvm-{digest.hexdigest()[:16]}.jar"


def extension_sources(root: Path = EXTENSION_SOURCES) -> list:
    return sorted(root.rglob("*.java"))


def build_extension_jar(target_dir: Path, root: Path = EXTENSION_SOURCES) -> Path:
    """Compile icefloe's JVM extension (the sources under ``root``) against the installed pyspark
    into ``target_dir``, named by :func:`extension_jar_name`; an existing jar of that name is kept."""
    version, classpath = spark_jars()
    if version is None:
        raise JavacError("pyspark is not installed here: the extension is compiled against its jars")
    sources = extension_sources(root)
    target = Path(target_dir) / extension_jar_name(version, sources)
    if not target.exists():
        compile_jar(sources, classpath, target)
    return target


def compile_jar(sources: Sequence[Path], classpath: str, target: Path, release: str = "17") -> Path:
    """Compile ``sources`` against ``classpath`` into the jar ``target``, which appears whole or not
    at all (a process of its own writes the temporary file)."""
    javac = find_javac()
    if javac is None:
        raise JavacError("javac (a JDK 17) was not found")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([javac, "--release", release, "-nowarn", "-d", out, "-cp", classpath,
                               *map(str, sources)], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise JavacError(f"compiling {len(sources)} Java sources failed:\n{done.stderr[-2000:]}")
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as jar:
            for cls in sorted(Path(out).rglob("*.class")):
                jar.write(cls, cls.relative_to(out).as_posix())
        tmp.replace(target)
    return target


__all__ = ["JavacError", "find_javac", "compile_jar", "spark_jars", "extension_jar_name", "extension_sources",
           "build_extension_jar", "EXTENSION_SOURCES"]
