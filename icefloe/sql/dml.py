"""DML on icefloe tables: INSERT INTO / OVERWRITE, DELETE, UPDATE, MERGE INTO.

INSERT follows Spark's rules: values match the table's (or the listed)
columns by position and are cast with Spark's ANSI store assignment
(numbers to numbers, anything to strings, dates and timestamps among
themselves); anything else is a type mismatch naming the column. The
row-level statements check every column they name before asking the table
for its row-level API (``delete``, ``update``, ``merge``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Callable, Optional

from sqlglot import exp

from icefloe.core.types import to_spark_ddl_type, to_spark_type, widen_schema_small_ints
from icefloe.sql import paimon_options, wap
from icefloe.sql.metadata_columns import ROW_TRACKING
from icefloe.table.capabilities import PAIMON_DYNAMIC_OPTIONS
from icefloe.sql.translate import strip_qualifier, unknown_columns
from icefloe.table.capabilities import metadata_column_reads
from icefloe.spark.align import checked_cast_to
from icefloe.sql.overwrite import overwrite
from icefloe.sql.parser import node_position
from icefloe.sql.subqueries import with_subqueries

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

    from icefloe.core.types.model import NestedField, Schema
    from icefloe.sql.names import TableRef
    from icefloe.sql.overwrite import StaticColumns
    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.base import Table

    #: a struct column's assigned fields: {field path: (value SQL, the SET target)}
    Assigned = dict[tuple[str, ...], tuple[str, exp.Expression]]


# --------------------------------------------------------------------------- INSERT
def _store_assignable(src: DataType, dst: DataType) -> bool:
    from pyspark.sql import types as T

    if src == dst or isinstance(src, T.NullType):
        return True
    if isinstance(src, T.NumericType) and isinstance(dst, T.NumericType):
        return True
    if isinstance(dst, T.StringType) and isinstance(src, T.AtomicType):
        return True
    datetime = (T.DateType, T.TimestampType, T.TimestampNTZType)
    if isinstance(src, datetime) and isinstance(dst, datetime):
        return True
    if isinstance(src, T.StructType) and isinstance(dst, T.StructType):
        return len(src.fields) == len(dst.fields) and all(
            _store_assignable(a.dataType, b.dataType) for a, b in zip(src.fields, dst.fields))
    if isinstance(src, T.ArrayType) and isinstance(dst, T.ArrayType):
        return _store_assignable(src.elementType, dst.elementType)
    if isinstance(src, T.MapType) and isinstance(dst, T.MapType):
        return _store_assignable(src.keyType, dst.keyType) and _store_assignable(src.valueType, dst.valueType)
    return False


def _check_assignable(sess: StatementSession, src_type: DataType, f: NestedField,
                      node: Optional[exp.Expression]) -> DataType:
    dst = to_spark_type(f.field_type)
    if not _store_assignable(src_type, dst):
        raise sess.error(f"type mismatch: cannot write {src_type.simpleString()} value to column "
                         f"{f.name} of type {dst.simpleString()}", node)
    return dst


def _static_columns(sess: StatementSession, static: StaticColumns) -> list[Column]:
    """Spark columns of the PARTITION clause's values (already cast to their columns' types)."""
    from pyspark.sql import functions as F

    return [F.expr(value_sql).alias(f.name) for f, _node, value_sql in static.values()]


def fit_by_position(sess: StatementSession, df: DataFrame, schema: Schema, columns: Optional[list[str]],
                    node: Optional[exp.Expression], static: Optional[StaticColumns] = None) -> DataFrame:
    """Name and cast ``df``'s columns for the table, by position (Spark's INSERT semantics).

    ``static``: the PARTITION clause's constant columns (name -> (field, value node, type)); the
    query provides the other columns, in table order (or the order of ``columns``)."""
    from pyspark.sql import functions as F

    static = static or {}
    if columns is None:
        targets = [f for f in schema.fields if f.name not in static]
    else:
        targets = []
        for c in columns:
            f = schema.find_field_or_none(c)
            if f is None:
                raise sess.error(f"unknown column {c}; columns are {', '.join(schema.column_names)}", node)
            if f.name in static:
                raise sess.error(f"column {f.name} is listed and also given a value in the PARTITION clause",
                                 node)
            targets.append(f)
    if len(df.columns) != len(targets):
        what = "the listed columns are" if columns else \
            ("the table has, besides the PARTITION clause's," if static else "table has")
        raise sess.error(f"INSERT gives {len(df.columns)} values per row but {what} {len(targets)} "
                         f"({', '.join(f.name for f in targets)})", node)
    given = {}
    # by position: the query's columns may share a name (``SELECT id, cast(id AS string)`` names both ``id``)
    df = df.toDF(*[f"_col{i}" for i in range(len(df.columns))])
    for i, (src, f) in enumerate(zip(df.schema.fields, targets)):
        dst = _check_assignable(sess, src.dataType, f, node)
        c = F.col(f"_col{i}")
        if src.dataType != dst:
            c = c.cast(dst)
        given[f.name] = c.alias(f.name)
    for c, f in zip(_static_columns(sess, static), [v[0] for v in static.values()]):
        given[f.name] = c
    return df.select(*[given[f.name] for f in schema.fields if f.name in given])


def fit_by_name(sess: StatementSession, df: DataFrame, schema: Schema, node: Optional[exp.Expression],
                static: Optional[StaticColumns] = None) -> DataFrame:
    """``INSERT ... BY NAME``: the query's columns matched to the table's by name (case-insensitive);
    columns the query leaves out are null (an error for required columns)."""
    from pyspark.sql import functions as F

    static = static or {}
    by_name = {f.name.lower(): f for f in schema.fields}
    given = {}
    for src in df.schema.fields:
        f = by_name.get(src.name.lower())
        if f is None:
            raise sess.error(f"INSERT ... BY NAME: the query's column {src.name} is not a column of the table; "
                             f"columns are {', '.join(schema.column_names)}", node)
        if f.name in given:
            raise sess.error(f"INSERT ... BY NAME: the query gives column {f.name} twice", node)
        if f.name in static:
            raise sess.error(f"INSERT ... BY NAME: column {f.name} is given by the query and by the "
                             "PARTITION clause", node)
        dst = _check_assignable(sess, src.dataType, f, node)
        c = F.col(f"`{src.name}`")
        if src.dataType != dst:
            c = c.cast(dst)
        given[f.name] = c.alias(f.name)
    for c, f in zip(_static_columns(sess, static), [v[0] for v in static.values()]):
        given[f.name] = c
    out = []
    for f in schema.fields:
        if f.name in given:
            out.append(given[f.name])
        elif f.required:
            raise sess.error(f"INSERT ... BY NAME: the query has no column {f.name}, which is required", node)
        else:
            out.append(F.lit(None).cast(to_spark_type(f.field_type)).alias(f.name))
    return df.select(*out)


def _source_df(sess: StatementSession, query: exp.Expression) -> DataFrame:
    if isinstance(query, exp.Values):
        return sess.query_df(exp.select("*").from_(query.copy()))
    return sess.query_df(query)


def partition_columns(t: Table) -> list[str]:
    """The columns a PARTITION clause may name (identity partition sources, Paimon partition keys):
    other transforms (days(ts), bucket(16, id)) have no column to set."""
    return t.partition_columns()


def _partition_clause(sess: StatementSession, t: Table, partition: Optional[exp.Expression]) -> StaticColumns:
    """PARTITION (p = 'x', q): {name: (field, value node, Spark type of the value)} of the static
    columns, after checking every named column is a partition column of ``t``."""
    if partition is None:
        return {}
    allowed = partition_columns(t)
    lowered = {c.lower(): c for c in allowed}
    static: StaticColumns = {}
    seen: set[str] = set()
    for item in partition.expressions:
        col, value = (item.this, item.expression) if isinstance(item, exp.EQ) else (item, None)
        if not isinstance(col, (exp.Column, exp.Identifier)) or (isinstance(col, exp.Column) and col.table):
            raise sess.error(f"expected a partition column in the PARTITION clause, got {item.sql('spark')}", item)
        name = col.name
        if t.schema.find_field_or_none(name) is None or "." in name:
            raise sess.error(f"unknown column {name} in the PARTITION clause; columns of {t.name} are "
                             f"{', '.join(t.schema.column_names)}", col)
        canonical = lowered.get(name.lower())
        if canonical is None:
            raise sess.error(f"PARTITION clause names {name}, which is not a partition column of {t.name} "
                             f"(partition columns: {', '.join(allowed) or 'none'}; only identity partitions "
                             "can be given a value)", col)
        if canonical in seen:
            raise sess.error(f"PARTITION clause names {canonical} twice", col)
        seen.add(canonical)
        if value is None:
            continue                       # a dynamic partition column: the query provides it
        if any(isinstance(n, exp.Column) for n in value.walk()):
            raise sess.error(f"the value of partition column {canonical} must be a constant, got "
                             f"{value.sql('spark')}", value)
        f = t.schema.find_field(canonical)

        value_sql = _partition_value_sql(sess, f, value, value if node_position(value)[0] is not None else item)
        static[canonical] = (f, value, value_sql)
    return static


def _partition_value_sql(sess: StatementSession, f: NestedField, value: exp.Expression, node: exp.Expression) -> str:
    """A PARTITION clause value as Spark gives it to a column: the constant's text cast to the
    column's type (``day = '2024-05-01'`` for a date). A value that does not cast is an error."""
    ddl = to_spark_ddl_type(f.field_type)
    text = value.sql("spark")
    if isinstance(value, exp.Null):
        return f"CAST(NULL AS {ddl})"
    cast = f"CAST(CAST(({text}) AS STRING) AS {ddl})"
    try:
        row = sess.spark.range(1).selectExpr(f"try_cast(CAST(({text}) AS STRING) AS {ddl}) AS v",
                                             f"({text}) IS NULL AS n").collect()[0]
    except Exception as e:
        raise sess.spark_error(e, text) from e
    if row.v is None and not row.n:
        raise sess.error(f"type mismatch: cannot write {text} to partition column {f.name} of type {ddl}", node)
    return cast


