"""From SQL text to statements, with icefloe's sqlglot dialect (``icefloe.sql.dialect``).

The dialect parses the Spark grammar plus the statements Iceberg's Spark extensions add
(``CALL``, ``ALTER TABLE ... ADD PARTITION FIELD``, ``CREATE BRANCH``/``TAG``...) and
``SHOW TABLES`` into typed nodes; this module splits a script into statements, parses
each where it stands in the text (so errors name a line and column), and hands the
extension statements to the SQL layer as the small records below.

Statements icefloe does not handle reach Spark unchanged.
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Iterable, Optional, Union, cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from icefloe.sql import dialect as d
from icefloe.sql.errors import SqlError

DIALECT = d.NAME


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
    parts: list[str]
    line: Optional[int]
    column: Optional[int]

    def __str__(self) -> str:
        return ".".join(self.parts)


@dataclass
class ShowTables:
    namespace: Optional[Name]


@dataclass
class ShowNamespaces:
    catalog: Optional[Name]
    pattern: Optional[str] = None


@dataclass
class ShowCreateTable:
    table: Name


@dataclass
class ShowTblProperties:
    table: Name
    key: Optional[str] = None


@dataclass
class AlterDropPartitions:
    """``ALTER TABLE t DROP [IF EXISTS] PARTITION (k = v, ...)``, and ``TRUNCATE TABLE t PARTITION (...)``;
    ``add``: ``ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (...)``."""
    table: Name
    partitions: list                  # one {key: value} per PARTITION (...)
    if_exists: bool = False
    statement: str = "ALTER TABLE ... DROP PARTITION"
    add: bool = False


@dataclass
class ShowTags:
    table: Name


@dataclass
class AlterWriteOrder:
    """``ALTER TABLE t WRITE ...``: the sort order's terms and ``write.distribution-mode``."""
    table: Name
    distribution: str                 # none | range | hash
    terms: list = field(default_factory=list)


@dataclass
class AlterIdentifierFields:
    table: Name
    action: str                       # set | drop
    names: list = field(default_factory=list)


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
    action: str                       # "create" | "replace" | "drop" | "rename" (Paimon's RENAME TAG)
    kind: str                         # "branch" | "tag"
    ref: str
    new_name: Optional[str] = None    # RENAME TAG ref TO new_name
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
    default: Optional[exp.Expression] = None    # SET DEFAULT <expression>
    drop_default: bool = False                  # DROP DEFAULT


@dataclass
class AlterColumn:
    """``ALTER TABLE t ALTER|CHANGE [COLUMN] c TYPE ... | COMMENT ... | FIRST | AFTER x | SET/DROP NOT NULL``."""
    table: Name
    changes: list = field(default_factory=list)


@dataclass
class Call:
    procedure: Name
    args: list                        # (name or None, sqlglot expression)


Extension = Union[ShowTables, ShowNamespaces, ShowCreateTable, ShowTblProperties, ShowTags, AlterPartitionField,
                  AlterRef, AlterDropPartitions,
                  AlterColumns, AlterColumn, AlterWriteOrder, AlterIdentifierFields, Call]


@dataclass
class Statement:
    text: str                         # this statement's original text (no trailing ';')
    start: int                        # offset of ``text`` in the whole input
    line: int
    column: int
    tree: Optional[exp.Expression] = None   # sqlglot AST with absolute positions
    ext: Optional[Extension] = None         # an Iceberg extension statement
    replace_only: bool = False              # ``REPLACE TABLE`` (the table must exist), parsed as CREATE


# statements Spark knows whose first word sqlglot's tokenizer reads as a plain name
_SPARK_WORDS = frozenset(("MSCK", "REFRESH", "REPAIR", "RESET", "CLEAR", "UNCACHE", "LIST", "ADD", "ANALYZE",
                          "LOAD", "EXPORT", "IMPORT", "OPTIMIZE", "VACUUM", "RESTORE", "FSCK", "CONVERT"))


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
        return d.Icefloe().tokenize(text)
    except TokenError as e:
        raise SqlError(f"cannot read the SQL text: {e}") from None


