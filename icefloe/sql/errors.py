"""Errors of the SQL layer: every one names where in the text it happened and why."""
from __future__ import annotations

from icefloe.errors import NotSupportedError, NotSupportedYetError, SqlError  # noqa: F401 - importable here too


def refusal(capability: str, e: NotSupportedError) -> str:
    """What a statement says when the table refused one of its operations: the statement, the
    table and its format, and the table's reason."""
    where = f" on {e.format} table {e.table}" if e.table else (f" on {e.format} tables" if e.format else "")
    return f"{capability}{where}" + (f": {e.reason}" if e.reason else "")