def insert(sess: StatementSession, tree: exp.Insert) -> DataFrame:
    target = tree.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table):
        return sess.query_statement(tree)     # INSERT OVERWRITE DIRECTORY and the like
    ref, ours = sess.resolve(target)
    if ref is None and not ours:
        return sess.query_statement(tree)
    ref = sess.resolve_or_fail(target, allow_ref=True)
    t = sess.load(ref, write=True)
    verb = f"INSERT {'OVERWRITE' if tree.args.get('overwrite') else 'INTO'}"
    if ref.ref and (ref.ref_kind != "branch" or tree.args.get("overwrite")):
        raise sess.not_supported(f"{verb} {ref} (icefloe appends to branches; a tag names one snapshot and "
                                 "takes no writes)", target)
    t = wap.write_target(sess, t, ref, verb, target)
    if tree.args.get("overwrite") and wap.settings(sess)[0] is not None:
        raise sess.not_supported(f"{verb} to the WAP branch {wap.settings(sess)[0]!r} of {t.name} (icefloe "
                                 f"appends to branches; RESET {wap.WAP_BRANCH} to overwrite main)", target)
    if tree.args.get("partition") not in (None, False):
        raise sess.not_supported(f"INSERT ... {tree.args['partition'].sql('spark')}", tree)
    static = _partition_clause(sess, t, target.args.get("partition"))
    df = _source_df(sess, tree.expression)
    if tree.args.get("by_name"):
        if columns is not None:
            raise sess.error("INSERT ... BY NAME takes no column list", tree)
        if t.supports(PAIMON_DYNAMIC_OPTIONS):
            t = _merge_schema(sess, t, ref, df, tree.expression)
        df = fit_by_name(sess, df, widen_schema_small_ints(t.schema), tree.expression, static)
    else:
        df = fit_by_position(sess, df, widen_schema_small_ints(t.schema), columns, tree.expression, static)
    df = _narrow_small_ints(df, t)
    if tree.args.get("overwrite"):

        overwrite(sess, t, df, {name: v for name, v in static.items()}, tree)
    else:
        t.append(df)
    return sess.empty()


