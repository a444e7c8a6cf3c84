"""Row lineage (Iceberg format v3, "Row Lineage") on the data plane.

Every row of a v3 table has a row id and the sequence number of the commit that last changed
it. A data file may store them (``_row_id``, field 2147483540, and
``_last_updated_sequence_number``, 2147483539); where it stores null, or nothing, the row id is
the file's first row id plus the row's position and the sequence number is the file's data
sequence number.

Row-level changes read the rows they touch with the stored values (``ROW_ID_COL``,
``LAST_SEQ_COL``, null where the file stores none) beside each row's file and position, and
compute the inherited ones only for the rows they write (``stored``): a row carried over
unchanged keeps both, an updated row keeps its id and takes the new commit's sequence number
(null in the file), an inserted row gets nothing (its id comes from the new file's first row id).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Sequence, Union

from icefloe.core.types import PRIMITIVES_BY_NAME, NestedField, Schema
from icefloe.spark.scans import local_frame

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

    from icefloe.iceberg.scan import FileScanTask
    from icefloe.iceberg.table_metadata import TableMetadata

ROW_ID = NestedField(2147483540, "_row_id", PRIMITIVES_BY_NAME["long"], False)
LAST_UPDATED = NestedField(2147483539, "_last_updated_sequence_number", PRIMITIVES_BY_NAME["long"], False)
ROW_ID_COL = "_icefloe_row_id"           # a row's id, computed
LAST_SEQ_COL = "_icefloe_last_seq"       # the sequence number that last changed it, computed
_FIRST = "_icefloe_first_row_id"
_DSEQ = "_icefloe_data_seq"


def tracks_lineage(meta: TableMetadata) -> bool:
    return meta.format_version >= 3


def with_lineage_fields(schema: Schema) -> Schema:
    """``schema`` with the two lineage fields after its own (to read or write them by field id)."""
    return Schema(list(schema.fields) + [ROW_ID, LAST_UPDATED], schema_id=schema.schema_id,
                  identifier_field_ids=schema.identifier_field_ids)


def writing_lineage(meta: TableMetadata) -> TableMetadata:
    """``meta`` whose current schema also holds the lineage fields: new data files store them."""
    current = meta.schema
    return replace(meta, schemas=[with_lineage_fields(s) if s.schema_id == current.schema_id else s
                                  for s in meta.schemas])


def as_stored(rows: DataFrame) -> DataFrame:
    """``rows`` read with ``with_lineage_fields``: the stored lineage columns as ``ROW_ID_COL``
    and ``LAST_SEQ_COL`` (null where the file stores none)."""
    return rows.withColumnsRenamed({ROW_ID.name: ROW_ID_COL, LAST_UPDATED.name: LAST_SEQ_COL})


def computed(spark: SparkSession, rows: DataFrame, tasks: Sequence[FileScanTask], file_col: str,
             pos_col: str) -> DataFrame:
    """``rows`` (stored lineage as ``as_stored`` gives it, and each row's file and position) with
    ``ROW_ID_COL`` and ``LAST_SEQ_COL`` inherited where null: the file's first row id plus the
    row's position, and the file's data sequence number (from ``tasks``, joined by file; rows of
    no file, inserted ones, stay null)."""
    from pyspark.sql import functions as F

    info = local_frame(spark, {file_col: ([t.path for t in tasks], "string"),
                               _FIRST: ([t.file.first_row_id for t in tasks], "int64"),
                               _DSEQ: ([int(t.data_sequence_number) for t in tasks], "int64")})
    joined = rows.join(F.broadcast(info), file_col, "left")
    inherited = {ROW_ID_COL: F.coalesce(F.col(ROW_ID_COL), F.col(_FIRST) + F.col(pos_col)),
                 LAST_SEQ_COL: F.coalesce(F.col(LAST_SEQ_COL), F.col(_DSEQ))}
    # one projection (each withColumn is another analysis of the whole plan on the driver)
    return joined.select(*[inherited[c].alias(c) if c in inherited else F.col(f"`{c}`")
                           for c in joined.columns if c not in (_FIRST, _DSEQ)])


def empty_lineage(df: DataFrame) -> DataFrame:
    """``df`` with null lineage columns (rows that are new)."""
    from pyspark.sql import functions as F

    return df.withColumn(ROW_ID_COL, F.lit(None).cast("long")).withColumn(LAST_SEQ_COL, F.lit(None).cast("long"))


def written_in_task(tasks: Sequence[FileScanTask], file_col: str,
                    pos_col: str) -> Callable[[pa.Table], pa.Table]:
    """For rows a task writes as new data (updated or inserted; never carried over): a function
    of the task's Arrow table (stored lineage as ``as_stored`` gives it, each row's file and
    position) giving the lineage a new data file stores, computed in the task with no join: the row
    id, inherited (the file's first row id plus the position) where null, null for inserted rows;
    the last sequence number null (the new commit's)."""
    paths = [t.path for t in tasks]
    firsts = [t.file.first_row_id for t in tasks]
    lookup: list[pa.Array] = []           # (paths, first row ids) as Arrow arrays, built once per task

    def lineage(table: pa.Table) -> pa.Table:
        import pyarrow as pa
        import pyarrow.compute as pc

        if not lookup:
            lookup.extend([pa.array(paths, pa.string()), pa.array(firsts, pa.int64())])
        at = pc.index_in(table.column(file_col), value_set=lookup[0])
        inherited = pc.add(pc.take(lookup[1], at), table.column(pos_col).cast(pa.int64()))
        row_id = pc.coalesce(table.column(ROW_ID_COL).cast(pa.int64()), inherited)
        out = table.drop_columns([ROW_ID_COL, LAST_SEQ_COL])
        return (out.append_column(ROW_ID.name, row_id)
                .append_column(LAST_UPDATED.name, pa.nulls(table.num_rows, pa.int64())))

    return lineage


def stored(spark: SparkSession, rows: DataFrame, tasks: Sequence[FileScanTask], columns: Sequence[str], file_col: str,
           pos_col: str, action_col: str, keep: Union[int, str]) -> DataFrame:
    """``rows`` (stored lineage as ``as_stored`` gives it, and each row's file and position) as the
    ``columns`` a new data file stores, then the lineage (``computed``, ``stored_lineage``)."""
    return computed(spark, rows, tasks, file_col, pos_col).select(*columns, *stored_lineage(action_col, keep))


def stored_lineage(action_col: str, keep: Union[int, str]) -> list[Column]:
    """The lineage columns a new data file stores for a ``computed`` row: its id always (null for
    inserted rows), its last sequence number only when the row is carried over unchanged
    (``keep``)."""
    from pyspark.sql import functions as F

    return [F.col(ROW_ID_COL).alias(ROW_ID.name),
            F.when(F.col(action_col) == F.lit(keep), F.col(LAST_SEQ_COL)).cast("long").alias(LAST_UPDATED.name)]
