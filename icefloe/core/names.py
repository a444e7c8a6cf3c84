"""Table and namespace names, checked so that nothing is ever written outside the warehouse."""
from __future__ import annotations

import re

from icefloe.errors import InvalidNameError

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]{0,199}")


def is_valid_name_part(part: object) -> bool:
    return isinstance(part, str) and bool(_NAME_RE.fullmatch(part))  # fullmatch: no trailing newline


def check_name_part(part: str, what: str) -> str:
    """Reject names that could escape the warehouse or be mangled by a file system."""
    if not is_valid_name_part(part):
        raise InvalidNameError(
            f"invalid {what} name {part!r}: use letters, digits, '_' and '-' "
            "(no path separators, dots or spaces)")
    return part


def split_name(name: object, namespace_word: str = "namespace") -> tuple[str, str]:
    """``"db.table"`` -> ``("db", "table")``, both parts checked."""
    if not isinstance(name, str):
        raise InvalidNameError(f"table name must be a string, got {name!r}")
    parts = name.split(".")
    if len(parts) != 2:
        raise InvalidNameError(f"table name {name!r} must look like 'db.table'")
    return check_name_part(parts[0], namespace_word), check_name_part(parts[1], "table")
