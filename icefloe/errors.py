"""Typed errors raised by icefloe.

Every error names what is wrong (the table, the column, the file) so a user
can act on it without reading a traceback from inside a library.
"""
from typing import Optional


class IcefloeError(Exception):
    """Base class of every error raised on purpose by icefloe."""


class NoSuchTableError(IcefloeError):
    pass


class TableAlreadyExistsError(IcefloeError):
    pass


class NoSuchViewError(NoSuchTableError):
    """An Iceberg view that does not exist (a kind of ``NoSuchTableError``: Spark's names are shared)."""


class ViewAlreadyExistsError(TableAlreadyExistsError):
    """A view's name is taken, by a view or by a table (they share names)."""


class UnsupportedFormatVersionError(IcefloeError):
    """An Iceberg table of a format version icefloe does not read or write (the metadata is
    fine; icefloe lacks the version's features)."""


class NamespaceAlreadyExistsError(IcefloeError):
    """CREATE NAMESPACE of a namespace that exists."""


class NamespaceNotEmptyError(IcefloeError):
    """DROP NAMESPACE (without CASCADE) of a namespace that holds tables."""


class NoSuchNamespaceError(IcefloeError):
    pass


class InvalidNameError(IcefloeError, ValueError):
    """A table or namespace name that could escape the warehouse or be mangled."""


class SchemaError(IcefloeError, ValueError):
    """A schema string or type that cannot be parsed or is not allowed."""


class SchemaMismatchError(IcefloeError, ValueError):
    """Data whose columns or types do not fit the table's schema."""


class RequiredFieldNullError(SchemaMismatchError):
    """A null value in a column the table declares NOT NULL."""


class ExpressionError(IcefloeError, ValueError):
    """A predicate that cannot be parsed or bound; names the text or the column."""


class UnsupportedFilterError(IcefloeError, ValueError):
    """A condition that cannot be evaluated exactly without Spark (``to_arrow(where=...)``)."""


class UnknownTransformError(IcefloeError, ValueError):
    pass


class CorruptMetadataError(IcefloeError):
    """A metadata file that exists but cannot be decoded; names the file."""

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(f"corrupt metadata file {path}: {reason}")


class CorruptDataFileError(IcefloeError):
    """A data file a snapshot references that is missing or not readable; names the file."""

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(f"corrupt data file {path}: {reason}")


class CommitFailedError(IcefloeError):
    """A commit lost a race too many times or failed for a reason other than a conflict."""


class CommitConflictError(CommitFailedError):
    """Another writer committed a change that conflicts with this one."""


class CommitStateUnknownError(CommitFailedError):
    pass


class AfterCommitError(IcefloeError):
    """The commit is done (its snapshot is visible and its files are the table's); what runs after it
    failed. Nothing that catches it may delete the files the commit wrote."""


class NoSuchSnapshotError(IcefloeError):
    pass


class JavaMissingError(IcefloeError):
    pass


class WarehouseError(IcefloeError):
    """The warehouse location names no directory of tables."""


class WorkerPythonError(IcefloeError):
    """The Python interpreter Spark starts for its workers cannot run icefloe's code."""


class GatewayRequiredError(IcefloeError):
    """An operation that needs the JVM of a classic SparkSession (py4j's gateway), asked of a Spark
    Connect session; the message names the alternative."""


class ConfigError(IcefloeError):
    """A catalog configuration that is missing, unreadable or names unknown keys."""


class NotLiteral(Exception):
    """Raised while reading a literal that is not one (a column, a function...)."""


class NotSupportedError(IcefloeError):
    """An operation the table's format (or icefloe for that format) does not offer.

    Names the operation, the table and its format, and why, so a caller never gets a
    silent partial result: ``delete on paimon table db.t: ...``."""

    def __init__(self, operation: str, table: str = "", format: str = "", reason: str = ""):
        self.operation = operation
        self.table = table
        self.format = format
        self.reason = reason
        where = f" on {format} table {table}" if table else (f" on {format} tables" if format else "")
        super().__init__(f"{operation} is not supported{where}" + (f": {reason}" if reason else ""))


# --------------------------------------------------------------------------- file I/O

class ObjectStoreError(IcefloeError):
    """An object store or HDFS cluster that cannot be used as configured: an unknown scheme, an
    unreachable endpoint or NameNode, missing credentials, a bucket that does not exist. Never
    carries a secret."""


class FileAlreadyExistsError(FileExistsError):
    """A create-if-absent write found the file there: another writer made it first."""


class InjectedFault(OSError):
    """The failure a fault-injecting FileIO raises at its chosen write, rename or delete (tests)."""


# --------------------------------------------------------------------------- Iceberg

class VersionConflict(CommitFailedError):
    """Another writer committed the version this commit wanted to write."""


class MultiTableCommitUnsupported(IcefloeError):
    """The catalog cannot commit several tables all-or-nothing (a Hadoop or object-store warehouse)."""


class TransactionClosed(IcefloeError):
    """A change staged on a transaction that was committed or abandoned already."""


class RefError(IcefloeError, ValueError):
    """A branch or tag operation that the table's refs do not allow."""


class MaintenanceError(IcefloeError, ValueError):
    """A maintenance request (expiry, orphan removal) with arguments that cannot be carried out."""


class RenameNotSupportedError(IcefloeError):
    """Hadoop-catalog tables cannot be renamed (see ``RENAME_NOT_SUPPORTED``)."""


