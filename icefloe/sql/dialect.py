"""icefloe's SQL dialect: Spark SQL plus the statements Iceberg's Spark extensions add.

``Icefloe`` extends sqlglot's Spark dialect (``sqlglot.parse_one(text, read="icefloe")``)
with typed nodes for what Spark's grammar lacks and sqlglot would otherwise keep as opaque
commands:

- ``CALL catalog.system.proc(arg, name => value)`` -> ``Call``
- ``SHOW TABLES [IN|FROM ns]`` -> ``ShowTables``
- ``ALTER TABLE t ADD|DROP|REPLACE PARTITION FIELD ...`` -> ``exp.Alter`` with a
  ``PartitionFieldChange`` action
- ``ALTER TABLE t CREATE [OR REPLACE]|REPLACE|DROP BRANCH|TAG ...`` (``IF [NOT] EXISTS``,
  ``AS OF VERSION n``, ``RETAIN n DAYS|HOURS|MINUTES``, ``WITH SNAPSHOT RETENTION
  [n SNAPSHOTS] [n DAYS|HOURS|MINUTES]``) -> ``RefChange``
- ``ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`` -> ``UnsetProperties``
- ``ALTER TABLE t DROP COLUMN(S) a, b`` / ``(a, b)`` -> ``DropColumns``
- ``ALTER TABLE t ALTER|CHANGE [COLUMN] c TYPE ... | COMMENT ... | FIRST | AFTER x |
  SET NOT NULL | DROP NOT NULL [, d ...]`` and Hive's ``CHANGE c c2 <type>`` ->
  ``ColumnChanges`` of ``ColumnChange``
- ``FOR SYSTEM_VERSION AS OF`` / ``FOR SYSTEM_TIME AS OF`` read as ``VERSION AS OF`` /
  ``TIMESTAMP AS OF`` (Spark's standard spelling of time travel).

Every other statement parses exactly as with ``read="spark"``. The generator prints each
extension node back as SQL that parses to an equal tree. Partition terms and column types
keep the text the user wrote (``term``, ``type``), which the DDL layer reads with the
format's own rules.

Syntax errors in extension statements are sqlglot ``ParseError``\\ s whose error record
gives the description, line and the column where the offending token starts (with an empty
highlight), so callers can name the position exactly.
"""
from __future__ import annotations

from typing import Optional

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError
from sqlglot.tokens import Token, TokenType

NAME = "icefloe"


# --------------------------------------------------------------------------- nodes
class Call(exp.Expression):
    """``CALL proc(args)``: ``this`` the procedure's dotted name (exp.Table), ``expressions``
    the arguments (``exp.Kwarg`` for ``name => value``)."""
    arg_types = {"this": True, "expressions": False}


class ShowTables(exp.Expression):
    arg_types = {"this": False}   # the namespace (exp.Table), if given


class ShowNamespaces(exp.Expression):
    arg_types = {"this": False, "pattern": False}   # IN <catalog>, [LIKE] '<pattern>'


class ShowCreateTable(exp.Expression):
    arg_types = {"this": True}


class ShowTblProperties(exp.Expression):
    arg_types = {"this": True, "key": False}


class WriteOrder(exp.Expression):
    """``WRITE [LOCALLY] ORDERED BY ...`` / ``WRITE UNORDERED`` / ``WRITE DISTRIBUTED BY PARTITION
    [LOCALLY ORDERED BY ...]``: ``distribution`` none | range | hash, ``terms`` the sort terms."""
    arg_types = {"distribution": True, "terms": False}


class IdentifierFields(exp.Expression):
    arg_types = {"action": True, "expressions": True}   # set | drop, the columns


class PartitionFieldChange(exp.Expression):
    """``action``: add | drop | replace; ``term`` the transform term (or, for drop, the field
    or term) as written; ``old`` what replace replaces; ``alias`` the new field's name."""
    arg_types = {"action": True, "term": True, "old": False, "alias": False}


class RefChange(exp.Expression):
    arg_types = {"action": True, "kind": True, "this": True, "if_not_exists": False, "if_exists": False,
                 "version": False, "retain": False, "min_snapshots": False, "max_age": False, "to": False}


