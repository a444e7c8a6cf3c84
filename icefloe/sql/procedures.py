"""``CALL <catalog>.system.<procedure>(...)``: Iceberg's Spark procedures on icefloe tables.

Arguments follow Iceberg's names (named with ``=>`` or positional in
Iceberg's order); each procedure maps to the table API method of the same
job and returns the rows Iceberg's procedure returns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, cast

from sqlglot import exp

from icefloe.core.reports import ExpireReport
from icefloe.errors import CommitFailedError, IcefloeError, NoSuchSnapshotError, NotSupportedError
from icefloe.sql import migration_procedures, paimon_catalog_procedures, paimon_procedures
from icefloe.sql.call_args import bind_args, spark_value
from icefloe.sql.errors import NotSupportedYetError, SqlError, refusal
from icefloe.sql.parser import Call, node_position
from icefloe.sql.snapshot_procedures import REGISTER_TABLE, SNAPSHOT_PROCEDURES, register_table
from icefloe.sql.translate import literal_value
from icefloe.table.capabilities import PAIMON_PROCEDURES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.sql.call_args import Rows
    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.base import Table
    from icefloe.table.paimon import PaimonTable


@dataclass(frozen=True)
class Procedure:
    params: tuple[str, ...]     # Iceberg's parameter names, in positional order
    required: tuple[str, ...]
    method: str            # table API method
    capability: str
    result: str            # Spark DDL of the result rows
    passed: tuple[str, ...] = ()     # arguments handed to the table method under the same name
    ignored: tuple[str, ...] = ()    # arguments accepted with no effect here (tuning knobs of the JVM runtime)


PROCEDURES = {
    "rollback_to_snapshot": Procedure(("table", "snapshot_id"), ("table", "snapshot_id"), "rollback_to_snapshot",
                                      "CALL system.rollback_to_snapshot",
                                      "previous_snapshot_id bigint, current_snapshot_id bigint"),
    "rollback_to_timestamp": Procedure(("table", "timestamp"), ("table", "timestamp"), "rollback_to_timestamp",
                                       "CALL system.rollback_to_timestamp",
                                       "previous_snapshot_id bigint, current_snapshot_id bigint"),
    "expire_snapshots": Procedure(("table", "older_than", "retain_last", "max_concurrent_deletes",
                                   "stream_results", "snapshot_ids"), ("table",), "expire_snapshots",
                                  "CALL system.expire_snapshots",
                                  "deleted_data_files_count bigint, deleted_manifest_files_count bigint, "
                                  "deleted_manifest_lists_count bigint", ("older_than", "retain_last", "snapshot_ids"),
                                  ("max_concurrent_deletes", "stream_results")),
    # max_concurrent_deletes, stream_results, prefix_listing: how the JVM action deletes, returns
    # and lists, not which files; file_list_view becomes ``listing`` (the view's rows)
    "remove_orphan_files": Procedure(("table", "older_than", "location", "dry_run", "max_concurrent_deletes",
                                      "file_list_view", "equal_schemes", "equal_authorities",
                                      "prefix_mismatch_mode", "stream_results", "prefix_listing"), ("table",),
                                     "remove_orphan_files", "CALL system.remove_orphan_files",
                                     "orphan_file_location string", ("older_than", "dry_run", "location", "listing",
                                                                     "equal_schemes", "equal_authorities",
                                                                     "prefix_mismatch_mode"),
                                     ("max_concurrent_deletes", "stream_results", "prefix_listing")),
    "rewrite_data_files": Procedure(("table", "strategy", "sort_order", "options", "where"), ("table",),
                                    "rewrite_data_files", "CALL system.rewrite_data_files",
                                    "rewritten_data_files_count int, added_data_files_count int, "
                                    "rewritten_bytes_count bigint, failed_data_files_count int, "
                                    "removed_delete_files_count int",
                                    ("where", "strategy", "sort_order", "options")),
    "rewrite_position_delete_files": Procedure(("table", "options", "where"), ("table",),
                                               "rewrite_position_delete_files",
                                               "CALL system.rewrite_position_delete_files",
                                               "rewritten_delete_files_count int, added_delete_files_count int, "
                                               "rewritten_bytes_count bigint, added_bytes_count bigint",
                                               ("options", "where")),
    "rewrite_table_path": Procedure(("table", "source_prefix", "target_prefix", "start_version", "end_version",
                                     "staging_location", "create_file_list"), ("table", "source_prefix", "target_prefix"),
                                    "rewrite_table_path", "CALL system.rewrite_table_path",
                                    "latest_version string, file_list_location string, "
                                    "rewritten_manifest_file_paths_count int, rewritten_delete_file_paths_count int",
                                    ("source_prefix", "target_prefix", "start_version", "end_version",
                                     "staging_location", "create_file_list")),
    "compute_table_stats": Procedure(("table", "snapshot_id", "columns"), ("table",), "compute_table_stats",
                                     "CALL system.compute_table_stats", "statistics_file string",
                                     ("snapshot_id", "columns")),
    "compute_partition_stats": Procedure(("table", "snapshot_id"), ("table",), "compute_partition_stats",
                                         "CALL system.compute_partition_stats", "partition_statistics_file string",
                                         ("snapshot_id",)),
    # Paimon's compaction procedure (CALL sys.compact): a full compaction of the table or of the
    # buckets ``where`` reads
    "compact": Procedure(("table", "partitions", "where", "order_strategy", "order_by", "options"), ("table",),
                         "rewrite_data_files", "CALL sys.compact", "result boolean", ("where",)),
    # use_caching: Spark caching of the JVM action; icefloe rewrites manifests without a Spark job
    # target_manifest_size_bytes: read by Iceberg's procedure, not yet passed to its action
    "rewrite_manifests": Procedure(("table", "use_caching", "spec_id", "target_manifest_size_bytes", "sort_by"),
                                   ("table",), "rewrite_manifests", "CALL system.rewrite_manifests",
                                   "rewritten_manifests_count int, added_manifests_count int", ("spec_id", "sort_by"),
                                   ("use_caching",)),
    "create_tag": Procedure(("table", "tag", "snapshot_id", "max_ref_age_ms"), ("table", "tag"), "create_tag",
                            "CALL system.create_tag", "tag string, snapshot_id bigint"),
    "delete_tag": Procedure(("table", "tag"), ("table", "tag"), "drop_tag", "CALL system.delete_tag",
                            "result boolean"),      # Paimon's procedure (Iceberg has ALTER TABLE ... DROP TAG)
    "create_changelog_view": Procedure(("table", "options", "changelog_view", "net_changes", "compute_updates",
                                        "identifier_columns"), ("table",), "changelog",
                                       "CALL system.create_changelog_view", "changelog_view string"),
    "create_branch": Procedure(("table", "branch", "snapshot_id", "max_ref_age_ms"), ("table", "branch"),
                               "create_branch", "CALL system.create_branch", "branch string, snapshot_id bigint"),
}
PROCEDURES.update({name: Procedure(spec.params, spec.required, spec.method, f"CALL system.{name}", spec.result)
                   for name, spec in {**SNAPSHOT_PROCEDURES, "register_table": REGISTER_TABLE}.items()})


def _err(reason: str, node: Optional[exp.Expression], stmt_text: Optional[str] = None) -> SqlError:
    line, col = node_position(node) if node is not None else (None, None)
    return SqlError(reason, line, col, stmt_text)


def _table_only(call: Call) -> dict[str, exp.Expression]:
    """The ``table`` argument of a call (named, or the first positional one)."""
    for i, (name, value) in enumerate(call.args):
        if name == "table" or (name is None and i == 0):
            return {"table": value}
    raise SqlError(f"{call.procedure.parts[-1]} needs argument 'table'", call.procedure.line, call.procedure.column)


def _value(sess: StatementSession, node: exp.Expression) -> Any:
    try:
        return literal_value(node)
    except ValueError:
        return spark_value(sess, node.sql('spark'))


def _timestamp_ms(sess: StatementSession, node: exp.Expression) -> int:
    micros = spark_value(sess, f"unix_micros(CAST(({node.sql('spark')}) AS TIMESTAMP))")
    if micros is None:
        raise _err(f"{node.sql('spark')} is not a timestamp", node)
    return micros // 1000


def call(sess: StatementSession, stmt: Call) -> DataFrame:
    parts = [p.lower() for p in stmt.procedure.parts]
    if len(parts) == 3 and parts[0] == sess.catalog_name.lower():
        parts = parts[1:]
    if len(parts) != 2 or parts[0] not in ("system", "sys"):    # sys: Paimon's procedures' namespace
        raise SqlError(f"unknown procedure {stmt.procedure}; icefloe procedures are "
                       f"{sess.catalog_name}.system.<name>", stmt.procedure.line, stmt.procedure.column)
    if parts[1] in migration_procedures.PROCEDURES:      # their tables are in other catalogs, or not yet
        return migration_procedures.call(sess, stmt, parts[1])
    if parts[1] in paimon_catalog_procedures.PROCEDURES:     # the catalog's tables, no one table
        return paimon_catalog_procedures.call(sess, stmt, parts[1])
    proc = PROCEDURES.get(parts[1])
    paimon = paimon_procedures.PROCEDURES.get(parts[1])
    if proc is None and paimon is None and parts[1] in paimon_procedures.REFUSED:
        raise NotSupportedYetError(f"CALL sys.{parts[1]} ({paimon_procedures.REFUSED[parts[1]]})",
                                   stmt.procedure.line, stmt.procedure.column)
    if proc is None and paimon is None:
        known = sorted(set(PROCEDURES) | set(paimon_procedures.PROCEDURES) | set(migration_procedures.PROCEDURES)
                       | set(paimon_catalog_procedures.PROCEDURES))
        raise SqlError(f"unknown procedure {stmt.procedure}; known: {', '.join(known)}",
                       stmt.procedure.line, stmt.procedure.column)
    args = _table_only(stmt)
    table_node = args["table"]
    table_name = _value(sess, table_node)
    if not isinstance(table_name, str):
        raise _err("argument 'table' must be a string like 'db.table'", table_node)
    if parts[1] == "register_table" and proc is not None:
        return _register(sess, stmt, proc, table_name, bind_args(stmt, proc.params, proc.required))
    if paimon is not None and parts[1] in paimon_procedures.DATABASE_WIDE and table_name.endswith(".*"):
        return _database_wide(sess, stmt, parts[1], table_name[:-2], table_node)
    ref, _ours = sess.resolve_name(table_name.split("."))     # a bare name: under the namespace of USE
    if ref is None or ref.metadata:
        hint = " (name it db.table, or USE db first)" if "." not in table_name and not sess.namespace else ""
        raise _err(f"unknown table {table_name}{hint}", table_node)
    t = sess.load(ref, write=True)
    # Paimon's own procedure and arguments; an expire_snapshots call naming an argument only the
    # shared (Iceberg's) form has (retain_last) takes the shared form, which Paimon tables had first
    shared_names = set(proc.params) - set(paimon.params) \
        if proc is not None and paimon is not None and parts[1] in paimon_procedures.SHARED_FORMS else set()
    if paimon is not None and t.supports(PAIMON_PROCEDURES) and \
            not {(n or "").lower() for n, _ in stmt.args} & shared_names:
        # PAIMON_PROCEDURES: a Paimon table
        return paimon_procedures.call(sess, cast("PaimonTable", t), parts[1],
                                      bind_args(stmt, paimon.params, paimon.required))
    if proc is None:
        raise _err(f"{parts[1]} is a procedure of Paimon tables; {table_name} is an {t.format} table", table_node)
    args = bind_args(stmt, proc.params, proc.required)
    fn = getattr(t, proc.method, None)
    if fn is None:
        line, col = stmt.procedure.line, stmt.procedure.column
        raise NotSupportedYetError(proc.capability, line, col)
    before = t.current_snapshot() if hasattr(t, "current_snapshot") else None
    name = parts[1]
    kwargs: dict[str, Any] = {}
    for key, node in args.items():
        if key == "table":
            continue
        if key in ("older_than", "timestamp"):
            kwargs[key] = _timestamp_ms(sess, node)
        elif key == "snapshot_ids" and isinstance(node, exp.Array):
            kwargs[key] = [int(_value(sess, e)) for e in node.expressions]
        elif key in ("identifier_columns", "columns", "sort_by") and isinstance(node, exp.Array):
            kwargs[key] = [str(_value(sess, e)) for e in node.expressions]
        elif key in ("options", "equal_schemes", "equal_authorities") and isinstance(node, exp.Map):
            # sqlglot types a map's keys and values as its base class; the parser makes Expressions
            keys, values = cast("list[exp.Expression]", node.keys), cast("list[exp.Expression]", node.values)
            kwargs[key] = dict(zip((_value(sess, k) for k in keys), (_value(sess, v) for v in values)))
        else:
            kwargs[key] = _value(sess, node)
    if name == "remove_orphan_files":
        _orphan_listing(sess, stmt, kwargs)
    if name in SNAPSHOT_PROCEDURES:
        run = SNAPSHOT_PROCEDURES[name].run
        assert run is not None, "a snapshot procedure runs on its table"
        with sess.refused_as(proc.capability):
            try:
                rows = run(t, kwargs)
            except (SqlError, NotSupportedError, NoSuchSnapshotError):
                raise
            except IcefloeError as e:
                raise SqlError(f"{proc.capability}: {e}", stmt.procedure.line, stmt.procedure.column) from None
        return sess.spark.createDataFrame(rows, proc.result)
    manifests_before = {m["path"] for m in t.manifest_files()} if name == "rewrite_manifests" else set[str]()
    try:
        result = _run(t, name, fn, kwargs)
        if name == "rewrite_manifests":      # what the procedure reports: manifests replaced and written
            after = {m["path"] for m in t.refresh().manifest_files()} if result is not None else manifests_before
            result = {"rewritten_manifests_count": len(manifests_before - after),
                      "added_manifests_count": len(after - manifests_before)}
    except NotSupportedYetError:
        raise
    except NotSupportedError as e:
        raise NotSupportedYetError(refusal(proc.capability, e), stmt.procedure.line, stmt.procedure.column) \
            from None
    except (SqlError, NoSuchSnapshotError, CommitFailedError):
        raise
    except ValueError as e:            # an argument the table cannot take (rewrite_manifests' sort_by, ...)
        raise SqlError(f"{proc.capability}: {e}", stmt.procedure.line, stmt.procedure.column) from None
    except IcefloeError as e:          # what the table refuses (a ref's head to expire, ...)
        raise SqlError(f"{proc.capability}: {e}", stmt.procedure.line, stmt.procedure.column) from None
    return _result_df(sess, t, name, proc, result, before, kwargs)


def _database_wide(sess: StatementSession, stmt: Call, name: str, database: str, table_node: exp.Expression) -> DataFrame:
    """Paimon's ``table => 'db.*'``: the procedure on every Paimon table of database ``db``."""
    paimon = paimon_procedures.PROCEDURES[name]
    parts = database.split(".")
    if len(parts) == 2 and parts[0].lower() == sess.catalog_name.lower():
        parts = parts[1:]
    db = ".".join(parts)
    if not db or db not in sess.catalog.list_namespaces():
        raise _err(f"{name}: unknown database {db or database!r} in table => '{database}.*'", table_node)
    tables = [cast("PaimonTable", t) for t in (sess.catalog.load_table(n) for n in sess.catalog.list_tables(db))
              if t.supports(PAIMON_PROCEDURES)]      # PAIMON_PROCEDURES: Paimon tables
    return paimon_procedures.call_database(sess, name, db, bind_args(stmt, paimon.params, paimon.required), tables)


