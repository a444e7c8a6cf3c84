"""Fail when a module reaches into another module's private attributes across a seam.

A layer that needs something from another asks it through a public method or a small
protocol, never ``obj._private``: import-linter sees imports, not attribute access, so this
check covers what it cannot. Flagged: ``<receiver>._name`` where the receiver is not ``self``
or ``cls`` and either the receiver is one of the seam objects (a table, a SQL session, a
catalog: ``table``, ``t``, ``tbl``, ``target``, ``sess``, ``session``, ``catalog``) or the
attribute is one of the seam's private names (``_impl``, ``_stmt``, ``_spark``, ``_ops``,
``_commit``, ``_app_summary``, ``_session``), unless the module defines that name itself
(``self._name = ...``, ``def _name``, a class or module attribute ``_name``): a class may
touch the private state of another instance of itself. Flagged too: ``from icefloe.x import _name``
(or a relative ``from .x import _name``): a module's private function or constant is its own; what
another module needs of it gets a public name.
"""
from __future__ import annotations

import ast
import pathlib
import sys

SEAM_RECEIVERS = frozenset({"table", "t", "tbl", "target", "sess", "session", "catalog"})
SEAM_NAMES = frozenset({"_impl", "_stmt", "_spark", "_ops", "_commit", "_app_summary", "_session"})


def _defined_names(tree: ast.AST) -> set[str]:
    """The private names a module owns: assigned on ``self``/``cls``, defined as functions or
    methods, or assigned at module or class level."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        out.add(t.id)
                    elif (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                          and t.value.id in ("self", "cls")):
                        out.add(t.attr)
    return {n for n in out if n.startswith("_")}


def _receiver(node: ast.expr) -> str:
    """The name an attribute is read on: ``x`` of ``x._a``, ``b`` of ``a.b._c``, else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def reaches(path: pathlib.Path) -> list[tuple[int, str]]:
    """``(line, text)`` of each private reach across a seam in the module at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own = _defined_names(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "icefloe"):
            source = "." * node.level + (node.module or "")
            out.extend((node.lineno, 0, f"from {source} import {a.name}") for a in node.names
                       if a.name.startswith("_") and not a.name.startswith("__"))
            continue
        if not isinstance(node, ast.Attribute):
            continue
        attr = node.attr
        if not attr.startswith("_") or attr.startswith("__") or attr in own:
            continue
        receiver = _receiver(node.value)
        if isinstance(node.value, ast.Name) and receiver in ("self", "cls"):
            continue
        if receiver in SEAM_RECEIVERS or attr in SEAM_NAMES:
            out.append((node.lineno, node.end_col_offset or 0, f"{ast.unparse(node.value)}.{attr}"))
    return [(line, text) for line, _end, text in sorted(out)]


def main(argv: list[str]) -> int:
    root = pathlib.Path(argv[1] if len(argv) > 1 else "icefloe")
    bad = 0
    for path in sorted(root.rglob("*.py")):
        for line, text in reaches(path):
            print(f"{path}:{line}: {text} reaches into another module's private attribute; "
                  "give its owner a public method (or a protocol) instead")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
