"""``BEGIN; ...; COMMIT`` (and ``ROLLBACK``) in a SQL session: the statements between them staged
on one catalog transaction (``Catalog.transaction()``, ``iceberg/transaction.py``) and committed as
one new metadata version per table -- all tables or none.

What can be staged: ``INSERT INTO`` an Iceberg table of the session's catalog (a snapshot written
under the schema as the transaction left it), ``ALTER TABLE`` column changes (``ADD``, ``RENAME``,
``DROP``, ``ALTER COLUMN``) and ``SET TBLPROPERTIES``; queries run as usual and read committed
snapshots, so a query of a table this transaction changed is refused (it would not see the
changes). Any other statement is refused by name, since it would take effect at once and a
``ROLLBACK`` could not undo it. Any error inside the transaction -- a refusal too -- rolls the whole
transaction back, as a failed commit does: nothing of it is committed. Several tables commit
together where the catalog can (SQL and REST catalogs); a Hadoop or object-store catalog refuses
a second table. Paimon tables have no multi-change commit (``paimon/commit_changes.py`` says why),
so ``BEGIN`` on a Paimon catalog is refused.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Protocol, Sequence, cast

from sqlglot import exp

from icefloe.errors import NotSupportedError, NotSupportedYetError, SqlError
from icefloe.sql import wap
from icefloe.sql.statement_context import StatementSession

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.core.types.model import IcebergType, Schema
    from icefloe.iceberg.partitioning import PartitionSpec
    from icefloe.iceberg.schema_update import UpdateSchema
    from icefloe.iceberg.transaction import CatalogTransaction, Transaction
    from icefloe.sql.statement_context import StatementCatalog
    from icefloe.sql.parser import Statement
    from icefloe.table.base import Table
    from icefloe.table.iceberg import IcebergTable

    # a StagedTable stands in for its table wherever the session hands out tables (``load``): to the
    # type checker it is a Table; at run time what it does not stage goes to the table (``__getattr__``)
    _TableStandIn = Table
else:
    _TableStandIn = object

STAGED = ("INSERT INTO, ALTER TABLE ... ADD/RENAME/DROP/ALTER COLUMN, ALTER TABLE ... SET TBLPROPERTIES "
          "and queries")
_ALTER_ACTIONS = (exp.Schema, exp.ColumnDef, exp.RenameColumn, exp.AlterColumn, exp.AlterSet)


def control(stmt: Statement) -> Optional[str]:
    """``BEGIN``, ``COMMIT`` or ``ROLLBACK`` when the statement is one of them, else None."""
    tree = stmt.tree
    if stmt.ext is not None or tree is None:
        return None
    if isinstance(tree, exp.Transaction):
        return "BEGIN"
    if isinstance(tree, exp.Commit):
        return "COMMIT"
    if isinstance(tree, exp.Rollback):
        return "ROLLBACK"
    return None


class SqlTransaction:
    """The open transaction of a SQL session: one ``CatalogTransaction`` and, per table it touched,
    the table as the statements see it (``StagedTable``)."""

    def __init__(self, catalog: StatementCatalog):
        self.catalog = catalog
        self.staged: CatalogTransaction = catalog.transaction()     # NotSupportedError for a Paimon catalog
        self.tables: dict[str, StagedTable] = {}

    def table(self, name: str) -> "StagedTable":
        """Table ``name`` inside this transaction."""
        if name not in self.tables:
            # an open transaction's catalog is an Iceberg one (BEGIN on a Paimon catalog was refused)
            self.tables[name] = StagedTable(cast("IcebergTable", self.catalog.load_table(name)), self)
        return self.tables[name]

    def commit(self) -> None:
        self.staged.commit()

    def rollback(self) -> None:
        self.staged.abandon()


class StagedTable(_TableStandIn):
    """A table inside a SQL transaction: its schema and properties as the transaction left them,
    its changes staged on the transaction. Until it has a staged change it reads as the table;
    after one, what is not staged here (reads, other writes) is refused, naming it."""

    def __init__(self, table: IcebergTable, tx: SqlTransaction):
        self._table = table
        self._tx = tx
        self._staged: Optional[Transaction] = None         # the table's iceberg Transaction, once a change was staged

    # ------------------------------------------------------------------ as the transaction left it
    @property
    def name(self) -> str:
        return self._table.name

    @property
    def format(self) -> str:
        return self._table.format

    @property
    def changed(self) -> bool:
        return self._staged is not None

    @property
    def schema(self) -> Schema:
        return self._staged.staged.schema if self._staged is not None else self._table.schema

    @property
    def spec(self) -> PartitionSpec:
        return self._staged.staged.spec if self._staged is not None else self._table.spec

    @property
    def properties(self) -> dict[str, str]:
        return dict(self._staged.staged.properties) if self._staged is not None else self._table.properties

    def refresh(self) -> "StagedTable":
        return self

    def supports(self, capability: str) -> bool:
        return self._table.supports(capability)

    def parse_column_type(self, text: str) -> IcebergType:
        return self._table.parse_column_type(text)

    def narrow_column_types(self) -> dict[str, str]:
        return self._table.narrow_column_types()

    def refs(self) -> dict[str, Any]:
        return self._table.refs()

    # ------------------------------------------------------------------ staged changes
    def _transaction(self) -> Transaction:
        if self._staged is None:
            self._staged = self._tx.staged.table(self._table.name)
        return self._staged

    def append(self, data: Any, branch: Optional[str] = None) -> None:
        if branch is not None:
            raise NotSupportedYetError(f"writing branch {branch!r} of {self.name} inside a transaction (icefloe "
                                       "stages writes to a table's main branch)")
        self._transaction().append(data)

    def update_schema(self) -> UpdateSchema:
        return self._transaction().update_schema()

    def update_properties(self, set: Optional[Mapping[str, Any]] = None,
                          remove: Optional[Sequence[str]] = None) -> dict[str, str]:
        self._transaction().update_properties(set=set, remove=remove)
        return self.properties

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        if self._staged is not None:
            raise NotSupportedYetError(
                f"{attr} of {self.name} inside a transaction that changed it (icefloe reads committed snapshots, "
                f"which do not hold the staged changes; COMMIT first)")
        return getattr(self._table, attr)


class TransactionSession(StatementSession, Protocol):
    """A session with its open transaction (None between transactions)."""

    transaction: Optional[SqlTransaction]


def refusal(sess: StatementSession, stmt: Statement) -> Optional[str]:
    """Why ``stmt`` cannot run inside a transaction (None: it can)."""
    tree = stmt.tree
    first = stmt.text.split(None, 1)[0].upper() if stmt.text.strip() else "statement"
    if stmt.ext is not None or tree is None:
        return f"{first} ... inside a transaction"
    if isinstance(tree, exp.Query):
        return None
    if sess.other_catalog(stmt) is not None:
        return f"{first} on another catalog's table inside a transaction (it commits the session's catalog)"
    if isinstance(tree, exp.Insert):
        if tree.args.get("overwrite"):
            return "INSERT OVERWRITE inside a transaction"
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        if not isinstance(target, exp.Table):
            return "INSERT into a directory inside a transaction"
        ref, _ours = sess.resolve(target)
        if ref is None:
            return f"INSERT into {'.'.join(p.name for p in target.parts)}, not an icefloe table, inside a transaction"
        if ref.ref or ref.metadata:
            return f"INSERT into {ref} inside a transaction (icefloe stages writes to a table's main branch)"
        if any(wap.settings(sess)):
            return "INSERT with spark.wap.branch or spark.wap.id set, inside a transaction"
        return None
    if isinstance(tree, exp.Alter) and str(tree.args.get("kind") or "").upper() == "TABLE":
        if not isinstance(tree.this, exp.Table) or sess.resolve(tree.this)[0] is None:
            return "ALTER TABLE of a table that is not icefloe's, inside a transaction"
        for action in tree.args.get("actions") or []:
            if not isinstance(action, _ALTER_ACTIONS) and not (
                    isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() == "COLUMN"):
                return f"ALTER TABLE action {action.sql('spark')} inside a transaction"
        return None
    return f"{first} ... inside a transaction"


def execute(sess: TransactionSession, stmt: Statement, run: Callable[[Statement], DataFrame]) -> DataFrame:
    """Run ``stmt`` with the session's transaction in mind: ``BEGIN``/``COMMIT``/``ROLLBACK``, or a
    statement inside the open transaction (``run`` runs it as the session does)."""
    at = (stmt.line, stmt.column, stmt.text)
    kind = control(stmt)
    tx = sess.transaction
    if kind == "BEGIN":
        if tx is not None:
            _roll_back(sess)
            raise SqlError("BEGIN inside a transaction: transactions do not nest; the open transaction was "
                           "rolled back", *at)
        try:
            sess.transaction = SqlTransaction(sess.catalog)
        except NotSupportedError as e:
            raise NotSupportedYetError(f"BEGIN on a {sess.catalog.format} catalog: {e}", *at) from None
        return sess.empty()
    if kind is not None and tx is None:
        raise SqlError(f"{kind} without a transaction: BEGIN starts one", *at)
    if kind == "ROLLBACK":
        _roll_back(sess)
        return sess.empty()
    if kind == "COMMIT" and tx is not None:     # (without one: refused above)
        sess.transaction = None
        tx.commit()               # a failure abandons everything staged
        return sess.empty()
    try:
        why = refusal(sess, stmt)
        if why is not None:
            raise NotSupportedYetError(f"{why} ({STAGED} can be staged; the transaction was rolled back)", *at)
        return run(stmt)
    except BaseException as e:
        _roll_back(sess)
        note = getattr(e, "add_note", None)       # Python 3.11 on: the error says so too
        if note is not None and "the transaction was rolled back" not in str(e):
            note("the transaction was rolled back: nothing of it was committed")
        raise


def finish(sess: TransactionSession) -> None:
    """The end of SQL run on a session of its own (a script, the shell): a transaction still open is
    rolled back, and that is an error (its ``COMMIT`` never came)."""
    if sess.transaction is None:
        return
    _roll_back(sess)
    raise SqlError("the SQL ended inside a transaction (BEGIN without COMMIT or ROLLBACK): it was rolled back, "
                   "nothing of it was committed")


def _roll_back(sess: TransactionSession) -> None:
    tx, sess.transaction = sess.transaction, None
    if tx is not None:
        tx.rollback()
