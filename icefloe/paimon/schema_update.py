# pyright: strict
"""Schema evolution of Paimon tables: each change is a new ``schema/schema-N`` file.

``with table.update_schema() as u:`` records changes and, on a clean exit, writes
``schema-<latest+1>`` with create-if-absent. The rules are Paimon's:

- field ids are never reused: an added column takes ``highestFieldId + 1`` (then its
  nested ROW fields the next ids), so dropping a column and adding one of the same
  name gives a new id, and the old files' values do not come back;
- an added column must be nullable (the rows already written have no value);
- partition columns cannot be renamed, dropped or retyped; primary-key columns cannot be
  dropped or retyped; a table cannot lose its last column;
- renaming a column renames it in the primary keys and in ``bucket-key`` /
  ``sequence.field``; ``add-column-before-partition`` places new columns before the
  first partition column;
- nullability only ever widens (NOT NULL -> nullable): Paimon refuses nullable ->
  NOT NULL unless ``alter-column-null-to-not-null.disabled`` is false, and icefloe
  never does it, as existing files may hold nulls.

icefloe is stricter than Paimon in two places, both to keep every file readable and
every read exact:

- type changes are widening only (Paimon also allows lossy "explicit" casts such as
  DOUBLE -> INT or anything -> STRING): integers to wider integers, FLOAT -> DOUBLE,
  DECIMAL to a DECIMAL holding every old value, TINYINT/SMALLINT -> FLOAT/DOUBLE and
  INT -> DOUBLE, integers to a DECIMAL with room for them, CHAR/VARCHAR/BINARY/
  VARBINARY to a longer VARCHAR/VARBINARY, TIME/TIMESTAMP to a finer precision
  (timestamps up to microseconds, what Spark reads);
- bucket-key columns cannot be dropped or retyped: the bucket of a row is the hash
  of the key's binary layout, which a new type changes.

Only top-level columns are changed here (pypaimon and Java Paimon can also change
nested ROW fields; reads handle those by field id too).

Concurrency, as Paimon's ``SchemaManager``: the changes are replayed on the latest
schema for each attempt; losing the race for ``schema-N`` (another change took it)
replays them on ``schema-N`` and tries ``schema-N+1``. A change that no longer
applies (say, both add a column ``x``) fails with ``SchemaError`` and writes nothing.
"""
from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Callable, Iterable, Optional, Protocol, cast

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.errors import CommitConflictError, NoSuchTableError, SchemaError
from icefloe.paimon import nested_update as nested
from icefloe.paimon import row_tracking
from icefloe.paimon import types as pt
from icefloe.paimon.iceberg_options import check_schema
from icefloe.paimon.chain_options import check_options as check_chain_options
from icefloe.paimon.options import check_honoured
from icefloe.paimon.file_index import PREFIX as INDEX_PREFIX, check_options as check_index_options
from icefloe.paimon.tag_period import auto_tag_options
from icefloe.paimon.schema import (FALLBACK_BRANCH, TableSchema, check_file_format, check_vector_rules, latest_schema,
                                   schema_path)
from icefloe.paimon.types import DataField, length, root as root_of
from icefloe.core import types as core
from icefloe.core.retry import RetryPolicy

BUCKET_KEY = "bucket-key"
BUCKET = "bucket"
POSTPONE_BUCKET = -2
SEQUENCE_FIELD = "sequence.field"
ADD_BEFORE_PARTITION = "add-column-before-partition"

_INT_RANK = {"TINYINT": 0, "SMALLINT": 1, "INT": 2, "BIGINT": 3}
_INT_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}
_EXACT_IN_FLOAT = {"FLOAT": ("TINYINT", "SMALLINT"), "DOUBLE": ("TINYINT", "SMALLINT", "INT")}


