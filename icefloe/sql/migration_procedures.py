"""The procedures that move tables between formats without rewriting data.

Iceberg's (spark-procedures, "Table migration"): ``add_files``, ``snapshot``, ``migrate``;
Paimon's: ``migrate_table``, ``migrate_file`` (``source_type`` ``parquet``: ``table`` is a
directory; ``iceberg``: an Iceberg table of a catalog of the session). Arguments and output
rows are the procedures' own; each is carried out by ``icefloe.table.migration``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, cast

from icefloe.errors import IcefloeError, NotSupportedError
from icefloe.paimon.catalog import HIVE_MIGRATION
from icefloe.sql.call_args import bind_args, spark_value
from icefloe.sql.errors import NotSupportedYetError, SqlError
from icefloe.sql.parser import Call, node_position
from icefloe.sql.translate import literal_value
from icefloe.table import migration

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from sqlglot import exp

    from icefloe.core.io import FileIO
    from icefloe.sql.statement_context import StatementCatalog, StatementSession
    from icefloe.table.iceberg import IcebergTable
    from icefloe.table.migration import TableCatalog

#: a procedure's arguments, evaluated, by name
Args = Mapping[str, Any]
#: a migration source: a Parquet directory or a table, its catalog and its name (None, None: a directory)
Source = tuple[Any, Optional["TableCatalog"], Optional[str]]


@dataclass(frozen=True)
class Spec:
    params: tuple[str, ...]     # in positional order
    required: tuple[str, ...]
    result: str            # Spark DDL of the output row


PROCEDURES = {
    "add_files": Spec(("table", "source_table", "partition_filter", "check_duplicate_files", "parallelism"),
                      ("table", "source_table"), "added_files_count bigint, changed_partition_count bigint"),
    "snapshot": Spec(("source_table", "table", "location", "properties", "parallelism", "ignore_missing_files"),
                     ("source_table", "table"), "imported_files_count bigint"),
    "migrate": Spec(("table", "properties", "drop_backup", "backup_table_name", "parallelism", "ignore_missing_files"),
                    ("table",), "migrated_files_count bigint"),
    "migrate_table": Spec(("source_type", "table", "options", "delete_origin", "target_table", "options_map",
                           "parallelism"), ("source_type", "table"), "result boolean"),
    "migrate_file": Spec(("source_type", "source_table", "target_table", "delete_origin", "parallelism"),
                         ("source_type", "source_table", "target_table"), "result boolean"),
}
SOURCE_TYPES = ("parquet", "iceberg")


def _err(reason: str, node: Optional[exp.Expression] = None) -> SqlError:
    line, col = node_position(node) if node is not None else (None, None)
    return SqlError(reason, line, col)


def _values(sess: StatementSession, nodes: Mapping[str, exp.Expression]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, node in nodes.items():
        try:
            out[key] = literal_value(node)
        except ValueError:
            out[key] = spark_value(sess, node.sql('spark'))
    return out


def _bool(v: object, key: str) -> Optional[bool]:
    if v is None or isinstance(v, bool):
        return v
    text = str(v).strip().lower()
    if text not in ("true", "false"):
        raise _err(f"{key} must be true or false, got {v!r}")
    return text == "true"


def _catalogs(sess: StatementSession) -> dict[str, StatementCatalog]:
    return {sess.catalog_name.lower(): sess.catalog, **sess.catalogs}


def _table_name(sess: StatementSession, text: object) -> tuple[StatementCatalog, str]:
    """(catalog, db.table) of a table name of the session's catalogs."""
    parts = str(text).split(".")
    cats = _catalogs(sess)
    if len(parts) == 3 and parts[0].lower() in cats:
        return cats[parts[0].lower()], ".".join(parts[1:])
    if len(parts) == 1 and sess.namespace:
        return sess.catalog, f"{sess.namespace}.{parts[0]}"
    if len(parts) != 2:
        raise _err(f"table name {text!r} must be db.table (or catalog.db.table)")
    return sess.catalog, str(text)


def call(sess: StatementSession, stmt: Call, name: str) -> DataFrame:
    spec = PROCEDURES[name]
    args = _values(sess, bind_args(stmt, spec.params, spec.required))
    capability = f"CALL system.{name}" if name in ("add_files", "snapshot", "migrate") else f"CALL sys.{name}"
    if _bool(args.get("ignore_missing_files"), "ignore_missing_files"):
        raise NotSupportedYetError(f"{capability} with ignore_missing_files => true (a missing source file fails "
                                   "the call)", stmt.procedure.line, stmt.procedure.column)
    parallelism = args.get("parallelism")
    if parallelism is not None and (not isinstance(parallelism, int) or parallelism < 1):
        raise _err(f"parallelism must be a positive integer, got {parallelism!r}")
    try:
        row = _run(sess, name, args, parallelism)
    except (SqlError, NotSupportedError):
        raise
    except IcefloeError as e:
        raise SqlError(f"{capability}: {e}", stmt.procedure.line, stmt.procedure.column) from None
    except FileNotFoundError as e:
        raise SqlError(f"{capability}: no such file or directory: {e}", stmt.procedure.line,
                       stmt.procedure.column) from None
    return sess.spark.createDataFrame([row], spec.result)