def _merge_schema(sess: StatementSession, t: Table, ref: TableRef, df: DataFrame, node: exp.Expression) -> Table:
    """Paimon's ``write.merge-schema`` (``SET spark.paimon.write.merge-schema = true``): the query's
    columns the table lacks are added to it (nullable, at the end) before ``INSERT ... BY NAME``
    writes, as Paimon's Spark writer does; the table as it is without the setting."""
    confs = {k: v for k, v in sess.spark.conf.getAll.items() if k.lower().startswith(paimon_options.PREFIX)}
    if not confs or not paimon_options.merge_schema(confs, ref.catalog or sess.catalog_name, ref.name):
        return t
    have = {c.lower() for c in t.schema.column_names}
    new = [f for f in df.schema.fields if f.name.lower() not in have]
    if not new:
        return t
    with sess.refused_as(f"{paimon_options.MERGE_SCHEMA} on {t.name}", node), t.update_schema() as u:
        for f in new:
            u.add_column(f.name, f.dataType.simpleString())
    return t.refresh()


def _narrow_small_ints(df: DataFrame, t: Table) -> DataFrame:
    """Paimon TINYINT/SMALLINT columns (the shared schema widens them to int): INSERT stores
    values into them as Spark does, and a value out of range fails the statement."""
    small = t.narrow_column_types()
    if not small:
        return df
    from pyspark.sql import functions as F

    return df.select(*[checked_cast_to(F.col(f"`{c}`"), small[c], small[c], c, t.name).alias(c) if c in small
                       else F.col(f"`{c}`") for c in df.columns])