def _blank(text: str) -> str:
    """Same lines and columns as ``text``, no content (to parse a statement at its real position)."""
    return "".join("\n" if ch == "\n" else " " for ch in text)


def split(text: str) -> list[Statement]:
    """Split ``text`` at top-level semicolons and parse each statement."""
    tokens = _tokenize(text)
    out: list[Statement] = []
    group: list[Token] = []
    for tok in tokens + [None]:
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            if group:
                start, end = group[0].start, _token_end(group[-1], text)
                line, col = position_of(text, start)
                stmt = Statement(text[start:end], start, line, col)
                _parse_statement(stmt, text[:start], text[start:end], group)
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
    if tokens[0].text.upper() == "REPLACE" and len(tokens) > 1 and tokens[1].token_type == TokenType.TABLE:
        # Spark's ``REPLACE TABLE``: sqlglot knows only CREATE [OR REPLACE] TABLE. "REPLACE" and
        # "CREATE " have the same length, so every later position stays where it is.
        body = "CREATE " + body[len("REPLACE"):]
        stmt.replace_only = True
    first = tokens[0]
    if first.token_type in (TokenType.VAR, TokenType.IDENTIFIER) and first.text.upper() not in _SPARK_WORDS:
        line, col = position_of(before + body, len(before) + (first.start - tokens[0].start))
        raise SqlError(f"syntax error at or near {first.text!r}: no statement starts with it", line, col, stmt.text)
    if first.text.upper() == "RESET":       # Spark's RESET [key]: keys may hold '-' and '*'
        stmt.tree = exp.Command(this="RESET", expression=exp.Literal.string(body[len(first.text):].strip()))
        return
    padded = _blank(before) + body
    try:
        with _quiet_sqlglot():
            # sqlglot types its result as its base class Expr; every statement node is an Expression
            tree = cast(exp.Expression, sqlglot.parse_one(padded, read=DIALECT))
    except ParseError as e:
        if first.text.upper() in ("SET", "RESET"):
            # Spark's own settings statements (``RESET spark.wap.branch``, ``SET k=`` with an empty
            # value), which sqlglot's grammar lacks: Spark runs them as written
            stmt.tree = exp.Command(this=first.text.upper(), expression=exp.Literal.string(body))
            return
        err = e.errors[0] if e.errors else {}
        description = str(err.get("description") or e)
        if "sqlglot" in description or "<class" in description:   # the parser's internals: say where instead
            near = (err.get("highlight") or "").strip()
            description = f"unexpected text{f' at or near {near!r}' if near else ''}"
        raise SqlError(f"syntax error: {description}", err.get("line"), _start_col(err), stmt.text) from None
    except SqlError as e:
        e.statement = stmt.text
        raise
    stmt.ext = _extension(tree)
    if stmt.ext is None:
        stmt.tree = tree
    if stmt.replace_only and isinstance(stmt.tree, exp.Create):
        stmt.tree.set("replace", True)


def _start_col(err: dict) -> Optional[int]:
    col = err.get("col")
    hl = err.get("highlight") or ""
    if col is None:
        return None
    return max(1, col - len(hl) + 1) if hl else col


# --------------------------------------------------------------------------- dialect nodes -> records
def _name(node: exp.Expression) -> Name:
    line, col = node_position(node)
    return Name(d.name_parts(node), line, col)


def _dotted(node: exp.Expression) -> str:
    return ".".join(d.name_parts(node))


