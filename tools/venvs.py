"""The second virtual environments the referees live in (``.venv-jvm``, ``.venv-paimon``): each built
from its pinned requirements file with this interpreter, and rebuilt when that file changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def build(env_dir: Path, requirements: Path, unavailable: type[Exception], quiet: bool = True) -> Path:
    """Create ``env_dir`` and install ``requirements`` into it, once per change of that file;
    ``unavailable`` is the error raised when pip fails. Returns the environment's Python."""
    python = env_dir / "bin" / "python"
    stamp = env_dir / ".installed"
    if not stamp.exists() or stamp.stat().st_mtime < requirements.stat().st_mtime:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
        cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-r", str(requirements)]
        result = subprocess.run(cmd + (["--quiet"] if quiet else []), capture_output=quiet, text=True)
        if result.returncode != 0:
            raise unavailable(f"installing {requirements.name} failed:\n{result.stderr}")
        stamp.touch()
    return python
