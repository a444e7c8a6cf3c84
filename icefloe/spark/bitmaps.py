"""Deleted positions as a filter on Spark's own Parquet scan (both formats).

A data file's deleted positions become bitmap words (64 positions per bigint, bit ``p % 64`` of
word ``p // 64``), one row per file in a small broadcast table joined to the file's rows; a row
stays when its bit, found from Spark's ``_metadata.row_index``, is clear. The join probes a
table of one row per file instead of hashing every row into a table of every deleted position.
"""
from __future__ import annotations


def bitmap_words(positions, row_count: int):
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


__all__ = ["bitmap_words", "word_of", "bit_of", "bit_is_clear"]
