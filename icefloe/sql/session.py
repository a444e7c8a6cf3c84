"""Running SQL text against a warehouse of icefloe tables, with Spark for everything else.

A :class:`SqlSession` holds a :class:`~icefloe.catalog.Catalog` and a Spark
session. Each statement is parsed (``icefloe.sql.parser``) and dispatched:

* statements about icefloe tables (DDL, DML, ``CALL``, metadata tables) go to
  ``icefloe.sql.ddl``, ``icefloe.sql.dml`` and ``icefloe.sql.procedures``, which
  call the table API;
* queries that read icefloe tables have each reference replaced by a temporary
  view of ``table.to_spark(...)`` at the snapshot the reference asks for
  (``VERSION AS OF``, ``TIMESTAMP AS OF``), then run on ``spark.sql``;
* anything else reaches ``spark.sql`` exactly as written.
"""
from __future__ import annotations

import contextlib
import dataclasses

import hashlib
import re
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Protocol, Sequence, cast

from sqlglot import exp

from icefloe.errors import IcefloeError, NoSuchSnapshotError, NoSuchTableError
from icefloe.paimon.snapshot import later_or_equal_watermark
from icefloe.sql import metadata_tables, namespace_statements
from icefloe.errors import NotSupportedError
from icefloe.sql.errors import refusal
from icefloe.sql.errors import NotSupportedYetError, SqlError
from icefloe.sql.names import TableRef, resolve_parts, table_parts
from icefloe.sql.parser import Statement, node_position, position_of, split
from icefloe.sql.translate import literal_value
from icefloe.table.capabilities import (
    AUDIT_LOG, BRANCH_TABLES, PAIMON_DYNAMIC_OPTIONS, WATERMARK_TIME_TRAVEL, metadata_column_reads, row_tables,
)
from icefloe.sql import (
    alter_table, cache_statements, catalog_statements as cs, commands, ddl, dml, metadata_columns, parser as p,
    paimon_incremental, paimon_options, procedures, spark_messages, system_database, system_functions, transactions,
    views, wap,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.paimon.snapshot import Snapshot as PaimonSnapshot
    from icefloe.sql.statement_context import StatementCatalog
    from icefloe.table.base import Table

VIEW_PREFIX = views.INTERNAL_PREFIX


class _BranchTables(Protocol):
    """A table with branches of its own (``BRANCH_TABLES``: Paimon's)."""

    def branches(self) -> list[str]: ...


class _PaimonSnapshots(Protocol):
    """A Paimon table's snapshots (watermark time travel)."""

    name: str

    def snapshots(self) -> list[PaimonSnapshot]: ...


class _DynamicOptions(Protocol):
    """A Paimon table whose writes take the session's options over its own (``PAIMON_DYNAMIC_OPTIONS``)."""

    def with_options(self, options: Mapping[str, str]) -> object: ...


class SqlSession:
    """SQL over one catalog. ``catalog_name`` is the name that qualifies its tables (``local``)."""
    def __init__(self, catalog: StatementCatalog, spark: Optional[SparkSession] = None, catalog_name: str = "local",
                 catalogs: Optional[Mapping[str, StatementCatalog]] = None):
        self.catalog = catalog
        self._spark = spark
        self.catalog_name = catalog_name
        # more catalogs, by the name that qualifies their tables (other.db.t), in the same statements
        self.catalogs: dict[str, StatementCatalog] = {str(k).lower(): v for k, v in (catalogs or {}).items() if str(k).lower() != catalog_name.lower()}
        self._subsessions: dict[str, SqlSession] = {}
        self._views: dict[str, str] = {}   # view name -> display name, to translate Spark's messages back
        self._stmt: Optional[Statement] = None
        self._text = ""
        self.namespace: Optional[str] = None   # USE db: where one-part table names are looked up
        self.expanding_views: tuple[str, ...] = ()        # the views whose queries are being read (a cycle is an error)
        self.views_read: list[str] = []            # every view read (nested ones too), for CREATE VIEW's cycle check
        self.cached_tables: dict[str, cache_statements.CachedTable] = {}           # CACHE TABLE: str(ref) -> cache_statements.CachedTable
        self.transaction: Optional[transactions.SqlTransaction] = None   # between BEGIN and COMMIT/ROLLBACK

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = self.catalog.spark
        return self._spark

    @property
    def spark_started(self) -> bool:
        """Whether this session holds its Spark session already (``spark`` starts one when not)."""
        return self._spark is not None

    @property
    def statement(self) -> Optional[Statement]:
        """The statement being run (its text, place and kind), for the statement handlers."""
        return self._stmt

    # ------------------------------------------------------------------ entry point
    def sql(self, text: str) -> DataFrame:
        """Run every statement of ``text``; return the DataFrame of the last one."""
        statements = split(text)
        self._text = text
        if not statements:
            raise SqlError("no SQL statement given")
        for stmt in statements[:-1]:
            self.execute(stmt)
        return self.execute(statements[-1])

    def finish(self) -> None:
        """End SQL run on a session of its own: a transaction still open is rolled back, and a
        ``SqlError`` says so (``BEGIN`` without ``COMMIT``)."""
        transactions.finish(self)

    def sql_each(self, text: str) -> Iterator[tuple[str, DataFrame]]:
        """Run the statements of ``text`` one by one, yielding (statement text, DataFrame)
        after each (a failing statement raises; the ones after it are not run)."""
        statements = split(text)
        self._text = text
        if not statements:
            raise SqlError("no SQL statement given")
        for stmt in statements:
            yield stmt.text, self.execute(stmt)

    def other_catalog(self, stmt: Statement) -> Optional[str]:
        """The other catalog a DDL statement's target names (``CREATE TABLE other.db.t``), if any."""
        parts = None
        ext, tree = stmt.ext, stmt.tree
        named = getattr(ext, "table", None) if ext is not None else None
        if isinstance(named, p.Name):
            parts = list(named.parts)
        elif isinstance(tree, (exp.Create, exp.Drop, exp.Alter, exp.Describe)):
            target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
            if isinstance(tree, exp.Drop) and tree.args.get("tables"):
                target = tree.args["tables"][0]
            if isinstance(target, exp.Table):
                parts = table_parts(target)
        if parts and len(parts) >= 2 and parts[0].lower() in self.catalogs:
            return parts[0].lower()
        return None

    def _session_for(self, name: str) -> SqlSession:
        """A session of catalog ``name`` that sees this session's catalogs under their names."""
        if name not in self._subsessions:
            others = {self.catalog_name: self.catalog, **{k: v for k, v in self.catalogs.items() if k != name}}
            self._subsessions[name] = SqlSession(self.catalogs[name], self._spark, name, others)
        return self._subsessions[name]

    def execute(self, stmt: Statement) -> DataFrame:
        """Run one statement; between ``BEGIN`` and ``COMMIT`` staged on the session's transaction
        (``icefloe.sql.transactions``)."""
        if self.transaction is not None or transactions.control(stmt) is not None:
            self._stmt = stmt
            return transactions.execute(self, stmt, self._execute)
        return self._execute(stmt)

    def _execute(self, stmt: Statement) -> DataFrame:
        other = self.other_catalog(stmt)
        if other is not None:
            sub = self._session_for(other)
            sub._text = self._text
            return sub.execute(stmt)
        self._stmt = stmt
        try:
            ext = stmt.ext
            if isinstance(ext, p.Call):
                return procedures.call(self, ext)
            if isinstance(ext, p.ShowTables):
                return ddl.show_tables(self, ext)
            if isinstance(ext, p.ShowNamespaces):
                return cs.show_namespaces(self, ext)
            if isinstance(ext, (p.ShowCreateTable, p.ShowTblProperties)):
                view = views.view_name(self, list(ext.table.parts))
                if view is not None and not self.exists(view):
                    return views.show_create(self, view) if isinstance(ext, p.ShowCreateTable) else \
                        views.show_properties(self, view, ext.key)
            if isinstance(ext, p.ShowCreateTable):
                return cs.show_create_table(self, ext)
            if isinstance(ext, p.ShowTblProperties):
                return cs.show_tblproperties(self, ext)
            if isinstance(ext, p.ShowTags):
                return cs.show_tags(self, ext)
            if isinstance(ext, (p.AlterPartitionField, p.AlterRef, p.AlterDropPartitions, p.AlterColumns,
                                p.AlterColumn, p.AlterWriteOrder,
                                p.AlterIdentifierFields)):
                return alter_table.alter_extension(self, ext)
            done = namespace_statements.statement(self, stmt.text)
            if done is not None:
                return done
            tree = stmt.tree
            if tree is not None:
                system_database.refuse_change(self, tree)
            kind = str(tree.args.get("kind") or "").upper() if isinstance(tree, (exp.Create, exp.Drop)) else ""
            if kind in ("NAMESPACE", "DATABASE", "SCHEMA"):
                if isinstance(tree, exp.Create):
                    return cs.create_namespace(self, tree)
                if isinstance(tree, exp.Drop):
                    return cs.drop_namespace(self, tree)
            if isinstance(tree, exp.Use):
                return cs.use(self, tree)
            if isinstance(tree, exp.TruncateTable):
                return cs.truncate(self, tree)
            if kind == "VIEW" or (isinstance(tree, exp.Alter) and str(tree.args.get("kind") or "").upper() == "VIEW"):
                if isinstance(tree, exp.Create):
                    return views.create(self, tree)
                if isinstance(tree, exp.Drop):
                    return views.drop(self, tree)
                if isinstance(tree, exp.Alter):
                    return views.alter(self, tree)
            if isinstance(tree, exp.Command) and str(tree.this).upper() == "ALTER":
                done = cs.alter_namespace(self, stmt.text)
                if done is not None:
                    return done
            if isinstance(tree, exp.Command) and str(tree.this).upper() in ("SHOW", "ALTER"):
                done = (views.show if str(tree.this).upper() == "SHOW" else views.alter_unset)(self, stmt.text)
                if done is not None:
                    return done
            if isinstance(tree, exp.Create):
                return ddl.create(self, tree)
            if isinstance(tree, exp.Drop):
                if kind == "TABLE":
                    views.refuse_drop_table_of_view(self, tree)
                return ddl.drop(self, tree)
            if isinstance(tree, exp.Describe):
                view = views.view_name(self, table_parts(tree.this)) if isinstance(tree.this, exp.Table) else None
                if view is not None and not self.exists(view):
                    return views.describe(self, view, str(tree.args.get("style") or "").upper() in
                                          ("EXTENDED", "FORMATTED"))
                return ddl.describe(self, tree)
            if isinstance(tree, exp.Alter):
                return alter_table.alter(self, tree)
            if isinstance(tree, exp.Set) or (isinstance(tree, exp.Command) and str(tree.this).upper() in ("SET", "RESET")):
                done = paimon_options.set_or_reset(self.spark, stmt.text)    # spark.paimon.<key>
                if done is not None:
                    return done
            if isinstance(tree, exp.Insert):
                return dml.insert(self, tree)
            if isinstance(tree, exp.Delete):
                return dml.delete(self, tree)
            if isinstance(tree, exp.Update):
                return dml.update(self, tree)
            if isinstance(tree, exp.Merge):
                return dml.merge(self, tree)
            if isinstance(tree, (exp.Set, exp.Command)):
                wap.check_set(self, stmt.text)
            if isinstance(tree, (exp.Cache, exp.Uncache)):
                done = cache_statements.statement(self, tree)
                if done is not None:
                    return done
            answered = commands.command(self, tree)
            if answered is not None:
                return answered
            return self.query_statement(tree)
        except SqlError as e:
            if e.statement is None:
                e.statement = stmt.text
            if e.line is None:
                raise type(e)(*self._error_args(e, stmt)) from e.__cause__
            raise
        except (NoSuchTableError, NoSuchSnapshotError) as e:
            raise SqlError(str(e), stmt.line, stmt.column, stmt.text) from e
        except Exception as e:
            from pyspark.errors import PySparkException

            if isinstance(e, PySparkException):     # Spark's analysis of a statement's part (a MERGE clause)
                raise self.spark_error(e, stmt.text) from e
            raise

    @staticmethod
    def _error_args(e: SqlError, stmt: Statement) -> tuple[str, int, int, str]:
        if isinstance(e, NotSupportedYetError):
            return e.capability, stmt.line, stmt.column, stmt.text
        return e.reason, stmt.line, stmt.column, stmt.text

    # ------------------------------------------------------------------ errors
    def error(self, reason: str, node: Optional[exp.Expression] = None) -> SqlError:
        line, col = node_position(node) if node is not None else (None, None)
        return SqlError(reason, line, col, self._stmt.text if self._stmt else None)

    def not_supported(self, capability: str, node: Optional[exp.Expression] = None) -> NotSupportedYetError:
        line, col = node_position(node) if node is not None else (None, None)
        return NotSupportedYetError(capability, line, col, self._stmt.text if self._stmt else None)

    @contextlib.contextmanager
    def refused_as(self, capability: str, node: Optional[exp.Expression] = None) -> Iterator[None]:
        """Run a statement's calls into the table contract: a ``NotSupportedError`` they raise becomes
        the statement's not-supported error, naming the statement, the table and its format."""
        try:
            yield
        except NotSupportedYetError:
            raise
        except NotSupportedError as e:
            raise self.not_supported(refusal(capability, e), node) from None

    def spark_error(self, e: Exception, sql_text: str) -> SqlError:
        """A Spark analysis/parse error as a SqlError at the matching place of the statement."""
        ours = spark_messages.in_our_words(e, spark_messages.Lookup(
            self.catalog_name, str(self.catalog.warehouse), self.namespace, tuple(self.catalogs),
            lambda parts: self.resolve_name(parts)[0] is not None, self.catalog.has_system_database,
            self._case_twin), sql_text if self._stmt is None else self._stmt.text)
        msg = ours if ours is not None else str(e)
        for view, shown in self._views.items():
            msg = msg.replace(f"`{view}`", shown).replace(view, shown)
        first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
        line = col = None
        stmt = self._stmt
        try:
            query_context = getattr(e, "getQueryContext", None)
            contexts = query_context() if query_context is not None else []
        except Exception:
            contexts = []
        for ctx in contexts or []:
            try:
                frag = ctx.fragment()
            except Exception:
                continue
            if stmt is not None and frag:
                at = stmt.text.find(frag)
                if at < 0:
                    at = stmt.text.lower().find(frag.lower())
                if at >= 0:
                    line, col = position_of(self._text, stmt.start + at)
                    break
        if line is None and stmt is not None:
            line, col = stmt.line, stmt.column
        return SqlError(first, line, col, stmt.text if stmt else None)

    def run_spark(self, sql_text: str) -> DataFrame:
        from pyspark.errors import PySparkException

        try:
            return self.spark.sql(sql_text)
        except PySparkException as e:
            raise self.spark_error(e, sql_text) from e

    def empty(self) -> DataFrame:
        from pyspark.sql.types import StructType

        return self.spark.createDataFrame([], StructType([]))

    # ------------------------------------------------------------------ tables
    def _case_twin(self, parts: list) -> Optional[str]:
        """``db.T`` (``db.`T$branch_b``` for a system or branch table) when ``parts`` name no table but
        one of the catalog's tables differs from them only in case; else None."""
        names = [str(x) for x in parts]
        catalog, shown = self.catalog, ""
        if len(names) == 3 and names[0].lower() in self.catalogs:
            catalog, shown, names = self.catalogs[names[0].lower()], names[0] + ".", names[1:]
        elif len(names) == 3 and names[0].lower() == self.catalog_name.lower():
            names = names[1:]
        names = self.qualify(names)
        if len(names) != 2:
            return None
        ns, name = names
        base, dollar, suffix = name.partition("$")
        try:
            spaces = [n for n in catalog.list_namespaces() if n.lower() == ns.lower()]
            tables = [t for n in spaces for t in catalog.list_tables(n)]
        except IcefloeError:
            return None
        want = f"{ns}.{base}".lower()
        twin = next((t for t in tables if t.lower() == want and t != f"{ns}.{base}"), None)
        if twin is None:
            return None
        db, _, table = twin.rpartition(".")
        return f"{shown}{db}.`{table}{dollar}{suffix}`" if dollar else f"{shown}{twin}"

    def exists(self, name: str) -> bool:
        try:
            return self.catalog.table_exists(name)
        except IcefloeError:
            return False

    def qualify(self, parts: list[str]) -> list[str]:
        """A one-part table name under the namespace of ``USE`` (unchanged without one)."""
        return [self.namespace, *parts] if len(parts) == 1 and self.namespace else parts

    def resolve_name(self, parts: list) -> tuple[Optional[TableRef], bool]:
        """(ref, ours) of a dotted name; after ``USE db`` also ``t``, ``t.snapshots`` and
        ``t.branch_dev`` under that namespace (a two-part name that is a table wins); names of
        the session's other catalogs (``other.db.t``) resolve in those."""
        if len(parts) >= 3 and str(parts[0]).lower() in self.catalogs:
            name = str(parts[0]).lower()
            other = self.catalogs[name]

            def exists(n: str) -> bool:
                try:
                    return other.table_exists(n)
                except IcefloeError:
                    return False
            ref, _ours = resolve_parts([self.catalog_name, *parts[1:]], self.catalog_name, exists)
            return (dataclasses.replace(ref, catalog=name, qualified=True) if ref is not None else None), True
        ref, ours = resolve_parts(self.qualify(list(parts)), self.catalog_name, self.exists)
        if ref is None and self.namespace and len(parts) == 2:
            under, ours_under = resolve_parts([self.namespace, *parts], self.catalog_name, self.exists)
            if under is not None:
                return under, ours_under
        return ref, ours

    def resolve(self, table: exp.Table) -> tuple[Optional[TableRef], bool]:
        return self.resolve_name(table_parts(table))

    def resolve_or_fail(self, table: exp.Table, allow_metadata: bool = False, allow_ref: bool = False) -> TableRef:
        ref, ours = self.resolve(table)
        if ref is None:
            raise self.error(f"unknown table {'.'.join(table_parts(table))}"
                             + ("" if ours else f" (not an icefloe table in {self.catalog.warehouse})"), table)
        if ref.metadata and not allow_metadata:
            raise self.error(f"metadata table {ref} cannot be changed", table)
        if ref.ref and not allow_ref:
            raise self.not_supported(f"this statement on {ref.ref_kind} {ref.ref!r} of {ref.name} (icefloe "
                                     "writes branches with INSERT INTO and the API's branch= arguments)", table)
        return ref

    def catalog_for(self, ref: TableRef) -> StatementCatalog:
        return self.catalogs[ref.catalog] if ref.catalog else self.catalog

    def load(self, ref: TableRef, write: bool = False) -> Table:
        """The table ``ref`` names; ``write``: as the statement writing it writes its files, with the
        session's Paimon file options (``SET spark.paimon.file.block-size``...) over its own."""
        if self.transaction is not None and not ref.catalog:
            # as the transaction left it: a stand-in that forwards what it does not stage to the table
            return cast("Table", self.transaction.table(ref.name))
        t = self.catalog_for(ref).load_table(ref.name)
        if not write or not t.supports(PAIMON_DYNAMIC_OPTIONS):
            return t
        options = self.paimon_file_options(ref.catalog or self.catalog_name, ref.name)
        try:
            return cast("Table", cast(_DynamicOptions, t).with_options(options))
        except IcefloeError as e:
            raise self.error(f"the session's Paimon options {options} for writes of {ref.name}: {e}") from None

    def paimon_file_options(self, catalog: str, name: str) -> dict[str, str]:
        """The Paimon file options the session sets (``SET spark.paimon.file.block-size``...) for writes
        of table ``name`` (db.table) of ``catalog``."""
        confs = {k: v for k, v in self.spark.conf.getAll.items() if k.lower().startswith(paimon_options.PREFIX)}
        return paimon_options.file_options(confs, catalog, name) if confs else {}

    # ------------------------------------------------------------------ reads
    def ref_read_kwargs(self, t: Table, ref: TableRef, version: Optional[exp.Version],
                        node: Optional[exp.Expression]) -> dict[str, Any]:
        """``read_kwargs`` of a reference that may name a branch or tag (``db.t.branch_b``): then the
        read is as of the ref's head, and a VERSION or TIMESTAMP AS OF beside it is an error."""
        kwargs = self.read_kwargs(t, version, node)
        if not ref.ref:
            return kwargs
        if kwargs:
            raise self.error(f"{ref} names a {ref.ref_kind} already; it takes no VERSION or TIMESTAMP AS OF", node)
        if ref.ref not in (t.refs() or {}):
            raise self.error(f"table {t.name} has no {ref.ref_kind} {ref.ref!r}", node)
        return {"ref": ref.ref}

    def read_kwargs(self, table_obj: Table, version: Optional[exp.Version],
                    node: Optional[exp.Expression] = None) -> dict[str, Any]:
        """``to_spark`` keyword arguments for a reference's ``VERSION``/``TIMESTAMP AS OF``."""
        if version is None:
            return {}
        kind = str(version.this).upper()
        expr = version.expression
        if kind == "VERSION":
            try:
                v = literal_value(expr)
            except ValueError:
                raise self.error(f"VERSION AS OF needs a snapshot id, tag or branch, got {expr.sql('spark')}",
                                 node) from None
            if isinstance(v, str):
                refs = getattr(getattr(table_obj, "metadata", None), "refs", None)
                if refs is None and callable(getattr(table_obj, "refs", None)):
                    refs = table_obj.refs()          # Paimon tables: their tags
                if v in (refs or {}):
                    return {"ref": v}
                if v.isdigit():
                    return {"snapshot_id": int(v)}
                if table_obj.supports(WATERMARK_TIME_TRAVEL) and re.fullmatch(r"watermark-\d+", v):
                    return {"snapshot_id": self._watermark_snapshot(cast(_PaimonSnapshots, table_obj), v, node)}
                if v in (cast(_BranchTables, table_obj).branches() if table_obj.supports(BRANCH_TABLES) else ()):
                    db, _, tbl = table_obj.name.rpartition(".")
                    raise self.error(f"{v!r} is a Paimon branch of {table_obj.name}, not a tag or snapshot: read it "
                                     f"as {db}.`{tbl}$branch_{v}`", node)
                raise self.error(f"table {table_obj.name} has no branch or tag {v!r}", node)
            if isinstance(v, int):
                return {"snapshot_id": v}
            raise self.error(f"VERSION AS OF needs a snapshot id, tag or branch, got {v!r}", node)
        if kind == "TIMESTAMP":
            micros = self.run_spark(f"SELECT unix_micros(CAST(({expr.sql('spark')}) AS TIMESTAMP))").collect()[0][0]
            if micros is None:
                raise self.error(f"TIMESTAMP AS OF {expr.sql('spark')} is null", node)
            return {"as_of": micros // 1000}
        raise self.error(f"unsupported time travel {version.sql('spark')}", node)

    def _watermark_snapshot(self, table_obj: _PaimonSnapshots, version: str, node: Optional[exp.Expression]) -> int:
        """The snapshot Paimon reads for ``VERSION AS OF 'watermark-N'``: the first whose watermark is at
        or after N (a streaming writer's; batch commits, icefloe's and Spark's, carry none)."""
        mark = int(version[len("watermark-"):])        # -N too (scan.watermark)
        found = later_or_equal_watermark(table_obj.snapshots(), mark)
        if found is None:
            raise self.error(f"table {table_obj.name} has no snapshot with a watermark at or after {mark} (a read as "
                             "of a watermark reads the first such snapshot; batch commits, icefloe's and Spark's, "
                             "carry no watermark)", node)
        return found.id

    def table_df(self, ref: TableRef, version: Optional[exp.Version] = None, node: Optional[exp.Expression] = None,
                 hidden: tuple[str, ...] = ()) -> DataFrame:
        """A DataFrame of a table or metadata table reference; with the ``hidden`` metadata columns
        (those the table has) after its own."""
        t = self.load(ref)
        if ref.metadata:
            return self.metadata_df(t, ref, version, node)
        kwargs: dict[str, Any] = self.ref_read_kwargs(t, ref, version, node)
        if not kwargs and t.supports(PAIMON_DYNAMIC_OPTIONS):
            kwargs = self.dynamic_read_kwargs(t, ref)
        elif not kwargs and (branch := wap.read_branch(self, t)) is not None:
            kwargs = {"ref": branch}      # SET spark.wap.branch: plain reads see the audit branch
        if hidden:
            reads = metadata_column_reads(t)
            assert reads is not None          # view_for asks only for the table's own metadata columns
            with self.refused_as(f"reading {', '.join(hidden)} of {t.name}", node):
                return reads.to_spark_with_metadata(hidden, **kwargs)
        if not kwargs and (cached := cache_statements.cached_read(self, ref, t)) is not None:
            return cached                 # CACHE TABLE, the table unchanged since
        return t.to_spark(**kwargs)

    def dynamic_read_kwargs(self, t: Table, ref: TableRef) -> dict[str, Any]:
        """Where a Paimon read starts, per the session's ``spark.paimon.`` options (scan.snapshot-id...)."""
        confs = {k: v for k, v in self.spark.conf.getAll.items() if k.lower().startswith(paimon_options.PREFIX)}
        if not confs:
            return {}
        options = paimon_options.table_options(confs, ref.catalog or self.catalog_name, ref.name)
        kwargs = paimon_options.read_kwargs(options, ref.name)
        version = kwargs.pop("version", None)
        if "watermark" in kwargs:           # scan.watermark: no tag of the name comes first, as in scan.version
            return {"snapshot_id": self._watermark_snapshot(cast(_PaimonSnapshots, t),
                                                            f"watermark-{kwargs['watermark']}", None)}
        if version is not None:
            kwargs = {"ref": version} if version in (t.refs() or {}) else \
                {"snapshot_id": int(version)} if version.isdigit() else \
                {"snapshot_id": self._watermark_snapshot(cast(_PaimonSnapshots, t), version, None)} \
                if re.fullmatch(r"watermark-\d+", version) else {}
            if not kwargs:
                raise self.error(f"dynamic option scan.version of {ref.name}: no tag or snapshot {version!r}")
        return kwargs

    def metadata_df(self, t: Table, ref: TableRef, version: Optional[exp.Version] = None,
                    node: Optional[exp.Expression] = None) -> DataFrame:
        name = ref.metadata
        if name == "audit_log" and t.supports(AUDIT_LOG):     # rows, not metadata: read in Spark
            return t.audit_log(**self.read_kwargs(t, version, node))
        rows = row_tables(t)                # rows (``ro``, ``binlog``), read in Spark
        if rows is not None and name in rows.row_table_names():
            with self.refused_as(f"system table {name}", node):
                return rows.row_table(str(name), **self.read_kwargs(t, version, node))
        if name == "changes":         # Iceberg's changelog table: every row change of the history
            if version is not None:
                raise self.error(f"{ref} takes no VERSION or TIMESTAMP AS OF (CALL system.create_changelog_view "
                                 "takes a snapshot range)", node)
            with self.refused_as("metadata table changes", node):
                return t.changelog()
        names = t.metadata_table_names()
        if name not in names:
            raise self.not_supported(f"metadata table {name} for {t.format} tables ({t.format}'s metadata "
                                     f"tables: {', '.join(names)})", node)
        kwargs = self.ref_read_kwargs(t, ref, version, node)   # db.t.`branch_b`.files: the ref's head
        try:
            table = t.metadata_table(name, **kwargs)
        except (NoSuchTableError, NoSuchSnapshotError):
            raise
        except IcefloeError as e:
            raise self.error(str(e), node) from None
        return metadata_tables.to_spark(self.spark, table)

    def view_for(self, ref: TableRef, table: exp.Table, named: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
        """Register a temporary view for one reference; its name, and the table's own columns when
        the view has metadata columns after them (those of ``named`` the table has)."""
        version = table.args.get("version")
        t = self.load(ref)
        hidden: tuple[str, ...] = ()
        if named and not ref.metadata and (reads := metadata_column_reads(t)) is not None:
            own = {c.lower() for c in t.schema.column_names}
            hidden = tuple(n for n in reads.metadata_column_names() if n.lower() in named and n.lower() not in own)
        df = self.table_df(ref, version, table, hidden)
        key = f"{getattr(t, 'metadata_location', '')}|{ref}|{version.sql('spark') if version else ''}|{hidden}"
        view = VIEW_PREFIX + (f"{ref.catalog}_" if ref.catalog else "") + ref.name.replace(".", "_").replace("-", "_").replace("$", "_") + \
            (f"_{ref.metadata}" if ref.metadata else "") + "_" + hashlib.sha1(key.encode()).hexdigest()[:12]
        df.createOrReplaceTempView(view)
        self._views[view] = str(ref)
        return view, (df.columns[:-len(hidden)] if hidden else [])

    def temp_view(self, df: DataFrame, key: str, shown: str) -> str:
        """Register ``df`` as a temporary view for this session's rewritten queries; its name."""
        view = VIEW_PREFIX + "".join(c if c.isalnum() else "_" for c in key) + "_" + \
            hashlib.sha1(f"{key}|{id(df)}".encode()).hexdigest()[:12]
        df.createOrReplaceTempView(view)
        self._views[view] = shown
        return view

    def view_session(self, default_catalog: Optional[str], default_namespace: Sequence[str], view: str) -> SqlSession:
        """A session reading view ``view``'s query: in the view's default catalog (one of this
        session's by name, else the view's own) and namespace."""
        name = (default_catalog or "").lower()
        if name in self.catalogs:
            others = {self.catalog_name: self.catalog, **{k: v for k, v in self.catalogs.items() if k != name}}
            sub = SqlSession(self.catalogs[name], self._spark, name, others)
        else:
            sub = SqlSession(self.catalog, self._spark, self.catalog_name, self.catalogs)
        sub.namespace = default_namespace[0] if len(default_namespace) == 1 else None
        sub.expanding_views = (*self.expanding_views, view)
        sub._views = self._views
        sub.views_read = self.views_read
        return sub

    def rewrite(self, tree: exp.Expression) -> tuple[exp.Expression, int]:
        """A copy of ``tree`` with icefloe references replaced by temp views; and how many."""
        tree = tree.copy()
        count = paimon_incremental.rewrite(self, tree)      # paimon_incremental_query(...) in FROM
        named, hidden = metadata_columns.referenced(tree), {}
        for table in list(tree.find_all(exp.Table)):
            if not table.name:
                continue
            if (sys_view := system_database.system_table(self, table)) is not None:     # sys.tables...
                alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
                table.replace(exp.Table(this=exp.to_identifier(sys_view), alias=alias.copy()))
                count += 1
                continue
            ref, ours = self.resolve(table)
            if ref is None and table.args.get("version") is None and \
                    (view_name := views.view_name(self, table_parts(table))) is not None:
                self.views_read.append(view_name)
                view = self.temp_view(views.read(self, view_name), f"view_{view_name}", view_name)
                alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
                table.replace(exp.Table(this=exp.to_identifier(view), alias=alias.copy()))
                count += 1
                continue
            if ref is None:
                missing = commands.missing_metadata_table(self, table)
                if missing is not None:
                    raise self.error(missing, table)
                if ours:
                    raise self.error(f"unknown table {'.'.join(table_parts(table))}", table)
                if table.args.get("version") is not None and len(table_parts(table)) >= 2:
                    pass  # Spark decides (its own catalog's tables)
                continue
            alias = table.args.get("alias")
            if alias is not None and isinstance(alias.this, exp.Parameter):
                raise self.error(f"write Paimon system tables in backquotes: {table.name} followed by "
                                 f"${alias.this.name} reads as table {table.name} with an alias; use "
                                 f"`{table.name}${alias.this.name}`", table)
            view, own = self.view_for(ref, table, named)
            if own:
                hidden[view] = own
            if alias is None:
                alias = exp.TableAlias(this=exp.to_identifier(table.name if not ref.metadata else ref.metadata))
            table.replace(exp.Table(this=exp.to_identifier(view), alias=alias.copy()))
            count += 1
        if hidden:
            metadata_columns.expand_stars(tree, hidden)
        return tree, count + system_functions.rewrite(self, tree)

    def query_df(self, tree: exp.Expression) -> DataFrame:
        """Run a query tree (with icefloe references) on Spark."""
        rewritten, _ = self.rewrite(tree)
        return self.run_spark(rewritten.sql("spark"))

    def query_statement(self, tree: Optional[exp.Expression]) -> DataFrame:
        stmt = self._stmt
        assert stmt is not None, "a statement's query runs while the statement does"
        if tree is None or isinstance(tree, exp.Command):
            return self.run_spark(stmt.text)
        rewritten, count = self.rewrite(tree)
        if count == 0:
            return self.run_spark(stmt.text)   # not about icefloe tables: Spark gets it unchanged
        return self.run_spark(rewritten.sql("spark"))
