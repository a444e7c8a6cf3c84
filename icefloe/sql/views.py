"""Iceberg views in SQL: ``CREATE [OR REPLACE] VIEW [IF NOT EXISTS]`` (column aliases and comments,
``COMMENT``, ``TBLPROPERTIES``), ``ALTER VIEW ... AS``, ``ALTER VIEW ... SET/UNSET TBLPROPERTIES``,
``ALTER VIEW ... RENAME TO``, ``DROP VIEW [IF EXISTS]``, ``SHOW VIEWS [IN ns] [LIKE pattern]``,
``DESCRIBE [EXTENDED]``, ``SHOW TBLPROPERTIES`` and ``SHOW CREATE TABLE`` of a view, and reading one.

A view is stored as Iceberg's Spark runtime stores it: the query text as written (dialect
``spark``), the namespace it was written in (``default-namespace``: the namespace of ``USE``, else
``default``; no ``default-catalog``, which means the view's own catalog, as Iceberg's Spark runtime
leaves it out for a view made in the current catalog),
the schema of its result with the column aliases and comments applied, the query's own column
names in the property ``spark.query-column-names``, the view comment in ``comment``, and
``engine-name``/``engine-version`` in the version summary.

Reading a view runs its query in its default namespace (names of other catalogs the session knows
resolve there; a ``default-catalog`` the session does not know is taken as the view's own catalog,
since other engines name the same catalog differently), then renames the result's columns to the
view's and casts them to its types, by position. A view whose query no longer resolves, or no
longer has the view's number of columns, is an error naming the view. Temporary views (``CREATE
TEMPORARY VIEW``) are Spark's own and reach Spark unchanged; ``SHOW VIEWS`` lists them after the
catalog's views, as Spark does.
"""
from __future__ import annotations

import fnmatch
import re
from types import TracebackType
from typing import TYPE_CHECKING, Optional

from sqlglot import exp

from icefloe.core.types import from_spark_schema
from icefloe.core.types.spark import to_spark_type
from icefloe.errors import IcefloeError
from icefloe.iceberg.view_metadata import (
    AddViewSchema, AddViewVersion, RemoveViewProperties, SetCurrentViewVersion, SetViewProperties, new_version,
    new_view_metadata,
)
from icefloe.sql.errors import SqlError
from icefloe.sql.names import table_parts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.core.types.model import NestedField, Schema
    from icefloe.iceberg.view_metadata import ViewVersion
    from icefloe.sql.statement_context import StatementSession

QUERY_COLUMN_NAMES = "spark.query-column-names"
INTERNAL_PREFIX = "__icefloe_"      # the temporary views icefloe makes for a statement (never shown)
COMMENT = "comment"
_UNSET = re.compile(r"^\s*ALTER\s+VIEW\s+(?P<name>[`\w.]+)\s+UNSET\s+TBLPROPERTIES\s+(?P<ifx>IF\s+EXISTS\s+)?"
                    r"\((?P<keys>.*)\)\s*$", re.IGNORECASE | re.DOTALL)
_SHOW = re.compile(r"^\s*SHOW\s+VIEWS(?:\s+(?:IN|FROM)\s+(?P<ns>[`\w.]+))?(?:\s+(?:LIKE\s+)?'(?P<pat>[^']*)')?\s*$",
                   re.IGNORECASE)


# --------------------------------------------------------------------------- names
def _strip(s: str) -> str:
    return s[1:-1].replace("``", "`") if s.startswith("`") and s.endswith("`") else s


def view_name(sess: StatementSession, parts: list[str]) -> Optional[str]:
    """``db.v`` when ``parts`` (as written) name a view of the session's catalog, else None."""
    name = _our_name(sess, parts)
    if name is None:
        return None
    try:
        return name if sess.catalog.view_exists(name) else None
    except IcefloeError:
        return None


def _our_name(sess: StatementSession, parts: list[str]) -> Optional[str]:
    """``db.v`` of a name in the session's catalog (``v`` after USE, ``db.v``, ``<catalog>.db.v``)."""
    parts = sess.qualify([str(p) for p in parts])
    if len(parts) == 3 and parts[0].lower() == sess.catalog_name.lower():
        parts = parts[1:]
    return ".".join(parts) if len(parts) == 2 else None


