"""The string column that names each row's partition in a partitioned Spark write, for both formats.

Per partition field ``n`` (null) or ``v`` and the value's text, joined by ``_``: numbers as Spark
prints them, text (strings, uuids) as the hex of its UTF-8 bytes, binary values as their hex. The
key holds only characters a directory name keeps as they are, never a ``_`` inside a field, and its
first bytes differ between partitions, which Spark's sort (on 8-byte prefixes) before a partitioned
write relies on. It only ever names staging directories: the driver decodes it and never stores it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    from pyspark.sql import Column

SEP = "_"
NULL = "n"


def field_text(value: Column, text: bool) -> Column:
    """The key's part for one field: ``value`` (a Spark Column) as ``v<text>``, or ``n`` for null.
    ``text``: ``value`` is a string, keyed by the hex of its bytes."""
    from pyspark.sql import functions as F

    shown = F.hex(value) if text else value.cast("string")
    return F.coalesce(F.concat(F.lit("v"), shown), F.lit(NULL))


def key_of(parts: Sequence[Column]) -> Column:
    """The key column from the fields' parts (``field_text``), in order."""
    from pyspark.sql import functions as F

    return F.concat_ws(SEP, *parts)


def field_texts(key: str, count: int) -> list[Optional[str]]:
    """Each of ``count`` fields' text in ``key`` (None for null). An empty key holds only nulls:
    Spark names a null or empty partition value's directory alike."""
    parts = key.split(SEP) if key else [NULL] * count
    if len(parts) != count:
        raise ValueError(f"partition key {key!r} does not hold {count} fields")
    return [None if p == NULL else p[1:] for p in parts]


def unhex_text(v: str) -> str:
    """A text field's value back from its hex."""
    return bytes.fromhex(v).decode("utf-8")


__all__ = ["field_text", "key_of", "field_texts", "unhex_text"]
