"""From SQL text to statements: sqlglot's Spark dialect, plus the Iceberg extensions it lacks.

sqlglot parses the Spark grammar (queries, DDL, DML, MERGE). The statements
Iceberg's Spark extensions add (``CALL``, ``ALTER TABLE ... ADD PARTITION
FIELD``, ``CREATE BRANCH``/``TAG``) and ``SHOW TABLES`` arrive from sqlglot as
opaque commands, so they are parsed here from sqlglot's own tokens with a small
recursive-descent reader. ``FOR SYSTEM_VERSION AS OF`` / ``FOR SYSTEM_TIME AS
OF`` (Spark's standard spelling of time travel) become ``VERSION AS OF`` /
``TIMESTAMP AS OF`` at token level, keeping every later position unchanged.

Every statement keeps its span in the original text so errors can name a line
and column, and so statements icefloe does not handle reach Spark unchanged.
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Optional, Union

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from icefloe.sql.errors import SqlError
from icefloe.sql.errors import NotSupportedYetError

DIALECT = "spark"


# --------------------------------------------------------------------------- positions
def position_of(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def node_position(node: Optional[exp.Expression]) -> tuple[Optional[int], Optional[int]]:
    """(line, column) of the first token sqlglot recorded under ``node``."""
    if node is None:
        return None, None
    best = None
    for n in node.walk():
        meta = getattr(n, "_meta", None) or {}
        if "line" in meta and "start" in meta:
            if best is None or meta["start"] < best["start"]:
                best = meta
    if best is None:
        return None, None
    # sqlglot's "col" is the column of the token's last character
    return best["line"], best["col"] - (best["end"] - best["start"])


# --------------------------------------------------------------------------- statement kinds
@dataclass
class Name:
    """A dotted name as written, with where it starts."""
    parts: list
    line: int
    column: int

    def __str__(self) -> str:
        return ".".join(self.parts)


@dataclass
class ShowTables:
    namespace: Optional[Name]


@dataclass
class AlterPartitionField:
    table: Name
    action: str                       # "add" | "drop" | "replace"
    term: str                         # a transform term (add/replace: the new one) or a field name
    old: Optional[str] = None         # replace: the field (or term) being replaced
    alias: Optional[str] = None       # AS <name>


@dataclass
class AlterRef:
    table: Name
    action: str                       # "create" | "replace" | "drop"
    kind: str                         # "branch" | "tag"
    ref: str
    if_not_exists: bool = False
    if_exists: bool = False
    snapshot_id: Optional[int] = None
    retain_ms: Optional[int] = None              # RETAIN n DAYS: max ref age
    min_snapshots_to_keep: Optional[int] = None  # WITH SNAPSHOT RETENTION n SNAPSHOTS (branches)
    max_snapshot_age_ms: Optional[int] = None    # WITH SNAPSHOT RETENTION n DAYS (branches)


@dataclass
class AlterColumns:
    """``ALTER TABLE t DROP COLUMN(S) a, b`` / ``UNSET TBLPROPERTIES``: what sqlglot leaves opaque."""
    table: Name
    action: str                       # "drop_columns" | "unset_properties"
    names: list = field(default_factory=list)
    if_exists: bool = False


@dataclass
class ColumnChange:
    """One column of ``ALTER TABLE t ALTER|CHANGE COLUMN c <changes>``."""
    column: Name
    type_text: Optional[str] = None       # TYPE <type> (or the type of Hive's CHANGE c c <type>)
    type_at: Optional[tuple] = None       # (line, column) of the type
    comment: Optional[str] = None
    nullable: Optional[bool] = None       # DROP NOT NULL -> True, SET NOT NULL -> False
    position: Optional[str] = None        # "first" | "after"
    after: Optional[Name] = None
    new_name: Optional[Name] = None       # Hive's CHANGE COLUMN old new <type>


@dataclass
class AlterColumn:
    """``ALTER TABLE t ALTER|CHANGE [COLUMN] c TYPE ... | COMMENT ... | FIRST | AFTER x | SET/DROP NOT NULL``."""
    table: Name
    changes: list = field(default_factory=list)


@dataclass
class Call:
    procedure: Name
    args: list                        # (name or None, sqlglot expression)


Extension = Union[ShowTables, AlterPartitionField, AlterRef, AlterColumns, AlterColumn, Call]


@dataclass
class Statement:
    text: str                         # this statement's original text (no trailing ';')
    start: int                        # offset of ``text`` in the whole input
    line: int
    column: int
    tree: Optional[exp.Expression] = None   # sqlglot AST with absolute positions
    ext: Optional[Extension] = None         # an Iceberg extension statement
    replace_only: bool = False              # ``REPLACE TABLE`` (the table must exist), parsed as CREATE


# --------------------------------------------------------------------------- splitting
@contextlib.contextmanager
def _quiet_sqlglot():
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _tokenize(text: str) -> list[Token]:
    try:
        return Spark().tokenize(text)
    except TokenError as e:
        raise SqlError(f"cannot read the SQL text: {e}") from None


def _normalize(text: str, tokens: list[Token]) -> str:
    """Rewrite ``FOR SYSTEM_VERSION|SYSTEM_TIME AS OF`` keeping the text's length and lines."""
    chars = list(text)
    for i in range(len(tokens) - 3):
        a, b, c, d = tokens[i:i + 4]
        if a.token_type == TokenType.FOR and b.text.upper() in ("SYSTEM_VERSION", "SYSTEM_TIME") \
                and c.text.upper() == "AS" and d.text.upper() == "OF":
            word = "VERSION" if b.text.upper() == "SYSTEM_VERSION" else "TIMESTAMP"
            span = d.end + 1 - a.start
            repl = f"{word} AS OF"
            if any(ch == "\n" for ch in text[a.start:d.end + 1]):
                repl = repl + "".join("\n" if ch == "\n" else "" for ch in text[a.start:d.end + 1])
            chars[a.start:d.end + 1] = list(repl.ljust(span))
    return "".join(chars)