# --------------------------------------------------------------------------- types
def as_paimon_type(t: object) -> tuple[core.IcebergType, bool]:
    """(type, nullable) from a Paimon type string (``BIGINT NOT NULL``, ``DECIMAL(12, 2)``,
    ``TIMESTAMP(6) WITH LOCAL TIME ZONE``), schema-file JSON, a Spark/icefloe type string
    for what Paimon strings cannot say (``struct<a: int>``, ``array<string>``, ``long``),
    or a shared type (nullable). Nested ROW fields get ids when the column is added."""
    counter = [-1]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    if isinstance(t, dict):
        return pt.parse_type(cast("dict[str, Any]", t))
    if isinstance(t, str):
        try:
            return pt.parse_atomic_nullable(t)
        except SchemaError:
            pass
        try:
            return pt.from_core_type(core.parse_type(t), next_id), True
        except SchemaError as e:
            raise SchemaError(f"cannot parse type {t!r}: {e}") from None
    if isinstance(t, core.IcebergType):
        return pt.from_core_type(t, next_id), True
    raise SchemaError(f"expected a Paimon type or a type string such as 'BIGINT', got {t!r}")


def spark_sql_type(text: str) -> core.IcebergType:
    """The Paimon type of a Spark SQL type (``timestamp`` is Paimon's TIMESTAMP WITH LOCAL
    TIME ZONE, ``timestamp_ntz`` its TIMESTAMP, ``tinyint``/``smallint`` stay so)."""
    return as_paimon_type(core.parse_type(text))[0]


def _with_fresh_ids(t: core.IcebergType, next_id: Callable[[], int]) -> core.IcebergType:
    """``t`` with new ids for its nested ROW fields (parents before children, as Paimon)."""
    if isinstance(t, core.StructType):
        fields: list[core.NestedField] = []
        for f in t.fields:
            fid = next_id()
            fields.append(DataField(fid, f.name, _with_fresh_ids(f.field_type, next_id), f.doc, not f.required))
        return core.StructType(fields)
    if isinstance(t, core.ListType):
        return core.ListType(t.element_id, _with_fresh_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, core.MultisetType):
        return core.MultisetType(t.element_id, _with_fresh_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, core.MapType):
        return core.MapType(t.key_id, _with_fresh_ids(t.key_type, next_id), t.value_id,
                            _with_fresh_ids(t.value_type, next_id), t.value_required, t.key_required)
    return t


def _shape(t: core.IcebergType) -> object:
    """A type without nullability and field ids: what two nested types must share to be the same."""
    if isinstance(t, core.StructType):
        return ("ROW", tuple((f.name, _shape(f.field_type)) for f in t.fields))
    if isinstance(t, (core.ListType, core.MultisetType)):
        return (type(t).__name__, _shape(t.element_type))
    if isinstance(t, core.MapType):
        return ("MAP", _shape(t.key_type), _shape(t.value_type))
    return pt.type_string(t)


def can_widen(old: core.IcebergType, new: core.IcebergType) -> bool:
    """Whether every value of ``old`` converts exactly to ``new`` (nullability aside),
    in Arrow and in Spark: the type changes icefloe accepts."""
    if not old.is_primitive or not new.is_primitive:
        return _shape(old) == _shape(new)
    a, b = root_of(old), root_of(new)
    if a == b:
        if a in _INT_RANK or a in ("BOOLEAN", "DATE", "FLOAT", "DOUBLE"):
            return True
        if a == "DECIMAL":
            p_old, s_old, p_new, s_new = core.precision_of(old), core.scale_of(old), core.precision_of(new), core.scale_of(new)
            return s_new >= s_old and p_new - s_new >= p_old - s_old
        if a in ("VARCHAR", "VARBINARY"):
            return length(new) >= length(old)
        if a in ("CHAR", "BINARY"):
            return length(new) == length(old)
        if a == "TIME":
            return core.precision_of(new) >= core.precision_of(old)
        if a in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            return core.precision_of(new) >= core.precision_of(old) and (core.precision_of(new) <= 6 or core.precision_of(old) > 6)
        return False
    if a in _INT_RANK and b in _INT_RANK:
        return _INT_RANK[a] <= _INT_RANK[b]
    if a == "FLOAT" and b == "DOUBLE":
        return True
    if a in _INT_RANK and b == "DECIMAL":
        return core.precision_of(new) - core.scale_of(new) >= _INT_DIGITS[a]
    if b in _EXACT_IN_FLOAT:
        return a in _EXACT_IN_FLOAT[b]
    if (a, b) in (("CHAR", "VARCHAR"), ("BINARY", "VARBINARY")):
        return length(new) >= length(old)
    return False


