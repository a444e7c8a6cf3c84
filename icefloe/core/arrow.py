"""Data handed to a write as Arrow: a pyarrow.Table, a RecordBatch or a pandas DataFrame; Arrow
arrays fitted to a table's nested types."""
from __future__ import annotations

from typing import Union

import numpy as np
import pyarrow as pa

from icefloe.errors import SchemaMismatchError


def is_arrow_data(data: object) -> bool:
    """True for data written without Spark (pyarrow Table or RecordBatch, pandas DataFrame)."""
    return isinstance(data, (pa.Table, pa.RecordBatch)) or (
        type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pandas"))


def as_arrow_table(data: object) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    return pa.Table.from_pandas(data, preserve_index=False)


def fit_array(arr: "pa.Array | pa.ChunkedArray", target: pa.DataType, path: str, drop_extra: bool = False,
              fill_missing: bool = True) -> "pa.Array | pa.ChunkedArray":
    """Arrow array ``arr`` as type ``target``: struct fields matched by name (case-insensitively) at
    any depth, an optional one the data lacks null (refused without ``fill_missing``), one the target
    lacks refused (or left out with ``drop_extra``), lists and maps element by element, the rest
    cast; nulls kept (a chunked array chunk by chunk). Arrow's own cast wants a struct's fields in
    the target's order."""
    if arr.type.equals(target):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([fit_array(ch, target, path, drop_extra, fill_missing) for ch in arr.chunks],
                                type=target)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(target) and pa.types.is_struct(arr.type):
        by_name: dict[str, str] = {arr.type.field(i).name.lower(): arr.type.field(i).name for i in range(arr.type.num_fields)}
        children: list[pa.Array] = []
        for f in target:
            name = by_name.pop(f.name.lower(), None)
            if name is None:
                if not f.nullable:
                    raise SchemaMismatchError(f"required field {path}.{f.name} is missing")
                if not fill_missing:
                    raise SchemaMismatchError(f"struct {path!r} lacks field {f.name!r}")
                children.append(pa.nulls(len(arr), f.type))
            else:
                children.append(fit_array(arr.field(name), f.type, f"{path}.{f.name}", drop_extra, fill_missing))
        if by_name and not drop_extra:
            raise SchemaMismatchError(f"struct {path!r} has fields the table does not: {sorted(by_name.values())}")
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_map(target) and pa.types.is_map(arr.type):
        keys = fit_array(arr.keys, target.key_type, f"{path}.key", drop_extra, fill_missing)
        items = fit_array(arr.items, target.item_type, f"{path}.value", drop_extra, fill_missing)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=target, mask=mask)
    lists = (pa.types.is_list, pa.types.is_large_list)
    if any(is_list(target) for is_list in lists) and any(is_list(arr.type) for is_list in lists):
        values = fit_array(arr.values, target.value_type, f"{path}.element", drop_extra, fill_missing)
        cls = pa.ListArray if pa.types.is_list(arr.type) else pa.LargeListArray
        if pa.types.is_list(arr.type) == pa.types.is_list(target):
            return cls.from_arrays(arr.offsets, values, type=target, mask=mask)
        return cls.from_arrays(arr.offsets, values, mask=mask).cast(target)      # list <-> large list
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise SchemaMismatchError(f"column {path!r}: cannot convert {arr.type} to {target}: {e}") from e


DICTIONARY_SAMPLE_ROWS = 65536


def dictionary_columns(table: pa.Table) -> list[str]:
    """The Parquet leaf columns of ``table`` worth dictionary-encoding, for ``pq.write_table``'s
    ``use_dictionary``. Arrow starts a dictionary for every column and, once it outgrows its page,
    goes on in plain encoding with the dictionary pages kept: a column of mostly distinct values
    (keys, sequence numbers, measurements) comes out larger and slower to read than plain. As
    Parquet's Java writer decides on its first page, a top-level column of primitive values is
    dictionary-encoded when at most half of its first rows are distinct; nested columns' leaves
    keep the dictionary."""
    import pyarrow.compute as pc

    sample = table.slice(0, DICTIONARY_SAMPLE_ROWS)
    out: list[str] = []
    for name, column in zip(table.column_names, sample.columns):
        t = column.type
        if pa.types.is_nested(t):
            out.extend(_leaf_paths(t, name))
        elif len(column) == 0 or pc.count_distinct(column, mode="all").as_py() * 2 <= len(column):
            out.append(name)
    return out


def _leaf_paths(t: pa.DataType, prefix: str) -> list[str]:
    """Parquet's dotted paths of the leaves under a column of type ``t`` (lists in the compliant
    ``list.element`` layout, maps as ``key_value.key``/``key_value.value``)."""
    if pa.types.is_struct(t):
        return [p for i in range(t.num_fields) for p in _leaf_paths(t.field(i).type, f"{prefix}.{t.field(i).name}")]
    if pa.types.is_map(t):
        return _leaf_paths(t.key_type, f"{prefix}.key_value.key") + _leaf_paths(t.item_type, f"{prefix}.key_value.value")
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _leaf_paths(t.value_type, f"{prefix}.list.element")
    return [prefix]


# pyarrow imports pandas on the first ``pa.array`` of a NumPy array or list and the first
# ``to_numpy`` (~0.3 s); a cold plan's columns are moved between NumPy and Arrow by their buffers
# instead, so planning in a fresh process never pays for pandas.
_INTS = {(8, True): np.int8, (16, True): np.int16, (32, True): np.int32, (64, True): np.int64,
         (8, False): np.uint8, (16, False): np.uint16, (32, False): np.uint32, (64, False): np.uint64}


def numpy_of(arr: Union[pa.Array, pa.ChunkedArray]) -> np.ndarray:
    """A boolean or integer Arrow array (or chunked array) without nulls as NumPy, read from its
    buffers (a copy for booleans and chunked arrays, else a read-only view)."""
    if isinstance(arr, pa.ChunkedArray):
        parts = [numpy_of(c) for c in arr.chunks]
        return np.concatenate(parts) if parts else numpy_of(pa.Array.from_buffers(arr.type, 0, [None, None]))
    if arr.null_count:
        raise ValueError(f"numpy_of: {arr.null_count} nulls in a column of {arr.type}")
    t = arr.type
    data = arr.buffers()[1]
    if pa.types.is_boolean(t):
        if len(arr) == 0 or data is None:
            return np.zeros(0, np.bool_)
        bits: np.ndarray = np.unpackbits(np.frombuffer(data, np.uint8), count=arr.offset + len(arr), bitorder="little")
        return np.frombuffer(bits[arr.offset:].tobytes() if arr.offset else bits.data, np.bool_)   # (0s and 1s)
    if not pa.types.is_integer(t):
        raise TypeError(f"numpy_of: {t} is not an integer or boolean type")
    dtype = np.dtype(_INTS[(t.bit_width, pa.types.is_signed_integer(t))])
    if len(arr) == 0 or data is None:
        return np.zeros(0, dtype)
    return np.frombuffer(data, dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def arrow_of(values: np.ndarray) -> pa.Array:
    """A one-dimensional NumPy array of booleans or integers as an Arrow array without nulls, made
    from its buffer."""
    if values.dtype == np.bool_:
        bits = pa.py_buffer(np.packbits(values, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, bits])
    data = np.ascontiguousarray(values)
    typ = pa.from_numpy_dtype(data.dtype)
    if not pa.types.is_integer(typ):
        raise TypeError(f"arrow_of: {data.dtype} is not an integer or boolean type")
    return pa.Array.from_buffers(typ, len(data), [None, pa.py_buffer(data)])
