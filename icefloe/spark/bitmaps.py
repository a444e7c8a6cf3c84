"""Deleted positions as a filter on Spark's own Parquet scan (both formats).

A data file's deleted positions become bitmap words (64 positions per bigint, bit ``p % 64`` of
word ``p // 64``); a row stays when its bit, found from Spark's ``_metadata.row_index``, is clear.
When the bitmaps are small enough to travel in the plan (``literal_filter``) they are constants of
the scan's filter: one branch per file (its key: its size, or its path), testing the row's bit in
that file's words (a constant array Spark folds once), or, for a file with few deleted rows, the
row's position against a constant set. Otherwise each file's words are one row of a small
broadcast table joined to the file's rows by its key. Either way no shuffle and no Python; the
constants avoid the join's per-row probe and copy.
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


MAX_LITERAL_ELEMENTS = 1 << 18     # words and positions written into a plan: 2 MB of numbers at most


def literal_filter(files, key_col, row_col: str):
    """A Column that keeps a row unless its file's bitmap marks it, with the bitmaps as constants:
    ``files`` are ``(key, words)`` (the value ``key_col`` holds for the file's rows, its bitmap
    words), ``row_col`` names the column of each row's position. None when the bitmaps hold more
    than ``MAX_LITERAL_ELEMENTS`` numbers (the broadcast join takes them)."""
    import json

    import numpy as np
    from pyspark.sql import functions as F

    total = 0
    cond = None
    for key, words in files:
        words = np.ascontiguousarray(words, dtype=np.uint64)
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")
        count = int(bits.sum())
        if not count:
            continue
        if count * 4 < len(words):          # few deleted rows: their positions as a constant set
            total += count
            keep = ~F.col(row_col).isin(np.flatnonzero(bits).tolist())
        else:
            total += len(words)
            constant = f"from_json('{json.dumps(words.view(np.int64).tolist())}', 'array<bigint>')"
            keep = F.expr(bit_is_clear(constant, word_of(row_col), bit_of(row_col)))
        if total > MAX_LITERAL_ELEMENTS:
            return None
        branch = key_col == F.lit(key)
        cond = F.when(branch, keep) if cond is None else cond.when(branch, keep)
    return F.lit(True) if cond is None else cond.otherwise(F.lit(True))


__all__ = ["bitmap_words", "word_of", "bit_of", "bit_is_clear", "literal_filter", "MAX_LITERAL_ELEMENTS"]