def _blank(text: str) -> str:
    """Same lines and columns as ``text``, no content (to parse a statement at its real position)."""
    return "".join("\n" if ch == "\n" else " " for ch in text)


def split(text: str) -> list[Statement]:
    """Split ``text`` at top-level semicolons and parse each statement."""
    tokens = _tokenize(text)
    normalized = _normalize(text, tokens)
    out: list[Statement] = []
    group: list[Token] = []
    for tok in tokens + [None]:
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            if group:
                start, end = group[0].start, _token_end(group[-1], text)
                line, col = position_of(text, start)
                stmt = Statement(text[start:end], start, line, col)
                _parse_statement(stmt, normalized[:start], normalized[start:end], group)
                out.append(stmt)
            group = []
        else:
            group.append(tok)
    return out


def _token_end(tok: Token, text: str) -> int:
    if tok.token_type == TokenType.STRING and tok.end < tok.start + len(tok.text):
        # sqlglot's COMMAND remainder: a STRING token running to the end of the statement
        end = text.find(";", tok.start)
        return len(text) if end < 0 else end
    if tok.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
        return tok.end + 1
    return tok.end + 1


def _parse_statement(stmt: Statement, before: str, body: str, tokens: list[Token]) -> None:
    first = tokens[0].text.upper()
    if first in ("CALL", "SHOW") or (first == "ALTER" and _is_extension_alter(tokens)):
        stmt.ext = _ExtensionParser(before, body, stmt).parse()
        return
    if first == "REPLACE" and len(tokens) > 1 and tokens[1].token_type == TokenType.TABLE:
        # Spark's ``REPLACE TABLE``: sqlglot knows only CREATE [OR REPLACE] TABLE. "REPLACE" and
        # "CREATE " have the same length, so every later position stays where it is.
        body = "CREATE " + body[len("REPLACE"):]
        stmt.replace_only = True
    padded = _blank(before) + body
    try:
        with _quiet_sqlglot():
            stmt.tree = sqlglot.parse_one(padded, read=DIALECT)
    except ParseError as e:
        err = e.errors[0] if e.errors else {}
        raise SqlError(f"syntax error: {err.get('description') or e}",
                       err.get("line"), _start_col(err), stmt.text) from None
    if stmt.replace_only and isinstance(stmt.tree, exp.Create):
        stmt.tree.set("replace", True)


