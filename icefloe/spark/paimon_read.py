"""Reading planned Paimon data files with Spark's own Parquet reader.

The driver plans (``icefloe.paimon.scan``); Spark reads exactly the files that may
match. Columns are matched by name, as Paimon's readers do: the read schema
carries no ``parquet.field.id`` (files written by pypaimon have no field ids,
and Spark refuses id-based reads of such files). The files are passed one by
one, so Spark infers no partition columns from the ``k=v`` directories. The
filter is applied again on rows.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

from icefloe.paimon import types as pt


def read_files(spark, paths: Sequence[str], fields, where=None, columns: Optional[Sequence[str]] = None):
    """A DataFrame of the given data files under the table's (Paimon) fields."""
    schema = pt.to_spark_schema(fields, with_ids=False)
    if not paths:
        df = spark.createDataFrame([], schema)
    else:
        from icefloe.spark.iceberg_read import raise_if_missing

        # never skip a file (sessions may set spark.sql.files.ignoreCorruptFiles/ignoreMissingFiles):
        # its rows would silently be missing from the result
        try:
            df = (spark.read.option("ignoreCorruptFiles", "false").option("ignoreMissingFiles", "false")
                  .schema(schema).parquet(*paths))
        except Exception as e:
            raise_if_missing(e, paths, "data file")
            raise
    if where is not None:
        df = df.where(where)
    if columns:
        df = df.select(*[f"`{c}`" for c in columns])
    return df


# --------------------------------------------------------------------------- Python data source hooks
def _table(location: str):
    from icefloe.core.io import strip_scheme
    from icefloe.paimon.table import PaimonTable

    loc = os.path.abspath(strip_scheme(location))
    return PaimonTable(os.path.basename(loc.rstrip("/")), loc)


def paimon_schema_ddl(location: str) -> str:
    """The Spark DDL of a Paimon table's columns (for ``DataSource.schema``)."""
    table = _table(location)
    return ", ".join(
        f"`{f.name.replace('`', '``')}` {pt.to_spark_type(f.type, False).simpleString()}"
        + ("" if f.type.nullable else " NOT NULL")
        for f in table.table_schema.fields)


def paimon_partitions(location: str, options: dict, where=None) -> list[str]:
    """Paths of the data files a read uses (``snapshot-id`` / ``as-of-timestamp`` options)."""
    table = _table(location)
    sid = options.get("snapshot-id")
    as_of = options.get("as-of-timestamp")
    return [f.file_path for f in table.plan_files(where if isinstance(where, str) else None,
                                                  int(sid) if sid not in (None, "") else None,
                                                  as_of=int(as_of) if as_of not in (None, "") else None)]


def paimon_read_file(location: str, path: str, target):
    """Arrow batches of one data file, columns matched by name and cast to ``target``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from icefloe.core.io import strip_scheme
    from icefloe.errors import CorruptDataFileError

    def batches():
        # errors name the file: this runs in a Python worker, where pyarrow's message alone
        # ("Parquet magic bytes not found in footer") would not say which file
        local = strip_scheme(path)
        try:
            pf = pq.ParquetFile(local, page_checksum_verification=True)
            yield pf.schema_arrow.names
            yield from pf.iter_batches(batch_size=65536)
        except FileNotFoundError:
            raise CorruptDataFileError(local, "data file referenced by the snapshot is missing") from None
        except (pa.ArrowException, OSError) as e:
            raise CorruptDataFileError(local, f"not a readable Parquet file ({type(e).__name__}: {e})") from None

    it = batches()
    names = {n.lower(): n for n in next(it)}
    for batch in it:
        cols = []
        for f in target:
            src = names.get(f.name.lower())
            if src is None:
                cols.append(pa.nulls(batch.num_rows, f.type))
            else:
                col = batch.column(batch.schema.get_field_index(src))
                cols.append(col.cast(f.type) if col.type != f.type else col)
        yield pa.RecordBatch.from_arrays(cols, schema=target)
