# pyright: strict
"""Reading Paimon data files with pyarrow (no Spark): Parquet, ORC (``file.format = 'orc'``) and Avro
(``'avro'``, through fastavro: ``avro_data``), told apart by the file name's suffix as Paimon names
them."""
from __future__ import annotations

from typing import BinaryIO, Iterator, Optional, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe.core.io import LOCAL, FileIO, strip_scheme
from icefloe.errors import CorruptDataFileError, IcefloeError
from icefloe.paimon import avro_data


def is_orc(path: str) -> bool:
    """Whether ``path`` names an ORC data file (``.orc``, as Paimon names them)."""
    return path.lower().endswith(".orc")


def is_avro(path: str) -> bool:
    """Whether ``path`` names an Avro data file (``.avro``)."""
    return path.lower().endswith(".avro")


def is_parquet(path: str) -> bool:
    """Whether ``path`` names a Parquet data file (any name but ``.orc`` and ``.avro``)."""
    return not is_orc(path) and not is_avro(path)


def format_name(path: str) -> str:
    """The format of a data file by its name: ``ORC``, ``Avro`` or ``Parquet``."""
    return "ORC" if is_orc(path) else "Avro" if is_avro(path) else "Parquet"


# what a reader raises on a file that is not what its name says (fastavro: ValueError, EOFError...)
_UNREADABLE = (pa.ArrowException, OSError, ValueError, EOFError, IcefloeError)


def read_data_file(path: str, io: FileIO = LOCAL, columns: Optional[Sequence[str]] = None) -> pa.Table:
    """One data file as a pyarrow.Table (no Hive partition discovery); ``columns``: only these."""
    local = strip_scheme(path)
    try:
        with io.open_read(path) as fh:
            if is_orc(path):
                import pyarrow.orc as po

                return po.ORCFile(fh).read(columns=columns)
            if is_avro(path):
                return avro_data.read_avro_table(fh, columns)
            return pq.ParquetFile(fh, page_checksum_verification=True).read(columns=columns)  # catches flipped bits
    except FileNotFoundError:
        raise CorruptDataFileError(local, "data file referenced by the snapshot is missing") from None
    except _UNREADABLE as e:
        raise CorruptDataFileError(local, f"not a readable {format_name(path)} file ({type(e).__name__}: {e})") from None


def read_file_schema(path: str, io: FileIO = LOCAL) -> pa.Schema:
    """A data file's Arrow schema, from its footer alone."""
    local = strip_scheme(path)
    try:
        with io.open_read(path) as fh:
            if is_orc(path):
                import pyarrow.orc as po

                return po.ORCFile(fh).schema
            if is_avro(path):
                return avro_data.avro_file_schema(fh)
            return pq.ParquetFile(fh).schema_arrow
    except FileNotFoundError:
        raise CorruptDataFileError(local, "data file referenced by the snapshot is missing") from None
    except _UNREADABLE as e:
        raise CorruptDataFileError(local, f"not a readable {format_name(path)} file ({type(e).__name__}: {e})") from None


def _orc_batches(fh: BinaryIO, batch_rows: int) -> Iterator[pa.Table]:
    import pyarrow.orc as po

    of = po.ORCFile(fh)
    schema = of.schema
    empty = True
    for i in range(of.nstripes):
        stripe = pa.Table.from_batches([of.read_stripe(i)], schema=schema)
        for start in range(0, stripe.num_rows, batch_rows):
            empty = False
            yield stripe.slice(start, batch_rows)
    if empty:
        yield schema.empty_table()


def iter_data_file(path: str, io: FileIO = LOCAL, batch_rows: int = 65536) -> Iterator[pa.Table]:
    """One data file as pyarrow.Tables of at most ``batch_rows`` rows, read as they are
    consumed (the file stays open until the generator ends)."""
    local = strip_scheme(path)
    try:
        with io.open_read(path) as fh:
            if is_orc(path):
                yield from _orc_batches(fh, batch_rows)
                return
            if is_avro(path):
                yield from avro_data.iter_avro_tables(fh, batch_rows)
                return
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
    except _UNREADABLE as e:
        raise CorruptDataFileError(local, f"not a readable {format_name(path)} file ({type(e).__name__}: {e})") from None