def _source(sess: StatementSession, text: object, io: FileIO) -> Source:
    if not isinstance(text, str):
        raise _err(f"source must be a string (a table name or `parquet`.`/path`), got {text!r}")
    spark_table = _spark_table(sess, text)
    if spark_table is not None:
        return migration.ParquetDirectory.at(spark_table, io), None, None
    catalogs: dict[str, TableCatalog] = dict(_catalogs(sess))
    return migration.load_source(text, catalogs, io, sess.catalog)


def _spark_table(sess: StatementSession, text: str) -> Optional[str]:
    """The directory of Spark's own table ``text`` (``spark_catalog.db.t``, or ``db.t`` when no catalog of the
    session has it) when it is a Parquet table; None when ``text`` names no Spark table. A Spark table of
    another format is refused: icefloe imports Parquet files."""
    if migration.parse_source(text) is not None:
        return None                                      # `parquet`.`/path`
    parts = [x.strip("`") for x in text.split(".")]
    if not all(re.fullmatch(r"[\w-]+", x) for x in parts):
        return None
    if parts[0].lower() == "spark_catalog":
        parts = parts[1:]
    elif len(parts) != 2 or sess.resolve_name(parts)[0] is not None or parts[0].lower() in _catalogs(sess):
        return None
    if len(parts) != 2 or not sess.spark.catalog.tableExists(f"spark_catalog.{parts[0]}.{parts[1]}"):
        return None
    quoted = ".".join(f"`{x}`" for x in parts)
    info = {str(r[0]).strip(): str(r[1]).strip() for r in
            sess.spark.sql(f"DESCRIBE TABLE EXTENDED spark_catalog.{quoted}").collect() if r[0]}
    provider = info.get("Provider", "").lower()
    serde = info.get("Serde Library", "").lower()
    if provider != "parquet" and not (provider == "hive" and "parquet" in serde):
        raise _err(f"source {text} is a Spark table of format {provider or 'unknown'}; icefloe imports Parquet "
                   "files (a Parquet table, or `parquet`.`/path`)")
    if not info.get("Location"):
        raise _err(f"source {text}: Spark gives no location for it")
    return info["Location"]


def _run(sess: StatementSession, name: str, a: Args, parallelism: Optional[int]) -> tuple[Any, ...]:
    if name == "add_files":
        cat, target = _table_name(sess, a["table"])
        loaded = cat.load_table(target)
        if not migration.holds(loaded, "iceberg"):
            raise _err(f"add_files adds files to Iceberg tables; {a['table']} is a {loaded.format} table "
                       "(Paimon: CALL sys.migrate_file)")
        table = cast("IcebergTable", loaded)        # an Iceberg table: holds(..., "iceberg")
        source, _c, _n = _source(sess, a["source_table"], table.io)
        dupes = _bool(a.get("check_duplicate_files"), "check_duplicate_files")
        out = migration.add_files(table, source, a.get("partition_filter"), True if dupes is None else dupes,
                                  parallelism=parallelism)
        return (out["added_files_count"], out["changed_partition_count"])
    if name == "snapshot":
        cat, target = _table_name(sess, a["table"])
        _iceberg_catalog(cat, "snapshot")
        source, _c, _n = _source(sess, a["source_table"], cat.io)
        out = migration.snapshot(cat, source, target, a.get("location"), a.get("properties"),
                                 parallelism=parallelism)
        return (out["imported_files_count"],)
    if name == "migrate":
        if _spark_table(sess, str(a["table"])) is not None:
            return (_migrate_spark_table(sess, str(a["table"]), a, parallelism),)
        if migration.parse_source(str(a["table"])) is not None:
            raise _err("migrate replaces a table by its name; a Parquet directory has none (use snapshot or "
                       "add_files)")
        src_cat, src_name = _table_name(sess, a["table"])
        _iceberg_catalog(sess.catalog, "migrate")
        out = migration.migrate(sess.catalog, src_cat, src_name, a.get("properties"),
                                bool(_bool(a.get("drop_backup"), "drop_backup")), a.get("backup_table_name"),
                                parallelism=parallelism)
        return (out["migrated_files_count"],)
    source_type = str(a["source_type"]).lower()
    if source_type == "hive":
        raise NotSupportedYetError(f"CALL sys.{name} with source_type 'hive' ({HIVE_MIGRATION}; icefloe migrates "
                                   f"{' and '.join(SOURCE_TYPES)} sources)")
    if source_type not in SOURCE_TYPES:
        raise NotSupportedYetError(f"CALL sys.{name} with source_type {a['source_type']!r} (icefloe migrates "
                                   f"{' and '.join(SOURCE_TYPES)} sources)")
    if not migration.holds(sess.catalog, "paimon"):
        raise _err(f"{name} creates or fills a Paimon table; run it in a Paimon catalog")
    delete = _bool(a.get("delete_origin"), "delete_origin")
    delete = True if delete is None else delete
    text = a["table" if name == "migrate_table" else "source_table"]
    src, src_cat, src_name = _paimon_source(sess, source_type, text)
    if name == "migrate_table":
        target = a.get("target_table") or src_name
        options = migration.parse_options(a.get("options"), a.get("options_map"))
        done = migration.migrate_to_paimon(sess.catalog, src, target, options, delete, src_cat, src_name,
                                           parallelism=parallelism)
        return (done,)
    cat, target = _table_name(sess, a["target_table"])
    done = migration.migrate_files_to_paimon(cat.load_table(target), src, delete, src_cat, src_name,
                                             parallelism=parallelism)
    return (done,)