def _orphan_listing(sess: StatementSession, stmt: Call, kwargs: dict[str, Any]) -> None:
    """remove_orphan_files' ``file_list_view`` as the listing the table takes (its ``file_path``
    and ``last_modified`` columns)."""
    view = kwargs.pop("file_list_view", None)
    if view is None:
        return
    try:
        rows = sess.spark.table(str(view)).selectExpr("file_path", "unix_millis(last_modified)").collect()
    except Exception as e:  # noqa: BLE001 - a missing view or column: Spark says which
        raise SqlError(f"remove_orphan_files: file_list_view {view} must be a view with columns file_path and "
                       f"last_modified ({str(e).splitlines()[0]})", stmt.procedure.line, stmt.procedure.column) \
            from None
    kwargs["listing"] = [(r[0], r[1]) for r in rows]


def _register(sess: StatementSession, stmt: Call, proc: Procedure, table_name: str,
              args: dict[str, exp.Expression]) -> DataFrame:
    """``register_table(table, metadata_file)``: the table must not exist yet."""
    parts = table_name.split(".")
    if len(parts) == 3 and parts[0].lower() == sess.catalog_name.lower():
        parts = parts[1:]
    if len(parts) != 2:
        raise _err(f"register_table: table name {table_name} must be db.table", args["table"])
    location = _value(sess, args["metadata_file"])
    try:
        rows = register_table(sess.catalog, ".".join(parts), str(location))
    except NotSupportedError as e:
        raise NotSupportedYetError(refusal(proc.capability, e), stmt.procedure.line, stmt.procedure.column) \
            from None
    except IcefloeError as e:
        raise SqlError(f"{proc.capability}: {e}", stmt.procedure.line, stmt.procedure.column) from None
    return sess.spark.createDataFrame(rows, proc.result)


