"""Reading Paimon data files with pyarrow (no Spark)."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe.core.io import LOCAL, FileIO, strip_scheme
from icefloe.errors import CorruptDataFileError


def read_data_file(path: str, io: FileIO = LOCAL):
    """One data file as a pyarrow.Table (no Hive partition discovery)."""
    local = strip_scheme(path)
    try:
        with io.open_read(path) as fh:
            return pq.ParquetFile(fh, page_checksum_verification=True).read()  # catches flipped bits
    except FileNotFoundError:
        raise CorruptDataFileError(local, "data file referenced by the snapshot is missing") from None
    except (pa.ArrowException, OSError) as e:
        raise CorruptDataFileError(local, f"not a readable Parquet file ({type(e).__name__}: {e})") from None