def _shown(t: core.IcebergType, nullable: bool = True) -> str:
    """A type as Paimon writes it, for messages."""
    return pt.type_string(t, nullable)


# Options whose change would reinterpret data already written (Paimon keeps them, or the
# table's identity, fixed after creation). 'bucket' changes on fixed-bucket tables (``_check_bucket``).
FIXED_OPTIONS = {
    "bucket-key": "rows already written are bucketed by the old key",
    "primary-key": "the primary key is part of the schema",
    "partition": "the partition keys are part of the schema",
    "merge-engine": "rows already written were merged with the old engine",
    "sequence.field": "rows already written were ordered by the old field",
    "path": "the table's location is fixed",
    "type": "the table type is fixed",
}


# --------------------------------------------------------------------------- the working schema
class _Builder:
    """The changes applied one by one to a copy of ``base``."""
    def __init__(self, base: TableSchema, table_name: str):
        self.base = base
        self.table = table_name
        self.fields: list[DataField] = list(base.fields)
        self.highest = base.highest_id
        self.options = dict(base.options)
        self.primary_keys = list(base.primary_keys)
        self.comment = base.comment
        self.changed = False

    # -- lookups
    def _index(self, name: str) -> int:
        if not isinstance(name, str):  # pyright: ignore[reportUnnecessaryIsInstance] - callers pass user input
            raise SchemaError(f"a column name must be a string, got {name!r}")
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        lowered = [i for i, f in enumerate(self.fields) if f.name.lower() == name.lower()]
        if len(lowered) == 1:
            return lowered[0]
        if "." in name and any(f.name == name.split(".", 1)[0] and not f.type.is_primitive
                               for f in self.fields):
            raise SchemaError(f"table {self.table}: this change of nested field {name!r} is not supported "
                              "(nested fields can be added, renamed, dropped, widened and commented)")
        raise SchemaError(f"table {self.table} has no column {name!r}; columns are "
                          f"{', '.join(f.name for f in self.fields)}")

    def _field(self, name: str) -> DataField:
        return self.fields[self._index(name)]

    def _bucket_keys(self) -> list[str]:
        raw = self.options.get(BUCKET_KEY)
        if raw:
            return [k.strip() for k in raw.split(",") if k.strip()]
        return [k for k in self.primary_keys if k not in self.base.partition_keys]

    def _check_new_name(self, name: str, ignore: Optional[int] = None) -> None:
        if not isinstance(name, str) or not name.strip():  # pyright: ignore[reportUnnecessaryIsInstance] - user input
            raise SchemaError(f"table {self.table}: a column name must be a non-empty string, got {name!r}")
        for i, f in enumerate(self.fields):
            if i != ignore and f.name.lower() == name.lower():
                raise SchemaError(f"table {self.table} already has a column {f.name!r}")

    def _refuse_key(self, f: DataField, what: str, bucket: bool = True) -> None:
        if f.name in self.base.partition_keys:
            raise SchemaError(f"table {self.table}: cannot {what} partition column {f.name!r}")
        if f.name in self.primary_keys:
            raise SchemaError(f"table {self.table}: cannot {what} primary-key column {f.name!r}")
        if bucket and f.name in self._bucket_keys():
            raise SchemaError(f"table {self.table}: cannot {what} bucket-key column {f.name!r} "
                              "(rows are placed in buckets by the hash of its values)")

    def type_of(self, t: object, column: str) -> tuple[core.IcebergType, bool]:
        try:
            return as_paimon_type(t)
        except SchemaError as e:
            raise SchemaError(f"table {self.table}, column {column!r}: {e}") from None

    def _next_id(self) -> int:
        self.highest += 1
        return self.highest

    # -- changes
    def _nested_change(self, parts: list[str], edit: nested.RowEdit) -> None:
        """Apply ``edit(row fields, last name)`` to the row a nested path leads to."""
        top = self._field(parts[0])
        self._refuse_key(top, f"change nested field {'.'.join(parts)!r} of")
        self.fields = nested.change(self.fields, parts, self.table, edit)
        self.changed = True

    def add_column(self, name: str, field_type: object, comment: Optional[str] = None, after: Optional[str] = None,
                   first: bool = False, before: Optional[str] = None) -> None:
        parts = nested.path_of(self.fields, name)
        if parts is not None:              # a field of a row inside a column (s.f, a.element.f, m.value.f)
            t, nullable = self.type_of(field_type, name)
            if not nullable:
                raise SchemaError(f"table {self.table}: new field {name!r} cannot be NOT NULL "
                                  "(the rows already written have no value for it)")

            def add(row: list[DataField], last: str) -> list[DataField]:
                nested.check_new_name(row, last, self.table)
                fid = self._next_id()
                f = DataField(fid, last, _with_fresh_ids(t, self._next_id), comment)
                return nested.place(row, f, first, after, before, self.table)
            return self._nested_change(parts, add)
        if isinstance(name, str) and "." in name and any(  # pyright: ignore[reportUnnecessaryIsInstance] - user input
                f.name.lower() == name.split(".", 1)[0].lower() for f in self.fields):
            raise SchemaError(f"table {self.table}: column {name.split('.', 1)[0]!r} is not a row, array of rows "
                              f"or map of rows, so {name!r} names no nested field")
        self._check_new_name(name)
        t, nullable = self.type_of(field_type, name)
        if not nullable:
            raise SchemaError(f"table {self.table}: new column {name!r} cannot be NOT NULL "
                              "(the rows already written have no value for it)")
        if sum(1 for p in (after is not None, before is not None, bool(first)) if p) > 1:
            raise SchemaError(f"table {self.table}: give one of first, after and before for column {name!r}")
        fid = self._next_id()
        f = DataField(fid, name, _with_fresh_ids(t, self._next_id), comment)
        if first:
            self.fields.insert(0, f)
        elif after is not None:
            self.fields.insert(self._index(after) + 1, f)
        elif before is not None:
            self.fields.insert(self._index(before), f)
        elif str(self.options.get(ADD_BEFORE_PARTITION, "false")).lower() == "true" and self.base.partition_keys:
            at = next((i for i, x in enumerate(self.fields) if x.name in self.base.partition_keys),
                      len(self.fields))
            self.fields.insert(at, f)
        else:
            self.fields.append(f)
        self.changed = True

    def rename_column(self, name: str, new_name: str) -> None:
        parts = nested.path_of(self.fields, name)
        if parts is not None:
            new_name = str(new_name).rsplit(".", 1)[-1]
            f = nested.field_at(self.fields, parts, self.table)
            if f.name == new_name:
                return

            def rename(row: list[DataField], last: str) -> list[DataField]:
                nested.check_new_name(row, new_name, self.table, ignore_id=f.field_id)
                return [x.copy(name=new_name) if x.field_id == f.field_id else x for x in row]
            return self._nested_change(parts, rename)
        i = self._index(name)
        f = self.fields[i]
        if f.name in self.base.partition_keys:
            raise SchemaError(f"table {self.table}: cannot rename partition column {f.name!r}")
        if new_name == f.name:
            return
        self._check_new_name(new_name, ignore=i)
        self.fields[i] = f.copy(name=new_name)
        self.primary_keys = [new_name if k == f.name else k for k in self.primary_keys]
        for key in (BUCKET_KEY, SEQUENCE_FIELD):
            if self.options.get(key):
                self.options[key] = ",".join(new_name if k.strip() == f.name else k
                                             for k in self.options[key].split(","))
        self.changed = True

    def drop_column(self, name: str) -> None:
        parts = nested.path_of(self.fields, name)
        if parts is not None:
            gone = nested.field_at(self.fields, parts, self.table)

            def drop(row: list[DataField], last: str) -> list[DataField]:
                if len(row) == 1:
                    raise SchemaError(f"table {self.table}: cannot drop {name!r}, the last field of its row")
                return [x for x in row if x.field_id != gone.field_id]
            return self._nested_change(parts, drop)
        i = self._index(name)
        self._refuse_key(self.fields[i], "drop")
        if len(self.fields) == 1:
            raise SchemaError(f"table {self.table}: cannot drop its last column {self.fields[i].name!r}")
        del self.fields[i]
        self.changed = True

    def update_column_type(self, name: str, new_type: object) -> None:
        parts = nested.path_of(self.fields, name)
        if parts is not None:
            old = nested.field_at(self.fields, parts, self.table)
            t, nullable = self.type_of(new_type, name)
            if _shape(t) == _shape(old.field_type):
                return
            if not old.field_type.is_primitive or not can_widen(old.field_type, t):
                raise SchemaError(f"table {self.table}: cannot change nested field {name!r} from "
                                  f"{_shown(old.field_type)} to {_shown(t)}: only widening type changes of "
                                  "primitive fields are allowed")
            return self._nested_change(parts, lambda row, last: [
                x.copy(type=t) if x.field_id == old.field_id else x for x in row])
        i = self._index(name)
        f = self.fields[i]
        t, nullable = self.type_of(new_type, f.name)
        old = f.type
        if not nullable and f.nullable:
            raise SchemaError(f"table {self.table}: cannot change column {f.name!r} from {_shown(old)} to "
                              f"{_shown(t, nullable)}: a nullable column cannot become NOT NULL (files may hold nulls)")
        if _shape(t) == _shape(old):
            return
        self._refuse_key(f, "change the type of")
        if not can_widen(old, t):
            raise SchemaError(f"table {self.table}: cannot change column {f.name!r} from {_shown(old)} to "
                              f"{_shown(t)}: only widening type changes are allowed (wider integers, "
                              "FLOAT -> DOUBLE, DECIMAL with no fewer integer or fraction digits, ...)")
        self.fields[i] = f.copy(type=t)
        self.changed = True

    def update_column_nullability(self, name: str, nullable: bool = True) -> None:
        i = self._index(name)
        f = self.fields[i]
        if f.nullable == bool(nullable):
            return
        if not nullable:
            raise SchemaError(f"table {self.table}: cannot make column {f.name!r} NOT NULL "
                              "(files may hold nulls; only NOT NULL -> nullable is allowed)")
        if f.name in self.primary_keys:
            raise SchemaError(f"table {self.table}: cannot make primary-key column {f.name!r} nullable")
        self.fields[i] = f.copy(nullable=True)
        self.changed = True

    def update_column_comment(self, name: str, comment: Optional[str]) -> None:
        parts = nested.path_of(self.fields, name)
        if parts is not None:
            f = nested.field_at(self.fields, parts, self.table)
            if f.doc != comment:
                self._nested_change(parts, lambda row, last: [
                    x.copy(description=comment) if x.field_id == f.field_id else x for x in row])
            return
        i = self._index(name)
        if self.fields[i].description != comment:
            self.fields[i] = self.fields[i].copy(description=comment)
            self.changed = True

    def update_comment(self, comment: Optional[str]) -> None:
        if comment != self.comment:
            self.comment = comment
            self.changed = True

    def move(self, name: str, where: str, other: Optional[str] = None) -> None:
        parts = nested.path_of(self.fields, name)
        if parts is not None:           # within its row: first, last, after or before a sibling
            f = nested.field_at(self.fields, parts, self.table)

            def move(row: list[DataField], last: str) -> list[DataField]:
                rest = [x for x in row if x.field_id != f.field_id]
                moved = next(x for x in row if x.field_id == f.field_id)
                if other is not None and other.rsplit(".", 1)[-1].lower() == f.name.lower():
                    raise SchemaError(f"table {self.table}: cannot move field {name!r} relative to itself")
                if where == "last":
                    return rest + [moved]
                return nested.place(rest, moved, where == "first", other if where == "after" else None,
                                    other if where == "before" else None, self.table)
            return self._nested_change(parts, move)
        i = self._index(name)
        f = self.fields[i]
        if other is not None and self._index(other) == i:
            raise SchemaError(f"table {self.table}: cannot move column {f.name!r} relative to itself")
        before = [x.name for x in self.fields]
        del self.fields[i]
        if where == "first":
            self.fields.insert(0, f)
        elif where == "last":
            self.fields.append(f)
        else:
            if other is None:
                raise SchemaError(f"table {self.table}: moving column {f.name!r} {where} names no column")
            j = self._index(other)
            self.fields.insert(j + 1 if where == "after" else j, f)
        if [x.name for x in self.fields] != before:
            self.changed = True

    def set_option(self, key: str, value: object) -> None:
        key, value = str(key), str(value)
        self._check_option(key)
        if key == BUCKET:
            value = self._check_bucket(value)
        if self.options.get(key) != value:
            self.options[key] = value
            self.changed = True

    def remove_option(self, key: str) -> None:
        key = str(key)
        self._check_option(key)
        if key == BUCKET:
            raise SchemaError(f"table {self.table}: Cannot reset bucket (set another bucket number instead); "
                              "nothing was changed")
        if key in self.options:
            del self.options[key]
            self.changed = True

    def _check_bucket(self, value: str) -> str:
        """Paimon's rules for a new 'bucket': a fixed-bucket table takes another positive number (the
        files already written keep theirs until rewritten: INSERT OVERWRITE or CALL sys.rescale); a
        table with bucket -1 keeps it, and no table changes to -1."""
        try:
            new = int(value.strip())
        except ValueError:
            raise SchemaError(f"table {self.table}: option 'bucket' must be a whole number, got {value!r}") from None
        old = int(self.options.get(BUCKET, "-1").strip() or "-1")
        if old == -1:
            raise SchemaError(f"table {self.table}: Cannot change bucket when it is -1 (a dynamic-bucket or "
                              "bucket-unaware table keeps its bucket mode; nothing was changed)")
        if new == -1:
            raise SchemaError(f"table {self.table}: Cannot change bucket to -1 (a fixed-bucket table keeps fixed "
                              "buckets; nothing was changed)")
        if old == POSTPONE_BUCKET or new == POSTPONE_BUCKET:
            raise SchemaError(f"table {self.table}: cannot change 'bucket' from {old} to {new}: icefloe does not "
                              "write postpone-bucket tables (bucket -2); nothing was changed")
        if new < 1:
            raise SchemaError(f"table {self.table}: The number of buckets needs to be greater than 0 "
                              f"('bucket' = {value!r}); nothing was changed")
        return str(new)

    def _check_option(self, key: str) -> None:
        if key in FIXED_OPTIONS:
            raise SchemaError(f"table {self.table}: option {key!r} cannot change after the table is created "
                              f"({FIXED_OPTIONS[key]})")

    # -- the result
    def build(self) -> TableSchema:
        schema = TableSchema(
            id=self.base.id + 1, fields=list(self.fields), partition_keys=list(self.base.partition_keys),
            primary_keys=list(self.primary_keys), options=dict(self.options), comment=self.comment,
            time_millis=int(time.time() * 1000), highest_field_id=max(self.highest, self.base.highest_id),
            version=self.base.version)
        _check_ids(schema, self.table)
        return schema


