"""Fixed buckets: which bucket a row belongs to (Paimon's default bucket function).

The bucket-key fields of a row are projected into a BinaryRow; its hash code
(MurmurHash3 by words, see ``murmur``) decides the bucket::

    bucket = abs(hashCode % numBuckets)      -- Java remainder, sign of the dividend

``bucket = -1`` tables are bucket-unaware: every file is in ``bucket-0`` and the
manifest entries record ``_TOTAL_BUCKETS = -1``.

``buckets_of_columns`` computes the buckets of a whole Arrow batch. Keys made only
of fixed-width fields (integers, dates, booleans, floats) are hashed vectorised
with numpy; other keys (strings, decimals, timestamps) row by row.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from icefloe.paimon.binary_row import encode_row, null_bits_size
from icefloe.paimon.murmur import hash_words
from icefloe.core.types import IcebergType as DataType
from icefloe.paimon.types import root as root_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

UNAWARE_BUCKET = -1


def bucket_of_hash(hash_code: int, num_buckets: int) -> int:
    """``Math.abs(hashCode % numBuckets)``; ``abs`` of a truncated remainder is ``|h| % n``."""
    if num_buckets <= 0:
        raise ValueError(f"a fixed-bucket table needs bucket > 0, got {num_buckets}")
    return abs(hash_code) % num_buckets


def bucket_of(key_values: Sequence[Any], key_types: Sequence[DataType], num_buckets: int) -> int:
    """The bucket of one row, given the values of its bucket-key fields."""
    return bucket_of_hash(encode_row(list(key_values), list(key_types)).hash_code(), num_buckets)


_FIXED_WIDTH = {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "DATE", "BIGINT", "FLOAT", "DOUBLE"}


def _slot_words(arr: pa.Array, root: str) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """(low word, high word) uint32 arrays of the 8-byte slots of an Arrow array's values."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if root == "DATE":
        arr = arr.cast(pa.int32())
    if root == "BOOLEAN":
        arr = arr.cast(pa.uint8())
    filled = pc.fill_null(arr, 0) if arr.null_count else arr
    values = filled.to_numpy(zero_copy_only=False)
    if root == "FLOAT":
        low = values.astype(np.float32).view(np.uint32)
        return low, np.zeros_like(low)
    if root == "DOUBLE":
        u = values.astype(np.float64).view(np.uint64)
    elif root == "BIGINT":
        u = values.astype(np.int64).view(np.uint64)
    else:
        width = {"BOOLEAN": 8, "TINYINT": 8, "SMALLINT": 16, "INT": 32, "DATE": 32}[root]
        u = values.astype(np.int64).view(np.uint64) & np.uint64((1 << width) - 1)
    return (u & np.uint64(0xFFFFFFFF)).astype(np.uint32), (u >> np.uint64(32)).astype(np.uint32)


def buckets_of_columns(columns: Sequence[pa.Array | pa.ChunkedArray], key_types: Sequence[DataType],
                       num_buckets: int) -> npt.NDArray[np.int32]:
    """Buckets (numpy int32) of every row of the given Arrow bucket-key columns."""
    import numpy as np

    if num_buckets <= 0:
        raise ValueError(f"a fixed-bucket table needs bucket > 0, got {num_buckets}")
    hashes = hashes_of_columns(columns, key_types).astype(np.int64)
    return (np.abs(hashes) % num_buckets).astype(np.int32)


def hashes_of_columns(columns: Sequence[pa.Array | pa.ChunkedArray],
                      key_types: Sequence[DataType]) -> npt.NDArray[np.int32]:
    """The BinaryRow hash codes (numpy int32) of every row of the given Arrow key columns
    (what dynamic-bucket tables keep in their HASH index)."""
    import numpy as np

    n_rows = len(columns[0]) if columns else 0
    arrays: list[pa.Array] = [c.combine_chunks() if hasattr(c, "combine_chunks") else c for c in columns]
    if all(root_of(t) in _FIXED_WIDTH for t in key_types):
        arity = len(key_types)
        header_words = null_bits_size(arity) // 4
        words = np.zeros((n_rows, header_words + 2 * arity), dtype=np.uint32)
        for i, (arr, t) in enumerate(zip(arrays, key_types)):
            root = root_of(t)
            if root is None:
                raise ValueError(f"a bucket key must be of an atomic type, not {t}")
            low, high = _slot_words(arr, root)
            words[:, header_words + 2 * i] = low
            words[:, header_words + 2 * i + 1] = high
            if arr.null_count:
                is_null = arr.is_null().to_numpy(zero_copy_only=False)
                bit = i + 8
                words[is_null, bit // 32] |= np.uint32(1 << (bit % 32))
        return hash_words(words).astype(np.int32)
    py_columns = [a.to_pylist() for a in arrays]
    types = list(key_types)
    return np.array([encode_row([col[r] for col in py_columns], types).hash_code() for r in range(n_rows)],
                    dtype=np.int32)