class DropPartitions(exp.Expression):
    """``DROP [IF EXISTS] PARTITION (k = v, ...)`` (``add``: ``ADD [IF NOT EXISTS] PARTITION ...``): each of
    ``expressions`` a Tuple of k = v."""
    arg_types = {"expressions": True, "if_exists": False, "add": False}


class ShowTags(exp.Expression):
    """Paimon's ``SHOW TAGS t``."""
    arg_types = {"this": True}


class UnsetProperties(exp.Expression):
    arg_types = {"expressions": True, "if_exists": False}


class DropColumns(exp.Expression):
    arg_types = {"expressions": True, "if_exists": False}


class ColumnChanges(exp.Expression):
    arg_types = {"expressions": True, "hive": False}


class ColumnChange(exp.Expression):
    """One column's changes: ``this`` the column (exp.Column/Dot path as exp.Table parts),
    ``new_name`` (Hive's CHANGE), ``type`` (text as written), ``comment``, ``nullable``
    (True for DROP NOT NULL, False for SET NOT NULL), ``position`` (first | after), ``after``,
    ``default`` (the expression of SET DEFAULT), ``drop_default``."""
    arg_types = {"this": True, "new_name": False, "type": False, "comment": False, "nullable": False,
                 "position": False, "after": False, "default": False, "drop_default": False}


# --------------------------------------------------------------------------- helpers
_DURATIONS = {"DAYS": 86_400_000, "DAY": 86_400_000, "HOURS": 3_600_000, "HOUR": 3_600_000,
              "MINUTES": 60_000, "MINUTE": 60_000}
_COLUMN_ACTIONS = ("TYPE", "COMMENT", "FIRST", "AFTER", "SET", "DROP")
_CHANGES = "TYPE, COMMENT, FIRST, AFTER, SET NOT NULL, DROP NOT NULL, SET DEFAULT or DROP DEFAULT"