def _check_ids(schema: TableSchema, table: str) -> None:
    seen: set[int] = set()

    def walk(fields: Iterable[core.NestedField]) -> None:
        for f in fields:
            if f.field_id in seen:
                raise SchemaError(f"table {table}: field id {f.field_id} would be used twice")  # pragma: no cover
            seen.add(f.field_id)
            t = f.field_type
            while isinstance(t, (core.ListType, core.MultisetType, core.MapType)):
                t = t.value_type if isinstance(t, core.MapType) else t.element_type
            if isinstance(t, core.StructType):
                walk(t.fields)

    walk(schema.fields)


# --------------------------------------------------------------------------- the user-facing update
class SchemaTable(Protocol):
    """What a schema update reads of its table (a ``FileStoreTable``)."""
    @property
    def io(self) -> FileIO: ...
    @property
    def name(self) -> str: ...
    @property
    def location(self) -> str: ...
    @property
    def meta_location(self) -> str: ...


class UpdateSchema:
    """``with table.update_schema() as u:`` -- Paimon schema changes, committed on a clean
    exit as one new ``schema-N`` file (nothing is written when the block raises).

    Each change is checked at once against the schema the update started from (so a
    bad change raises inside the block) and replayed on the latest schema at commit.
    The Iceberg-style names the SQL layer uses (``delete_column``, ``update_column``)
    are accepted too.
    """
    def __init__(self, table: SchemaTable):
        self._table = table
        self._calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        base = latest_schema(table.io, table.meta_location)
        if base is None:
            raise SchemaError(f"table {table.name} has no schema at {table.location}")
        self._preview = _Builder(base, table.name)
        self.committed: Optional[TableSchema] = None

    def _record(self, method: str, *args: Any, **kwargs: Any) -> "UpdateSchema":
        getattr(self._preview, method)(*args, **kwargs)
        self._calls.append((method, args, kwargs))
        return self

    # -- Paimon's SchemaChange operations
    def add_column(self, name: str, type: object = None, comment: Optional[str] = None, after: Optional[str] = None,
                   first: bool = False, before: Optional[str] = None, *, field_type: object = None,
                   doc: Optional[str] = None, required: bool = False) -> "UpdateSchema":
        """Add a nullable column (at the end, or ``first``, ``after``/``before`` a column)."""
        t = type if type is not None else field_type
        if t is None:
            raise SchemaError(f"add_column({name!r}) needs a type")
        if required:
            # as NOT NULL schema-file JSON: refused by the rule on NOT NULL columns
            t = pt.type_to_json(self._preview.type_of(t, name)[0], nullable=False)
        return self._record("add_column", name, t, comment if comment is not None else doc, after=after,
                            first=first, before=before)

    def rename_column(self, name: str, new_name: str) -> "UpdateSchema":
        return self._record("rename_column", name, new_name)

    def drop_column(self, name: str) -> "UpdateSchema":
        return self._record("drop_column", name)

    delete_column = drop_column

    def update_column_type(self, name: str, new_type: object) -> "UpdateSchema":
        return self._record("update_column_type", name, new_type)

    def update_column_nullability(self, name: str, nullable: bool = True) -> "UpdateSchema":
        return self._record("update_column_nullability", name, nullable)

    def update_column_comment(self, name: str, comment: Optional[str]) -> "UpdateSchema":
        return self._record("update_column_comment", name, comment)

    def update_comment(self, comment: Optional[str]) -> "UpdateSchema":
        """The table's comment."""
        return self._record("update_comment", comment)

    def set_option(self, key: str, value: object) -> "UpdateSchema":
        """Paimon's SetOption: a table option (``snapshot.num-retained.max``, ...) takes effect
        for every later commit and read."""
        return self._record("set_option", key, value)

    def remove_option(self, key: str) -> "UpdateSchema":
        """Paimon's RemoveOption: the option falls back to its default."""
        return self._record("remove_option", key)

    def update_column(self, name: str, field_type: object = None, required: Optional[bool] = None,
                      doc: Optional[str] = None) -> "UpdateSchema":
        """Type, nullability and comment in one call (the SQL layer's ALTER COLUMN)."""
        if field_type is not None:
            self.update_column_type(name, field_type)
        if required is not None:
            self.update_column_nullability(name, not required)
        if doc is not None:
            self.update_column_comment(name, doc)
        return self

    def move_first(self, name: str) -> "UpdateSchema":
        return self._record("move", name, "first")

    def move_last(self, name: str) -> "UpdateSchema":
        return self._record("move", name, "last")

    def move_after(self, name: str, other: str) -> "UpdateSchema":
        return self._record("move", name, "after", other)

    def move_before(self, name: str, other: str) -> "UpdateSchema":
        return self._record("move", name, "before", other)

    # -- results
    def apply(self) -> TableSchema:
        """The schema these changes would produce on the schema the update started from."""
        return self._preview.build()

    def commit(self) -> TableSchema:
        """Write the next ``schema-N`` (create-if-absent); on a lost race replay the changes
        on the winner's schema and try the next id. Returns the new schema, or the
        latest one unchanged when the changes change nothing (then no file is written)."""
        table = self._table
        io = table.io

        def attempt(_n: int) -> TableSchema:
            base = latest_schema(io, table.meta_location)
            if base is None:
                raise NoSuchTableError(f"Paimon table {table.name} has no schema file (at {table.meta_location})")
            builder = _Builder(base, table.name)
            for method, args, kwargs in self._calls:
                getattr(builder, method)(*args, **kwargs)
            if not builder.changed:
                return base
            new = builder.build()
            _validate(new, table.name)
            # only what this change sets: a table another engine wrote with such options stays alterable
            check_honoured({k: v for k, v in new.options.items() if base.options.get(k) != v}, table.name)
            if any(k.startswith(INDEX_PREFIX) and base.options.get(k) != v for k, v in new.options.items()):
                check_index_options(new.options, new.fields, table.name)
            auto_tag_options(new.options)
            if any(base.options.get(k) != new.options.get(k) for k in _FORMAT_OPTIONS):
                check_file_format(new)      # e.g. 'avro', or a block size that is no size
            row_tracking.check_change(base.options, new.options, table.name)
            io.write_bytes(schema_path(table.meta_location, new.id), new.to_json().encode("utf-8"), overwrite=False)
            return new

        retries = max(10, _max_retries(self._preview.base))
        try:
            result = RetryPolicy(num_retries=retries, min_wait_ms=5, max_wait_ms=500).run(
                attempt, (FileAlreadyExistsError,))
        except FileAlreadyExistsError:
            raise CommitConflictError(f"schema change of {table.name} lost the race for the next schema file "
                                      f"{retries + 1} times; nothing was written") from None
        self.committed = result
        refresh = getattr(table, "refresh", None)    # a table that caches its schema reloads it
        if refresh is not None:
            refresh()
        return result

    def __enter__(self) -> "UpdateSchema":
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        if exc_type is None:
            self.commit()
        return False


