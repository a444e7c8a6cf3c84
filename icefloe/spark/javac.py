"""Java sources compiled into a jar with the JDK's ``javac``: icefloe's Parquet extension
(``deleted_rows``) and the test tools' JVM pieces (``tools/jvm_runtime.py``)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Optional, Sequence


class JavacError(RuntimeError):
    """``javac`` is missing, or the sources did not compile (the message holds its output)."""


def find_javac() -> Optional[str]:
    """``javac`` of ``JAVA_HOME`` when that is set and has one, else the one on the PATH."""
    home = os.environ.get("JAVA_HOME")
    return (shutil.which("javac", path=os.path.join(home, "bin")) if home else None) or shutil.which("javac")


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


__all__ = ["JavacError", "find_javac", "compile_jar"]