class ReplaceNotSupportedError(IcefloeError):
    """A replace that would leave snapshots of the table's history unreadable."""


class BadUpdate(IcefloeError, ValueError):
    """An update or requirement that is malformed or breaks a rule of the spec (HTTP 400)."""


class RequirementFailed(VersionConflict):
    """A commit's requirement does not hold for the table's current metadata (HTTP 409): the table
    moved on since the commit read it, so the producer runs again on the new metadata."""


class CatalogDatabaseError(IcefloeError):
    """The catalog database cannot be reached or does not have the catalog's tables."""


class RestCatalogError(IcefloeError):
    """The REST catalog server answered with an error icefloe has no better name for."""


class NotAuthorizedError(RestCatalogError):
    """The server wants a valid credential or token (HTTP 401)."""


class ForbiddenError(RestCatalogError):
    """The principal lacks the grant the request needs (HTTP 403)."""


class BatchAlreadyCommitted(Exception):
    """A streaming micro-batch is in the table already (a replay after a restart): commit nothing.
    Raised by both formats' stream commits; the streaming sink catches it."""


class StreamStopped(Exception):
    """A snapshot an Iceberg stream cannot pass: it deleted or overwrote rows."""


# --------------------------------------------------------------------------- Paimon

class TagError(IcefloeError, ValueError):
    """A tag operation the table's tags do not allow (nothing was changed)."""


class TagAlreadyExistsError(TagError):
    pass


class NoSuchTagError(TagError, NoSuchSnapshotError):
    """No tag of that name (also a missing snapshot for reads that travel to it)."""


class OrphanCleanupError(IcefloeError):
    """Orphan cleanup refused to run (nothing was deleted)."""


class DuplicateFileError(CommitFailedError):
    """Two ADD entries for one data file: the commit would make the file live twice."""


class SharedFilesError(IcefloeError, ValueError):
    """A table whose data files another table (made by a migration) references refused what would
    delete, move or replace them (a write, a rollback, an expiry, orphan cleanup, a rename);
    nothing was changed."""


class MigrationError(IcefloeError, ValueError):
    """Files or a table that cannot be migrated or imported into the other format as they are
    (a file whose columns do not match, a source with row-level deletes...); nothing was changed."""


# --------------------------------------------------------------------------- data plane

class UnsupportedFeatureError(IcefloeError):
    """A table feature the Spark read path cannot apply (nothing is read rather than a wrong result)."""


class MergeCardinalityError(IcefloeError, ValueError):
    """MERGE matched one target row with more than one source row; nothing was committed."""


class StreamingSetupError(IcefloeError, ValueError):
    """A streaming query the data source cannot run as asked."""


class JavacError(RuntimeError):
    """``javac`` is missing, or the sources did not compile (the message holds its output)."""


# --------------------------------------------------------------------------- SQL
class SqlError(IcefloeError):
    """A statement that cannot run: unknown table or column, type mismatch, bad syntax...

    ``line`` and ``column`` are 1-based positions in the text given to ``sql()``
    (``None`` when the position is not known).
    """

    def __init__(self, reason: str, line: Optional[int] = None, column: Optional[int] = None,
                 statement: Optional[str] = None):
        self.reason = reason
        self.line = line
        self.column = column
        self.statement = statement
        where = f"line {line}, column {column}: " if line is not None else ""
        # not super(): a subclass may also derive from an error with another constructor
        Exception.__init__(self, f"{where}{reason}")


class NotSupportedYetError(SqlError, NotSupportedError):
    """A statement whose capability icefloe does not have yet (never a wrong result)."""

    def __init__(self, capability: str, line: Optional[int] = None, column: Optional[int] = None,
                 statement: Optional[str] = None):
        self.capability = capability
        self.operation, self.table, self.format = capability, "", ""
        SqlError.__init__(self, f"not supported yet: {capability}", line, column, statement)


class UnsupportedTableError(IcefloeError):
    """A Paimon table feature icefloe does not implement."""


class RetractRefused(UnsupportedTableError):
    """A retraction (-U/-D row) an aggregate function cannot take back."""


class LocationError(IcefloeError, ValueError):
    """A location (table location, metadata file, manifest list, data file, statistics file) breaks
    the confinement rule: relative, with ``..`` segments on an object store, outside the table's
    location or the catalog's allowed locations, or overlapping another table's location. The
    message names the rule, never a file's content."""


class IcebergViewError(CommitFailedError):
    """A Paimon table's Iceberg view (``metadata.iceberg.storage``) could not be written: the Paimon
    snapshot stands, Iceberg readers see an older one until the next commit or ``sync_iceberg()``."""


class IcebergViewWarning(UserWarning):
    """After a Paimon commit: its Iceberg view could not be written (see ``IcebergViewError``); the
    commit stands and is not reported as failed."""


# --------------------------------------------------------------------------- REST catalog service
class AuthConfigError(IcefloeError):
    """An auth file that cannot be read or says something icefloe cannot honour."""


class Unauthenticated(Exception):
    """No valid credential: 401."""


class UnsafeServeError(IcefloeError):
    """``icefloe serve`` was asked to serve a network without authentication."""


class RequestError(Exception):
    """A client's mistake in a request, answered with ``status`` and the spec's error ``kind``."""

    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind = status, kind
