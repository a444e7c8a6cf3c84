"""Reading Paimon data files with pyarrow (no Spark)."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe.core.io import LOCAL, FileIO, strip_scheme
from icefloe.errors import CorruptDataFileError


def read_data_file(path: str, io: FileIO = LOCAL, columns=None):
    """One data file as a pyarrow.Table (no Hive partition discovery); ``columns``: only these."""
    local = strip_scheme(path)
    try:
        with io.open_read(path) as fh:
            return pq.ParquetFile(fh, page_checksum_verification=True).read(columns=columns)  # catches flipped bits
    except FileNotFoundError:
        raise CorruptDataFileError(local, "data file referenced by the snapshot is missing") from None
    except (pa.ArrowException, OSError) as e:
        raise CorruptDataFileError(local, f"not a readable Parquet file ({type(e).__name__}: {e})") from None


def iter_data_file(path: str, io: FileIO = LOCAL, batch_rows: int = 65536):
    """One data file as pyarrow.Tables of at most ``batch_rows`` rows, read as they are
    consumed (the file stays open until the generator ends)."""
    local = strip_scheme(path)
    try:
        with io.open_read(path) as fh:
            pf = pq.ParquetFile(fh, page_checksum_verification=True)
            schema = pf.schema_arrow
            empty = True
            for batch in pf.iter_batches(batch_size=batch_rows):
                empty = False
                yield pa.Table.from_batches([batch], schema=schema)
            if empty:
                yield schema.empty_table()
    except FileNotFoundError:
        raise CorruptDataFileError(local, "data file referenced by the snapshot is missing") from None
    except (pa.ArrowException, OSError) as e:
        raise CorruptDataFileError(local, f"not a readable Parquet file ({type(e).__name__}: {e})") from None