def _extension(tree: exp.Expression) -> Optional[Extension]:
    """The record of an extension statement; None for the Spark grammar."""
    if isinstance(tree, d.ShowTables):
        return ShowTables(_name(tree.this) if tree.this else None)
    if isinstance(tree, d.ShowNamespaces):
        return ShowNamespaces(_name(tree.this) if tree.this else None, tree.args.get("pattern"))
    if isinstance(tree, d.ShowCreateTable):
        return ShowCreateTable(_name(tree.this))
    if isinstance(tree, d.ShowTags):
        return ShowTags(_name(tree.this))
    if isinstance(tree, d.ShowTblProperties):
        return ShowTblProperties(_name(tree.this), tree.args.get("key"))
    if isinstance(tree, d.Call):
        args = [(a.this.name.lower(), a.expression) if isinstance(a, exp.Kwarg) else (None, a)
                for a in tree.expressions]
        return Call(_name(tree.this), args)
    if not isinstance(tree, exp.Alter) or len(tree.args.get("actions") or []) != 1:
        return None
    action = tree.args["actions"][0]
    a = action.args
    if isinstance(action, d.PartitionFieldChange):
        return AlterPartitionField(_name(tree.this), a["action"], a["term"], old=a.get("old"), alias=a.get("alias"))
    if isinstance(action, d.RefChange):
        return AlterRef(_name(tree.this), a["action"], a["kind"], action.this.name,
                        new_name=a["to"].name if a.get("to") is not None else None,
                        if_not_exists=bool(a.get("if_not_exists")), if_exists=bool(a.get("if_exists")),
                        snapshot_id=a.get("version"), retain_ms=a.get("retain"),
                        min_snapshots_to_keep=a.get("min_snapshots"), max_snapshot_age_ms=a.get("max_age"))
    if isinstance(action, d.DropPartitions):
        add = bool(a.get("add"))
        return AlterDropPartitions(_name(tree.this), [partition_spec(t.expressions) for t in action.expressions],
                                   bool(a.get("if_exists")),
                                   "ALTER TABLE ... ADD PARTITION" if add else "ALTER TABLE ... DROP PARTITION", add)
    if isinstance(action, d.UnsetProperties):
        return AlterColumns(_name(tree.this), "unset_properties", [k.name for k in action.expressions],
                            bool(a.get("if_exists")))
    if isinstance(action, d.DropColumns):
        return AlterColumns(_name(tree.this), "drop_columns", [_dotted(n) for n in action.expressions],
                            bool(a.get("if_exists")))
    if isinstance(action, d.WriteOrder):
        return AlterWriteOrder(_name(tree.this), a["distribution"], list(a.get("terms") or []))
    if isinstance(action, d.IdentifierFields):
        return AlterIdentifierFields(_name(tree.this), a["action"], [_dotted(n) for n in action.expressions])
    if isinstance(action, d.ColumnChanges):
        return AlterColumn(_name(tree.this), [_column_change(c) for c in action.expressions])
    return None


def partition_spec(eqs: Iterable[exp.Expression]) -> dict[str, Union[str, int, float]]:
    """``k = v, ...`` of a PARTITION clause -> {k: v} (values as literals)."""
    out: dict[str, Union[str, int, float]] = {}
    for eq in eqs:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.expression, exp.Literal):
            line, col = node_position(eq)
            raise SqlError(f"a partition spec is key = literal, got {eq.sql('spark')}", line, col)
        lit = eq.expression
        out[eq.this.name] = lit.this if lit.is_string else (int(lit.this) if lit.this.lstrip("-").isdigit()
                                                             else float(lit.this))
    return out


def _column_change(c: exp.Expression) -> ColumnChange:
    a = c.args
    t = a.get("type")
    return ColumnChange(
        _name(c.this), type_text=t.name if t is not None else None,
        type_at=node_position(t) if t is not None else None, comment=a.get("comment"),
        nullable=a.get("nullable"), position=a.get("position"),
        after=_name(a["after"]) if a.get("after") is not None else None,
        new_name=_name(a["new_name"]) if a.get("new_name") is not None else None,
        default=a.get("default"), drop_default=bool(a.get("drop_default")))