def _run(t: Table, name: str, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if name == "rollback_to_snapshot":
        return fn(int(kwargs["snapshot_id"]))
    if name == "rollback_to_timestamp":
        return fn(kwargs["timestamp"])
    capability = f"CALL system.{name}"
    if name == "create_tag":
        return fn(kwargs["tag"], kwargs.get("snapshot_id"), max_ref_age_ms=kwargs.get("max_ref_age_ms"))
    if name == "delete_tag":
        fn(kwargs["tag"])
        return {"result": True}
    if name == "create_branch":
        return fn(kwargs["branch"], kwargs.get("snapshot_id"), max_ref_age_ms=kwargs.get("max_ref_age_ms"))
    if name == "create_changelog_view":
        return _changelog(t, fn, kwargs)
    if name == "rewrite_data_files":      # Iceberg's rules and defaults: options given, if only {}
        return _rewrite_data_files(t, fn, {**kwargs, "options": kwargs.get("options") or {}})
    if name == "remove_orphan_files":
        kwargs = {k: v for k, v in kwargs.items() if k not in PROCEDURES[name].ignored}
        try:
            return fn(**{k: v for k, v in kwargs.items() if v is not None})
        except ValueError as e:
            raise SqlError(f"{capability}: {e}") from None
    if name in ("rewrite_position_delete_files", "compute_table_stats", "compute_partition_stats"):
        args = {"rewrite_position_delete_files": (kwargs.get("where"), kwargs.get("options")),
                "compute_table_stats": (kwargs.get("snapshot_id"), kwargs.get("columns")),
                "compute_partition_stats": (kwargs.get("snapshot_id"),)}[name]
        try:
            out = fn(*args)
            if name != "rewrite_position_delete_files":
                return {PROCEDURES[name].result.split(" ")[0]: out}
            return out
        except ValueError as e:
            raise SqlError(f"{capability}: {e}") from None
        except NotImplementedError as e:
            raise NotSupportedYetError(f"{capability}: {e}") from None
    proc = PROCEDURES[name]
    given = {k: v for k, v in kwargs.items() if v is not None and k not in proc.ignored}
    extra = sorted(k for k in given if k not in proc.passed)
    if extra:
        raise NotSupportedYetError(f"{capability} with {', '.join(extra)}")
    return fn(**given)


def _rewrite_data_files(t: Table, fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, int]:
    """Iceberg's output: data files rewritten and added, the bytes rewritten, files that failed
    (none: one commit or nothing), delete files removed; from the live files before and after."""
    before = _live_files(t)
    try:
        fn(**{k: v for k, v in kwargs.items() if v is not None})
    except ValueError as e:
        raise SqlError(f"CALL system.rewrite_data_files: {e}") from None
    except NotImplementedError as e:
        raise NotSupportedYetError(f"CALL system.rewrite_data_files: {e}") from None
    after = _live_files(t.refresh())
    removed = [p for p in before if p not in after]
    return {"rewritten_data_files_count": sum(1 for p in removed if before[p][0] == 0),
            "added_data_files_count": sum(1 for p in after if p not in before and after[p][0] == 0),
            "rewritten_bytes_count": sum(before[p][1] for p in removed if before[p][0] == 0),
            "failed_data_files_count": 0,
            "removed_delete_files_count": sum(1 for p in removed if before[p][0] != 0)}


def _live_files(t: Table) -> dict[str, tuple[int, int]]:
    """{path: (content, size)} of the table's live files (content 0: data)."""
    return {r["file_path"]: (r.get("content") or 0, r["file_size_in_bytes"])
            for r in t.metadata_table("files").to_pylist()}


_CHANGELOG_OPTIONS = ("start-snapshot-id", "end-snapshot-id", "start-timestamp", "end-timestamp")


def _changelog(t: Table, fn: Callable[..., Any], kwargs: dict[str, Any]) -> tuple[DataFrame, str]:
    """The changelog DataFrame and the name of the view to register it as."""
    options = {str(k).lower(): v for k, v in (kwargs.get("options") or {}).items()}
    unknown = sorted(k for k in options if k not in _CHANGELOG_OPTIONS)
    if unknown:
        raise NotSupportedYetError(f"create_changelog_view options {', '.join(unknown)} (known: "
                                   f"{', '.join(_CHANGELOG_OPTIONS)})")
    start = options.get("start-snapshot-id")
    end = options.get("end-snapshot-id")
    if options.get("start-timestamp") is not None:
        start = _snapshot_before(t, int(options["start-timestamp"]), strict=True)
    if options.get("end-timestamp") is not None:
        end = _snapshot_before(t, int(options["end-timestamp"]))
        if end is None:
            raise SqlError(f"no snapshot of {t.name} was committed by end-timestamp {options['end-timestamp']}")
    df = fn(int(start) if start is not None else None, int(end) if end is not None else None,
            kwargs.get("identifier_columns"), _bool(kwargs.get("compute_updates")),
            bool(_bool(kwargs.get("net_changes"))))
    view = kwargs.get("changelog_view") or f"{t.name.split('.')[-1]}_changes"
    return df, view


def _bool(v: object) -> Optional[bool]:
    if v is None or isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "1")