def position(sql: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset in ``sql``."""
    offset = max(0, min(offset, len(sql)))
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1) + 1


def name_parts(node: exp.Expression) -> list[str]:
    """The parts of a dotted name node built by this dialect (``a.b.c`` -> [a, b, c])."""
    return [p.name for p in node.args["expressions"]]


def _name_node(parts: list[str], tokens: list[Token]) -> exp.Expression:
    ids = [exp.to_identifier(p, quoted=not p.replace("_", "a").isalnum() or p[:1].isdigit()).update_positions(t)
           for p, t in zip(parts, tokens)]
    return exp.Tuple(expressions=ids).update_positions(tokens[0])


def _name_sql(node: exp.Expression) -> str:
    return ".".join(i.sql(dialect="spark") for i in node.args["expressions"])


def _duration_sql(ms: int) -> str:
    for unit, per in (("DAYS", 86_400_000), ("HOURS", 3_600_000), ("MINUTES", 60_000)):
        if ms % per == 0:
            return f"{ms // per} {unit}"
    raise ValueError(f"{ms} ms is not a whole number of minutes")  # pragma: no cover - parsed values are


def _string(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


# --------------------------------------------------------------------------- the dialect
class Icefloe(Spark):
    class Tokenizer(Spark.Tokenizer):
        # CALL and SHOW are read token by token (sqlglot's Spark keeps their rest as one string)
        COMMANDS = Spark.Tokenizer.COMMANDS - {TokenType.SHOW, TokenType.COMMAND}

    class Parser(Spark.Parser):
        # FOR SYSTEM_VERSION AS OF: Spark's standard spelling of VERSION AS OF (FOR SYSTEM_TIME
        # AS OF, of TIMESTAMP AS OF, sqlglot knows)
        VERSION_PHRASES = {**Spark.Parser.VERSION_PHRASES, ("FOR", "SYSTEM_VERSION"): "VERSION"}

        # PARSE_JSON makes a variant; sqlglot reads it as its JSON-parsing node, which Spark's
        # generator prints as the bare string. Kept as the call it is.
        FUNCTIONS = {**Spark.Parser.FUNCTIONS,
                     "PARSE_JSON": lambda args: exp.Anonymous(this="PARSE_JSON", expressions=args)}

        STATEMENT_PARSERS = {
            **Spark.Parser.STATEMENT_PARSERS,
            TokenType.COMMAND: lambda self: self._parse_icefloe_command(),
            TokenType.SHOW: lambda self: self._parse_icefloe_show(),
        }

        # -- cursor helpers, in the vocabulary of the extension grammar
        def _word(self, k: int = 0) -> Optional[str]:
            t = self._tokens[self._index + k] if self._index + k < len(self._tokens) else None
            if t is None or t.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
                return None
            return t.text.upper()

        def _accept(self, *words: str) -> bool:
            if all(self._word(k) == w for k, w in enumerate(words)):
                self._advance(len(words))
                return True
            return False

        def _expect(self, *words: str) -> None:
            if not self._accept(*words):
                self._fail(f"expected {' '.join(words)}")

        def _fail(self, reason: str, tok: Optional[Token] = None):
            tok = tok if tok else self._curr
            found = "end of statement" if not tok else repr(tok.text)
            line, col = position(self.sql, len(self.sql) if not tok else tok.start)
            description = f"{reason}, found {found}"
            raise ParseError.new(f"{description}. Line {line}, Col: {col}.", description=description,
                                 line=line, col=col, highlight="")

        def _ident(self) -> Token:
            t = self._curr
            if not t or t.token_type in (TokenType.STRING, TokenType.NUMBER) or not t.text or \
                    t.token_type in (TokenType.L_PAREN, TokenType.R_PAREN, TokenType.COMMA, TokenType.DOT):
                self._fail("expected a name")
            self._advance()
            return t

        def _dotted(self) -> exp.Expression:
            toks = [self._ident()]
            while bool(self._curr) and self._curr.token_type == TokenType.DOT:
                self._advance()
                toks.append(self._ident())
            return _name_node([t.text for t in toks], toks)

        def _number(self) -> int:
            t = self._curr
            if not t or t.token_type != TokenType.NUMBER:
                self._fail("expected a number")
            self._advance()
            return int(t.text)

        def _done(self) -> None:
            if bool(self._curr):
                self._fail("unexpected text")

        def _text_until(self, *stop_words: str, what: str = "an expression", angle: bool = False) -> str:
            """The original text of tokens up to a top-level stop word, a top-level comma (when
            ``angle``: inside a type) or the end."""
            start = self._curr
            depth = 0
            last = None
            while self._curr:
                t = self._curr
                opens = (TokenType.L_PAREN, TokenType.LT) if angle else (TokenType.L_PAREN,)
                closes = (TokenType.R_PAREN, TokenType.GT) if angle else (TokenType.R_PAREN,)
                if t.token_type in opens:
                    depth += 1
                elif t.token_type in closes:
                    depth -= 1
                elif depth == 0 and (self._word() in stop_words or (angle and t.token_type == TokenType.COMMA)):
                    break
                last = t
                self._advance()
            if last is None:
                self._fail(f"expected {what}")
            return self._find_sql(start, last)

        def _duration(self) -> int:
            n = self._number()
            if n <= 0:
                self._fail("expected a positive number", self._prev)
            per = _DURATIONS.get(self._word() or "")
            if per is None:
                self._fail("expected DAYS, HOURS or MINUTES")
            self._advance()
            return n * per

        def _paren_names(self, strings: bool = False) -> list:
            if not self._curr or self._curr.token_type != TokenType.L_PAREN:
                self._fail("expected '('")
            self._advance()
            out = []
            while True:
                t = self._curr
                if not t:
                    self._fail("expected ')'")
                if strings and t.token_type == TokenType.STRING:
                    out.append(exp.Literal.string(t.text))
                    self._advance()
                else:
                    out.append(self._dotted())
                if self._match(TokenType.COMMA):
                    continue
                if self._match(TokenType.R_PAREN):
                    return out
                self._fail("expected ',' or ')'")

        # -- CALL and SHOW
        def _spark_command(self) -> exp.Expression:
            """The opaque command Spark's dialect makes of a statement (its rest as one string)."""
            head = self._prev.text.upper()
            rest = None
            if self._curr:
                first = last = self._curr
                while self._curr:
                    last = self._curr
                    self._advance()
                rest = exp.Literal.string(self._find_sql(first, last))
            return self.expression(exp.Command(this=head, expression=rest))

        def _parse_icefloe_command(self) -> exp.Expression:
            if self._prev.text.upper() != "CALL":
                return self._spark_command()
            proc = self._dotted()
            if not self._curr or self._curr.token_type != TokenType.L_PAREN:
                self._fail("expected '(' after the procedure name")
            self._advance()
            args = [] if self._match(TokenType.R_PAREN) else None
            if args is None:
                args = self._parse_csv(self._parse_lambda)
                if not self._match(TokenType.R_PAREN):
                    self._fail("expected ',' or ')' in the arguments")
            self._done()
            return self.expression(Call(this=proc, expressions=args))

        def _parse_icefloe_show(self) -> exp.Expression:
            if self._word() in ("NAMESPACES", "DATABASES", "SCHEMAS"):
                self._advance()
                ns = self._dotted() if self._accept("IN") or self._accept("FROM") else None
                self._accept("LIKE")
                pattern = None
                if bool(self._curr) and self._curr.token_type == TokenType.STRING:
                    pattern = self._curr.text
                    self._advance()
                self._done()
                return self.expression(ShowNamespaces(this=ns, pattern=pattern))
            if self._word() == "CREATE" and self._word(1) == "TABLE":
                self._advance(2)
                name = self._dotted()
                self._accept("AS", "SERDE")
                self._done()
                return self.expression(ShowCreateTable(this=name))
            if self._accept("TBLPROPERTIES"):
                name = self._dotted()
                key = None
                if bool(self._curr) and self._curr.token_type == TokenType.L_PAREN:
                    keys = self._paren_names(strings=True)
                    if len(keys) != 1:
                        self._fail("SHOW TBLPROPERTIES takes one property key", self._prev)
                    key = keys[0].name if isinstance(keys[0], exp.Literal) else ".".join(name_parts(keys[0]))
                self._done()
                return self.expression(ShowTblProperties(this=name, key=key))
            if self._accept("TAGS"):                              # Paimon's SHOW TAGS t
                name = self._dotted()
                self._done()
                return self.expression(ShowTags(this=name))
            if not self._accept("TABLES"):
                return self._spark_command()
            ns = self._dotted() if self._accept("IN") or self._accept("FROM") else None
            if bool(self._curr):
                self._fail("SHOW TABLES takes only IN <namespace>")
            return self.expression(ShowTables(this=ns))

        # -- ALTER TABLE
        def _parse_alter(self):
            start = self._index
            if self._is_extension_alter():
                self._advance()                                 # TABLE
                table = self._dotted()
                action = self._parse_extension_action()
                return self.expression(exp.Alter(this=table, kind="TABLE", actions=[action]))
            self._retreat(start)
            return super()._parse_alter()

        def _is_extension_alter(self) -> bool:
            if not self._curr or self._curr.token_type != TokenType.TABLE:
                return False
            i = self._index + 2                                 # TABLE <first name part>
            while i + 1 < len(self._tokens) and self._tokens[i].token_type == TokenType.DOT:
                i += 2
            rest = self._tokens[i:]
            if not rest or rest[0].token_type == TokenType.IDENTIFIER:
                return False
            action = rest[0].text.upper()
            words = [t.text.upper() for t in rest if t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)]
            if action in ("ALTER", "CHANGE", "UNSET", "WRITE"):
                return True
            if action in ("SET", "DROP") and len(words) > 1 and words[1] == "IDENTIFIER":
                return True
            if action in ("ADD", "DROP", "REPLACE") and len(words) > 1 and words[1] == "PARTITION":
                return True
            if action == "DROP" and words[1:4] == ["IF", "EXISTS", "PARTITION"]:
                return True
            if action == "ADD" and words[1:5] == ["IF", "NOT", "EXISTS", "PARTITION"]:
                return True
            if action in ("CREATE", "REPLACE", "DROP") and any(w in ("BRANCH", "TAG") for w in words[1:4]):
                return True
            if action in ("DELETE", "RENAME") and len(words) > 1 and words[1] == "TAG":   # Paimon's tag DDL
                return True
            # DROP COLUMN a, b / DROP COLUMNS (a, b): sqlglot's Spark parses only the single-column form
            if action == "DROP":
                return len(words) > 1 and (words[1] == "COLUMNS" or any(t.token_type == TokenType.COMMA
                                                                        for t in rest))
            return False

        def _sort_terms(self) -> list:
            """Comma-separated terms as written (``id DESC NULLS LAST``, ``bucket(4, id)``)."""
            terms = []
            while True:
                start, last, depth = self._curr, None, 0
                while self._curr and not (depth == 0 and self._curr.token_type == TokenType.COMMA):
                    if self._curr.token_type == TokenType.L_PAREN:
                        depth += 1
                    elif self._curr.token_type == TokenType.R_PAREN:
                        depth -= 1
                    last = self._curr
                    self._advance()
                if last is None:
                    self._fail("expected a sort term")
                terms.append(self._find_sql(start, last))
                if not self._match(TokenType.COMMA):
                    return terms

        def _parse_write_order(self) -> exp.Expression:
            if self._accept("UNORDERED"):
                self._done()
                return WriteOrder(distribution="none", terms=[])
            if self._accept("DISTRIBUTED", "BY", "PARTITION"):
                terms = []
                if bool(self._curr):
                    self._expect("LOCALLY", "ORDERED", "BY")
                    terms = self._sort_terms()
                return WriteOrder(distribution="hash", terms=terms)
            local = self._accept("LOCALLY")
            if not self._accept("ORDERED", "BY"):
                self._fail("expected [LOCALLY] ORDERED BY, UNORDERED or DISTRIBUTED BY PARTITION after WRITE")
            return WriteOrder(distribution="none" if local else "range", terms=self._sort_terms())

        def _parse_extension_action(self) -> exp.Expression:
            if self._word() in ("ALTER", "CHANGE"):
                return self._parse_column_changes()
            if self._accept("WRITE"):
                return self._parse_write_order()
            word = self._word()
            if word in ("SET", "DROP") and self._word(1) == "IDENTIFIER":
                action = word.lower()
                self._advance(2)
                self._expect("FIELDS")
                names = [self._dotted()]
                while self._match(TokenType.COMMA):
                    names.append(self._dotted())
                self._done()
                return IdentifierFields(action=action, expressions=names)
            if self._accept("ADD", "PARTITION", "FIELD"):
                term = self._text_until("AS")
                alias = self._ident().text if self._accept("AS") else None
                self._done()
                return PartitionFieldChange(action="add", term=term, alias=alias)
            if self._word() in ("DROP", "ADD") and (self._word(1) == "IF" or self._word(1) == "PARTITION"
                                                    and self._word(2) != "FIELD"):
                return self._drop_partitions()
            if self._accept("DROP", "PARTITION", "FIELD"):
                term = self._text_until()
                self._done()
                return PartitionFieldChange(action="drop", term=term)
            if self._accept("REPLACE", "PARTITION", "FIELD"):
                old = self._text_until("WITH")
                self._expect("WITH")
                term = self._text_until("AS")
                alias = self._ident().text if self._accept("AS") else None
                self._done()
                return PartitionFieldChange(action="replace", term=term, old=old, alias=alias)
            if self._accept("UNSET", "TBLPROPERTIES"):
                if_exists = self._accept("IF", "EXISTS")
                keys = self._paren_names(strings=True)
                self._done()
                return UnsetProperties(expressions=keys, if_exists=if_exists)
            if self._word() == "DROP" and self._word(1) in ("COLUMN", "COLUMNS"):
                self._advance(2)
                if_exists = self._accept("IF", "EXISTS")
                if bool(self._curr) and self._curr.token_type == TokenType.L_PAREN:
                    names = self._paren_names()
                else:
                    names = [self._dotted()]
                    while self._match(TokenType.COMMA):
                        names.append(self._dotted())
                self._done()
                return DropColumns(expressions=names, if_exists=if_exists)
            if self._word() == "RENAME" and self._word(1) == "TAG":      # Paimon: RENAME TAG a TO b
                self._advance(2)
                ref = self._ident().text
                self._expect("TO")
                to = self._ident().text
                self._done()
                return RefChange(action="rename", kind="tag", this=exp.to_identifier(ref), to=exp.to_identifier(to))
            kind_word = self._word(1)
            if self._word() in ("DROP", "DELETE") and kind_word in ("BRANCH", "TAG"):   # DELETE TAG: Paimon's
                kind = kind_word.lower()
                self._advance(2)
                if_exists = self._accept("IF", "EXISTS")
                ref = self._ident().text
                self._done()
                return RefChange(action="drop", kind=kind, this=exp.to_identifier(ref), if_exists=if_exists)
            return self._parse_ref_change()

        def _drop_partitions(self) -> exp.Expression:
            """``DROP [IF EXISTS] PARTITION (k = v, ...) [, PARTITION (...)]``, and Spark's
            ``ADD [IF NOT EXISTS] PARTITION (...) [LOCATION '...'] [PARTITION ...]``."""
            add = self._word() == "ADD"
            self._advance()
            if_exists = self._accept("IF", "NOT", "EXISTS") if add else self._accept("IF", "EXISTS")
            specs = []
            while True:
                self._expect("PARTITION")
                if not self._match(TokenType.L_PAREN):
                    self._fail("expected '(' after PARTITION")
                specs.append(exp.Tuple(expressions=self._parse_csv(self._parse_assignment)))
                if not self._match(TokenType.R_PAREN):
                    self._fail("expected ',' or ')' in the partition spec")
                if add and self._accept("LOCATION"):
                    self._advance()
                if not self._match(TokenType.COMMA) and not (add and self._word() == "PARTITION"):
                    break
            self._done()
            return DropPartitions(expressions=specs, if_exists=if_exists, add=add)

        def _parse_ref_change(self) -> exp.Expression:
            action = None
            if self._accept("CREATE", "OR", "REPLACE"):
                action = "create_or_replace"
            elif self._accept("CREATE"):
                action = "create"
            elif self._accept("REPLACE"):
                action = "replace"
            kind_word = self._word()
            if action is None or kind_word not in ("BRANCH", "TAG"):
                self._fail("expected ADD|DROP|REPLACE PARTITION FIELD, CREATE|REPLACE|DROP BRANCH|TAG "
                           "or ALTER COLUMN")
            kind = kind_word.lower()
            self._advance()
            if_not_exists = self._accept("IF", "NOT", "EXISTS")
            ref = self._ident().text
            version = self._number() if self._accept("AS", "OF", "VERSION") else None
            retain = min_keep = max_age = None
            while bool(self._curr):
                if self._accept("RETAIN"):
                    if retain is not None:
                        self._fail("RETAIN given twice", self._prev)
                    retain = self._duration()
                elif self._word() == "WITH" and self._word(1) == "SNAPSHOT" and self._word(2) == "RETENTION":
                    at = self._curr
                    self._advance(3)
                    if kind != "branch":
                        self._fail("WITH SNAPSHOT RETENTION applies to branches only (a tag names exactly one "
                                   "snapshot; use RETAIN n DAYS for how long the tag is kept)", at)
                    if min_keep is not None or max_age is not None:
                        self._fail("WITH SNAPSHOT RETENTION given twice", at)
                    if bool(self._curr) and self._curr.token_type == TokenType.NUMBER \
                            and self._word(1) == "SNAPSHOTS":
                        min_keep = self._number()
                        self._advance()
                    if bool(self._curr) and self._curr.token_type == TokenType.NUMBER:
                        max_age = self._duration()
                    if min_keep is None and max_age is None:
                        self._fail("expected <n> SNAPSHOTS and/or <n> DAYS|HOURS|MINUTES after WITH SNAPSHOT "
                                   "RETENTION")
                else:
                    self._fail("unexpected text")
            return RefChange(action=action, kind=kind, this=exp.to_identifier(ref), if_not_exists=if_not_exists,
                             version=version, retain=retain, min_snapshots=min_keep, max_age=max_age)

        def _parse_column_changes(self) -> exp.Expression:
            hive = self._word() == "CHANGE"
            self._advance()
            self._accept("COLUMN")
            changes = []
            while True:
                ch = ColumnChange(this=self._dotted())
                if hive and bool(self._curr) and self._word() not in _COLUMN_ACTIONS \
                        and self._curr.token_type != TokenType.COMMA:
                    ch.set("new_name", self._dotted())                   # CHANGE old new <type>
                    ch.set("type", self._type_text())
                while bool(self._curr) and self._curr.token_type != TokenType.COMMA:
                    at = self._curr
                    if self._accept("TYPE"):
                        if ch.args.get("type") is not None:
                            self._fail("the type is given twice", at)
                        ch.set("type", self._type_text())
                    elif self._accept("COMMENT"):
                        t = self._curr
                        if not t or t.token_type != TokenType.STRING:
                            self._fail("expected a string after COMMENT")
                        self._advance()
                        ch.set("comment", t.text)
                    elif self._accept("FIRST") or self._accept("AFTER"):
                        if ch.args.get("position") is not None:
                            self._fail("the column position is given twice", at)
                        ch.set("position", at.text.lower())
                        if at.text.upper() == "AFTER":
                            ch.set("after", self._dotted())
                    elif self._accept("SET", "NOT", "NULL") or self._accept("DROP", "NOT", "NULL"):
                        if ch.args.get("nullable") is not None:
                            self._fail("SET/DROP NOT NULL is given twice", at)
                        ch.set("nullable", at.text.upper() == "DROP")
                    elif self._accept("SET", "DEFAULT") or self._accept("DROP", "DEFAULT"):
                        if ch.args.get("default") is not None or ch.args.get("drop_default"):
                            self._fail("SET/DROP DEFAULT is given twice", at)
                        if at.text.upper() == "DROP":
                            ch.set("drop_default", True)
                        else:                        # a constant expression, checked when it is applied
                            value = self._parse_bitwise()
                            if value is None:
                                self._fail("expected a value after SET DEFAULT")
                            ch.set("default", value)
                    else:
                        self._fail(f"expected {_CHANGES}")
                if all(ch.args.get(k) is None for k in ("type", "comment", "nullable", "position", "default",
                                                        "drop_default")):
                    self._fail(f"expected {_CHANGES}")
                changes.append(ch)
                if not self._match(TokenType.COMMA):
                    break
            return ColumnChanges(expressions=changes, hive=hive)

        def _type_text(self) -> exp.Expression:
            """A Spark type as written (``decimal(10, 2)``, ``struct<a: int>``), kept with its position."""
            at = self._curr
            text = self._text_until(*_COLUMN_ACTIONS, what="a type", angle=True)
            return exp.Literal.string(text).update_positions(at)

    class Generator(Spark.Generator):
        TRANSFORMS = {
            **Spark.Generator.TRANSFORMS,
            Call: lambda self, e: f"CALL {_name_sql(e.this)}({self.expressions(e, flat=True)})",
            ShowTables: lambda self, e: "SHOW TABLES" + (f" IN {_name_sql(e.this)}" if e.this else ""),
            ShowNamespaces: lambda self, e: "SHOW NAMESPACES" + (f" IN {_name_sql(e.this)}" if e.this else "")
            + (f" LIKE {_string(e.args['pattern'])}" if e.args.get("pattern") else ""),
            ShowCreateTable: lambda self, e: f"SHOW CREATE TABLE {_name_sql(e.this)}",
            ShowTags: lambda self, e: f"SHOW TAGS {_name_sql(e.this)}",
            ShowTblProperties: lambda self, e: f"SHOW TBLPROPERTIES {_name_sql(e.this)}"
            + (f" ({_string(e.args['key'])})" if e.args.get("key") else ""),
            WriteOrder: lambda self, e: _write_order_sql(e),
            IdentifierFields: lambda self, e: f"{e.args['action'].upper()} IDENTIFIER FIELDS "
            + ", ".join(_name_sql(n) for n in e.expressions),
            PartitionFieldChange: lambda self, e: _partition_field_sql(e),
            RefChange: lambda self, e: _ref_sql(e),
            DropPartitions: lambda self, e: ("ADD " if e.args.get("add") else "DROP ")
            + (("IF NOT EXISTS " if e.args.get("add") else "IF EXISTS ") if e.args.get("if_exists") else "")
            + ", ".join("PARTITION (" + self.expressions(t, flat=True) + ")" for t in e.expressions),
            UnsetProperties: lambda self, e: "UNSET TBLPROPERTIES " + ("IF EXISTS " if e.args.get("if_exists")
                                                                        else "")
            + "(" + ", ".join(_string(k.name) for k in e.expressions) + ")",
            DropColumns: lambda self, e: "DROP COLUMNS " + ("IF EXISTS " if e.args.get("if_exists") else "")
            + "(" + ", ".join(_name_sql(n) for n in e.expressions) + ")",
            ColumnChanges: lambda self, e: ("CHANGE COLUMN " if e.args.get("hive") else "ALTER COLUMN ")
            + ", ".join(_column_change_sql(c) for c in e.expressions),
        }

        def alter_sql(self, expression: exp.Alter) -> str:
            actions = expression.args.get("actions") or []
            if len(actions) == 1 and isinstance(actions[0], (PartitionFieldChange, RefChange, UnsetProperties, DropPartitions,
                                                             DropColumns, ColumnChanges, WriteOrder,
                                                             IdentifierFields)):
                return f"ALTER TABLE {_name_sql(expression.this)} {self.sql(actions[0])}"
            return super().alter_sql(expression)