def _target(sess: StatementSession, table: exp.Table) -> Optional[str]:
    """The ``db.v`` a CREATE VIEW names in this catalog; None when it is Spark's (a one-part name
    without USE, a namespace the catalog does not have)."""
    parts = table_parts(table)
    if len(parts) == 3 and parts[0].lower() != sess.catalog_name.lower():
        return None
    name = _our_name(sess, parts)
    if name is None:
        return None
    if len(parts) == 2 and not _namespace_exists(sess, parts[0]):
        return None
    return name


def _namespace_exists(sess: StatementSession, ns: str) -> bool:
    try:
        return sess.catalog.namespace_exists(ns)
    except IcefloeError:
        return False


# --------------------------------------------------------------------------- CREATE / ALTER ... AS
def _query_text(sess: StatementSession, query: exp.Expression) -> str:
    """The query as the user wrote it (its text in the statement), else as sqlglot prints it."""
    stmt = sess.statement
    starts = [meta["start"] for n in query.walk() if (meta := getattr(n, "_meta", None)) and "start" in meta]
    if stmt is None or not starts:
        return query.sql("spark")
    offset = min(starts) - stmt.start
    head = stmt.text[:offset]
    m = None
    for m in re.finditer(r"\bAS\b", head, re.IGNORECASE):
        pass
    return stmt.text[m.end():].strip() if m is not None else query.sql("spark")


def _analyzed(sess: StatementSession, query: exp.Expression, node: exp.Expression, name: str) -> DataFrame:
    """The query's DataFrame (not run); refused when it reads view ``name`` itself, directly or
    through other views (Spark's recursive view)."""
    sess.views_read.clear()
    try:
        df = sess.query_df(query)
    except SqlError as e:
        raise sess.error(f"the view's query cannot be analyzed: {e.reason}", node) from None
    if name in sess.views_read:
        raise sess.error(f"view {name} would refer to itself (its query reads {name})", node)
    return df


def _columns(tree_this: Optional[exp.Expression]) -> list[tuple[str, Optional[str]]]:
    """(name, comment) of a CREATE VIEW's column list."""
    out: list[tuple[str, Optional[str]]] = []
    for c in tree_this.expressions if isinstance(tree_this, exp.Schema) else []:
        comment = None
        for con in c.args.get("constraints") or [] if isinstance(c, exp.ColumnDef) else []:
            if isinstance(con.args.get("kind"), exp.CommentColumnConstraint):
                comment = con.args["kind"].this.name
        out.append((c.name, comment))
    return out


def _view_schema(sess: StatementSession, df: DataFrame, columns: list[tuple[str, Optional[str]]],
                 node: Optional[exp.Expression]) -> Schema:
    from pyspark.sql import types as T

    fields = list(df.schema.fields)
    if columns:
        if len(columns) != len(fields):
            raise sess.error(f"the view has {len(columns)} column names but its query returns {len(fields)} "
                             f"columns ({', '.join(f.name for f in fields)})", node)
        fields = [T.StructField(name, f.dataType, f.nullable, {"comment": comment} if comment else {})
                  for f, (name, comment) in zip(fields, columns)]
    names = [f.name.lower() for f in fields]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise sess.error(f"the view's columns must have distinct names; {', '.join(dupes)} appears more than once "
                         "(give the columns aliases)", node)
    try:
        return from_spark_schema(T.StructType(fields))
    except IcefloeError as e:
        raise sess.error(f"the view's columns: {e}", node) from None


def _summary(sess: StatementSession) -> dict[str, str]:
    return {"engine-name": "spark", "engine-version": sess.spark.version}


def _version(sess: StatementSession, sql: str, schema_id: int) -> ViewVersion:
    # no default-catalog: the view's own catalog, whatever another engine names it (as Iceberg's
    # Spark runtime stores a view made in its current catalog)
    return new_version(sql, schema_id, [sess.namespace or "default"], None, _summary(sess))