def _snapshot_before(t: Table, millis: int, strict: bool = False) -> Optional[int]:
    """The newest snapshot committed at or before ``millis`` (``strict``: before it; None: none was)."""
    best = None
    for s in t.snapshots():
        if (s.timestamp_ms < millis if strict else s.timestamp_ms <= millis) and (best is None or s.timestamp_ms >= best.timestamp_ms):
            best = s
    return best.snapshot_id if best is not None else None


def _result_df(sess: StatementSession, t: Table, name: str, proc: Procedure, result: Any, before: Any,
               kwargs: dict[str, Any]) -> DataFrame:
    if name == "create_changelog_view":
        df, view = result
        df.createOrReplaceTempView(view)
        return sess.spark.createDataFrame([(view,)], proc.result)
    if name == "compact":
        return sess.spark.createDataFrame([(True,)], proc.result)
    if name in ("rollback_to_snapshot", "rollback_to_timestamp"):
        after = t.current_snapshot() if hasattr(t, "current_snapshot") else None
        rows = [(before.snapshot_id if before else None, after.snapshot_id if after else None)]
    elif name in ("create_tag", "create_branch"):
        t = t.refresh() if hasattr(t, "refresh") else t
        refs = getattr(getattr(t, "metadata", None), "refs", None)
        if refs is None and callable(getattr(t, "refs", None)):
            refs = t.refs()                  # Paimon tables: their tags
        refs = refs or {}
        key = kwargs["tag" if name == "create_tag" else "branch"]
        rows = [(key, refs[key].snapshot_id if key in refs else None)]
    elif name == "expire_snapshots":
        rows = [_expire_counts(result)]
    else:
        rows = _rows_from(result, proc.result)
    return sess.spark.createDataFrame(rows, proc.result)


def _expire_counts(report: ExpireReport) -> tuple[Optional[int], Optional[int], Optional[int]]:
    """expire_snapshots' row: the data files, manifests and manifest lists deleted (None where the
    table's expiry does not report the files it deleted)."""
    if not report.files_reported:
        return (None, None, None)
    return (len(report.deleted_data_files), len(report.deleted_manifests), len(report.deleted_manifest_lists))


def _rows_from(result: Any, ddl: str) -> Rows:
    """Fit whatever the API returned (dict, list of paths, dataclass) to the procedure's result row."""
    cols = [c.strip().split(" ")[0] for c in ddl.split(",")]
    if result is None:
        return []
    if isinstance(result, (list, tuple, set)) and len(cols) == 1:
        return [(str(r),) for r in result]
    if not isinstance(result, dict):
        result = getattr(result, "__dict__", {}) or {}
    aliases = {c: (c, c.replace("_count", ""), c.replace("_count", "s")) for c in cols}
    row: list[Any] = []
    for c in cols:
        v = None
        for k in aliases[c]:
            if k in result:
                v = result[k]
                break
        if isinstance(v, (list, tuple, set)):
            v = len(v)
        row.append(v)
    return [tuple(row)]