def _write_order_sql(e: WriteOrder) -> str:
    terms, dist = ", ".join(e.args.get("terms") or []), e.args["distribution"]
    if dist == "hash":
        return "WRITE DISTRIBUTED BY PARTITION" + (f" LOCALLY ORDERED BY {terms}" if terms else "")
    if not terms:
        return "WRITE UNORDERED"
    return f"WRITE {'LOCALLY ' if dist == 'none' else ''}ORDERED BY {terms}"


def _partition_field_sql(e: PartitionFieldChange) -> str:
    action = e.args["action"]
    alias = f" AS {e.args['alias']}" if e.args.get("alias") else ""
    if action == "replace":
        return f"REPLACE PARTITION FIELD {e.args['old']} WITH {e.args['term']}{alias}"
    return f"{action.upper()} PARTITION FIELD {e.args['term']}{alias}"


def _ref_sql(e: RefChange) -> str:
    a = e.args
    kind = a["kind"].upper()
    if a["action"] == "drop":
        return f"DROP {kind} " + ("IF EXISTS " if a.get("if_exists") else "") + e.this.sql(dialect="spark")
    if a["action"] == "rename":
        return f"RENAME {kind} {e.this.sql(dialect='spark')} TO {a['to'].sql(dialect='spark')}"
    out = [a["action"].replace("_", " ").upper(), kind]
    if a.get("if_not_exists"):
        out.append("IF NOT EXISTS")
    out.append(e.this.sql(dialect="spark"))
    if a.get("version") is not None:
        out.append(f"AS OF VERSION {a['version']}")
    if a.get("retain") is not None:
        out.append(f"RETAIN {_duration_sql(a['retain'])}")
    if a.get("min_snapshots") is not None or a.get("max_age") is not None:
        out.append("WITH SNAPSHOT RETENTION")
        if a.get("min_snapshots") is not None:
            out.append(f"{a['min_snapshots']} SNAPSHOTS")
        if a.get("max_age") is not None:
            out.append(_duration_sql(a["max_age"]))
    return " ".join(out)


def _column_change_sql(c: ColumnChange) -> str:
    a = c.args
    out = [_name_sql(c.this)]
    if a.get("new_name") is not None:
        out.append(_name_sql(a["new_name"]))
        out.append(a["type"].name)
    elif a.get("type") is not None:
        out.append(f"TYPE {a['type'].name}")
    if a.get("comment") is not None:
        out.append(f"COMMENT {_string(a['comment'])}")
    if a.get("nullable") is not None:
        out.append("DROP NOT NULL" if a["nullable"] else "SET NOT NULL")
    if a.get("default") is not None:
        out.append(f"SET DEFAULT {a['default'].sql('spark')}")
    if a.get("drop_default"):
        out.append("DROP DEFAULT")
    if a.get("position") == "first":
        out.append("FIRST")
    elif a.get("position") == "after":
        out.append(f"AFTER {_name_sql(a['after'])}")
    return " ".join(out)


assert Dialect.get(NAME) is Icefloe