def _properties(sess: StatementSession, tree: exp.Create) -> dict[str, str]:
    props: dict[str, str] = {}
    properties = tree.args.get("properties")
    for prop in (properties.expressions if properties else []):
        if isinstance(prop, exp.SchemaCommentProperty):
            props[COMMENT] = prop.this.name
        elif type(prop) is exp.Property:
            props[prop.name] = prop.args["value"].name if prop.args.get("value") is not None else ""
        else:
            raise sess.not_supported(f"CREATE VIEW clause {prop.sql('spark')}", prop)
    return props


def create(sess: StatementSession, tree: exp.Create) -> DataFrame:
    """CREATE [OR REPLACE] VIEW [IF NOT EXISTS] of this catalog; anything else goes to Spark."""
    props = tree.args.get("properties")
    temporary = props is not None and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions)
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    name = _target(sess, target) if isinstance(target, exp.Table) and not temporary else None
    if name is None:
        return sess.query_statement(tree)
    if tree.args.get("replace") and tree.args.get("exists"):
        raise sess.error("CREATE OR REPLACE VIEW cannot be combined with IF NOT EXISTS", tree)
    if sess.catalog.table_exists(name):
        raise sess.error(f"cannot create view {name}: a table of that name exists (a table and a view cannot share "
                         "a name)", target)
    exists = sess.catalog.view_exists(name)
    if exists and not tree.args.get("replace"):
        if tree.args.get("exists"):
            return sess.empty()
        raise sess.error(f"view {name} already exists (CREATE OR REPLACE VIEW replaces it)", target)
    query = tree.expression
    if query is None:
        raise sess.error("CREATE VIEW needs AS <query>", tree)
    properties = _properties(sess, tree)
    reserved = [k for k in properties if k == QUERY_COLUMN_NAMES]
    if reserved:
        raise sess.error(f"view property {reserved[0]} is set by icefloe (the query's column names)", tree)
    df = _analyzed(sess, query, query, name)
    schema = _view_schema(sess, df, _columns(tree.this), tree.this)
    properties[QUERY_COLUMN_NAMES] = ",".join(f.name for f in df.schema.fields)
    sql = _query_text(sess, query)
    with _errors(sess, target):
        if not exists:
            meta = new_view_metadata(sess.catalog.view_location(name), schema, _version(sess, sql, 0), properties)
            sess.catalog.create_view(name, meta)
        else:
            base = sess.catalog.load_view(name).metadata
            updates = [AddViewSchema(schema), AddViewVersion(_version(sess, sql, -1)), SetCurrentViewVersion(-1),
                       SetViewProperties(properties)]
            if COMMENT not in properties and COMMENT in base.properties:
                updates.append(RemoveViewProperties((COMMENT,)))
            sess.catalog.replace_view(name, updates, base.view_uuid)
    return sess.empty()