# --------------------------------------------------------------------------- DELETE / UPDATE
def _target(sess: StatementSession, table: exp.Table, statement: str) -> tuple[Table, set[str]]:
    ref = sess.resolve_or_fail(table, allow_ref=True)
    t = wap.write_target(sess, sess.load(ref, write=True), ref, statement, table)
    alias = table.alias or None
    quals = {table.name, alias} if alias else {table.name}
    return t, quals


def _check_columns(sess: StatementSession, node: Optional[exp.Expression], t: Table, quals: AbstractSet[str],
                   other_quals: AbstractSet[str] = frozenset(), other_known: AbstractSet[str] = frozenset()) -> None:
    if node is None:
        return
    names = {n for n, _f in t.schema.all_fields()}
    reads = metadata_column_reads(t)      # a row-tracking table's rows have _ROW_ID and _SEQUENCE_NUMBER
    names |= {n for n in (reads.metadata_column_names() if reads is not None else ()) if n.lower() in ROW_TRACKING}
    bad = unknown_columns(node, names, quals, other_quals, other_known)
    if bad:
        c = bad[0]
        raise sess.error(f"unknown column {c.sql('spark')}; table {t.name} has columns "
                         f"{', '.join(t.schema.column_names)}", c)


def delete(sess: StatementSession, tree: exp.Delete) -> DataFrame:
    table = tree.this
    if not isinstance(table, exp.Table):
        return sess.query_statement(tree)
    ref, ours = sess.resolve(table)
    if ref is None and not ours:
        return sess.query_statement(tree)
    t, quals = _target(sess, table, "DELETE FROM")
    where = tree.args.get("where")
    cond = where.this if where is not None else None
    _check_columns(sess, cond, t, quals)
    with sess.refused_as("DELETE FROM (row-level deletes)", tree):
        t.delete(_sql(with_subqueries(sess, cond, quals), quals) if cond is not None else "true")
    return sess.empty()


def update(sess: StatementSession, tree: exp.Update) -> DataFrame:
    table = tree.this
    if not isinstance(table, exp.Table):
        return sess.query_statement(tree)
    ref, ours = sess.resolve(table)
    if ref is None and not ours:
        return sess.query_statement(tree)
    t, quals = _target(sess, table, "UPDATE")
    assignments = _assignments(sess, tree.expressions, t, quals)
    where = tree.args.get("where")
    cond = where.this if where is not None else None
    _check_columns(sess, cond, t, quals)
    for value in tree.expressions:
        _check_columns(sess, value.expression, t, quals)
    with sess.refused_as("UPDATE (row-level updates)", tree):
        t.update(assignments, _sql(with_subqueries(sess, cond, quals), quals) if cond is not None else None)
    return sess.empty()