_FORMAT_OPTIONS = ("file.format", "file.compression", "deletion-vectors.enabled", "changelog-file.format",
                   "file.block-size", "parquet.block.size", "orc.stripe.size")


def _max_retries(schema: TableSchema) -> int:
    try:
        return int(schema.core_options.commit_max_retries)
    except Exception:
        return 10


def _validate(schema: TableSchema, table: str) -> None:
    """The evolved schema still describes a table icefloe (and Paimon) can use."""
    names = [f.name.lower() for f in schema.fields]
    if len(set(names)) != len(names):
        raise SchemaError(f"table {table}: duplicate column names in {[f.name for f in schema.fields]}")
    by_name = {f.name: f for f in schema.fields}
    for k in list(schema.partition_keys) + list(schema.primary_keys):
        if k not in by_name:
            raise SchemaError(f"table {table}: key column {k!r} would no longer exist")
    raw = schema.options.get(BUCKET_KEY)
    for k in ([x.strip() for x in raw.split(",") if x.strip()] if raw else []):
        if k not in by_name:
            raise SchemaError(f"table {table}: bucket-key column {k!r} would no longer exist")
    if schema.options.get(FALLBACK_BRANCH):
        raise SchemaError(f"table {table}: '{FALLBACK_BRANCH}' is not supported: icefloe's reads do not fall back "
                          "to another branch for missing partitions (read the branch as db.`t$branch_b`)")
    check_vector_rules(schema)
    check_schema(schema.options, schema.fields, schema.primary_keys)
    row_tracking.check_schema(schema)
    check_chain_options(schema.options, schema.primary_keys, schema.partition_keys, table)


__all__ = ["UpdateSchema", "can_widen", "as_paimon_type"]
