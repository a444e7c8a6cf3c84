"""Errors of the SQL layer: every one names where in the text it happened and why."""
from __future__ import annotations

from typing import Optional

from icefloe.errors import IcefloeError


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
        super().__init__(f"{where}{reason}")


class NotSupportedYetError(SqlError):
    """A statement whose capability icefloe does not have yet (never a wrong result)."""

    def __init__(self, capability: str, line: Optional[int] = None, column: Optional[int] = None,
                 statement: Optional[str] = None):
        self.capability = capability
        super().__init__(f"not supported yet: {capability}", line, column, statement)