def _assignments(sess: StatementSession, eqs: list[exp.Expression], t: Table, quals: set[str],
                 source_quals: AbstractSet[str] = frozenset()) -> dict[str, str]:
    """``SET a = expr, t.b = expr, s.f = expr`` -> {"a": "expr", "b": "expr", "s": "named_struct(...)"}
    after checking the targets; a struct's fields (``s.f``, ``t.s.f``) are set by rebuilding the struct
    with the other fields as they were (as Iceberg's Spark runtime aligns nested assignments)."""
    out: dict[str, str] = {}
    nested: dict[str, Assigned] = {}
    low_quals = {q.lower() for q in quals if q}
    for eq in eqs:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            raise sess.error(f"expected column = value in SET, got {eq.sql('spark')}", eq)
        col = eq.this
        path = [p.name for p in col.parts]
        if len(path) > 1 and path[0].lower() in low_quals and t.schema.find_field_or_none(path[0]) is None:
            path = path[1:]
        top = t.schema.find_field_or_none(path[0]) if "." not in path[0] else None
        if top is None:
            if len(path) > 1:
                raise sess.error(f"SET names column {col.sql('spark')} of another table", col)
            raise sess.error(f"unknown column {col.sql('spark')}; table {t.name} has columns "
                             f"{', '.join(t.schema.column_names)}", col)
        value = _sql(with_subqueries(sess, eq.expression, quals), quals - set(source_quals))
        if top.name in out or (len(path) == 1 and top.name in nested):
            raise sess.error(f"SET assigns column {top.name} more than once", col)
        if len(path) == 1:
            out[top.name] = value
        else:
            nested.setdefault(top.name, {})[tuple(path[1:])] = (value, col)
    for name, assigned in nested.items():
        out[name] = _struct_with(sess, t.schema.find_field(name), f"`{name}`", assigned)
    return out


def _struct_with(sess: StatementSession, field: NestedField, base: str, assigned: Assigned) -> str:
    """SQL of struct column ``field`` (read as ``base``) with the fields of ``assigned``
    ({path: (value, node)}) replaced."""
    struct = field.field_type
    fields = getattr(struct, "fields", None)
    if fields is None:
        node = next(iter(assigned.values()))[1]
        raise sess.error(f"SET {node.sql('spark')}: {field.name} is not a struct (fields of lists and maps "
                         "are set through the whole column)", node)
    by_name = {f.name.lower(): f for f in fields}
    for path, (_v, node) in assigned.items():
        if path[0].lower() not in by_name:
            raise sess.error(f"unknown field {path[0]} of struct {field.name} in SET {node.sql('spark')} "
                             f"(fields: {', '.join(f.name for f in fields)})", node)
    items = []
    for f in fields:
        mine = {p[1:]: v for p, v in assigned.items() if p[0].lower() == f.name.lower()}
        sub = f"{base}.`{f.name}`"
        if () in mine and len(mine) > 1:
            raise sess.error(f"SET assigns field {f.name} of {field.name} and one of its fields", mine[()][1])
        value = mine[()][0] if () in mine else (_struct_with(sess, f, sub, mine) if mine else sub)
        items.append(f"'{f.name}', {value}")
    return f"named_struct({', '.join(items)})"


def _sql(node: exp.Expression, quals: AbstractSet[str]) -> str:
    return strip_qualifier(node, set(quals)).sql("spark")