class _errors:
    """Catalog errors of a view statement as the statement's errors (at ``node``)."""

    def __init__(self, sess: StatementSession, node: Optional[exp.Expression]) -> None:
        self.sess, self.node = sess, node

    def __enter__(self) -> _errors:
        return self

    def __exit__(self, kind: Optional[type[BaseException]], e: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        if e is not None and isinstance(e, IcefloeError) and not isinstance(e, SqlError):
            from icefloe.errors import NotSupportedError

            if isinstance(e, NotSupportedError):
                raise self.sess.not_supported(str(e), self.node) from None
            raise self.sess.error(str(e), self.node) from None
        return False


# --------------------------------------------------------------------------- ALTER VIEW / DROP VIEW
def _is_query(node: exp.Expression) -> bool:
    """Whether an ALTER VIEW action is ``AS <query>`` (a SELECT, a set operation, a subquery)."""
    return isinstance(node, exp.Query)


def _existing(sess: StatementSession, table: exp.Table, what: str) -> str:
    parts = table_parts(table)
    name = view_name(sess, parts)
    if name is None:
        shown = ".".join(parts)
        ours = _our_name(sess, parts)
        if ours is not None and sess.exists(ours):
            raise sess.error(f"{shown} is a table, not a view: {what} changes views only (use the TABLE form)", table)
        raise sess.error(f"view {shown} does not exist", table)
    return name


def _is_temporary(sess: StatementSession, parts: list[str]) -> bool:
    """Whether a one-part name is one of Spark's temporary views (which one-part names mean first)."""
    return len(parts) == 1 and any(t.isTemporary and t.name.lower() == parts[0].lower()
                                   for t in sess.spark.catalog.listTables())


def _is_view_target(sess: StatementSession, table: exp.Table) -> bool:
    """Whether a statement about ``table`` is about this catalog (so a missing view is an error here)."""
    parts = table_parts(table)
    if _is_temporary(sess, parts):
        return False
    return _target(sess, table) is not None or (len(parts) == 3 and parts[0].lower() == sess.catalog_name.lower())


def alter(sess: StatementSession, tree: exp.Alter) -> DataFrame:
    table = tree.this
    if not isinstance(table, exp.Table) or not _is_view_target(sess, table):
        return sess.query_statement(tree)
    name = _existing(sess, table, "ALTER VIEW")
    actions = tree.args.get("actions") or []
    if len(actions) != 1:
        raise sess.error("ALTER VIEW takes one change", tree)
    action: exp.Expression = actions[0]
    with _errors(sess, table):
        loaded = sess.catalog.load_view(name)
        base = loaded.metadata
        if isinstance(action, exp.AlterRename):
            new = _our_name(sess, table_parts(action.this))
            if new is None:
                raise sess.error(f"ALTER VIEW ... RENAME TO {'.'.join(table_parts(action.this))}: the new name must "
                                 "be db.view in the same catalog", action)
            sess.catalog.rename_view(name, new)
            return sess.empty()
        if isinstance(action, exp.AlterSet):
            props = {}
            for group in action.expressions:
                for prop in group.expressions if isinstance(group, exp.Properties) else [group]:
                    if not isinstance(prop, exp.Property):
                        raise sess.not_supported(f"ALTER VIEW SET {prop.sql('spark')}", prop)
                    props[prop.name] = prop.args["value"].name if prop.args.get("value") is not None else ""
            if QUERY_COLUMN_NAMES in props:
                raise sess.error(f"view property {QUERY_COLUMN_NAMES} is set by icefloe (the query's column names)",
                                 action)
            sess.catalog.replace_view(name, [SetViewProperties(props)], base.view_uuid)
            return sess.empty()
        if _is_query(action):
            df = _analyzed(sess, action, action, name)
            schema = _view_schema(sess, df, [], action)
            sql = _query_text(sess, action)
            sess.catalog.replace_view(name, [
                AddViewSchema(schema), AddViewVersion(_version(sess, sql, -1)), SetCurrentViewVersion(-1),
                SetViewProperties({QUERY_COLUMN_NAMES: ",".join(f.name for f in df.schema.fields)})], base.view_uuid)
            return sess.empty()
    raise sess.not_supported(f"ALTER VIEW {action.sql('spark')}", action)


def alter_unset(sess: StatementSession, text: str) -> Optional[DataFrame]:
    """``ALTER VIEW v UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`` (a command to sqlglot), or None."""
    m = _UNSET.match(text)
    if m is None:
        return None
    parts = [_strip(p) for p in re.findall(r"`(?:[^`]|``)*`|[^.]+", m.group("name"))]
    if _is_temporary(sess, parts):
        return None
    name = view_name(sess, parts)
    if name is None:
        ours = _our_name(sess, parts)
        if ours is None or (len(parts) == 2 and not _namespace_exists(sess, parts[0])):
            return None
        raise sess.error(f"view {'.'.join(parts)} does not exist")
    keys = [k[1:-1] for k in re.findall(r"'(?:[^'\\]|\\.)*'", m.group("keys"))]
    if not keys:
        raise sess.error("ALTER VIEW ... UNSET TBLPROPERTIES needs ('key', ...)")
    with _errors(sess, None):
        base = sess.catalog.load_view(name).metadata
        missing = [k for k in keys if k not in base.properties]
        if missing and not m.group("ifx"):
            raise sess.error(f"view {name} has no property {', '.join(missing)} (UNSET TBLPROPERTIES IF EXISTS "
                             "skips missing keys)")
        if QUERY_COLUMN_NAMES in keys:
            raise sess.error(f"view property {QUERY_COLUMN_NAMES} is kept by icefloe (the query's column names)")
        sess.catalog.replace_view(name, [RemoveViewProperties(tuple(keys))], base.view_uuid)
    return sess.empty()


def drop(sess: StatementSession, tree: exp.Drop) -> DataFrame:
    tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
    table = tables[0] if len(tables) == 1 else None
    if not isinstance(table, exp.Table) or not _is_view_target(sess, table):
        stmt = sess.statement
        assert stmt is not None, "DROP VIEW runs as a statement"
        return sess.run_spark(stmt.text)
    name = view_name(sess, table_parts(table))
    if name is None:
        ours = _our_name(sess, table_parts(table))
        if ours is not None and sess.exists(ours):
            raise sess.error(f"{ours} is a table, not a view: use DROP TABLE", table)
        if tree.args.get("exists"):
            return sess.empty()
        if (refused := sess.catalog.views_refused) is not None:
            raise sess.not_supported(f"DROP VIEW {'.'.join(table_parts(table))}: {refused}", table)
        raise sess.error(f"view {'.'.join(table_parts(table))} does not exist", table)
    with _errors(sess, table):
        sess.catalog.drop_view(name)
    return sess.empty()


def refuse_drop_table_of_view(sess: StatementSession, tree: exp.Drop) -> None:
    """DROP TABLE naming a view: Spark's rule, use DROP VIEW."""
    tables = tree.args.get("tables") or []
    if len(tables) == 1 and isinstance(tables[0], exp.Table):
        name = view_name(sess, table_parts(tables[0]))
        if name is not None and not sess.exists(name):
            raise sess.error(f"{name} is a view, not a table: use DROP VIEW", tables[0])


# --------------------------------------------------------------------------- SHOW / DESCRIBE
def show(sess: StatementSession, text: str) -> Optional[DataFrame]:
    """``SHOW VIEWS [IN|FROM ns] [[LIKE] 'pattern']``, or None when ``text`` is not one."""
    m = _SHOW.match(text)
    if m is None:
        return None
    ns = sess.namespace
    if m.group("ns"):
        parts = [_strip(p) for p in m.group("ns").split(".")]
        if len(parts) == 2 and parts[0].lower() == sess.catalog_name.lower():
            parts = parts[1:]
        if len(parts) != 1:
            return None
        ns = parts[0]
        if ns.lower() == sess.catalog_name.lower() or ns.lower() in sess.catalogs:
            ns = ""                              # IN <catalog>: its root namespace, which holds no views
        elif not _namespace_exists(sess, ns):
            return None                          # Spark's own database
    if ns is None:
        return None
    with _errors(sess, None):
        names = [n.split(".", 1)[1] for n in sess.catalog.list_views(ns)] if ns else []
    # Spark lists the session's temporary views too (namespace empty, isTemporary true)
    temporary = sorted(t.name for t in sess.spark.catalog.listTables()
                       if t.isTemporary and not t.name.startswith(INTERNAL_PREFIX))
    rows = [(ns, n, False) for n in names] + [("", n, True) for n in temporary]
    if m.group("pat") is not None:
        alts = [a.strip().lower() for a in m.group("pat").split("|")]
        rows = [r for r in rows if any(fnmatch.fnmatchcase(r[1].lower(), a) for a in alts)]
    return sess.spark.createDataFrame(rows, "namespace string, viewName string, isTemporary boolean")


def describe(sess: StatementSession, name: str, extended: bool) -> DataFrame:
    meta = sess.catalog.load_view(name).metadata
    rows = [(f.name, _type_name(f), f.doc or "") for f in meta.schema.fields]
    if extended:
        v = meta.current_version
        props = {k: x for k, x in meta.properties.items() if k != COMMENT}
        rows += [("", "", ""), ("# Detailed View Information", "", ""),
                 ("Comment", meta.properties.get(COMMENT, ""), ""),
                 ("View Catalog and Namespace", ".".join([v.default_catalog or sess.catalog_name, *v.default_namespace]), ""),
                 ("View Query Output Columns", "[" + ", ".join(meta.properties.get(QUERY_COLUMN_NAMES, "").split(","))
                  + "]", ""),
                 ("View Properties", "[" + ", ".join(f"{k}={x}" for k, x in sorted(props.items())) + "]", ""),
                 ("View Text", v.sql_for("spark") or "", ""),
                 ("Location", meta.location, ""), ("Current Version", str(v.version_id), "")]
    return sess.spark.createDataFrame(rows, "col_name string, data_type string, comment string")


def _type_name(f: NestedField) -> str:
    return to_spark_type(f.field_type).simpleString()


def _quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def show_create(sess: StatementSession, name: str) -> DataFrame:
    meta = sess.catalog.load_view(name).metadata
    cols = ",\n".join(f"  {f.name}" + (f" COMMENT {_quote(f.doc)}" if f.doc else "") for f in meta.schema.fields)
    lines = [f"CREATE VIEW {sess.catalog_name}.{name} (", cols + ")"]
    if meta.properties.get(COMMENT):
        lines.append(f"COMMENT {_quote(meta.properties[COMMENT])}")
    props = {k: v for k, v in meta.properties.items() if k not in (COMMENT, QUERY_COLUMN_NAMES)}
    if props:
        lines.append("TBLPROPERTIES (\n" + ",\n".join(f"  {_quote(k)} = {_quote(v)}" for k, v in sorted(props.items()))
                     + ")")
    lines.append("AS " + (meta.current_version.sql_for("spark") or ""))
    return sess.spark.createDataFrame([("\n".join(lines) + "\n",)], "createtab_stmt string")


def show_properties(sess: StatementSession, name: str, key: Optional[str]) -> DataFrame:
    props = sess.catalog.load_view(name).metadata.properties
    if key is not None:
        rows = [(key, props.get(key, f"View {sess.catalog_name}.{name} does not have property: {key}"))]
    else:
        rows = sorted(props.items())
    return sess.spark.createDataFrame(rows, "key string, value string")


# --------------------------------------------------------------------------- reading
def read(sess: StatementSession, name: str) -> DataFrame:
    """The rows of view ``name``: its query run where it was written, renamed and cast to its schema."""
    from pyspark.sql import functions as F

    from icefloe.sql import parser as p

    if name in sess.expanding_views:
        raise sess.error(f"view {name} refers to itself (through {' -> '.join([*sess.expanding_views, name])})")
    meta = sess.catalog.load_view(name).metadata
    version = meta.current_version
    sql = version.sql_for("spark")
    if sql is None:
        dialects = ", ".join(r.dialect for r in version.representations)
        raise sess.error(f"view {name} has no Spark SQL (its version {version.version_id} has {dialects})")
    sub = sess.view_session(version.default_catalog, version.default_namespace, name)
    try:
        stmts = p.split(sql)
        if len(stmts) != 1 or stmts[0].tree is None:
            raise SqlError("the view's SQL is not one query")
        df = sub.query_df(stmts[0].tree)
    except SqlError as e:
        raise sess.error(f"view {name} cannot be read: its query no longer resolves ({e.reason})") from None
    fields = meta.schema.fields
    if len(df.columns) != len(fields):
        raise sess.error(f"view {name} cannot be read: its query now returns {len(df.columns)} columns, the view "
                         f"has {len(fields)} ({', '.join(f.name for f in fields)}); replace the view")
    cols = []
    for c, f, st in zip(df.columns, fields, df.schema.fields):
        want = to_spark_type(f.field_type)
        col = F.col(f"`{c}`")
        cols.append((col if st.dataType == want else col.cast(want)).alias(f.name))
    return df.select(*cols)