def _migrate_spark_table(sess: StatementSession, text: str, a: Args, parallelism: Optional[int]) -> int:
    """Iceberg's ``migrate`` of Spark's own Parquet table ``db.t``: an Iceberg table ``db.t`` of
    icefloe's catalog over its files, Spark's table renamed to the backup (``t_BACKUP_`` or
    ``backup_table_name``, in its database), or dropped with ``drop_backup`` (an external table
    only: dropping a managed one deletes the files the Iceberg table now reads). A failure renames
    Spark's table back and leaves no Iceberg table."""
    parts = [x.strip("`") for x in text.split(".")]
    db, name = parts[-2], parts[-1]
    _iceberg_catalog(sess.catalog, "migrate")
    target = f"{db}.{name}"
    if sess.catalog.table_exists(target):
        raise _err(f"migrate: icefloe's catalog {sess.catalog_name} has a table {target} already; the migrated "
                   "table takes that name")
    drop = bool(_bool(a.get("drop_backup"), "drop_backup"))
    backup = str(a.get("backup_table_name") or f"{name}{migration.BACKUP_SUFFIX}")
    if not re.fullmatch(r"[\w-]+", backup):
        raise _err(f"backup_table_name {backup!r} must be a table name (the backup stays in database {db})")
    if sess.spark.catalog.tableExists(f"spark_catalog.{db}.{backup}"):
        raise _err(f"migrate: Spark's table {db}.{backup} exists already (backup_table_name names another)")
    if drop and _spark_table_type(sess, db, name) != "EXTERNAL":
        raise _err(f"migrate with drop_backup => true: {db}.{name} is a managed Spark table, and dropping it "
                   "deletes its files, which the Iceberg table reads (migrate without drop_backup keeps it as "
                   "the backup)")
    source_name, backup_name = f"spark_catalog.`{db}`.`{name}`", f"spark_catalog.`{db}`.`{backup}`"
    sess.run_spark(f"ALTER TABLE {source_name} RENAME TO `{db}`.`{backup}`")   # no more writes to it
    created_namespace = not sess.catalog.namespace_exists(db)
    try:
        if created_namespace:
            sess.catalog.create_namespace(db)
        location = _spark_table(sess, f"spark_catalog.{db}.{backup}")    # a managed table moved with its name
        source = migration.ParquetDirectory.at(str(location), sess.catalog.io)
        out = migration.snapshot(sess.catalog, source, target, properties=a.get("properties"),
                                 summary={"migrated-from": "spark"}, parallelism=parallelism)
    except BaseException:
        sess.run_spark(f"ALTER TABLE {backup_name} RENAME TO `{db}`.`{name}`")
        if created_namespace and sess.catalog.namespace_exists(db):
            sess.catalog.drop_namespace(db)
        raise
    if drop:
        sess.run_spark(f"DROP TABLE {backup_name}")
    return out["imported_files_count"]


def _spark_table_type(sess: StatementSession, db: str, name: str) -> str:
    rows = sess.spark.sql(f"DESCRIBE TABLE EXTENDED spark_catalog.`{db}`.`{name}`").collect()
    return next((str(r[1]).strip().upper() for r in rows if r[0] and str(r[0]).strip() == "Type"), "")


def _paimon_source(sess: StatementSession, source_type: str, text: object) -> Source:
    if source_type == "parquet":
        path = migration.parse_source(str(text)) or str(text)
        return migration.ParquetDirectory.at(path, sess.catalog.io), None, None
    cat, name = _table_name(sess, text)
    table = cat.load_table(name)
    if not migration.holds(table, "iceberg"):
        raise _err(f"source_type 'iceberg' but {text} is a {table.format} table")
    return table, cat, name


def _iceberg_catalog(cat: StatementCatalog, name: str) -> None:
    if not migration.holds(cat, "iceberg"):
        raise _err(f"{name} creates an Iceberg table; its catalog holds {cat.format} tables")


__all__ = ["PROCEDURES", "call"]