# --------------------------------------------------------------------------- MERGE
def _one_side(sess: StatementSession, kind: str, quals: AbstractSet[str], squals: AbstractSet[str], target_alias: str,
              source_alias: str, t: Table, source_cols: AbstractSet[str]) -> Callable[[exp.Expression], exp.Expression]:
    """For a clause that sees one side's row only (``WHEN NOT MATCHED``: the source's; ``WHEN NOT
    MATCHED BY SOURCE``: the target's), a function qualifying its unqualified columns with that side's
    alias (so a name both sides have is not ambiguous); a column of the other side is an error."""
    if kind == "matched":
        return lambda node: node
    if kind == "not_matched":
        own, other, names, clause = source_alias, quals, source_cols, ("WHEN NOT MATCHED", "source", "target")
    else:
        own, other = target_alias, squals
        names, clause = [n for n, _f in t.schema.all_fields()], ("WHEN NOT MATCHED BY SOURCE", "target", "source")
    low_other = {q.lower() for q in other if q} - {own.lower()}
    low_names = {n.lower() for n in names}
    all_quals = {q.lower() for q in (*quals, *squals) if q}

    def sided(node: exp.Expression) -> exp.Expression:
        node = node.copy()
        for c in list(node.find_all(exp.Column)):
            if isinstance(c.this, exp.Star) or not _outside_queries(c, node):
                continue
            if c.table and not c.args.get("db") and c.table.lower() in low_other:
                raise sess.error(f"{clause[0]} clauses see only the {clause[1]}'s row (there is no "
                                 f"{clause[2]} row): {c.sql('spark')}", c)
            if not c.table:
                if c.name.lower() not in low_names:
                    raise sess.error(f"{clause[0]} clauses see only the {clause[1]}'s columns; the {clause[1]} "
                                     f"has no column {c.name}", c)
                new = exp.column(c.this.copy(), table=exp.to_identifier(own))
                node = new if c is node else (c.replace(new) and node)
            elif c.table.lower() not in all_quals and c.table.lower() in low_names:
                # a struct field of the visible side (s.f): qualified so that it reads that side's struct
                new = exp.Dot.build([exp.column(c.args["table"].copy(), table=exp.to_identifier(own)), c.this.copy()])
                node = new if c is node else (c.replace(new) and node)
        return node

    return sided


def _merge_set_path(sess: StatementSession, col: exp.Column, t: Table, target_alias: str) -> list[str]:
    """The target column (and struct fields) a MERGE ``SET`` names: ``c``, ``t.c``, ``s.f`` (field
    ``f`` of struct column ``s``), ``t.s.f``; a qualifier other than the target's is an error."""
    path = [p.name for p in col.parts]
    if len(path) > 1 and path[0].lower() == target_alias.lower() and t.schema.find_field_or_none(path[0]) is None:
        path = path[1:]
    if len(path) > 1 and t.schema.find_field_or_none(path[0]) is None:
        raise sess.error(f"SET names column {col.sql('spark')}, not a column of the target {target_alias}", col)
    return path


def _outside_queries(c: exp.Expression, root: exp.Expression) -> bool:
    n = c.parent
    while n is not None and n is not root:
        if isinstance(n, (exp.Select, exp.Subquery)):
            return False
        n = n.parent
    return True


