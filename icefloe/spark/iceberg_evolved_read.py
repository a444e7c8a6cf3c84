"""Reading data files written under older schemas with Spark's Parquet reader.

Spark 4.3 matches requested columns to file columns by ``parquet.field.id``
(``spark.sql.parquet.fieldId.read.enabled``) and widens int -> bigint,
float -> double and decimal(P,S) -> decimal(P2,S) itself, so a renamed column
keeps its data, a dropped-then-re-added one reads as null and promoted
columns read widened, with no help.

Its Parquet *filter pushdown*, however, looks file columns up by name. When a
file has a column whose name the current schema gives to a different field id
(a column dropped and re-added under the same name, or two columns that swapped
names), a pushed filter is evaluated on the wrong column's statistics and whole
row groups are skipped wrongly. Such columns are requested under an alias no
file contains -- still matched by field id, never pushed down by name -- and
get their names back right after the read.

uuid columns are requested as BinaryType (the spec stores them as
fixed_len_byte_array(16), which Spark reads only as binary) and turned into
the canonical lower-case string right after the read; values older icefloe
versions stored as UTF-8 strings are passed through as text.

Files written without field ids (e.g. registered by pyiceberg's ``add_files``)
are read by name through the table's name mapping (spec, "Column Projection"):
see :func:`read_parquet_by_name`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from icefloe.core.types import (
    IcebergType, ListType, MapType, Schema, StructType, to_spark_field, to_spark_type,
)
from icefloe.core.types.model import contains_nanos, type_names
from icefloe.errors import IcefloeError
from icefloe.iceberg.schema_update import update_name_mapping
from icefloe.spark.scans import file_scan

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as T

    from icefloe.core.types import NestedField

ALIAS_PREFIX = "__icefloe_fid_"


def _paths_by_name(schema: Schema) -> dict:
    out: dict = {}
    for path, f in schema.all_fields():
        out.setdefault(path.lower(), set()).add(f.field_id)
    return out


def ambiguous_columns(schema: Schema, history: Iterable[Schema]) -> set:
    """Ids of top-level columns of ``schema`` that contain a (dotted, case-insensitive) name
    which some schema in ``history`` gave to a different field id."""
    used: dict = {}
    for old in history:
        for path, ids in _paths_by_name(old).items():
            used.setdefault(path, set()).update(ids)
    out = set()
    for top in schema.fields:
        for path, f in Schema([top]).all_fields():
            if used.get(path.lower(), set()) - {f.field_id}:
                out.add(top.field_id)
                break
    return out


def spark_read_schema(schema: Schema, history: Iterable[Schema] = ()) -> T.StructType:
    """The Spark schema to hand ``spark.read.schema(...)``: field ids on every column,
    ambiguous top-level columns renamed to an alias (see :func:`restore_column_names`)."""
    from pyspark.sql import types as T

    aliased = ambiguous_columns(schema, history)
    fields = []
    for f in schema.fields:
        sf = to_spark_field(f, uuid_as_binary=True)
        if f.field_id in aliased:
            sf = T.StructField(f"{ALIAS_PREFIX}{f.field_id}", sf.dataType, sf.nullable, sf.metadata)
        fields.append(sf)
    return T.StructType(fields)


def restore_column_names(df: DataFrame, schema: Schema) -> DataFrame:
    """Give aliased columns their names back and uuid columns their string form;
    other columns (e.g. ``_metadata`` selections) stay."""
    columns = set(df.columns)           # one round trip to the JVM, not one per field
    renames = {f"{ALIAS_PREFIX}{f.field_id}": f.name for f in schema.fields
               if f"{ALIAS_PREFIX}{f.field_id}" in columns}
    if renames:
        df = df.withColumnsRenamed(renames)
    return uuid_columns_to_strings(df, schema)


# --------------------------------------------------------------------------- uuid
def has_uuid(t: IcebergType) -> bool:
    return "uuid" in type_names(t)


def has_nanos(schema: Schema) -> bool:
    """Whether a column (at any depth) is a format v3 nanosecond timestamp: Spark's Parquet reader
    and writer know only microseconds, so those tables are read and written by Arrow in tasks."""
    return contains_nanos(schema.struct)


def schema_has_uuid(schema: Schema) -> bool:
    return any(has_uuid(f.field_type) for f in schema.fields)


def uuid_string(col: Column) -> Column:
    """16 uuid bytes as the canonical string; anything else (uuids stored as text) cast to string."""
    from pyspark.sql import functions as F

    canonical = F.lower(F.regexp_replace(F.hex(col), "^(.{8})(.{4})(.{4})(.{4})(.{12})$", "$1-$2-$3-$4-$5"))
    return F.when(F.length(col) == 16, canonical).otherwise(col.cast("string"))


def _uuid_to_string(col: Column, t: IcebergType):
    from pyspark.sql import functions as F

    if not has_uuid(t):
        return col
    if isinstance(t, StructType):
        fields = [_uuid_to_string(col.getField(f.name), f.field_type).alias(f.name) for f in t.fields]
        return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*fields))
    if isinstance(t, ListType):
        return F.transform(col, lambda x: _uuid_to_string(x, t.element_type))
    if isinstance(t, MapType):
        if has_uuid(t.key_type):
            col = F.transform_keys(col, lambda k, v: _uuid_to_string(k, t.key_type))
        if has_uuid(t.value_type):
            col = F.transform_values(col, lambda k, v: _uuid_to_string(v, t.value_type))
        return col
    return uuid_string(col)


def uuid_columns_to_strings(df: DataFrame, schema: Schema) -> DataFrame:
    """Columns of ``schema`` read with uuids as binary (see ``spark_read_schema``) -> uuid strings."""
    if not schema_has_uuid(schema):
        return df
    present = set(df.columns)
    conv = {f.name: _uuid_to_string(df[f"`{f.name}`"], f.field_type) for f in schema.fields
            if f.name in present and has_uuid(f.field_type)}
    return df.withColumns(conv) if conv else df


# --------------------------------------------------------------------------- files without field ids
def mapping_from_history(schema: Schema, history: Iterable[Schema] = ()) -> list:
    """A name mapping for tables that have none: every name each field id has had."""
    mapping: list = []
    for old in list(history) + [schema]:
        mapping = update_name_mapping(mapping, old)
    return mapping


def _entries_by_id(entries: Optional[list[dict[str, Any]]]) -> dict:
    return {e["field-id"]: e for e in (entries or []) if e.get("field-id") is not None}


def _missing_name(field_id: int) -> str:
    return f"__icefloe_missing_{field_id}"


def _mapped_type(t: IcebergType, arrow_type: Optional[pa.DataType], entries: Optional[list[dict[str, Any]]],
                 path: str, file_path: str):
    """The Spark type to request for ``t`` from a file column of ``arrow_type``, with the
    file's own (nested) names; struct fields the file lacks get a name it does not have."""
    import pyarrow.types as pt
    from pyspark.sql import types as T

    if isinstance(t, StructType):
        if arrow_type is None or not pt.is_struct(arrow_type):
            return _without_ids(to_spark_type(t, uuid_as_binary=True))
        by_id = _entries_by_id(entries)
        children = {arrow_type.field(i).name: arrow_type.field(i) for i in range(arrow_type.num_fields)}
        return T.StructType([_mapped_field(f, children, by_id, f"{path}.{f.name}", file_path) for f in t.fields])
    if isinstance(t, ListType):
        sub = _entries_by_id(entries).get(t.element_id, {}).get("fields")
        at = arrow_type.value_type if arrow_type is not None and (pt.is_list(arrow_type) or pt.is_large_list(arrow_type)) else None
        return T.ArrayType(_mapped_type(t.element_type, at, sub, f"{path}.element", file_path), containsNull=True)
    if isinstance(t, MapType):
        by_id = _entries_by_id(entries)
        is_map = arrow_type is not None and pt.is_map(arrow_type)
        kt = _mapped_type(t.key_type, arrow_type.key_type if is_map and arrow_type is not None else None,
                          by_id.get(t.key_id, {}).get("fields"), f"{path}.key", file_path)
        vt = _mapped_type(t.value_type, arrow_type.item_type if is_map and arrow_type is not None else None,
                          by_id.get(t.value_id, {}).get("fields"), f"{path}.value", file_path)
        return T.MapType(kt, vt, valueContainsNull=True)
    return to_spark_type(t, uuid_as_binary=True)