def _start_col(err: dict) -> Optional[int]:
    col = err.get("col")
    hl = err.get("highlight") or ""
    if col is None:
        return None
    return max(1, col - len(hl) + 1) if hl else col


_EXTENSION_ALTER_WORDS = {"PARTITION", "BRANCH", "TAG", "UNSET"}


def _action_index(tokens: list[Token]) -> int:
    """Index of the first token after ``ALTER TABLE <dotted name>``."""
    i = 2
    if len(tokens) > i:
        i += 1
        while i + 1 < len(tokens) and tokens[i].token_type == TokenType.DOT:
            i += 2
    return i


def _is_extension_alter(tokens: list[Token]) -> bool:
    if len(tokens) < 2 or tokens[1].token_type != TokenType.TABLE:
        return False
    i = _action_index(tokens)
    action = tokens[i].text.upper() if i < len(tokens) and tokens[i].token_type != TokenType.IDENTIFIER else ""
    if action in ("ALTER", "CHANGE"):
        return True     # ALTER COLUMN ... FIRST / AFTER / SET NOT NULL: beyond sqlglot's grammar
    words = [t.text.upper() for t in tokens[i:] if t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)]
    if action in ("ADD", "DROP", "REPLACE") and len(words) > 1 and words[1] == "PARTITION":
        return True
    if action in ("CREATE", "REPLACE", "DROP") and any(w in ("BRANCH", "TAG") for w in words[1:4]):
        return True
    if action == "UNSET":
        return True
    # DROP COLUMN a, b / DROP COLUMNS (a, b): sqlglot parses only the single-column form
    if action == "DROP":
        rest = words[1:]
        return bool(rest) and (rest[0] == "COLUMNS" or "," in [t.text for t in tokens[i:]])
    return False


