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
    retain_ms: Optional[int] = None


@dataclass
class AlterColumns:
    """``ALTER TABLE t DROP COLUMN(S) a, b`` / ``UNSET TBLPROPERTIES``: what sqlglot leaves opaque."""

    table: Name
    action: str                       # "drop_columns" | "unset_properties"
    names: list = field(default_factory=list)
    if_exists: bool = False


@dataclass
class Call:
    procedure: Name
    args: list                        # (name or None, sqlglot expression)


Extension = Union[ShowTables, AlterPartitionField, AlterRef, AlterColumns, Call]


@dataclass
class Statement:
    text: str                         # this statement's original text (no trailing ';')
    start: int                        # offset of ``text`` in the whole input
    line: int
    column: int
    tree: Optional[exp.Expression] = None   # sqlglot AST with absolute positions
    ext: Optional[Extension] = None         # an Iceberg extension statement


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
    padded = _blank(before) + body
    try:
        with _quiet_sqlglot():
            stmt.tree = sqlglot.parse_one(padded, read=DIALECT)
    except ParseError as e:
        err = e.errors[0] if e.errors else {}
        raise SqlError(f"syntax error: {err.get('description') or e}",
                       err.get("line"), _start_col(err), stmt.text) from None


def _start_col(err: dict) -> Optional[int]:
    col = err.get("col")
    hl = err.get("highlight") or ""
    if col is None:
        return None
    return max(1, col - len(hl) + 1) if hl else col


_EXTENSION_ALTER_WORDS = {"PARTITION", "BRANCH", "TAG", "UNSET"}


def _is_extension_alter(tokens: list[Token]) -> bool:
    words = [t.text.upper() for t in tokens if t.token_type != TokenType.STRING]
    if any(w in _EXTENSION_ALTER_WORDS for w in words):
        return True
    # DROP COLUMN a, b / DROP COLUMNS (a, b): sqlglot parses only the single-column form
    if "DROP" in words:
        i = words.index("DROP")
        rest = words[i + 1:]
        return bool(rest) and (rest[0] == "COLUMNS" or "," in [t.text for t in tokens])
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
            self.fail("expected ADD|DROP|REPLACE PARTITION FIELD, CREATE|REPLACE|DROP BRANCH|TAG")
        kind = self.word().lower()
        self.i += 1
        if_not_exists = self.accept("IF", "NOT", "EXISTS")
        ref = self.ident()
        snap = None
        retain = None
        if self.accept("AS", "OF", "VERSION"):
            snap = self.number()
        while self.peek() is not None:
            if self.accept("RETAIN"):
                n = self.number()
                unit = self.word()
                self.i += 1
                per = {"DAYS": 86_400_000, "DAY": 86_400_000, "HOURS": 3_600_000, "HOUR": 3_600_000,
                       "MINUTES": 60_000, "MINUTE": 60_000}.get(unit or "")
                if per is None:
                    self.fail("expected DAYS, HOURS or MINUTES", self.toks[self.i - 1])
                retain = n * per
            elif self.accept("WITH", "SNAPSHOT", "RETENTION"):
                self.fail(f"not supported yet: snapshot retention on {kind}s")
            else:
                self.fail("unexpected text")
        return AlterRef(table, action, kind, ref, if_not_exists=if_not_exists, snapshot_id=snap,
                        retain_ms=retain)

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