def _mapped_field(f: NestedField, file_fields: dict, by_id: dict, path: str, file_path: str):
    """A StructField named as the file names ``f`` (by the mapping), or a name the file lacks."""
    from pyspark.sql import types as T

    entry = by_id.get(f.field_id, {})
    name = next((n for n in entry.get("names", []) if n in file_fields), None)
    if name is None:
        if f.required:
            raise IcefloeError(
                f"data file {file_path} has no field ids and no column that the table's name mapping "
                f"maps to required field {path!r} (id {f.field_id}); cannot read it")
        return T.StructField(_missing_name(f.field_id),
                             _without_ids(to_spark_type(f.field_type, uuid_as_binary=True)), True)
    at = file_fields[name].type
    return T.StructField(name, _mapped_type(f.field_type, at, entry.get("fields"), path, file_path), True)


def name_read_plan(schema: Schema, file_schema: pa.Schema, mapping: list,
                   file_path: str) -> tuple[T.StructType, list[Optional[str]]]:
    """For a file without field ids (``file_schema``: its Arrow schema): the Spark schema to
    request by name and, per table column, the file's column name (None: not in the file)."""
    from pyspark.sql import types as T

    by_id = _entries_by_id(mapping)
    file_fields = {file_schema.field(i).name: file_schema.field(i) for i in range(len(file_schema))}
    requested, names = [], []
    for f in schema.fields:
        sf = _mapped_field(f, file_fields, by_id, f.name, file_path)
        present = sf.name in file_fields
        names.append(sf.name if present else None)
        if present:
            requested.append(sf)
    if not requested and len(file_schema):  # nothing maps: still read the rows' count
        first = file_schema.field(0)
        requested.append(T.StructField(first.name, _plain_spark_type(first.type), True))
    return T.StructType(requested), names


