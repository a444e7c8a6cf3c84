"""How a table's Parquet files are written: Iceberg's ``write.parquet.*`` table properties and, for
delete files, their ``write.delete.parquet.*`` variants, read as the Java runtime reads them.

``compression-codec`` (``zstd`` unless set), ``compression-level``, ``row-group-size-bytes``,
``page-size-bytes``, ``page-row-limit`` and ``dict-size-bytes``. A delete file's setting falls back
to the data files' one where its own is not set. Every path that writes an Iceberg Parquet file
takes its settings from :meth:`ParquetSettings.of`: the Arrow writers through
:meth:`ParquetSettings.arrow_options`, Spark's Parquet writer through
:meth:`ParquetSettings.hadoop_options`. A value icefloe cannot honour is an ``IcefloeError`` naming
the property, raised before anything is written (and when the property is set: :func:`check`).

The sizes and limits are positive integers of Java's ``int`` range. A level is an integer in the
codec's range (``gzip`` 1 to 9, ``zstd`` -131072 to 22, ``brotli`` 0 to 11); as in the Java runtime,
the codecs that take no level (``snappy``, ``lz4``, ``lz4_raw``, ``uncompressed``) leave one set beside
them unused, so a table another engine configured stays writable. ``lzo`` is refused: neither
writer here has it; so is ``lz4`` where the Arrow writers write (pyarrow has only ``LZ4_RAW``), and
``brotli`` goes to the Arrow writers where Spark's would write (Spark has no brotli).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from icefloe.core.arrow import dictionary_columns
from icefloe.errors import IcefloeError
from icefloe.iceberg.property_values import codec_level, integer

PREFIX = "write.parquet."
DELETE_PREFIX = "write.delete.parquet."
CODEC, LEVEL = "compression-codec", "compression-level"
ROW_GROUP, PAGE_SIZE, PAGE_ROWS, DICT_SIZE = ("row-group-size-bytes", "page-size-bytes", "page-row-limit",
                                              "dict-size-bytes")
_SIZES = (ROW_GROUP, PAGE_SIZE, PAGE_ROWS, DICT_SIZE)
# every property this module reads
PROPERTIES = tuple(p + k for p in (PREFIX, DELETE_PREFIX) for k in (CODEC, LEVEL, *_SIZES))

DEFAULT_CODEC = "zstd"
CODECS = ("uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4", "lz4_raw")
_LEVELS = {"gzip": range(1, 10), "zstd": range(-131072, 23), "brotli": range(0, 12)}
_INT_MAX = 2**31 - 1
# Hadoop's zlib levels by name (``zlib.compress.level``), as parquet-java's gzip codec reads them
_ZLIB = {1: "BEST_SPEED", 2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE", 6: "SIX", 7: "SEVEN", 8: "EIGHT",
         9: "BEST_COMPRESSION"}


@dataclass(frozen=True)
class ParquetSettings:
    """The settings of one kind of file (data or delete); a size or limit that is None was not set
    (the writer's own default applies). ``codec_property`` names the property the codec came from."""
    codec: str = DEFAULT_CODEC
    level: Optional[int] = None
    row_group_bytes: Optional[int] = None
    page_bytes: Optional[int] = None
    page_rows: Optional[int] = None
    dict_bytes: Optional[int] = None
    codec_property: str = PREFIX + CODEC

    @classmethod
    def of(cls, properties: Optional[Mapping[str, str]], delete: bool = False) -> "ParquetSettings":
        """The settings a table's properties give its data files (or, ``delete``, its delete files);
        an ``IcefloeError`` naming the property for a value icefloe cannot honour."""
        props = properties or {}

        def raw(key: str) -> tuple[Optional[str], str]:
            if delete and props.get(DELETE_PREFIX + key) is not None:
                return props[DELETE_PREFIX + key], DELETE_PREFIX + key
            return props.get(PREFIX + key), PREFIX + key

        codec_raw, codec_prop = raw(CODEC)
        codec = DEFAULT_CODEC if codec_raw is None else str(codec_raw).strip().lower()
        if codec not in CODECS:
            raise IcefloeError(f"table property {codec_prop}={codec_raw!r} is not a Parquet codec icefloe writes: "
                               f"use one of {', '.join(CODECS)}")
        sizes: dict[str, Optional[int]] = {}
        for key in _SIZES:
            value, prop = raw(key)
            sizes[key] = None if value is None else _positive(prop, value)
        level_raw, level_prop = raw(LEVEL)
        level = codec_level(level_prop, level_raw, codec, codec_prop, _LEVELS)
        return cls(codec, level, sizes[ROW_GROUP], sizes[PAGE_SIZE], sizes[PAGE_ROWS], sizes[DICT_SIZE], codec_prop)

    def arrow_options(self) -> dict[str, Any]:
        """pyarrow's ``ParquetWriter`` options for these settings (the row group size aside: it is
        in rows there, :func:`rows_per_group`). ``lz4`` is refused: pyarrow writes it as ``LZ4_RAW``,
        not as the Hadoop-framed ``LZ4`` the property names."""
        if self.codec == "lz4":
            raise IcefloeError(f"table property {self.codec_property}=lz4: icefloe's Arrow writer has only Parquet's "
                               "LZ4_RAW codec (the Hadoop-framed LZ4 is deprecated in Parquet); set it to lz4_raw")
        out: dict[str, Any] = {"compression": None if self.codec == "uncompressed" else self.codec}
        if self.level is not None:
            out["compression_level"] = self.level
        if self.page_bytes is not None:
            out["data_page_size"] = self.page_bytes
        if self.page_rows is not None:
            out["max_rows_per_page"] = self.page_rows
        if self.dict_bytes is not None:
            out["dictionary_pagesize_limit"] = self.dict_bytes
        return out

    def spark_codec(self) -> str:
        """The ``compression`` option of Spark's Parquet writer."""
        return "none" if self.codec == "uncompressed" else self.codec

    def spark_writable(self) -> bool:
        """Whether Spark's Parquet writer has this codec (it has no brotli)."""
        return self.codec != "brotli"

    def hadoop_options(self) -> dict[str, str]:
        """The Hadoop options of Spark's Parquet writer (parquet-java's names) for these settings,
        the codec (``compression``) among them."""
        out = {"compression": self.spark_codec()}
        if not self.spark_writable():
            raise IcefloeError(f"table property {self.codec_property}={self.codec}: Spark's Parquet writer has no "
                               "brotli codec")
        if self.level is not None:
            if self.codec == "zstd":
                out["parquet.compression.codec.zstd.level"] = str(self.level)
            elif self.codec == "gzip":
                out["zlib.compress.level"] = _ZLIB[self.level]
        for key, value in (("parquet.block.size", self.row_group_bytes), ("parquet.page.size", self.page_bytes),
                           ("parquet.page.row.count.limit", self.page_rows),
                           ("parquet.dictionary.page.size", self.dict_bytes)):
            if value is not None:
                out[key] = str(value)
        return out


def _positive(prop: str, value: Any) -> int:
    n = integer(prop, value)
    if not 0 < n <= _INT_MAX:
        raise IcefloeError(f"table property {prop}={n} must be a positive integer of at most {_INT_MAX}")
    return n


def rows_per_group(table: Any, settings: ParquetSettings, sample_rows: int = 10_000) -> Optional[int]:
    """The rows of each row group of ``table`` (Arrow) that make groups of about
    ``row_group_bytes`` once written, as the Java runtime cuts a row group when its buffered size
    reaches the target: the written bytes a row takes measured on a sample of the rows written with
    the same settings. None when the setting is not set (pyarrow's own default applies)."""
    if settings.row_group_bytes is None or table.num_rows == 0:
        return None
    if table.nbytes <= settings.row_group_bytes:     # written, the rows take no more than in memory
        return table.num_rows
    import io

    import pyarrow.parquet as pq

    sample = table.slice(0, min(table.num_rows, sample_rows))
    buf = io.BytesIO()
    pq.write_table(sample, buf, store_schema=False, use_dictionary=dictionary_columns(sample),
                   **settings.arrow_options())
    md = pq.read_metadata(io.BytesIO(buf.getvalue()))
    written = sum(md.row_group(i).column(c).total_compressed_size
                  for i in range(md.num_row_groups) for c in range(md.num_columns))
    per_row = max(written / max(sample.num_rows, 1), 1e-3)
    return max(1, int(settings.row_group_bytes / per_row))


def check(properties: Mapping[str, str], changed: Iterable[str] = ()) -> None:
    """Refuse (an ``IcefloeError`` naming the property) Parquet write settings icefloe cannot
    honour, when any of ``changed`` (all when empty) is one of them: called where the properties
    are set, so a bad value never reaches a table."""
    names = set(changed)
    if names and not names & set(PROPERTIES):
        return
    ParquetSettings.of(properties)
    ParquetSettings.of(properties, delete=True)


__all__ = ["ParquetSettings", "PROPERTIES", "CODECS", "check", "rows_per_group"]
