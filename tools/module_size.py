"""Fail when a module of the package is longer than the limit (lines), so none grows into a grab bag."""
from __future__ import annotations

import pathlib
import sys

LIMIT = 800


def oversized(root: pathlib.Path, limit: int = LIMIT) -> list[tuple[str, int]]:
    out = []
    for path in sorted(root.rglob("*.py")):
        n = sum(1 for _ in path.open(encoding="utf-8"))
        if n > limit:
            out.append((str(path), n))
    return out


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "icefloe")
    bad = oversized(root)
    for path, n in bad:
        print(f"{path}: {n} lines (limit {LIMIT}); split it by concern")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
