"""Errors of the SQL layer: every one names where in the text it happened and why."""
from __future__ import annotations

from typing import Optional

from icefloe.errors import IcefloeError, NotSupportedError


class SqlError(IcefloeError):
    """A statement that cannot run: unknown table or column, type mismatch, bad syntax...

    ``line`` and ``column`` are 1-based positions in the text given to ``sql()``
    (``None`` when the position is not known).
    """

    def __init__(self, reason: str, line: Optional[int] = None, column: Optional[int] = None,
                 statement: Optional[str] = None):
        self.reason = reason
        self.line = line
        self.column = column
        self.statement = statement
        where = f"line {line}, column {column}: " if line is not None else ""
        # not super(): a subclass may also derive from an error with another constructor
        Exception.__init__(self, f"{where}{reason}")


class NotSupportedYetError(SqlError, NotSupportedError):
    """A statement whose capability icefloe does not have yet (never a wrong result)."""

    def __init__(self, capability: str, line: Optional[int] = None, column: Optional[int] = None,
                 statement: Optional[str] = None):
        self.capability = capability
        self.operation, self.table, self.format = capability, "", ""
        SqlError.__init__(self, f"not supported yet: {capability}", line, column, statement)


def refusal(capability: str, e: NotSupportedError) -> str:
    """What a statement says when the table refused one of its operations: the statement, the
    table and its format, and the table's reason."""
    where = f" on {e.format} table {e.table}" if e.table else (f" on {e.format} tables" if e.format else "")
    return f"{capability}{where}" + (f": {e.reason}" if e.reason else "")