def _without_ids(dt: T.DataType):
    """``dt`` with no ``parquet.field.id`` anywhere (Spark insists on ids in the file otherwise)."""
    from pyspark.sql import types as T

    if isinstance(dt, T.StructType):
        return T.StructType([T.StructField(f.name, _without_ids(f.dataType), True) for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(_without_ids(dt.elementType), True)
    if isinstance(dt, T.MapType):
        return T.MapType(_without_ids(dt.keyType), _without_ids(dt.valueType), True)
    return dt


def _plain_spark_type(arrow_type: pa.DataType):
    from pyspark.sql import types as T

    try:
        from pyspark.sql.pandas.types import from_arrow_type

        return _without_ids(from_arrow_type(arrow_type))
    except Exception:
        return T.BinaryType()


def read_parquet_by_name(spark: SparkSession, paths: list, schema: Schema, read_schema: T.StructType, names: list,
                         extra_cols: Optional[list] = None, constants: Optional[dict] = None) -> DataFrame:
    """Files without field ids (all sharing the plan of :func:`name_read_plan`) as ``schema``'s
    columns under their current names; ``extra_cols`` (e.g. ``_metadata`` selections) are added.
    ``constants`` (column name -> internal value): what columns the files lack read as (their
    identity partition values)."""
    from pyspark.sql import functions as F

    df = file_scan(spark, paths, read_schema)
    cols = []
    for f, name in zip(schema.fields, names):
        target = to_spark_type(f.field_type, uuid_as_binary=True)
        if name is None and constants and f.name in constants:
            cols.append(F.lit(_python_value(f.field_type, constants[f.name])).cast(target).alias(f.name))
            continue
        if name is None:
            cols.append(F.lit(None).cast(target).alias(f.name))
            continue
        c = F.col(f"`{name}`")
        if isinstance(f.field_type, (StructType, ListType, MapType)):
            c = c.cast(target)   # struct fields by position: the file's names -> the table's
        cols.append(c.alias(f.name))
    return uuid_columns_to_strings(df.select(*cols, *(extra_cols or [])), schema)


def _python_value(t: IcebergType, value: Any):
    """An internal value (days, microseconds...) as the Python value Spark takes as a literal."""
    import pyarrow as pa

    from icefloe.core.types.arrow import to_arrow_type

    return pa.array([value], to_arrow_type(t, with_ids=False)).to_pylist()[0]


def read_parquet_by_field_id(spark: SparkSession, paths: list, schema: Schema, history: Iterable[Schema] = (),
                             whole: Sequence[str] = ()) -> DataFrame:
    """``spark.read.parquet(paths)`` projected onto ``schema`` by field id, safe under schema evolution
    (``whole``: as ``scans.file_scan``'s)."""
    df = file_scan(spark, paths, spark_read_schema(schema, history), whole=whole)
    return restore_column_names(df, schema)
