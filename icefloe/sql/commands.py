"""Spark commands that name a table (``SHOW COLUMNS``, ``SHOW PARTITIONS``, ``SHOW TABLE EXTENDED``,
``REFRESH TABLE``, ``ANALYZE TABLE``) when the table is an icefloe table: Spark would look for it in
its own catalog and report it missing, so they are answered here or refused by name."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional, cast

from sqlglot import exp

from icefloe.errors import IcefloeError, NotSupportedError
from icefloe.sql.names import table_parts
from icefloe.sql.show_extended import show_table_extended
from icefloe.sql.show_partitions import show_partitions
from icefloe.table.capabilities import BRANCH_TABLES, SHOW_PARTITIONS, TableStatistics

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.sql.statement_context import StatementSession
    from icefloe.sql.names import TableRef
    from icefloe.table.paimon import PaimonTable

_NAME = r"((?:`[^`]+`|[A-Za-z_][\w$]*)(?:\.(?:`[^`]+`|[A-Za-z_][\w$]*))*)"
_SHOW_COLUMNS = re.compile(rf"^\s*SHOW\s+COLUMNS\s+(?:FROM|IN)\s+{_NAME}(?:\s+(?:FROM|IN)\s+{_NAME})?\s*$", re.I)
_SHOW_PARTITIONS = re.compile(rf"^\s*SHOW\s+PARTITIONS\s+{_NAME}", re.I)
_SHOW_EXTENDED = re.compile(r"^\s*SHOW\s+TABLE\s+EXTENDED\b", re.I)
_MSCK = re.compile(rf"^\s*(?:MSCK\s+)?REPAIR\s+TABLE\s+{_NAME}", re.I)
# why there is nothing to repair: a table's partitions are those of its data files, registered nowhere else
_NO_PARTITION_REGISTRY = {
    "paimon": "a Paimon table's partitions are those of its snapshot's data files, and a filesystem catalog "
              "registers none elsewhere, so there is nothing to repair (Paimon runs MSCK REPAIR TABLE only on "
              "Format Tables whose partitions a REST catalog keeps, and refuses it on its own tables)",
    "iceberg": "an Iceberg table's partitions are those of its manifests, registered nowhere else, so there is "
               "nothing to repair (Iceberg's Spark runtime refuses MSCK REPAIR TABLE on its tables too)",
}


def _parts(name: str) -> list[str]:
    return [p.strip("`") for p in re.findall(r"`[^`]+`|[^.]+", name)]


def command(sess: StatementSession, tree: Optional[exp.Expression]) -> Optional[DataFrame]:
    """The result of a command about an icefloe table; None when it is not about one."""
    stmt = sess.statement
    assert stmt is not None, "a command is answered while its statement runs"
    text = stmt.text
    if isinstance(tree, (exp.Refresh, exp.Analyze)):
        tables = [tree.this] if isinstance(tree, exp.Refresh) else list(tree.args.get("tables") or [])
        table = tables[0] if tables else None
        if not isinstance(table, exp.Table):
            return None
        ref, ours = sess.resolve(table)
        if ref is None and not ours:
            return None
        ref = sess.resolve_or_fail(table)
        if isinstance(tree, exp.Refresh):
            sess.load(ref)         # every statement reads the table's latest metadata: nothing is cached
            return sess.empty()
        return analyze(sess, tree, ref)
    m = _SHOW_COLUMNS.match(text)
    if m:
        parts = _parts(m.group(1)) if m.group(2) is None else [*_parts(m.group(2)), *_parts(m.group(1))]
        ref, ours = sess.resolve_name(parts)
        if ref is None and not ours:
            return None
        if ref is None:
            raise sess.error(f"unknown table {'.'.join(parts)}")
        from pyspark.sql.types import StringType, StructField, StructType

        t = sess.load(ref)
        return sess.spark.createDataFrame([(n,) for n in t.schema.column_names],
                                          StructType([StructField("col_name", StringType(), False)]))
    m = _SHOW_PARTITIONS.match(text)
    if m:
        ref, ours = sess.resolve_name(_parts(m.group(1)))
        if ref is None and not ours:
            return None
        if ref is not None and not ref.metadata and sess.load(ref).supports(SHOW_PARTITIONS):
            # SHOW_PARTITIONS is a capability of Paimon tables only
            return show_partitions(sess, cast("PaimonTable", sess.load(ref)), text[m.end():])
        raise sess.not_supported(f"SHOW PARTITIONS on icefloe table {'.'.join(_parts(m.group(1)))} "
                                 "(read its partitions metadata table: SELECT * FROM db.t.partitions)")
    if _SHOW_EXTENDED.match(text):
        return show_table_extended(sess, text)
    m = _MSCK.match(text)
    if m:
        ref, _ours = sess.resolve_name(_parts(m.group(1)))
        if ref is None:
            return None                     # Spark's own table, or an error naming the catalogs
        fmt = sess.load(ref).format
        raise sess.not_supported(f"MSCK REPAIR TABLE {ref} ({_NO_PARTITION_REGISTRY.get(fmt, fmt)})")
    return None


def analyze(sess: StatementSession, tree: exp.Analyze, ref: TableRef) -> DataFrame:
    """``ANALYZE TABLE t COMPUTE STATISTICS [FOR COLUMNS a, b | FOR ALL COLUMNS]`` on a table whose
    format keeps table statistics (Paimon's statistics file); refused by name on the others."""
    t = sess.load(ref)
    if ref.metadata is not None or not isinstance(t, TableStatistics):
        raise sess.not_supported(f"ANALYZE TABLE on icefloe table {ref} ({t.format} keeps column statistics per "
                                 "data file in the table's metadata; it has no table statistics file to compute)",
                                 tree)
    if tree.args.get("partition") is not None:
        raise sess.not_supported(f"ANALYZE TABLE {ref} PARTITION (...) (Paimon's statistics describe the whole "
                                 "table, and Paimon refuses PARTITION on its tables too; it measures partitions only "
                                 "of Format Tables whose partitions a REST catalog keeps; analyze it without "
                                 "PARTITION)", tree)
    stats = tree.expression
    if not isinstance(stats, exp.AnalyzeStatistics) or str(stats.args.get("kind", "")).upper() != "COMPUTE":
        raise sess.not_supported(f"this form of ANALYZE TABLE on {ref} (COMPUTE STATISTICS [FOR COLUMNS ... | "
                                 "FOR ALL COLUMNS] is offered)", tree)
    mode = str(stats.this or "").upper()
    if mode == "NOSCAN":
        raise sess.error(f"ANALYZE TABLE {ref} COMPUTE STATISTICS NOSCAN: Paimon's statistics are computed from "
                         "the rows, so NOSCAN cannot be honoured; leave it out", tree)
    if mode not in ("", "FOR COLUMNS", "FOR ALL COLUMNS"):
        raise sess.not_supported(f"ANALYZE TABLE {ref} COMPUTE STATISTICS {mode}", tree)
    columns = [c.name for c in stats.expressions] if mode == "FOR COLUMNS" else []
    with sess.refused_as(f"ANALYZE TABLE {ref}", tree):
        try:
            t.analyze(columns, all_columns=mode == "FOR ALL COLUMNS")
        except NotSupportedError:
            raise
        except IcefloeError as e:       # an unknown column, a type without statistics
            raise sess.error(str(e), tree) from None
    return sess.empty()


def missing_metadata_table(sess: StatementSession, table: exp.Table) -> Optional[str]:
    """The error for ``db.t.xyz`` / ``db.`t$xyz``` naming an icefloe table's metadata table that does not
    exist (Spark would report a namespace or table of its own catalog); None for other names."""
    parts = table_parts(table)
    if parts and "$" in parts[-1]:
        base, _, suffix = parts[-1].rpartition("$")
        candidates = [(parts[:-1] + [base], suffix)]
    else:
        candidates = [(parts[:-1], parts[-1])] if len(parts) >= 3 else []
    for base_parts, suffix in candidates:
        ref, _ours = sess.resolve_name(base_parts)
        if ref is not None and ref.metadata is None:      # a branch's or tag's too (db.t.branch_b.nope)
            t = sess.load(ref)
            if t.supports(BRANCH_TABLES) and suffix.lower().startswith("branch_") and "$" in parts[-1]:
                return (f"table {ref} has no branch {suffix[len('branch_'):]!r} (branches: "
                        f"{', '.join(cast('PaimonTable', t).branches()) or 'none'}; "   # BRANCH_TABLES: Paimon's
                        "CALL sys.create_branch creates one)")
            return (f"table {ref} has no metadata table {suffix}; {t.format} tables have "
                    f"{', '.join(t.metadata_table_names())}")
    return None