def merge(sess: StatementSession, tree: exp.Merge) -> DataFrame:
    table = tree.this
    if not isinstance(table, exp.Table):
        return sess.query_statement(tree)
    ref, ours = sess.resolve(table)
    if ref is None and not ours:
        return sess.query_statement(tree)
    on = tree.args.get("on")
    if not isinstance(on, exp.Expression):      # sqlglot reads MERGE without ON; Spark's grammar requires it
        raise sess.error("MERGE INTO needs ON <condition> (which target rows each source row matches)", tree)
    t, quals = _target(sess, table, "MERGE INTO")
    target_alias = table.alias or table.name
    using = tree.args["using"]          # the grammar's USING source: always there
    source_alias = using.alias or (using.name if isinstance(using, exp.Table) else None)
    if isinstance(using, exp.Subquery):
        source_df = sess.query_df(using.this)
    elif isinstance(using, exp.Table):
        plain = using.copy()
        plain.set("alias", None)
        source_df = sess.query_df(exp.select("*").from_(plain))
    else:
        source_df = sess.query_df(using)
    if not source_alias:
        raise sess.error("MERGE needs an alias for its source (USING ... AS s)", using)
    source_cols = set(source_df.columns)
    squals = {source_alias}
    _check_columns(sess, on, t, quals, squals, source_cols)

    clauses = []
    whens = tree.args.get("whens")
    for when in (whens.expressions if whens is not None else []):
        matched = bool(when.args.get("matched"))
        by_source = bool(when.args.get("source"))
        cond = when.args.get("condition")
        _check_columns(sess, cond, t, quals, squals, source_cols)
        then = when.args.get("then")
        kind = "matched" if matched else ("not_matched_by_source" if by_source else "not_matched")
        sided = _one_side(sess, kind, quals, squals, target_alias, source_alias, t, source_cols)
        cond_sql = with_subqueries(sess, sided(cond), set()).sql("spark") if cond is not None else None
        if isinstance(then, exp.Update):
            if any(isinstance(e, exp.Star) for e in then.expressions) or not then.expressions:
                clauses.append((kind, "update_all", None, cond_sql, when))
            else:
                sets, nested = {}, {}
                for eq in then.expressions:
                    if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
                        raise sess.error(f"expected column = value in SET, got {eq.sql('spark')}", eq)
                    col = eq.this
                    path = _merge_set_path(sess, col, t, target_alias)
                    f = t.schema.find_field_or_none(path[0])
                    if f is None:
                        raise sess.error(f"unknown column {col.sql('spark')}; table {t.name} has columns "
                                         f"{', '.join(t.schema.column_names)}", col)
                    _check_columns(sess, eq.expression, t, quals, squals, source_cols)
                    value = with_subqueries(sess, sided(eq.expression), set()).sql("spark")
                    if f.name in sets or (len(path) == 1 and f.name in nested):
                        raise sess.error(f"SET assigns column {f.name} more than once", col)
                    if len(path) == 1:
                        sets[f.name] = value
                    else:              # a field of a struct column (t.s.f = ...): the struct rebuilt
                        nested.setdefault(f.name, {})[tuple(path[1:])] = (value, col)
                for name, assigned in nested.items():
                    sets[name] = _struct_with(sess, t.schema.find_field(name), f"`{target_alias}`.`{name}`",
                                              assigned)
                clauses.append((kind, "update", sets, cond_sql, when))
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star) or then.this is None and then.expression is None:
                clauses.append((kind, "insert_all", None, cond_sql, when))
            else:
                cols = [c.name for c in then.this.expressions] if then.this is not None else t.schema.column_names
                vals = then.expression.expressions if then.expression is not None else []
                if len(cols) != len(vals):
                    raise sess.error(f"INSERT lists {len(cols)} columns but {len(vals)} values", then)
                values = {}
                for c, v, node in zip(cols, vals, then.this.expressions if then.this is not None else vals):
                    f = t.schema.find_field_or_none(c)
                    if f is None:
                        raise sess.error(f"unknown column {c}; table {t.name} has columns "
                                         f"{', '.join(t.schema.column_names)}", node)
                    _check_columns(sess, v, t, set(), squals, source_cols)
                    values[f.name] = with_subqueries(sess, sided(v), set()).sql("spark")
                clauses.append((kind, "insert", values, cond_sql, when))
        elif isinstance(then, exp.Var) and then.name.upper() == "DELETE" or \
                isinstance(then, exp.Delete):
            clauses.append((kind, "delete", None, cond_sql, when))
        else:
            raise sess.not_supported(f"MERGE action {then.sql('spark') if then is not None else ''}", when)

    with sess.refused_as("MERGE INTO (row-level merge)", tree):
        builder = t.merge(source_df.alias(source_alias), with_subqueries(sess, on, set()).sql("spark"), target_alias=target_alias,
                          source_alias=source_alias)
        for kind, action, arg, cond_sql, node in clauses:
            fn = getattr(builder, f"when_{kind}_{action}", None)
            if fn is None:
                raise sess.not_supported(f"MERGE clause WHEN {kind.replace('_', ' ').upper()} THEN "
                                         f"{action.replace('_all', ' *').upper()}", node)
            # update and insert take their column -> value map first; the rest only a condition
            builder = fn(arg, condition=cond_sql) if action in ("update", "insert") else fn(condition=cond_sql)
        builder.execute()
    return sess.empty()
