"""Run the SQL examples of Apache Iceberg's and Apache Paimon's Spark documentation through icefloe's
SQL session, page by page, and count what passes, what icefloe refuses with a reason, and what fails.

    python tools/doc_sql_survey.py DOCS [DOCS ...] [--page NAME ...] [--show] [--json FILE] [-v]

DOCS is a checkout of apache/iceberg or apache/paimon: a work tree, or a bare git directory (its
``HEAD`` is read). Nothing of the documentation is copied here: the pages are read from DOCS at run time.

Each page's fenced ``sql`` blocks (Paimon's procedure table: its example cells) are split into statements.
Statements under a Flink, Java or Hive tab, after a ``-- Flink SQL`` comment, or in Flink-only syntax
(``WITH (...)`` options, ``NOT ENFORCED``, ``/*+ OPTIONS``, quoted ``SET`` keys), and ``COPY INTO``, are
counted as out of scope. The rest run in page order as ``icefloe sql`` runs them (one
:class:`icefloe.sql.SqlSession`), against a fresh warehouse per page holding an Iceberg catalog and a
Paimon catalog, after the page's setup statements (tables the page assumes exist). Catalog names,
placeholders (``...``, ``<snapshot-id>``), snapshot ids and timestamps are filled the way a user would:
from the page's table of substitutions below, ids and times taken from the tables as they are then.

Each statement is:

* ``pass``: it ran, its rows were read, and the checks that follow it hold (a created table is an
  icefloe table; ``INSERT ... VALUES`` adds its rows to main, or to the branch a ``SET
  spark.wap.branch`` names, and publishes nothing while ``spark.wap.id`` is set; an ``ALTER TABLE``
  writes a new metadata file);
* ``refused``: an icefloe error naming the statement with a reason of icefloe's own;
* ``fail``: anything else: a Python or Spark error, an error whose message is Spark's view of its
  catalog (``spark_catalog``, Spark's error classes, icefloe's internal views), or a check that does not hold;
* ``out``: out of scope (above).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Optional

STATEMENT_WORDS = ("SELECT", "WITH", "INSERT", "CREATE", "ALTER", "DROP", "CALL", "SET", "RESET", "USE",
                   "DELETE", "UPDATE", "MERGE", "SHOW", "DESCRIBE", "DESC", "REFRESH", "ANALYZE", "TRUNCATE",
                   "REPLACE", "CACHE", "UNCACHE", "EXPLAIN", "COPY", "VALUES")
# words that begin a new statement on a line of their own only when the statement before is complete
CONTINUING = {"SELECT", "WITH", "VALUES", "SET"}
OUT_OF_SCOPE_TABS = ("flink", "java", "hive", "trino", "presto", "python", "action", "bash", "doris", "starrocks")
FLINK_ONLY = [
    (re.compile(r"\bNOT\s+ENFORCED\b", re.I), "Flink's PRIMARY KEY ... NOT ENFORCED"),
    (re.compile(r"/\*\+\s*OPTIONS", re.I), "Flink's OPTIONS hint"),
    (re.compile(r"^\s*SET\s+'", re.I), "Flink's quoted SET key"),
    (re.compile(r"^\s*RESET\s+'", re.I), "Flink's quoted RESET key"),
    (re.compile(r"\)\s*WITH\s*\(\s*'", re.I), "Flink's WITH (...) table options"),
    (re.compile(r"\bFOR\s+SYSTEM_TIME\s+AS\s+OF\s+PROCTIME", re.I), "Flink's lookup join"),
    (re.compile(r"\bCREATE\s+CATALOG\b", re.I), "Flink's CREATE CATALOG"),
    (re.compile(r"^\s*ALTER\s+TABLE\s+\S+\s+(SET|RESET)\s*\(", re.I), "Flink's ALTER TABLE ... SET (...)"),
    (re.compile(r"\bCOPY\s+INTO\b", re.I), "COPY INTO"),
]
# a message naming Spark's own catalog or its internals instead of the user's tables
LEAKS = [
    (re.compile(r"spark_catalog"), "names spark_catalog"),
    (re.compile(r"\[[A-Z][A-Z_]{3,}(\.[A-Z_]+)?\]"), "a Spark error class"),
    (re.compile(r"__icefloe|icefloe_v_"), "names an internal view"),
    (re.compile(r"org\.apache\.|java\.lang\.|py4j", re.I), "a JVM class"),
    (re.compile(r"Traceback"), "a traceback"),
]


# --------------------------------------------------------------------------- reading the docs
class Docs:
    """The files of a docs checkout: a work tree, or a bare git directory read at HEAD."""

    def __init__(self, path: str):
        self.path = path
        self.bare = not os.path.isdir(os.path.join(path, "docs")) and os.path.exists(os.path.join(path, "HEAD"))

    def read(self, rel: str) -> Optional[str]:
        if self.bare:
            r = subprocess.run(["git", "--git-dir", self.path, "show", f"HEAD:{rel}"], capture_output=True, text=True)
            return r.stdout if r.returncode == 0 else None
        full = os.path.join(self.path, rel)
        if not os.path.isfile(full):
            return None
        with open(full, encoding="utf-8") as f:
            return f.read()


@dataclass
class Example:
    """One statement of a page as the page writes it, with why it is out of scope (if it is)."""
    text: str
    line: int
    out: str = ""


def _blocks(text: str):
    """(first line number, code, tab label) of every fenced sql block of a markdown/mdx page."""
    lines = text.splitlines()
    tab = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.search(r"<TabItem\b[^>]*label=\"([^\"]*)\"", line)
        if m:
            tab = m.group(1)
        if "</TabItem>" in line:
            tab = ""
        m = re.match(r"^(\s*)```+\s*(\w*)", line)
        if m:
            indent, lang = len(m.group(1)), m.group(2).lower()
            body, start = [], i + 2
            i += 1
            while i < len(lines) and not re.match(r"^\s*```", lines[i]):
                body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
                i += 1
            if lang == "sql":
                yield start, "\n".join(body), tab
        i += 1


def _table_cells(text: str):
    """(line, code, "") of the example cells (the last ``<td>`` of each row) of an HTML table of procedures."""
    for row in re.finditer(r"<tr>(.*?)</tr>", text, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
        if len(cells) < 2:
            continue
        cell = cells[-1]
        line = text.count("\n", 0, row.start() + row.group(0).find(cell)) + 1
        code = re.sub(r"<br\s*/?>", "\n", cell)
        code = re.sub(r"</?[a-zA-Z][^>]*>", "", code)
        code = code.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&").replace("&quot;", '"')
        yield line, "\n".join(x.strip() for x in code.splitlines()), ""


def _unquoted(code: str):
    """(index, character, whether it is outside quotes) of each character of ``code``; a quote character
    itself counts as inside its quotes."""
    quote = ""
    for i, c in enumerate(code):
        if quote:
            if c == quote:
                quote = ""
            yield i, c, False
        elif c in "'\"`":
            quote = c
            yield i, c, False
        else:
            yield i, c, True


def _strip_comment(line: str) -> str:
    """A line without its ``--`` comment (one outside quotes)."""
    end = next((i for i, c, free in _unquoted(line) if free and line.startswith("--", i)), len(line))
    return line[:end]


def _depth_change(code: str) -> int:
    return sum((c == "(") - (c == ")") for _, c, free in _unquoted(code) if free)


def _complete(stmt_code: str, word: str) -> bool:
    """Whether a statement's code (comments removed) may end where it does, for a line starting a
    query (``SELECT``...) after it: an INSERT without its rows or a CTAS without its query may not."""
    s = " ".join(stmt_code.split()).upper()
    if not s:
        return True
    if word == "SET":
        return not (s.startswith("UPDATE") and " SET " not in s)
    if re.search(r"\bAS$", s) or re.search(r"\b(INTO|OVERWRITE|TABLE)\s+[\w.`$-]+(\s*\([^)]*\))?$", s):
        return False
    if re.search(r"\bPARTITION\s*\([^)]*\)$", s) or s.endswith("BY NAME") or s.endswith("REPLACE WHERE TRUE"):
        return False
    if s.startswith("WITH") and not re.search(r"\)\s*(SELECT|INSERT)", s):
        return False
    if s.startswith(("INSERT", "CREATE", "REPLACE")) and "SELECT" not in s and "VALUES" not in s and \
            re.search(r"\bAS\b|\bINSERT\b", s) and not s.startswith("CREATE TABLE") | s.startswith("CREATE OR"):
        return False
    return True


def split_statements(code: str, first_line: int) -> list[tuple[int, str, bool]]:
    """(line, statement text, after a ``-- Flink SQL`` comment) of a block: ends at ';' and at a line
    starting (unindented) with a statement word once the statement before it is complete."""
    out: list[tuple[int, str, bool]] = []
    cur: list[str] = []
    cur_code: list[str] = []
    start = first_line
    depth = 0
    flink = False
    cur_flink = False

    def flush():
        nonlocal cur, cur_code
        text = "\n".join(cur).strip()
        if "".join(cur_code).strip():
            out.append((start, text, cur_flink))
        cur, cur_code = [], []

    for n, line in enumerate(code.splitlines()):
        stripped = line.strip()
        low = stripped.lower()
        if low.startswith("--"):
            if re.match(r"--\s*flink\b", low):
                flink = True
            elif re.match(r"--\s*spark\b", low):
                flink = False
            continue        # a comment line: not part of any statement
        code_part = _strip_comment(line)
        word = (code_part.lstrip().split("(")[0].split() or [""])[0].upper()
        if word == "WITH" and not re.match(r"\s*WITH\s+(RECURSIVE\s+)?`?\w+`?\s*(\([^)]*\))?\s*AS\b", code_part, re.I):
            word = ""       # WITH SNAPSHOT RETENTION ... continues a statement
        if depth == 0 and line[:1] not in (" ", "\t") and word in STATEMENT_WORDS and "".join(cur_code).strip():
            if word not in CONTINUING or _complete("\n".join(cur_code), word):
                flush()
        if not "".join(cur_code).strip():
            start = first_line + n
            cur_flink = flink
        # statements end at ';' outside quotes
        pieces = _split_semicolons(code_part)
        if len(pieces) == 1:
            cur.append(line)
            cur_code.append(code_part)
            depth += _depth_change(code_part)
            continue
        for k, piece in enumerate(pieces):
            if k == len(pieces) - 1:
                if piece.strip():
                    start = first_line + n
                    cur.append(piece)
                    cur_code.append(piece)
                    depth += _depth_change(piece)
                continue
            cur.append(piece)
            cur_code.append(piece)
            flush()
            depth = 0
    flush()
    return out


def _split_semicolons(code: str) -> list[str]:
    cuts = [i for i, c, free in _unquoted(code) if free and c == ";"]
    starts = [0] + [i + 1 for i in cuts]
    ends = cuts + [len(code)]
    return [code[a:b] for a, b in zip(starts, ends)]


def examples(text: str, procedure_table: bool = False) -> list[Example]:
    """The statements of a page, in order, each marked out of scope or not."""
    found: list[Example] = []
    blocks = list(_table_cells(text)) if procedure_table else list(_blocks(text))
    for line, code, tab in blocks:
        out_tab = next((f"{tab} tab" for w in OUT_OF_SCOPE_TABS if w in tab.lower()), "") if tab else ""
        code = re.sub(r"/\*(?!\+).*?\*/", lambda m: "\n" * m.group(0).count("\n"), code, flags=re.S)
        for sline, stmt, flink in split_statements(code, line):
            out = out_tab or ("under a Flink SQL comment" if flink else "")
            if not out:
                out = next((why for rx, why in FLINK_ONLY if rx.search(stmt)), "")
            found.append(Example(stmt, sline, out))
    return found


# --------------------------------------------------------------------------- templates and substitutions
TEMPLATE = [
    (re.compile(r"\{[^{}']*\|[^{}']*\}"), "a syntax template ({ a | b })"),
    (re.compile(r"(?<![\w'\]])\[\s*(?:[A-Za-z_]+[ .\]]|<)[^'\]]*\]"), "a syntax template ([optional part])"),
    (re.compile(r"<[A-Za-z][\w .-]*>"), "a placeholder left unfilled (<name>)"),
    (re.compile(r"\.\.\.|…|\.{5}"), "a placeholder left unfilled (...)"),
    (re.compile(r"\b(table_identifier|table_name|value_expr|part_spec|column_list|property_name|procedure_name|"
                r"arg_name_\d+)\b"),
     "a syntax template (names of grammar parts)"),
]
STATEMENT_START = re.compile(r"^\s*(" + "|".join(STATEMENT_WORDS) + r"|MSCK|LOAD|SHOW|LIST|ADD)\b", re.I)


def _no_block_comments(text: str) -> str:
    return re.sub(r"/\*(?!\+).*?\*/", " ", text, flags=re.S).strip()


def out_reason(text: str) -> str:
    """Why a (substituted) statement is not a statement one can run: a fragment, output, a template."""
    code = _no_block_comments(text)
    if not code:
        return "a comment"
    if not STATEMENT_START.match(code):
        return "a fragment or printed output, not a statement"
    return next((why for rx, why in TEMPLATE if rx.search(code)), "")


@dataclass
class Page:
    """A docs page, where to find it, and how a user fills its examples in."""
    name: str
    project: str                      # "iceberg" | "paimon": whose catalog is the session's own
    paths: tuple                      # candidate paths in the checkout (layouts change between releases)
    subs: list = field(default_factory=list)      # (regex, text or callable(Run) -> text), in order
    setup: list = field(default_factory=list)     # statements run first (not counted)
    before: list = field(default_factory=list)    # (regex, [statements]) run before the first match
    procedure_table: bool = False
    paimon_options: dict = field(default_factory=dict)    # options of the Paimon catalog the page asks for

    @property
    def catalog_name(self) -> str:
        return "prod" if self.project == "iceberg" else "paimon"


@dataclass
class Outcome:
    page: str
    line: int
    text: str
    run: str              # the statement as run (after substitutions)
    kind: str             # pass | refused | fail | out
    message: str = ""
    cause: str = ""


# --------------------------------------------------------------------------- running
class Run:
    """One page's run: the session, its warehouse, and what the user set (WAP) so far."""

    def __init__(self, page: Page, spark, root: str):
        import icefloe
        from icefloe.sql import SqlSession

        self.page = page
        self.spark = spark
        # an Iceberg catalog with views and renames (the docs' catalogs have both), and Paimon's filesystem catalog
        self.root = root
        self.ice = icefloe.Catalog(os.path.join(root, "iceberg"), type="sql",
                                   uri=f"sqlite:///{os.path.join(root, 'iceberg.db')}", spark=spark)
        self.pai = icefloe.Catalog(os.path.join(root, "paimon"), format="paimon", spark=spark, **page.paimon_options)
        if page.project == "iceberg":
            self.session = SqlSession(self.ice, spark, "prod", {"paimon": self.pai})
        else:
            self.session = SqlSession(self.pai, spark, "paimon", {"prod": self.ice})
        self.wap_branch: Optional[str] = None
        self.wap_id: Optional[str] = None
        self.page_text = ""
        self.picked: set = set()

    # ---- the tables, for substitutions and checks
    def table(self, name: str):
        """The icefloe table a name in the page's SQL means (None when it is none)."""
        parts = [p.strip("`") for p in re.findall(r"`[^`]+`|[^.`]+", name)]
        try:
            ref, _ = self.session.resolve_name(parts)
            if ref is None or ref.metadata or ref.ref:
                return None
            return self.session.load(ref)
        except Exception:
            return None

    def snapshots(self, name: str) -> list:
        t = self.table(name)
        if t is None:
            raise LookupError(f"no table {name} to take a snapshot id from")
        return sorted(t.snapshots(), key=lambda s: (s.timestamp_ms, s.snapshot_id))

    def snapshot(self, name: str, i: int = -1) -> str:
        return str(self.snapshots(name)[i].snapshot_id)

    def millis(self, name: str, i: int = -1) -> int:
        return int(self.snapshots(name)[i].timestamp_ms)

    def time(self, name: str, i: int = -1) -> str:
        """A time just after snapshot ``i`` was committed, in the session's time zone, as SQL text."""
        import zoneinfo

        zone = zoneinfo.ZoneInfo(self.spark.conf.get("spark.sql.session.timeZone"))
        at = dt.datetime.fromtimestamp((self.millis(name, i) + 1) / 1000, tz=zone)
        return at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    def seconds(self, name: str, i: int = -1) -> str:
        return str(self.millis(name, i) // 1000 + 1)

    # ---- substitutions
    def fill(self, text: str) -> str:
        for rx, repl in self.page.subs:
            if callable(repl):
                text = re.sub(rx, lambda m, f=repl: f(self, m), text)
            else:
                text = re.sub(rx, repl, text)
        return text

    # ---- executing
    def staged(self, name: str) -> str:
        """The id of a snapshot staged by a write with ``spark.wap.id`` (not on main), one not picked
        before and not one whose id the page publishes by name (``publish_changes``): a user trying each
        cherry-pick picks a staged snapshot not yet published."""
        named = set(re.findall(r"publish_changes\([^)]*'(wap_id_\d+)'", self.page_text))
        found = next(s.snapshot_id for s in self.snapshots(name)
                     if s.summary.get("wap.id") and s.summary["wap.id"] not in named and s.snapshot_id not in self.picked)
        self.picked.add(found)
        return str(found)

    def quietly(self, text) -> None:
        """A setup statement (SQL through the session, ``spark:`` SQL straight to Spark, or a function of
        the run): must work (the survey's setup is wrong otherwise)."""
        if callable(text):
            text(self)
            return
        if re.match(r"(?i)\s*RESET\b", text):
            self.wap_branch = self.wap_id = None
        if text.startswith("spark:"):
            self.spark.sql(text[len("spark:"):]).collect()
            return
        df = self.session.sql(text)
        if df is not None:
            df.collect()

    def statement(self, ex: Example) -> Outcome:
        o = Outcome(self.page.name, ex.line, ex.text, ex.text, "out", ex.out)
        if ex.out:
            return o
        for rx, stmts in list(self.page.before):
            if re.search(rx, ex.text, re.S):
                self.page.before.remove((rx, stmts))
                for s in stmts:
                    try:
                        self.quietly(s)
                    except Exception as e:  # noqa: BLE001 - the page's own statement before it failed
                        print(f"  ({self.page.name}:{ex.line}: preparing with {s!r} failed: "
                              f"{str(e).splitlines()[0] if str(e) else type(e).__name__})", file=sys.stderr)
        try:
            o.run = self.fill(ex.text)
        except LookupError as e:
            o.kind, o.message, o.cause = "fail", f"cannot fill in the example: {e}", "setup"
            return o
        why = out_reason(o.run)
        if why:
            o.message = why
            return o
        self._drop_before_create(o.run)
        check = Checks(self, o.run)
        try:
            df = self.session.sql(o.run)
            rows = df.collect() if df is not None else []
        except Exception as e:  # noqa: BLE001 - every error is classified
            o.kind, o.message, o.cause = classify(e, o.run)
            return o
        o.kind = "pass"
        wrong = check.after(rows)
        if wrong:
            o.kind, o.message, o.cause = "fail", wrong, "wrong result"
        return o

    def _drop_before_create(self, text: str) -> None:
        """A page shows CREATE TABLE x several times (one way after another); a user trying each
        drops the table first."""
        m = re.match(r"\s*CREATE\s+TABLE\s+(?!IF\s+NOT\s+EXISTS)([\w.`-]+)", text, re.I)
        if m and self.table(m.group(1)) is not None:
            self.quietly(f"DROP TABLE {m.group(1)}")
        m = re.match(r"\s*CREATE\s+VIEW\s+(?!IF\s+NOT\s+EXISTS)([\w.`-]+)", text, re.I)
        if m:
            with contextlib.suppress(Exception):
                self.quietly(f"DROP VIEW IF EXISTS {m.group(1)}")
        m = re.match(r"\s*ALTER\s+TABLE\s+([\w.`-]+)\s+CREATE\s+(BRANCH|TAG)\s+(?!IF\s+NOT\s+EXISTS)(`[^`]+`|\w+)",
                     text, re.I)
        if m:
            for drop in (f"ALTER TABLE {m.group(1)} DROP {m.group(2)} IF EXISTS {m.group(3)}",
                         f"ALTER TABLE {m.group(1)} DELETE TAG IF EXISTS {m.group(3)}"):
                with contextlib.suppress(Exception):
                    self.quietly(drop)
                    break


def classify(e: Exception, statement: str = "") -> tuple[str, str, str]:
    """(kind, message, cause) of an error a statement raised."""
    from icefloe.errors import IcefloeError, SqlError

    msg = str(e).strip()
    first = msg.splitlines()[0] if msg else type(e).__name__
    if isinstance(e, IcefloeError):
        # a name the statement itself writes (spark_catalog.db.t) is the user's, not a leak
        leak = next((why for rx, why in LEAKS if rx.search(msg) and not rx.search(statement)), "")
        if leak:
            return "fail", first, f"Spark's message ({leak})"
        if not isinstance(e, SqlError) or e.statement is None:
            return "fail", f"{type(e).__name__}: {first}", "an icefloe error not naming the statement"
        return "refused", first, "not supported" if "not supported" in msg else "error"
    return "fail", f"{type(e).__name__}: {first}", "not an icefloe error"


def _values_rows(text: str) -> Optional[int]:
    """How many rows ``INSERT INTO t VALUES (...), (...)`` inserts (None when not that form)."""
    m = re.search(r"\bVALUES\b(.*)$", text, re.I | re.S)
    if not m:
        return None
    depth, n = 0, 0
    for _, c, free in _unquoted(m.group(1)):
        if free and c == "(":
            n += depth == 0
            depth += 1
        elif free and c == ")":
            depth -= 1
    return n or None


def _fingerprint(location: str) -> frozenset:
    """The table's files other than data files: a change of its metadata changes this set."""
    path = location[len("file:"):] if location.startswith("file:") else location
    path = re.sub(r"^/+", "/", path)
    found = set()
    for root, _dirs, files in os.walk(path):
        for f in files:
            if not f.endswith((".parquet", ".orc", ".crc")) and not f.startswith("."):
                full = os.path.join(root, f)
                st = os.stat(full)
                found.add((full, st.st_size, st.st_mtime_ns))
    return frozenset(found)


class Checks:
    """What a statement that passes must have done, where the survey can tell from the files."""

    def __init__(self, run: Run, text: str):
        self.run = run
        self.text = text
        self.kind = ""
        code = " ".join(_no_block_comments(text).split())
        m = re.match(r"(?i)SET\s+`?spark\.wap\.(branch|id)`?\s*=\s*(\S+)", code)
        if m:
            self.kind = "wap"
            self.wap = (m.group(1).lower(), m.group(2).strip("'\"`"))
            return
        if re.match(r"(?i)RESET\b", code):
            self.kind = "reset"
            return
        m = re.match(r"(?i)INSERT\s+INTO\s+(?:TABLE\s+)?([\w.`$-]+)\s+VALUES\b", code)
        if m:
            self.insert_target = m.group(1)
            self.rows = _values_rows(code)
            parts = [p.strip("`") for p in re.findall(r"`[^`]+`|[^.`]+", self.insert_target)]
            self.branch = parts[-1][len("branch_"):] if parts[-1].lower().startswith("branch_") else None
            base = ".".join(parts[:-1]) if self.branch else self.insert_target
            t = run.table(base)
            if t is not None and self.rows and not t.properties.get("primary-key"):
                self.kind = "insert"
                self.base = base
                self.counts = self._counts(t)
            return
        m = re.match(r"(?i)CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.`-]+)", code)
        if m and not re.search(r"(?i)\bUSING\s+(parquet|csv|json|orc|text|avro|hive|delta)\b", code):
            self.kind = "create"
            self.target = m.group(1)
            return
        m = re.match(r"(?i)ALTER\s+TABLE\s+([\w.`-]+)\s+(.*)$", code)
        if m and not re.search(r"(?i)\bRENAME\s+TO\b|\bIF\s+(NOT\s+)?EXISTS\b|\bCREATE\s+OR\s+REPLACE\b", m.group(2)):
            t = run.table(m.group(1))
            if t is not None:
                self.kind = "alter"
                self.target = m.group(1)
                self.before = _fingerprint(t.location)

    def _counts(self, t) -> tuple:
        main = t.to_arrow().num_rows
        branch = self.branch or self.run.wap_branch
        try:
            other = t.to_arrow(ref=branch).num_rows if branch else None
        except Exception:  # noqa: BLE001 - a branch that does not exist yet
            other = None
        return main, other

    def after(self, rows) -> str:
        r = self.run
        if self.kind == "wap":
            key, value = self.wap
            setattr(r, "wap_branch" if key == "branch" else "wap_id", value)
            return ""
        if self.kind == "reset":
            r.wap_branch = r.wap_id = None
            return ""
        if self.kind == "create":
            if r.table(self.target) is None:
                return f"{self.target} was not created as an icefloe table (it went to Spark's own catalog)"
            return ""
        if self.kind == "alter":
            t = r.table(self.target)
            if t is not None and _fingerprint(t.location) == self.before:
                return "ALTER TABLE passed but wrote no new metadata: nothing changed"
            return ""
        if self.kind == "insert":
            t = r.table(self.base)
            main0, other0 = self.counts
            main1, other1 = self._counts(t)
            if self.branch is None and r.wap_branch is None and r.wap_id is None:
                if main1 != main0 + self.rows:
                    return f"INSERT of {self.rows} rows: main went from {main0} to {main1} rows"
                return ""
            if main1 != main0:
                where = "a write-audit-publish branch" if self.branch is None and r.wap_branch else "a staged (spark.wap.id) write"
                if self.branch is not None:
                    where = f"branch {self.branch}"
                return f"INSERT meant for {where} changed main ({main0} -> {main1} rows)"
            if (self.branch or r.wap_branch) and (other1 or 0) != (other0 or 0) + self.rows:
                return f"INSERT of {self.rows} rows into branch {self.branch or r.wap_branch}: " \
                       f"it went from {other0} to {other1} rows"
        return ""


# --------------------------------------------------------------------------- the pages
def _snap(table: str, i: int = -1):
    return lambda r, m: r.snapshot(table, i)


def _time(table: str, i: int = -1, quoted: bool = True):
    return lambda r, m: (f"'{r.time(table, i)}'" if quoted else r.time(table, i))


def _secs(table: str, i: int = -1):
    return lambda r, m: r.seconds(table, i)


def _millis(table: str, i: int = -1):
    return lambda r, m: str(r.millis(table, i) + 1)


def _orphan_view(r: Run) -> None:
    """A file in the table's data directory that no snapshot references, listed in a view ``files_view``."""
    data = r.table("prod.db.sample").location.replace("file:", "") + "/data"
    os.makedirs(data, exist_ok=True)
    path = os.path.join(data, "orphan-0.parquet")
    with open(path, "wb") as f:
        f.write(b"PAR1")
    os.utime(path, (0, 0))
    r.spark.createDataFrame([(f"file:{path}", dt.datetime(1970, 1, 2))], "file_path string, last_modified timestamp") \
        .createOrReplaceTempView("files_view")


def _metadata_files(r: Run, name: str) -> list:
    """The names of a table's metadata files, oldest first (its metadata log, then the current one)."""
    t = r.table(name)
    if t is None:
        raise LookupError(f"no table {name} to take metadata files from")
    files = [e["metadata-file"] for e in t.metadata.metadata_log] + [t.metadata_location]
    return [os.path.basename(f) for f in files]


def _foreign_metadata(r: Run) -> None:
    """The metadata file of a table another catalog (a warehouse of its own) wrote, for register_table."""
    import icefloe

    other = icefloe.Catalog(os.path.join(r.root, "other"), spark=r.spark)
    other.sql("CREATE NAMESPACE db")
    other.sql("CREATE TABLE db.t (id bigint, name string) USING iceberg")
    other.sql("INSERT INTO db.t VALUES (1, 'a')")
    shutil.copy(other.load_table("db.t").metadata_location.replace("file:", ""), f"{r.root}/registered.metadata.json")


def _watermarks(name: str):
    """Each snapshot of Paimon table ``name`` gets its commit time as its watermark, as a streaming
    writer whose event time is its processing time commits them (batch commits carry none)."""
    def run(r: Run) -> None:
        from icefloe.paimon.snapshot import Snapshot

        t = r.table(name)
        for snap in t.snapshots():
            path = os.path.join(t.location.replace("file:", ""), "snapshot", f"snapshot-{snap.snapshot_id}")
            with open(path, encoding="utf-8") as f:
                s = Snapshot.from_json(f.read())
            s.watermark = snap.timestamp_ms
            with open(path, "w", encoding="utf-8") as f:
                f.write(s.to_json())
    return run


def _snapshot_gap(name: str, snapshot_id: int):
    """Paimon table ``name`` without the file of snapshot ``snapshot_id``: the gap an interrupted
    expiry leaves, which ``repair_earliest_snapshot`` is for."""
    def run(r: Run) -> None:
        os.remove(os.path.join(r.table(name).location.replace("file:", ""), "snapshot", f"snapshot-{snapshot_id}"))
    return run


ICEBERG_CATALOGS = (r"\b(catalog_name|my_catalog|local)\.(?=(system|db|my_app)\b)", "prod.")
PAIMON_SYSTEM_TABLES = (r"(?<![`\w])(\w+\$\w+)", r"`\1`")
PAIMON_DEFAULT: list = []      # Paimon catalogs have a database `default`

PAGES = [
    Page("spark-ddl", "iceberg", ("docs/docs/spark-ddl.md",),
         subs=[ICEBERG_CATALOGS,
               (r"AS SELECT \.\.\.", "AS SELECT id, data, part FROM prod.db.source"),
               (r"<viewName>", "prod.db.v"), (r"<tableName>", "prod.db.source"),
               (r"<catalog>\.<namespace>", "prod.db"), (r"<catalog>", "prod"), (r"<namespace>", "db"),
               (r"DESCRIBE \[EXTENDED\]", "DESCRIBE EXTENDED"), (r"(?<![.\w])another_table\b", "prod.db.another_table"),
               (r"(?<=VERSION )1234\b", _snap("prod.db.sample", 0)), (r"(?<=VERSION )4567\b", _snap("prod.db.sample"))],
         setup=["CREATE NAMESPACE prod.db",
                "CREATE TABLE prod.db.source (id bigint, data string, part string, zip string) USING iceberg",
                "INSERT INTO prod.db.source VALUES (1, 'a', 'x', '10001'), (2, 'b', 'y', '10002')"],
         before=[(r"RENAME TO prod\.db\.new_name", [
                     "CREATE TABLE prod.db.sample (id bigint NOT NULL, data string, category string, ts timestamp, "
                     "measurement float, col int, other_col int, other_column int, "
                     "nested struct<col: int, other_col: int>, location struct<lat: double, long: double>) USING iceberg",
                     "INSERT INTO prod.db.sample VALUES (1, 'a', 'c1', timestamp'2024-01-01 10:00:00', 1.5, 1, 2, 3, "
                     "named_struct('col', 1, 'other_col', 2), named_struct('lat', 1.0, 'long', 2.0))"]),
                 (r"SET TBLPROPERTIES \(\s*'read\.split", ["ALTER TABLE prod.db.new_name RENAME TO prod.db.sample"]),
                 (r"ADD COLUMN points map", ["ALTER TABLE prod.db.sample DROP COLUMN points"]),
                 (r"ADD COLUMN new_column bigint AFTER", ["ALTER TABLE prod.db.sample DROP COLUMN new_column"]),
                 (r"DROP TABLE prod\.db\.sample PURGE", ["CREATE TABLE prod.db.sample (id bigint) USING iceberg"]),
                 (r"ADD PARTITION FIELD catalog", ["ALTER TABLE prod.db.sample RENAME COLUMN payload TO data",
                                                   "ALTER TABLE prod.db.sample ADD COLUMN catalog string",
                                                   "ALTER TABLE prod.db.sample ADD COLUMN id bigint"]),
                 (r"DROP IDENTIFIER FIELDS id, data", ["ALTER TABLE prod.db.sample SET IDENTIFIER FIELDS id, data"]),
                 (r"bucket\(16, id\) AS shard", ["ALTER TABLE prod.db.sample DROP PARTITION FIELD bucket(16, id)"]),
                 (r"DROP PARTITION FIELD bucket\(16, id\)", [
                     "ALTER TABLE prod.db.sample DROP PARTITION FIELD shard",
                     "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id)"]),
                 (r"DROP PARTITION FIELD shard", ["ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id) AS shard"]),
                 (r"REPLACE PARTITION FIELD ts_day WITH day\(ts\)$", [
                     "ALTER TABLE prod.db.sample ADD PARTITION FIELD months(ts) AS ts_day"]),
                 (r"WRITE ORDERED BY category, id$", [
                     "DROP TABLE prod.db.sample",
                     "CREATE TABLE prod.db.sample (id bigint NOT NULL, data string NOT NULL, category string, "
                     "ts timestamp) USING iceberg",
                     "CREATE TABLE prod.db.another_table (id bigint NOT NULL, data string NOT NULL, category string, "
                     "ts timestamp) USING iceberg",
                     "INSERT INTO prod.db.another_table VALUES (1, 'a', 'c', timestamp'2024-01-01 10:00:00')"]),
                 (r"CREATE BRANCH `audit-branch`$", [
                     "INSERT INTO prod.db.sample VALUES (2, 'b', 'c', timestamp'2024-01-02 10:00:00')"])]),
    Page("spark-queries", "iceberg", ("docs/docs/spark-queries.md",),
         subs=[ICEBERG_CATALOGS,
               (r"'1986-10-26 01:21:00'", _time("prod.db.table", 0)),
               (r"'2021-09-20 08:00:00'", _time("prod.db.table", 0)),
               (r"\b499162860\b", _secs("prod.db.table", 0)),
               (r"\b10963874102873\b", _snap("prod.db.table", 0)),
               (r"(?<=OF )101\b|(?<=VERSION )101\b", _snap("prod.db.orders", 0)),
               (r"'2025-01-01 10:00:00'", _time("prod.db.orders", 0))],
         setup=["CREATE NAMESPACE prod.db",
                "CREATE TABLE prod.db.table (id bigint, data string, ts timestamp) USING iceberg "
                "PARTITIONED BY (days(ts))",
                "INSERT INTO prod.db.table VALUES (1, 'a', timestamp'2024-01-01 10:00:00')",
                "INSERT INTO prod.db.table VALUES (2, 'b', timestamp'2024-01-02 10:00:00')",
                "ALTER TABLE prod.db.table CREATE BRANCH `audit-branch`",
                "ALTER TABLE prod.db.table CREATE TAG `historical-snapshot`",
                "DELETE FROM prod.db.table WHERE id = 1"]),
    Page("spark-writes", "iceberg", ("docs/docs/spark-writes.md",),
         subs=[ICEBERG_CATALOGS, (r"(?<![.\w])another_table\b", "prod.db.another_table"),
               (r"INSERT INTO prod\.db\.table SELECT \.\.\.", "INSERT INTO prod.db.table SELECT id, data FROM prod.db.src"),
               (r"SET spark\.wap\.branch = audit-branch", "SET spark.wap.branch = audit"),
               (r"USING \(SELECT \.\.\.\) s", "USING (SELECT id, data, 'increment' AS op FROM prod.db.src) s"),
               (r"WHEN \.\.\.", "WHEN MATCHED THEN UPDATE SET t.data = s.data"),
               # the page's clauses of MERGE, each put into the page's MERGE as a user would
               (r"\A(WHEN MATCHED AND s\.op = 'delete')",
                r"MERGE INTO prod.db.target t USING (SELECT id, data, 'increment' AS op FROM prod.db.src) s "
                r"ON t.id = s.id \1"),
               (r"\A(WHEN NOT MATCHED THEN INSERT \*)",
                r"MERGE INTO prod.db.target t USING (SELECT id, data, 1 AS count, 'new' AS status FROM prod.db.src) s "
                r"ON t.id = s.id \1"),
               (r"\A(WHEN NOT MATCHED AND s\.event_time > )still_valid_threshold",
                r"MERGE INTO prod.db.target t USING (SELECT id + 10 AS id, data, 10 AS event_time FROM prod.db.src) s "
                r"ON t.id = s.id \g<1>5"),
               (r"\A(WHEN NOT MATCHED BY SOURCE)",
                r"MERGE INTO prod.db.target t USING (SELECT id, data FROM prod.db.src) s ON t.id = s.id \1")],
         setup=["CREATE NAMESPACE prod.db", "CREATE NAMESPACE prod.my_app",
                "CREATE TABLE prod.db.table (id bigint, data string, c1 string, c2 string, ts timestamp, val string) "
                "USING iceberg",
                "CREATE TABLE prod.db.src (id bigint, data string) USING iceberg",
                "INSERT INTO prod.db.src VALUES (1, 'x'), (5, 'y')",
                "CREATE TABLE prod.db.target (id bigint, data string, count int, status string) USING iceberg",
                "INSERT INTO prod.db.target VALUES (1, 'a', 1, 'ok'), (2, 'b', null, 'ok')",
                "CREATE TABLE prod.db.all_events (id bigint, session_time bigint, ignored boolean) USING iceberg",
                "INSERT INTO prod.db.all_events VALUES (1, 5, false), (2, 50, false)",
                "CREATE TABLE prod.db.good_events (id bigint, session_time bigint) USING iceberg",
                "INSERT INTO prod.db.good_events VALUES (3, 10)",
                "CREATE TABLE prod.db.orders (oid bigint, order_status string) USING iceberg",
                "INSERT INTO prod.db.orders VALUES (1, 'open'), (2, 'open')",
                "CREATE TABLE prod.db.returned_orders (oid bigint) USING iceberg",
                "INSERT INTO prod.db.returned_orders VALUES (2)",
                "CREATE TABLE prod.db.sample (id bigint, data string, category string, ts timestamp) USING iceberg"],
         before=[(r"INSERT INTO prod\.db\.table VALUES \(1, 'a'\)", [
                     "DROP TABLE prod.db.table",
                     "CREATE TABLE prod.db.table (id bigint, data string) USING iceberg"]),
                 (r"DELETE FROM prod\.db\.table\s+WHERE ts", [
                     "DROP TABLE prod.db.table",
                     "CREATE TABLE prod.db.table (id bigint, c1 string, c2 string, ts timestamp) USING iceberg",
                     "INSERT INTO prod.db.table VALUES (1, 'a', 'b', timestamp'2020-05-02 00:00:00'), "
                     "(2, 'a', 'b', timestamp'2020-07-02 00:00:00')"]),
                 (r"UPDATE prod\.db\.table\.branch_audit", ["ALTER TABLE prod.db.table ADD COLUMN val string"]),
                 (r"DELETE FROM prod\.db\.table\.branch_audit", ["ALTER TABLE prod.db.table DROP COLUMN val"]),
                 (r"SET TBLPROPERTIES \(\s*'write.spark.accept-any-schema", ["RESET spark.wap.branch"]),
                 (r"INSERT INTO prod\.db\.table\.branch_audit", [
                     "DROP TABLE prod.db.table",
                     "CREATE TABLE prod.db.table (id bigint, data string) USING iceberg",
                     "INSERT INTO prod.db.table VALUES (1, 'a')",
                     "ALTER TABLE prod.db.table SET TBLPROPERTIES ('write.wap.enabled'='true')",
                     "ALTER TABLE prod.db.table CREATE BRANCH audit"]),
                 (r"INSERT INTO prod\.my_app\.logs|INSERT OVERWRITE prod\.my_app\.logs", [
                     "INSERT INTO prod.my_app.logs VALUES ('u1', 'INFO', timestamp'2020-07-01 10:00:00', 'm'), "
                     "('u2', 'WARN', timestamp'2020-07-01 11:00:00', 'n')"]),
                 (r"INSERT INTO prod\.db\.sample\s+SELECT", [
                     "CREATE TABLE prod.db.another_table (id bigint, data string, category string, ts timestamp) "
                     "USING iceberg",
                     "INSERT INTO prod.db.another_table VALUES (1, 'a', 'c', timestamp'2024-01-01 10:00:00')"])]),
    Page("spark-procedures", "iceberg", ("docs/docs/spark-procedures.md",),
         subs=[ICEBERG_CATALOGS, (r"\b(hive_prod|spark_catalog)\.system\.", "prod.system."),
               (r"spark_catalog\.db\.tbl\.changes", "prod.db.tbl.changes"),
               (r"\bsystem\.(snapshot|migrate)\('db\.sample'", r"system.\1('spark_catalog.db.sample'"),
               (r"(?<=rollback_to_snapshot\('db\.sample', )1\b|(?<=set_current_snapshot\('db\.sample', )1\b",
                _snap("prod.db.sample", 0)),
               (r"TIMESTAMP '2021-06-30 00:00:00\.000'", lambda r, m: f"TIMESTAMP '{r.time('prod.db.sample', 0)}'"),
               (r"(?<=ARRAY\()123\b", _snap("prod.db.sample", 0)),
               (r"(?<='my_table', )1\b|(?<=snapshot_id => )1(?=, table => 'my_table')",
                lambda r, m: r.staged("prod.db.my_table")),
               (r"'tablelocation/data'", lambda r, m: f"'{r.table('prod.db.sample').location}/data'"),
               (r"'`parquet`\.`path/to/table`'", lambda r, m: f"'`parquet`.`{r.root}/parquet_dir`'"),
               (r"'path/to/metadata/file\.json'", lambda r, m: f"'{r.root}/registered.metadata.json'"),
               (r"'/tmp/temptable/'", lambda r, m: f"'{r.root}/temptable/'"),
               # rewrite_table_path: the table's own location, copies under the run's directory, its metadata files
               (r"'hdfs://nn:8020/path/to/source_table'|'s3a://bucketOne/prefix/db\.db/my_table'",
                lambda r, m: f"'{r.table('prod.db.my_table').location}'"),
               (r"'s3a://bucket(Two)?/prefix/db\.db/my_table'", lambda r, m: f"'{r.root}/copy{m.group(1) or ''}'"),
               (r"'s3a://bucketStaging/my_table'", lambda r, m: f"'{r.root}/staging'"),
               (r"'v2\.metadata\.json'", lambda r, m: f"'{_metadata_files(r, 'prod.db.my_table')[1]}'"),
               (r"'v20\.metadata\.json'", lambda r, m: f"'{_metadata_files(r, 'prod.db.my_table')[-1]}'"),
               (r"register_table\(\s*table => 'db\.tbl'", "register_table(table => 'db.registered'"),
               (r"'start-snapshot-id','1','end-snapshot-id', '2'",
                lambda r, m: f"'start-snapshot-id','{r.snapshot('prod.db.tbl', 0)}','end-snapshot-id', "
                             f"'{r.snapshot('prod.db.tbl', 1)}'"),
               (r"'start-timestamp','1678335750489','end-timestamp', '1678992105265'",
                lambda r, m: f"'start-timestamp','{r.millis('prod.db.tbl', 0) - 1}','end-timestamp', "
                             f"'{r.millis('prod.db.tbl', -1)}'"),
               (r"'87647489814522183702'", lambda r, m: f"'{r.snapshot('prod.db.tbl')}'"),
               (r"(?<=ancestors_of\('db\.tbl', )1\b|(?<=snapshot_id => )1(?=, table => 'db\.tbl')",
                _snap("prod.db.tbl")),
               (r"'snap1'", _snap("prod.db.my_table", 0))],
         setup=["CREATE NAMESPACE prod.db", "USE prod.db",
                "CREATE TABLE prod.db.sample (id bigint, name string, category string, c1 int, c2 int) USING iceberg "
                "PARTITIONED BY (category)",
                *[f"INSERT INTO prod.db.sample VALUES ({i}, 'n{i}', 'c{i % 2}', {i}, {10 - i})" for i in range(1, 5)],
                "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(4, id)",
                "INSERT INTO prod.db.sample VALUES (5, 'n5', 'c1', 5, 5)",
                "ALTER TABLE prod.db.sample CREATE TAG s1",
                "CREATE TABLE prod.db.my_table (id bigint, col1 int, col2 int) USING iceberg PARTITIONED BY (col1) "
                "TBLPROPERTIES ('write.wap.enabled'='true')",
                "INSERT INTO prod.db.my_table VALUES (1, 1, 1)",
                "ALTER TABLE prod.db.my_table CREATE BRANCH `audit-branch`",
                "INSERT INTO prod.db.my_table.`branch_audit-branch` VALUES (2, 2, 2)",
                "SET spark.wap.id = wap_id_1", "INSERT INTO prod.db.my_table VALUES (3, 3, 3)",
                "SET spark.wap.id = wap_id_2", "INSERT INTO prod.db.my_table VALUES (4, 4, 4)",
                "SET spark.wap.id = wap_id_3", "INSERT INTO prod.db.my_table VALUES (5, 5, 5)",
                "SET spark.wap.id = wap_id_4", "INSERT INTO prod.db.my_table VALUES (6, 6, 6)",
                "RESET spark.wap.id",
                "CREATE TABLE prod.db.tbl (id bigint, name string) USING iceberg",
                "INSERT INTO prod.db.tbl VALUES (1, 'a'), (2, 'b')", "INSERT INTO prod.db.tbl VALUES (3, 'c')",
                "UPDATE prod.db.tbl SET name = 'bb' WHERE id = 2",
                lambda r: r.spark.sql(f"CREATE DATABASE spark_catalog.db LOCATION '{r.root}/spark-db'").collect(),
                "spark:CREATE TABLE spark_catalog.db.sample (id bigint, name string) USING parquet",
                "spark:INSERT INTO spark_catalog.db.sample VALUES (1, 'a')",
                "spark:CREATE TABLE spark_catalog.db.src_tbl (id bigint, name string, part_col_1 string) USING parquet "
                "PARTITIONED BY (part_col_1)",
                "spark:INSERT INTO spark_catalog.db.src_tbl VALUES (7, 'g', 'A'), (8, 'h', 'B')",
                lambda r: r.spark.range(3).selectExpr("id", "cast(id as string) AS name").write.parquet(
                    f"{r.root}/parquet_dir"),
                _foreign_metadata, _orphan_view],
         before=[(r"rewrite_data_files", ["INSERT INTO prod.db.sample VALUES (6, 'n6', 'c0', 6, 4)"]),
                 # fast_forward moves main to a branch that went on from it (main moved since by cherry-picks)
                 (r"fast_forward\('my_table', 'main', 'audit-branch'\)", [
                     "ALTER TABLE prod.db.my_table DROP BRANCH `audit-branch`",
                     "ALTER TABLE prod.db.my_table CREATE BRANCH `audit-branch`",
                     "INSERT INTO prod.db.my_table.`branch_audit-branch` VALUES (7, 7, 7)"]),
                 # a user trying each example: the snapshot made by the one before goes first
                 (r"'db\.snap', '/tmp/temptable/'", ["DROP TABLE prod.db.snap"]),
                 # migrate names its Iceberg table db.sample, which the page's other examples use: it goes
                 (r"system\.migrate\(", ["DROP TABLE prod.db.sample PURGE"]),
                 (r"partition_filter => map\('part_col_1', 'A'\)", [
                     "ALTER TABLE prod.db.tbl ADD COLUMN part_col_1 string",
                     "ALTER TABLE prod.db.tbl ADD PARTITION FIELD part_col_1"]),
                 (r"`parquet`\.`path/to/table`", ["ALTER TABLE prod.db.tbl DROP PARTITION FIELD part_col_1"]),
                 # the second migrate example: Spark's table as it was before the first (its backup back, the
                 # Iceberg table over the backup's files dropped without them)
                 (r"system\.migrate\('db\.sample'\)", ["DROP TABLE prod.db.sample",
                                                       "spark:ALTER TABLE spark_catalog.db.sample_BACKUP_ RENAME TO "
                                                       "db.sample"])]),
    Page("branching", "iceberg", ("docs/docs/branching.md",),
         subs=[ICEBERG_CATALOGS, (r"(?<![\w.])db\.table\b", "prod.db.table"),
               (r"VERSION AS OF 8109744798576441359", lambda r, m: f"VERSION AS OF {r.snapshot('prod.db.table', 0)}"),
               (r"(?<=VERSION )(7|30|365)\b", _snap("prod.db.table", 0)), (r"(?<=VERSION )3\b", _snap("prod.db.table"))],
         setup=["CREATE NAMESPACE prod.db",
                "CREATE TABLE prod.db.table (id bigint, data string) USING iceberg",
                "INSERT INTO prod.db.table VALUES (1, 'a')", "INSERT INTO prod.db.table VALUES (2, 'b')"],
         before=[(r"CREATE TABLE db\.table \(id bigint, data string, col float\)", [
                     "DROP TABLE prod.db.table", "RESET"])]),
    Page("spark-getting-started", "iceberg", ("docs/docs/spark-getting-started.md",),
         subs=[ICEBERG_CATALOGS], setup=["CREATE NAMESPACE prod.db"]),
    Page("spark-structured-streaming", "iceberg", ("docs/docs/spark-structured-streaming.md",)),
    Page("sql-ddl", "paimon", ("docs/docs/spark/sql-ddl.md", "docs/content/spark/sql-ddl.md"),
         subs=[(r"LOCATION '/path/to/table'", lambda r, m: f"LOCATION '{r.pai.warehouse}/elsewhere/my_table'"),
               (r"<mydb>", "default"), (r"\[TEMPORARY\] ", "")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default",
                "CREATE TABLE source_table (user_id BIGINT, item_id BIGINT, behavior STRING)",
                "INSERT INTO source_table VALUES (1, 10, 'pv'), (2, 20, 'buy')",
                "CREATE TABLE t1 (id INT, v STRING)"],
         before=[(r"DELETE TAG `TAG-1,TAG-2`", ["ALTER TABLE T CREATE TAG IF NOT EXISTS `TAG-1`"]),
                 (r"RENAME TAG `TAG-1` TO `TAG-2`", ["ALTER TABLE T CREATE TAG IF NOT EXISTS `TAG-1`",
                                                     "ALTER TABLE T DELETE TAG IF EXISTS `TAG-2`"]),
                 (r"ALTER TABLE T CREATE TAG `TAG-1`", [
             "CREATE TABLE T (id INT, v STRING)", "INSERT INTO T VALUES (1, 'a')", "INSERT INTO T VALUES (2, 'b')"]),
                 (r"ALTER TABLE my_table ADD PARTITION", ["INSERT INTO my_table VALUES (1, 1, 'pv', '2025-01-01', '10')"]),
                 (r"'bucket' = '2'", ["DROP TABLE IF EXISTS my_table"]),
                 (r"CREATE TABLE my_table LOCATION", ["DROP TABLE IF EXISTS my_table"])]),
    Page("sql-alter", "paimon", ("docs/docs/spark/sql-alter.md", "docs/content/spark/sql-alter.md"),
         subs=[(r"\[catalog\.\[database\.\]\]test1 RENAME to \[database\.\]test2", "paimon.default.test1 RENAME to default.test2"),
               (r"catalog\.database\.", "paimon.default.")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default",
                "CREATE TABLE my_table (id INT, name STRING, c0 STRING, buy_count INT, b INT, col_a INT, col_b INT, "
                "v STRUCT<f1: INT, f2: INT>) PARTITIONED BY (id, name)",
                "INSERT INTO my_table VALUES (1, 'paimon', 'x', 1, 2, 3, 4, named_struct('f1', 1, 'f2', 2))",
                "CREATE TABLE test1 (a INT)", "CREATE DATABASE my_database"],
         before=[(r"ADD COLUMNS \(\s*c1 INT", ["ALTER TABLE my_table_new RENAME TO my_table",
                                                "ALTER TABLE my_table RENAME COLUMN c0 TO c0_old"]),
                 (r"RENAME to catalog\.database\.test2", ["ALTER TABLE test2 RENAME TO test1"]),
                 (r"RENAME COLUMN c0 TO c1", ["ALTER TABLE my_table DROP COLUMN c1",
                                              "ALTER TABLE my_table RENAME COLUMN c0_old TO c0"]),
                 (r"ADD COLUMN v\.element\.f3", ["ALTER TABLE my_table DROP COLUMN v",
                                                 "ALTER TABLE my_table ADD COLUMN v ARRAY<STRUCT<f1: INT, f2: INT>>"]),
                 (r"ADD COLUMN v\.value\.f3", ["ALTER TABLE my_table DROP COLUMN v",
                                               "ALTER TABLE my_table ADD COLUMN v MAP<INT, STRUCT<f1: INT, f2: INT>>"]),
                 (r"RENAME COLUMN v\.f1 to f100", ["ALTER TABLE my_table DROP COLUMN v",
                                                   "ALTER TABLE my_table ADD COLUMN v STRUCT<f1: INT, f2: INT>"]),
                 (r"RENAME COLUMN v\.element\.f1", ["ALTER TABLE my_table DROP COLUMN v",
                                                    "ALTER TABLE my_table ADD COLUMN v ARRAY<STRUCT<f1: INT, f2: INT>>"]),
                 (r"RENAME COLUMN v\.value\.f1", ["ALTER TABLE my_table DROP COLUMN v",
                                                  "ALTER TABLE my_table ADD COLUMN v MAP<INT, STRUCT<f1: INT, f2: INT>>"]),
                 (r"DROP COLUMNS \(c1, c2\)", ["ALTER TABLE my_table ADD COLUMNS (c2 STRING)",
                                               "ALTER TABLE my_table RENAME COLUMN c1 TO c1x",
                                               "ALTER TABLE my_table ADD COLUMNS (c1 INT)"]),
                 (r"DROP COLUMN v\.f2", ["ALTER TABLE my_table DROP COLUMN v",
                                         "ALTER TABLE my_table ADD COLUMN v STRUCT<f1: INT, f2: INT>"]),
                 (r"DROP COLUMN v\.element\.f2", ["ALTER TABLE my_table DROP COLUMN v",
                                                  "ALTER TABLE my_table ADD COLUMN v ARRAY<STRUCT<f1: INT, f2: INT>>"]),
                 (r"DROP COLUMN v\.value\.f2", ["ALTER TABLE my_table DROP COLUMN v",
                                                "ALTER TABLE my_table ADD COLUMN v MAP<INT, STRUCT<f1: INT, f2: INT>>"]),
                 (r"ADD COLUMN c INT AFTER b", ["ALTER TABLE my_table DROP COLUMN c"]),
                 (r"ALTER COLUMN v\.f2 TYPE", ["ALTER TABLE my_table DROP COLUMN v",
                                               "ALTER TABLE my_table ADD COLUMN v STRUCT<f1: INT, f2: INT>"]),
                 (r"ALTER COLUMN v\.element\.f2 TYPE", ["ALTER TABLE my_table DROP COLUMN v",
                                                        "ALTER TABLE my_table ADD COLUMN v ARRAY<STRUCT<f1: INT, f2: INT>>"]),
                 (r"ALTER COLUMN v\.value\.f2 TYPE", ["ALTER TABLE my_table DROP COLUMN v",
                                                      "ALTER TABLE my_table ADD COLUMN v MAP<INT, STRUCT<f1: INT, f2: INT>>"]),
                 (r"ALTER COLUMN col_a TYPE DOUBLE", [])]),
    Page("sql-write", "paimon", ("docs/docs/spark/sql-write.md", "docs/content/spark/sql-write.md"),
         subs=[(r"INSERT INTO my_table SELECT \.\.\.", "INSERT INTO my_table SELECT * FROM my_source"),
               (r"INSERT OVERWRITE my_table SELECT \.\.\.", "INSERT OVERWRITE my_table SELECT * FROM my_source"),
               (r"PARTITION \(key1 = value1, key2 = value2, \.\.\.\) SELECT \.\.\.",
                "PARTITION (pt = 'p1') SELECT id FROM my_source")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default",
                "CREATE TABLE my_source (id INT, pt STRING)", "INSERT INTO my_source VALUES (7, 'p1')",
                "CREATE TABLE my_table (id INT, pt STRING) PARTITIONED BY (pt)",
                "CREATE TABLE target (a INT, b INT, c STRING) TBLPROPERTIES ('primary-key' = 'a')",
                "INSERT INTO target VALUES (5, 1, 'c1'), (6, 2, 'c3'), (8, 3, 'c0')",
                "CREATE TABLE source (a INT, b INT, c STRING)",
                "INSERT INTO source VALUES (5, 10, 'c3'), (6, 20, 'c1'), (9, 30, 'c99'), (10, 40, 'c0')"],
         before=[(r"CREATE TABLE my_table \(id INT, pt STRING\)", ["DROP TABLE my_table"]),
                 (r"TRUNCATE TABLE my_table$", ["DROP TABLE my_table",
                                                "CREATE TABLE my_table (id INT, dt STRING) PARTITIONED BY (dt)",
                                                "INSERT INTO my_table VALUES (1, '2025-01-01'), (2, '2025-01-02')"]),
                 (r"UPDATE t SET name", ["INSERT INTO t VALUES (1, named_struct('c1', 1, 'c2', 'a'), 'a')"]),
                 (r"DELETE FROM my_table WHERE id = 1", ["INSERT INTO my_table VALUES (1, '2025-01-01')"]),
                 (r"CREATE TABLE t \(a INT, b STRING\)", ["DROP TABLE t"])]),
    Page("sql-query", "paimon", ("docs/docs/spark/sql-query.md", "docs/content/spark/sql-query.md"),
         subs=[(r",\s*\.{5},\s*\)", ")"), (r"'2023-06-01 00:00:00\.123'", _time("default.t", 0)),
               (r"\b1678883047\b", _secs("default.t", 0)),
               (r"'tableName', 12, 20", "'t', 1, 3"),
               (r"'1692169000000', '1692169900000'",
                lambda r, m: f"'{r.millis('default.t', 0)}', '{r.millis('default.t', -1)}'"),
               (r"'2025-03-12 00:00:00', '2025-03-12 00:08:00'",
                lambda r, m: f"'{r.time('default.t', 0)}', '{r.time('default.t', -1)}'"),
               (r"'tableName'", "'t'")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default",
                "CREATE TABLE t (id INT, v STRING)",
                *[f"INSERT INTO t VALUES ({i}, 'v{i}')" for i in range(1, 4)],
                "CALL sys.create_tag(table => 'default.t', tag => 'my-tag', snapshot => 2)"],
         before=[(r"CREATE TABLE orders", []), (r"'watermark-", [_watermarks("default.t")])]),
    Page("auxiliary", "paimon", ("docs/docs/spark/auxiliary.md", "docs/content/spark/auxiliary.md"),
         before=[(r"PARTITION\(pt = '2024'\)", [        # this example's table is partitioned by pt
             "DROP TABLE my_table", "CREATE TABLE my_table (id INT, v STRING, dt STRING, pt STRING) PARTITIONED BY (pt)",
             "INSERT INTO my_table VALUES (1, 'a', '20230817', '2024')"])],
         subs=[(r"ON xxxx", "ON T1.id = T2.id"), (r"\bdb_name\b", "default"), (r"'table_name'", "'my_table'"),
               (r"(?<=REFRESH TABLE )table_identifier\b", "my_table"), (r"\bcol1\b", "id")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default",
                *[s for n in ("T", "T1", "T2") for s in (f"CREATE TABLE {n} (id INT, v STRING)",
                                                         f"INSERT INTO {n} VALUES (1, 'a')",
                                                         f"INSERT INTO {n} VALUES (2, 'b')")],
                "CREATE TABLE my_table (id INT, v STRING, dt STRING, pt STRING) PARTITIONED BY (dt)",
                "INSERT INTO my_table VALUES (1, 'a', '20230817', '2024')",
                "CREATE TABLE test_1 (id INT)"]),
    Page("procedures", "paimon", ("docs/docs/spark/procedures.md", "docs/content/spark/procedures.md"),
         procedure_table=True,
         subs=[(r"(?<=`timestamp` => )1724404318750\b", _millis("default.T", 2)),
               (r"(?<=version => )10\b", "4"),
               (r"(?<=timestamp => )1730292023000\b|(?<=watermark => )1730292023000\b", _millis("default.T", 0)),
               (r"(?<=nextSnapshotId => )10\b", _snap("default.T")),
               (r"mark_partition_done\(table => 'default\.T'", "mark_partition_done(table => 'default.Tday'"),
               # the global index examples need a row-tracking table partitioned by pt; rescale a fixed-bucket
               # table partitioned by dt and hh (the page's words)
               (r"(?<=_global_index\(table => ')default\.T'", "default.GI'"),
               (r"(?<=rescale\(table => ')default\.T'", "default.RS'"),
               # reassign_row_id is for a Data Evolution table (DE, partitioned by dt, its partitions' row ids
               # interleaved); compact_chain_table for a chain table partitioned by dt and hour, with its
               # snapshot and delta branches (CH)
               (r"(?<=reassign_row_id\(table => ')default\.T'", "default.DE'"),
               (r"(?<=compact_chain_table\(table => ')default\.T'", "default.CH'")],
         setup=["USE paimon.default",
                "CREATE TABLE T (k INT, v STRING, a INT, b INT, name STRING, tag STRING, content STRING, dt STRING, "
                "p INT, h INT, day STRING) PARTITIONED BY (dt, p, h, day)",
                *[f"INSERT INTO T VALUES ({i}, 'v{i}', {i}, {10 - i}, 'n{i}', 't{i}', 'c{i}', '2024-01-0{i % 9 + 1}', "
                  f"{i % 3}, {i}, '2024-07-01')" for i in range(1, 12)],
                "CALL sys.create_tag(table => 'default.T', tag => 'tag1', snapshot => 1)",
                "CREATE TABLE Tday (k INT, day STRING) PARTITIONED BY (day)",
                "INSERT INTO Tday VALUES (1, '2024-07-01'), (2, '2024-07-02')",
                *[f"CREATE DATABASE {d}" for d in ("test_db", "mydb", "db1", "db2")],
                "CREATE TABLE test_db.T (id INT, v STRING)",
                *[f"INSERT INTO test_db.T VALUES ({i}, 'v{i}')" for i in range(1, 11)],
                "CALL sys.create_tag(table => 'test_db.T', tag => 'my_tag', snapshot => 1)",
                # branches from a tag, as the page's create_branch makes them (with a snapshot: its merge and
                # fast-forward examples need one; the tag is copied into the branch)
                *[f"CALL sys.create_branch(table => 'test_db.T', branch => '{b}', tag => 'my_tag')"
                  for b in ("existBranchName", "branch1", "branch2")],
                "INSERT INTO test_db.`T$branch_branch1` VALUES (100, 'b1')",
                "CREATE TABLE mydb.myt (id INT)", "INSERT INTO mydb.myt VALUES (1)",
                # where => "day = '...'" is a partition predicate (the page's words)
                "CREATE TABLE t (id INT, day STRING) PARTITIONED BY (day)", "INSERT INTO t VALUES (1, '2025-08-17')",
                "CREATE TABLE t1 (id INT, day STRING) PARTITIONED BY (day)", "INSERT INTO t1 VALUES (1, '2025-08-17')",
                "CREATE TABLE db1.table1 (id INT)", "INSERT INTO db1.table1 VALUES (1)",
                "CREATE TABLE db1.table2 (id INT)", "INSERT INTO db1.table2 VALUES (1)",
                "CREATE TABLE GI (k INT, name STRING, tag STRING, content STRING, pt STRING) PARTITIONED BY (pt) "
                "TBLPROPERTIES ('row-tracking.enabled' = 'true')",
                "INSERT INTO GI VALUES (1, 'n1', 't1', 'hello world', 'p1'), (2, 'n2', 't2', 'good day', 'p2')",
                "CREATE TABLE RS (k INT, v STRING, dt STRING, hh STRING) PARTITIONED BY (dt, hh) "
                "TBLPROPERTIES ('primary-key' = 'k,dt,hh', 'bucket' = '2')",
                "INSERT INTO RS VALUES (1, 'a', '20250217', '08'), (2, 'b', '20250217', '09'), (3, 'c', '20250218', '08')",
                "CREATE TABLE DE (id INT, v STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true')",
                *[f"INSERT INTO DE VALUES ({i}, 'v{i}', '{d}')" for i, d in
                  enumerate(("2026-05-19", "2026-05-20", "2026-05-19", "2026-05-20"))],
                "CREATE TABLE CH (k STRING, v STRING, dt STRING, hour STRING) PARTITIONED BY (dt, hour) "
                "TBLPROPERTIES ('chain-table.enabled' = 'true', 'primary-key' = 'dt,hour,k', 'sequence.field' = 'v', 'bucket-key' = 'k', "
                "'bucket' = '1', 'partition.timestamp-pattern' = '$dt $hour:00:00', "
                "'partition.timestamp-formatter' = 'yyyyMMdd HH:mm:ss')",
                "CALL sys.create_branch('default.CH', 'snapshot')", "CALL sys.create_branch('default.CH', 'delta')",
                *[f"ALTER TABLE {n} SET TBLPROPERTIES ('scan.fallback-snapshot-branch' = 'snapshot', "
                  "'scan.fallback-delta-branch' = 'delta')"
                  for n in ("default.CH", "default.`CH$branch_snapshot`", "default.`CH$branch_delta`")],
                "INSERT OVERWRITE default.`CH$branch_snapshot` PARTITION (dt = '20250810', hour = '21') "
                "VALUES ('a', '1')",
                "INSERT OVERWRITE default.`CH$branch_delta` PARTITION (dt = '20250810', hour = '22') "
                "VALUES ('b', '2')"],
         before=[(r"create_tag\(table => 'default\.T', tag => 'my_tag'\)$",
                  ["CALL sys.delete_tag(table => 'default.T', tag => 'my_tag')"]),
                 (r"create_tag_from_timestamp", ["CALL sys.delete_tag(table => 'default.T', tag => 'my_tag')"]),
                 (r"replace_tag", ["CALL sys.create_tag(table => 'default.T', tag => 'tag1', snapshot => 2)"]),
                 (r"rollback\(table => 'default\.T', version => 'my_tag'\)",
                  ["CALL sys.create_tag(table => 'default.T', tag => 'my_tag', snapshot => 5)"]),
                 (r"rollback\(table => 'default\.T', tag => 'tag1'\)",
                  ["CALL sys.delete_tag(table => 'default.T', tag => 'tag1')",
                   "CALL sys.create_tag(table => 'default.T', tag => 'tag1', snapshot => 3)"]),
                 (r"remove_orphan_files", [f"INSERT INTO T VALUES ({i}, 'v', 1, 1, 'n', 't', 'c', '2024-01-01', 1, 1, "
                                           "'2024-07-01')" for i in range(3)]),
                 (r"branch => 'test_branch', tag => 'my_tag'\)$",
                  ["CALL sys.delete_branch(table => 'test_db.T', branch => 'test_branch')"]),
                 (r"existBranchName", ["CALL sys.delete_branch(table => 'test_db.T', branch => 'test_branch')"]),
                 (r"rename_branch", ["CALL sys.create_branch(table => 'test_db.T', branch => 'test_branch')"]),
                 (r"fast_forward", ["CALL sys.create_branch(table => 'test_db.T', branch => 'test_branch', "
                                    "tag => 'my_tag')"]),
                 (r"rollback_to_watermark", [_watermarks("default.T")]),
                 (r"repair_earliest_snapshot", [_snapshot_gap("test_db.T", 9)])]),
    Page("system-tables", "paimon", ("docs/docs/concepts/system-tables.mdx", "docs/content/concepts/system-tables.md"),
         subs=[PAIMON_SYSTEM_TABLES, (r"my_catalog\.my_db\.", "paimon.default."),
               (r"snapshot_id=100\b", "snapshot_id=1")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default",
                "CREATE TABLE my_table (id INT, v STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1', 'changelog-producer' = 'input')",
                "INSERT INTO my_table VALUES (1, 'a', 'x')", "INSERT INTO my_table VALUES (1, 'b', 'x')",
                "CREATE TABLE T (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')",
                "INSERT INTO T VALUES (1, 'a')", "ANALYZE TABLE T COMPUTE STATISTICS",
                "CALL sys.create_tag(table => 'default.my_table', tag => 'tag1', snapshot => 1)"],
         # the row tracking section's table is an append table with row-tracking.enabled (the page's note)
         before=[(r"my_table\$row_tracking", [
             "DROP TABLE my_table",
             "CREATE TABLE my_table (id INT, data STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true')",
             "INSERT INTO my_table VALUES (11, 'a'), (22, 'b')"])],
         # sys.catalog_options exists when the catalog sets catalog-options-table.enabled (the page's words)
         paimon_options={"catalog-options-table.enabled": "true"}),
    Page("manage-tags", "paimon", ("docs/docs/maintenance/manage-tags.mdx", "docs/content/maintenance/manage-tags.md"),
         subs=[(r"'2023-07-25', '2023-07-26'", "'tag1', 'tag2'"), (r"VERSION AS OF '2023-07-26'", "VERSION AS OF 'tag2'"),
               (r"database_name\.table_name", "default.t"), (r"<snapshot-id>", "1"), (r"'tag_name'", "'tag3'")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default", "CREATE TABLE t (k INT, f0 INT)",
                "INSERT INTO t VALUES (1, 1)", "INSERT INTO t VALUES (2, 2)",
                "CALL sys.create_tag(table => 'default.t', tag => 'tag1', snapshot => 1)",
                "CALL sys.create_tag(table => 'default.t', tag => 'tag2', snapshot => 2)",
                "CREATE DATABASE test", "CREATE TABLE test.t (k INT, f0 INT)",
                *[f"INSERT INTO test.t VALUES ({i}, {i})" for i in range(3)]],
         before=[(r"snapshot => 2, time_retained", ["CALL sys.delete_tag(table => 'test.t', tag => 'test_tag')"]),
                 (r"tag => 'test_tag'\)$", ["CALL sys.delete_tag(table => 'test.t', tag => 'test_tag')"])]),
    Page("manage-branches", "paimon", ("docs/docs/maintenance/manage-branches.mdx",
                                       "docs/content/maintenance/manage-branches.md"),
         subs=[(r"SELECT \.\.\.", "SELECT * FROM T")],
         setup=[*PAIMON_DEFAULT, "USE paimon.default", "CREATE TABLE T (id INT, v STRING)",
                "INSERT INTO T VALUES (1, 'a')",
                "CALL sys.create_tag(table => 'default.T', tag => 'tag1', snapshot => 1)"],
         before=[(r"create_branch\('default\.T', 'branch1'\)", ["CALL sys.delete_branch('default.T', 'branch1')"]),
                 (r"SELECT \* FROM `t\$branch_branch1`", ["CALL sys.create_branch('default.T', 'branch1')"]),
                 # the page writes the branch as `t$branch_branch1`, which names no table (T is case-sensitive)
                 (r"CALL sys\.fast_forward\('default\.T', 'branch1'\)",
                  ["INSERT INTO `T$branch_branch1` VALUES (9, 'z')"])]),
]


def run_page(page: Page, text: str, spark, root: str) -> list[Outcome]:
    exs = examples(text, page.procedure_table)
    page = Page(page.name, page.project, page.paths, list(page.subs), list(page.setup), list(page.before),
                page.procedure_table, dict(page.paimon_options))
    run = Run(page, spark, root)
    run.page_text = text
    for s in page.setup:
        run.quietly(s)
    out = [run.statement(ex) for ex in exs]
    reset_spark(spark)
    return out


def reset_spark(spark) -> None:
    """What a page left in Spark itself (settings, its own tables and views) goes, for the next page."""
    spark.sql("RESET")
    for t in spark.catalog.listTables():
        if t.isTemporary:
            spark.catalog.dropTempView(t.name)
        else:
            spark.sql(f"DROP TABLE IF EXISTS `{t.database}`.`{t.name}`")
    for d in spark.catalog.listDatabases():
        if d.name != "default":
            spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.`{d.name}` CASCADE")


def table(outcomes: list[Outcome]) -> str:
    kinds = ("pass", "refused", "fail", "out")
    pages: dict = {}
    for o in outcomes:
        pages.setdefault(o.page, dict.fromkeys(kinds, 0))[o.kind] += 1
    rows = [f"| page | {' | '.join(kinds)} | pass % of runnable |", "| --- |" + " --- |" * (len(kinds) + 1)]
    total = dict.fromkeys(kinds, 0)
    for name, c in pages.items():
        for k in kinds:
            total[k] += c[k]
        runnable = c["pass"] + c["refused"] + c["fail"]
        rows.append(f"| {name} | " + " | ".join(str(c[k]) for k in kinds)
                    + f" | {100 * c['pass'] // runnable if runnable else 0}% |")
    runnable = total["pass"] + total["refused"] + total["fail"]
    rows.append("| **all** | " + " | ".join(str(total[k]) for k in kinds)
                + f" | {100 * total['pass'] // runnable if runnable else 0}% |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="+", help="checkouts of apache/iceberg and/or apache/paimon")
    ap.add_argument("--page", action="append", help="only these pages (by name)")
    ap.add_argument("--show", action="store_true", help="list each page's statements and stop")
    ap.add_argument("--json", help="write every outcome to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print refusals too")
    args = ap.parse_args(argv)
    sources = [Docs(p) for p in args.docs]
    chosen = [p for p in PAGES if not args.page or p.name in args.page]
    texts = []
    for page in chosen:
        text = next((t for d in sources for rel in page.paths if (t := d.read(rel)) is not None), None)
        if text is not None:
            texts.append((page, text))
    if args.show:
        for page, text in texts:
            for ex in examples(text, page.procedure_table):
                print(f"--- {page.name}:{ex.line}{' (out: ' + ex.out + ')' if ex.out else ''}\n{ex.text}")
        return 0
    from icefloe.spark.session import get_spark

    spark = get_spark()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="doc-sql-survey-") as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)           # Spark's own tables (USING parquet) land here, not in the caller's directory
        try:
            for page, text in texts:
                root = os.path.join(tmp, page.name)
                os.makedirs(root)
                found = run_page(page, text, spark, root)
                outcomes.extend(found)
                print(table(found).splitlines()[-2], flush=True)
                shutil.rmtree(root, ignore_errors=True)
        finally:
            os.chdir(cwd)
    print()
    print(table(outcomes))
    for kind in ("fail", "refused") if args.verbose else ("fail",):
        print(f"\n## {kind}")
        for o in outcomes:
            if o.kind == kind:
                one = " ".join(o.run.split())
                print(f"- {o.page}:{o.line} [{o.cause}] {one[:160]}\n    {o.message[:400]}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([o.__dict__ for o in outcomes], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