# --------------------------------------------------------------------------- extension parser
class _ExtensionParser:
    """A token cursor for the statements sqlglot leaves as commands."""
    def __init__(self, before: str, body: str, stmt: Statement):
        self.before = before
        self.body = body
        self.stmt = stmt
        self.base = len(before)
        self.full = before + body
        toks = _tokenize(body)
        # COMMAND tokens (CALL, SHOW) swallow the rest: tokenize it on its own
        if toks and toks[0].text.upper() in ("CALL", "SHOW"):
            head = toks[0]
            rest_at = head.end + 1
            self.command_rest_at = self.base + rest_at
            self.toks = [head] + [self._shift(t, rest_at) for t in _tokenize(body[rest_at:])]
        else:
            self.toks = toks
        self.i = 0

    @staticmethod
    def _shift(t: Token, by: int) -> Token:
        return Token(t.token_type, t.text, t.line, t.col, t.start + by, t.end + by, t.comments)

    # -- cursor
    def peek(self, k: int = 0) -> Optional[Token]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def word(self, k: int = 0) -> Optional[str]:
        t = self.peek(k)
        if t is None:
            return None
        return t.text.upper() if t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER) else None

    def accept(self, *words: str) -> bool:
        for k, w in enumerate(words):
            if self.word(k) != w:
                return False
        self.i += len(words)
        return True

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            self.fail(f"expected {' '.join(words)}")

    def where(self, tok: Optional[Token] = None) -> tuple[int, int]:
        if tok is None:
            tok = self.peek()
        if tok is None:
            return position_of(self.full, len(self.full))
        return position_of(self.full, self.base + tok.start)

    def fail(self, reason: str, tok: Optional[Token] = None):
        tok = tok if tok is not None else self.peek()
        found = "end of statement" if tok is None else repr(tok.text)
        line, col = self.where(tok)
        raise SqlError(f"syntax error: {reason}, found {found}", line, col, self.stmt.text)

    def ident(self) -> str:
        t = self.peek()
        if t is None or t.token_type in (TokenType.STRING, TokenType.NUMBER) or not t.text or \
                t.token_type in (TokenType.L_PAREN, TokenType.R_PAREN, TokenType.COMMA, TokenType.DOT):
            self.fail("expected a name")
        self.i += 1
        return t.text

    def name(self) -> Name:
        first = self.peek()
        parts = [self.ident()]
        while self.peek() is not None and self.peek().token_type == TokenType.DOT:
            self.i += 1
            parts.append(self.ident())
        line, col = self.where(first)
        return Name(parts, line, col)

    def number(self) -> int:
        t = self.peek()
        if t is None or t.token_type != TokenType.NUMBER:
            self.fail("expected a number")
        self.i += 1
        return int(t.text)

    def done(self) -> None:
        if self.peek() is not None:
            self.fail("unexpected text")

    def span_text(self, start_tok: int, end_tok: int) -> str:
        """Original text from token ``start_tok`` up to (excluding) token ``end_tok``."""
        a = self.toks[start_tok].start
        b = self.toks[end_tok - 1].end + 1
        return self.body[a:b]

    def balanced_until(self, *stop_words: str) -> tuple[int, int]:
        """Token range of an expression ending before a top-level stop word or the end."""
        start = self.i
        depth = 0
        while self.peek() is not None:
            t = self.peek()
            if t.token_type == TokenType.L_PAREN:
                depth += 1
            elif t.token_type == TokenType.R_PAREN:
                depth -= 1
            elif depth == 0 and self.word() in stop_words:
                break
            self.i += 1
        if self.i == start:
            self.fail("expected an expression")
        return start, self.i

    # -- statements
    def parse(self) -> Extension:
        head = self.word()
        if head == "CALL":
            return self.call()
        if head == "SHOW":
            return self.show()
        return self.alter()

    def show(self) -> ShowTables:
        self.expect("SHOW")
        self.expect("TABLES")
        ns = None
        if self.accept("IN") or self.accept("FROM"):
            ns = self.name()
        if self.peek() is not None:
            self.fail("SHOW TABLES takes only IN <namespace>")
        return ShowTables(ns)

    def call(self) -> Call:
        self.expect("CALL")
        proc = self.name()
        open_tok = self.peek()
        if open_tok is None or open_tok.token_type != TokenType.L_PAREN:
            self.fail("expected '(' after the procedure name")
        # The argument list is Spark SQL: let sqlglot parse it as a function call.
        args_text = self.body[open_tok.start:]
        at = self.base + open_tok.start - len("f")
        padded = _blank(self.full[:at]) + "f" + args_text
        padded = padded[:at - len("SELECT ")] + "SELECT " + padded[at:] if at >= len("SELECT ") else \
            "SELECT " + padded
        try:
            with _quiet_sqlglot():
                tree = sqlglot.parse_one(padded, read=DIALECT)
        except ParseError as e:
            err = e.errors[0] if e.errors else {}
            raise SqlError(f"syntax error in the arguments of CALL {proc}: {err.get('description') or e}",
                           err.get("line"), _start_col(err), self.stmt.text) from None
        fn = tree.expressions[0] if isinstance(tree, exp.Select) and len(tree.expressions) == 1 else None
        if not isinstance(fn, exp.Anonymous):
            line, col = self.where(open_tok)
            raise SqlError(f"CALL {proc} expects one argument list", line, col, self.stmt.text)
        args = []
        for a in fn.expressions:
            if isinstance(a, exp.Kwarg):
                args.append((a.this.name.lower(), a.expression))
            else:
                args.append((None, a))
        return Call(proc, args)

    def alter(self) -> Extension:
        self.expect("ALTER")
        self.expect("TABLE")
        table = self.name()
        if self.word() in ("ALTER", "CHANGE"):
            return self.alter_column(table)
        if self.accept("ADD", "PARTITION", "FIELD"):
            s, e = self.balanced_until("AS")
            term = self.span_text(s, e)
            alias = self.ident() if self.accept("AS") else None
            self.done()
            return AlterPartitionField(table, "add", term, alias=alias)
        if self.accept("DROP", "PARTITION", "FIELD"):
            s, e = self.balanced_until()
            self.done()
            return AlterPartitionField(table, "drop", self.span_text(s, e))
        if self.accept("REPLACE", "PARTITION", "FIELD"):
            s, e = self.balanced_until("WITH")
            old = self.span_text(s, e)
            self.expect("WITH")
            s, e = self.balanced_until("AS")
            term = self.span_text(s, e)
            alias = self.ident() if self.accept("AS") else None
            self.done()
            return AlterPartitionField(table, "replace", term, old=old, alias=alias)
        if self.accept("UNSET", "TBLPROPERTIES"):
            if_exists = self.accept("IF", "EXISTS")
            keys = self.paren_list(string=True)
            self.done()
            return AlterColumns(table, "unset_properties", keys, if_exists)
        if self.word() == "DROP" and self.word(1) in ("COLUMN", "COLUMNS"):
            self.i += 2
            if_exists = self.accept("IF", "EXISTS")
            if self.peek() is not None and self.peek().token_type == TokenType.L_PAREN:
                names = self.paren_list()
            else:
                names = [".".join(self.name().parts)]
                while self.peek() is not None and self.peek().token_type == TokenType.COMMA:
                    self.i += 1
                    names.append(".".join(self.name().parts))
            self.done()
            return AlterColumns(table, "drop_columns", names, if_exists)
        if self.word() == "DROP" and self.word(1) in ("BRANCH", "TAG"):
            kind = self.word(1).lower()
            self.i += 2
            if_exists = self.accept("IF", "EXISTS")
            ref = self.ident()
            self.done()
            return AlterRef(table, "drop", kind, ref, if_exists=if_exists)
        action = None
        if self.accept("CREATE", "OR", "REPLACE"):
            action = "create_or_replace"
        elif self.accept("CREATE"):
            action = "create"
        elif self.accept("REPLACE"):
            action = "replace"
        if action is None or self.word() not in ("BRANCH", "TAG"):
            self.fail("expected ADD|DROP|REPLACE PARTITION FIELD, CREATE|REPLACE|DROP BRANCH|TAG "
                      "or ALTER COLUMN")
        kind = self.word().lower()
        self.i += 1
        if_not_exists = self.accept("IF", "NOT", "EXISTS")
        ref = self.ident()
        snap = None
        retain = None
        if self.accept("AS", "OF", "VERSION"):
            snap = self.number()
        min_keep = max_age = None
        while self.peek() is not None:
            if self.accept("RETAIN"):
                if retain is not None:
                    self.fail("RETAIN given twice", self.toks[self.i - 1])
                retain = self.duration()
            elif self.word() == "WITH" and self.word(1) == "SNAPSHOT" and self.word(2) == "RETENTION":
                at = self.peek()
                self.i += 3
                if kind != "branch":
                    self.fail("WITH SNAPSHOT RETENTION applies to branches only (a tag names exactly one "
                              "snapshot; use RETAIN n DAYS for how long the tag is kept)", at)
                if min_keep is not None or max_age is not None:
                    self.fail("WITH SNAPSHOT RETENTION given twice", at)
                if self.peek() is not None and self.peek().token_type == TokenType.NUMBER \
                        and self.word(1) == "SNAPSHOTS":
                    min_keep = self.number()
                    self.i += 1
                if self.peek() is not None and self.peek().token_type == TokenType.NUMBER:
                    max_age = self.duration()
                if min_keep is None and max_age is None:
                    self.fail("expected <n> SNAPSHOTS and/or <n> DAYS|HOURS|MINUTES after WITH SNAPSHOT RETENTION")
            else:
                self.fail("unexpected text")
        return AlterRef(table, action, kind, ref, if_not_exists=if_not_exists, snapshot_id=snap,
                        retain_ms=retain, min_snapshots_to_keep=min_keep, max_snapshot_age_ms=max_age)

    _UNITS = {"DAYS": 86_400_000, "DAY": 86_400_000, "HOURS": 3_600_000, "HOUR": 3_600_000,
              "MINUTES": 60_000, "MINUTE": 60_000}

    def duration(self) -> int:
        """``<n> DAYS|HOURS|MINUTES`` in milliseconds."""
        n = self.number()
        if n <= 0:
            self.fail("expected a positive number", self.toks[self.i - 1])
        per = self._UNITS.get(self.word() or "")
        if per is None:
            self.fail("expected DAYS, HOURS or MINUTES")
        self.i += 1
        return n * per

    # -- ALTER COLUMN
    _COLUMN_ACTIONS = ("TYPE", "COMMENT", "FIRST", "AFTER", "SET", "DROP")

    def alter_column(self, table: Name) -> AlterColumn:
        hive = self.word() == "CHANGE"
        self.i += 1
        self.accept("COLUMN")
        changes = []
        while True:
            ch = ColumnChange(self.name())
            if hive and self.peek() is not None and self.word() not in self._COLUMN_ACTIONS \
                    and self.peek().token_type != TokenType.COMMA:
                # Hive's CHANGE [COLUMN] old new <type> [COMMENT c] [FIRST | AFTER x]
                ch.new_name = self.name()
                ch.type_at = self.where()
                ch.type_text = self.type_text()
            while self.peek() is not None and self.peek().token_type != TokenType.COMMA:
                at = self.peek()
                if self.accept("TYPE"):
                    if ch.type_text is not None:
                        self.fail("the type is given twice", at)
                    ch.type_at = self.where()
                    ch.type_text = self.type_text()
                elif self.accept("COMMENT"):
                    t = self.peek()
                    if t is None or t.token_type != TokenType.STRING:
                        self.fail("expected a string after COMMENT")
                    self.i += 1
                    ch.comment = t.text
                elif self.accept("FIRST") or self.accept("AFTER"):
                    if ch.position is not None:
                        self.fail("the column position is given twice", at)
                    ch.position = at.text.lower()
                    if ch.position == "after":
                        ch.after = self.name()
                elif self.accept("SET", "NOT", "NULL") or self.accept("DROP", "NOT", "NULL"):
                    if ch.nullable is not None:
                        self.fail("SET/DROP NOT NULL is given twice", at)
                    ch.nullable = at.text.upper() == "DROP"
                elif self.word() in ("SET", "DROP") and self.word(1) == "DEFAULT":

                    line, col = self.where(at)
                    raise NotSupportedYetError("column default values (SET/DROP DEFAULT: Iceberg format v3)",
                                               line, col, self.stmt.text)
                else:
                    self.fail("expected TYPE, COMMENT, FIRST, AFTER, SET NOT NULL or DROP NOT NULL")
            if ch.type_text is None and ch.comment is None and ch.nullable is None and ch.position is None:
                self.fail("expected TYPE, COMMENT, FIRST, AFTER, SET NOT NULL or DROP NOT NULL")
            changes.append(ch)
            if self.peek() is None:
                break
            self.i += 1   # the comma before the next column
        return AlterColumn(table, changes)

    def type_text(self) -> str:
        """The text of a Spark type (``decimal(10, 2)``, ``struct<a: int>``) up to the next clause."""
        start = self.i
        depth = 0
        while self.peek() is not None:
            t = self.peek()
            if t.token_type in (TokenType.L_PAREN, TokenType.LT):
                depth += 1
            elif t.token_type in (TokenType.R_PAREN, TokenType.GT):
                depth -= 1
            elif depth == 0 and (t.token_type == TokenType.COMMA or self.word() in self._COLUMN_ACTIONS):
                break
            self.i += 1
        if self.i == start:
            self.fail("expected a type")
        return self.span_text(start, self.i)

    def paren_list(self, string: bool = False) -> list:
        t = self.peek()
        if t is None or t.token_type != TokenType.L_PAREN:
            self.fail("expected '('")
        self.i += 1
        out = []
        while True:
            t = self.peek()
            if t is None:
                self.fail("expected ')'")
            if string and t.token_type == TokenType.STRING:
                out.append(t.text)
                self.i += 1
            else:
                out.append(".".join(self.name().parts))
            t = self.peek()
            if t is not None and t.token_type == TokenType.COMMA:
                self.i += 1
                continue
            if t is not None and t.token_type == TokenType.R_PAREN:
                self.i += 1
                return out
            self.fail("expected ',' or ')'")
