"""``INSERT OVERWRITE`` on icefloe tables: Spark's static and dynamic partition overwrite.

``spark.sql.sources.partitionOverwriteMode`` decides, as it does for Iceberg's
Spark runtime:

* ``static`` (Spark's default): the rows matching the PARTITION clause's
  constants are replaced (``PARTITION (p = 'x')`` replaces partition ``x``; no
  clause replaces the whole table), even when the query returns no rows;
* ``dynamic``: the partitions the query writes rows to are replaced, the others
  stay (an unpartitioned table is replaced whole); a query without rows
  changes nothing.

Iceberg removes whole data files, so a static overwrite needs every file it
removes to hold only matching rows. Files are planned twice with the
inclusive (may-match) evaluators: with the filter, and with its complement; a
file that may hold rows of both cannot be removed whole (it was written under
an older partition spec that mixes partitions) and the statement is not
supported rather than wrong. The commit validates against snapshots committed
meanwhile (serializable): a concurrent write into the replaced partitions is a
conflict, not a survivor.

Paimon tables replace partitions in their commit (an OVERWRITE snapshot whose
DELETE entries are the live files of the replaced partitions): static mode
replaces the partitions matching the PARTITION clause (some or all keys), or the
whole table without one; dynamic mode replaces the partitions the query writes to.
"""
from __future__ import annotations

from icefloe.core.expressions import format_literal
from icefloe.core.types import to_spark_ddl_type

STATIC, DYNAMIC = "static", "dynamic"


def overwrite_mode(sess) -> str:
    try:
        mode = sess.spark.conf.get("spark.sql.sources.partitionOverwriteMode", STATIC)
    except Exception:
        mode = STATIC
    return (mode or STATIC).lower()


def overwrite(sess, t, df, static: dict, node):
    """Replace the part of ``t`` that ``static`` (PARTITION clause constants) and the mode select."""
    from icefloe.sql.dml import partition_columns

    mode = overwrite_mode(sess)
    if getattr(t, "format", "iceberg") != "iceberg":
        if mode == DYNAMIC and partition_columns(t):
            t.overwrite(df, dynamic=True)
        elif static:
            values = {name: sess.run_spark(f"SELECT ({value_sql}) AS v").first()[0]
                      for name, (_f, _node, value_sql) in static.items()}
            t.overwrite(df, partition=values)
        else:
            t.overwrite(df)
        return
    if mode == DYNAMIC:
        _dynamic(sess, t, df)
    elif static:
        _static(sess, t, df, static, node)
    else:
        t.overwrite(df)


def _commit(t, producer):
    from icefloe.iceberg.table_metadata import MAIN_BRANCH

    return t._commit(producer, MAIN_BRANCH)


def _literal(sess, f, expr: str) -> str:
    """The PARTITION clause's value (``expr``, already cast to column ``f``'s type) as a literal."""
    kind = str(f.field_type)
    if kind == "timestamptz":
        v = sess.run_spark(f"SELECT unix_micros(CAST(({expr}) AS TIMESTAMP)) AS v").first()[0]
    else:
        v = sess.run_spark(f"SELECT CAST(({expr}) AS {to_spark_ddl_type(f.field_type)}) AS v").first()[0]
    return format_literal(v, f.field_type)


def _static(sess, t, df, static: dict, node):
    from icefloe.iceberg.overwrite import Overwrite

    match, other = [], []
    for name, (f, _node, value_sql) in static.items():
        lit = _literal(sess, f, value_sql)
        col = "`" + name.replace("`", "``") + "`"
        if lit == "NULL":
            match.append(f"{col} IS NULL")
            other.append(f"{col} IS NOT NULL")
        else:
            match.append(f"{col} = {lit}")
            other.append(f"{col} <> {lit} OR {col} IS NULL")
    where = " AND ".join(match)
    complement = " OR ".join(f"({o})" for o in other)
    snap = t.current_snapshot()
    remove: set = set()
    if snap is not None:
        mixed = {f.file_path for f in t.plan_files(where=complement, snapshot_id=snap.snapshot_id)}
        for f in t.plan_files(where=where, snapshot_id=snap.snapshot_id):
            if f.file_path in mixed:
                raise sess.not_supported(
                    f"INSERT OVERWRITE ... PARTITION on {t.name}: data file {f.file_path} may hold rows both "
                    f"inside and outside {where} (written under another partition spec), so it cannot be "
                    "replaced whole; rewrite it first (CALL system.rewrite_data_files) or use DELETE and INSERT",
                    node)
            remove.add(f.file_path)
    files = t._write_files(df)
    return _commit(t, Overwrite.by_filter(files, remove, snap.snapshot_id if snap else None, where,
                                          "INSERT OVERWRITE ... PARTITION", t._app_summary()))


def _dynamic(sess, t, df):
    from icefloe.iceberg.overwrite import Overwrite

    snap = t.current_snapshot()
    files = t._write_files(df)
    if not files:
        return None                            # no rows: no partition to replace
    if t.refresh().spec.is_unpartitioned:
        return t.commit_files(files, overwrite=True)
    written = {(f.spec_id, f.partition) for f in files}
    remove = set()
    if snap is not None:
        remove = {task.file.file_path for task in t.plan_tasks(snapshot_id=snap.snapshot_id)
                  if (task.file.spec_id, task.file.partition) in written}
    return _commit(t, Overwrite.replace_partitions(files, remove, snap.snapshot_id if snap else None, written,
                                                   "INSERT OVERWRITE (dynamic partition overwrite)",
                                                   t._app_summary()))
