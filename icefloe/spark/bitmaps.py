"""Deleted positions as a filter on Spark's own Parquet scan (both formats).

A data file's deleted positions become bitmap words (64 positions per bigint, bit ``p % 64`` of
word ``p // 64``); a row stays when its bit, found from Spark's ``_metadata.row_index``, is clear.
When the bitmaps are small enough to travel in the plan (``literal_filter``) they are constants of
the scan's filter: every file's words in one constant array (Spark folds it once per query), a
file's place in it found from its key (its size, or its path), and, for files with few deleted
rows, ``file number << 40 | position`` in one constant set. Otherwise each file's words are one row
of a small broadcast table joined to the file's rows by its key. Either way no shuffle and no
Python; the constants avoid the join's per-row probe and copy.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional

from icefloe.spark import connect

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from pyspark.sql import Column


def bitmap_words(positions: npt.ArrayLike, row_count: int) -> npt.NDArray[np.uint64]:
    """``positions`` (deleted row positions of a file of ``row_count`` rows) as numpy uint64
    words; positions outside the file are ignored."""
    import numpy as np

    pos = np.asarray(positions, dtype=np.int64)
    pos = pos[(pos >= 0) & (pos < row_count)]
    words = np.zeros(row_count // 64 + 1, dtype=np.uint64)
    np.bitwise_or.at(words, pos >> 6, np.left_shift(np.uint64(1), (pos & 63).astype(np.uint64)))
    return words


def word_of(row_index: str) -> str:
    """SQL for the (1-based) word of the row at ``row_index``."""
    return f"cast(shiftright({row_index}, 6) as int) + 1"


def bit_of(row_index: str) -> str:
    """SQL for the bit of the row at ``row_index`` within its word."""
    return f"cast({row_index} & 63 as int)"


def bit_is_clear(words: str, word: str, bit: str) -> str:
    """SQL that holds when a row's bit (columns ``word``, ``bit``) is clear in ``words`` (null:
    the file has no deleted positions)."""
    return f"shiftright(coalesce(element_at({words}, {word}), 0), {bit}) & 1 = 0"


MAX_LITERAL_ELEMENTS = 1 << 18     # words and positions written into a plan: 2 MB of numbers at most


def literal_filter(files: Iterable[tuple[int | str, npt.ArrayLike]], key_col: str, row_col: str) -> Optional[Column]:
    """A Column that keeps a row unless its file's bitmap marks it, with the bitmaps as constants:
    ``files`` are ``(key, words)`` (the value the column named ``key_col`` holds for the file's
    rows, an int or a string; its bitmap words), ``row_col`` names the column of each row's
    position. None when the bitmaps hold more than ``MAX_LITERAL_ELEMENTS`` numbers (the
    broadcast join takes them).

    All files' words are one constant array (``long_array_constant``), and a file's first word's
    index in it comes from a CASE of integer branches; files with few marked rows are a constant
    set of ``file number << 40 | position``. The per-row code stays the same size whatever the
    number of files: a CASE whose branches each held their own array test grew past the size the
    JVM compiles and ran interpreted, several times slower."""
    import numpy as np
    from pyspark.sql import functions as F

    total = 0
    dense: list = []            # (key, offset) of files tested against the shared words
    chunks: list = []
    sparse: list = []           # (key, number) of files tested against the set
    members: list = []
    for key, words in files:
        words = np.ascontiguousarray(words, dtype=np.uint64)
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")
        count = int(bits.sum())
        if not count:
            continue
        if count * 4 < len(words):          # few deleted rows: their positions in the constant set
            total += count
            number = len(sparse) + 1
            sparse.append((key, number))
            members.append((np.int64(number) << np.int64(40)) | np.flatnonzero(bits).astype(np.int64))
        else:
            total += len(words)
            dense.append((key, sum(len(c) for c in chunks)))
            chunks.append(words.view(np.int64))
        if total > MAX_LITERAL_ELEMENTS:
            return None
    row = F.col(row_col)
    keep = F.lit(True)
    if dense:
        offset = F.expr(_case(key_col, dense))
        words = long_array_constant(np.concatenate(chunks))
        word = F.get(words, (offset + F.shiftright(row, 6)).cast("int"))     # null: another file
        bit = F.call_function("shiftright", word, (row.bitwiseAND(F.lit(63))).cast("int"))
        keep = F.coalesce(bit.bitwiseAND(F.lit(1)) == 0, F.lit(True))
    if sparse:
        # SQL text: a Column's isin makes one call into the JVM per member
        listed = ",".join(map(str, np.concatenate(members).tolist()))
        keep = keep & F.expr(f"coalesce(NOT (shiftleft(cast({_case(key_col, sparse)} as bigint), 40) "
                             f"| `{row_col}`) IN ({listed}), true)")
    return keep


def long_array_constant(values: npt.ArrayLike):
    """A Column holding ``values`` (numpy int64) as one constant ``array<bigint>``: built in the
    JVM as a primitive array from the values' bytes (one transfer, no per-element calls, element
    reads without boxing), else, where the session gives no JVM access, as a JSON string Spark
    folds into the array once per query."""
    import json

    import numpy as np
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    values = np.ascontiguousarray(values, dtype="<i8")
    try:
        from pyspark.sql.classic.column import Column

        if connect.connect_mode():  # the classic session in this process (if any) serves a Connect client
            raise RuntimeError("Spark Connect: no JVM of the user's session here")
        # the active session (thread-local in the JVM), else the one this process started
        spark = SparkSession.getActiveSession() or SparkSession._instantiatedSession
        if spark is None:
            raise RuntimeError("no SparkSession")
        # py4j's view of the JVM: its attributes are the JVM's packages and classes, known at run time
        jvm: Any = spark._jvm
        gateway: Any = spark.sparkContext._gateway
        longs = gateway.new_array(jvm.long, len(values))
        raw = jvm.java.nio.ByteBuffer.wrap(bytearray(values.tobytes()))
        raw.order(jvm.java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(longs)
        expressions = jvm.org.apache.spark.sql.catalyst.expressions
        literal = expressions.Literal(expressions.UnsafeArrayData.fromPrimitiveArray(longs),
                                      jvm.org.apache.spark.sql.types.DataType.fromDDL("array<bigint>"))
        return Column(jvm.org.apache.spark.sql.classic.ExpressionUtils.column(literal))
    except Exception:  # noqa: BLE001 - no JVM behind the session (Spark Connect): the JSON form
        return F.from_json(F.lit(json.dumps(values.tolist())), "array<bigint>")


def _case(key_col: str, branches: Iterable[tuple[int | str, int]]) -> str:
    """SQL mapping the column ``key_col`` to a number by ``branches`` ((key, number) pairs); null
    for other keys."""
    whens = " ".join(f"WHEN {_sql_literal(key)} THEN {number}" for key, number in branches)
    return f"CASE `{key_col}` {whens} END"


def _sql_literal(value: int | str) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return str(int(value))


__all__ = ["bitmap_words", "word_of", "bit_of", "bit_is_clear", "literal_filter", "MAX_LITERAL_ELEMENTS"]
