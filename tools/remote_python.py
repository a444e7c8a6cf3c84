"""Objects of a Python library that lives in another virtual environment, used as if imported here.

pypaimon, a referee of the tests and a peer of the benchmark, requires ``pyarrow<20``; icefloe needs
a newer pyarrow. So pypaimon runs in its own environment (``.venv-paimon``, built by
``tools/pypaimon_env.py``), in one long-lived worker process (this file, run as a script there), and
the tests reach it through :class:`Remote` proxies: ``remote_module("pypaimon").CatalogFactory``
behaves like the class, its calls run in the worker, and what they return comes back by value when it
is data (plain Python values, containers of them, Arrow tables, batches, schemas, types and arrays,
pandas frames) and as another proxy otherwise (a catalog, a table, a split).

Arrow data crosses as Arrow's IPC format, which both pyarrow versions read; nothing is pickled but
values of the standard library, numpy and pandas (pinned to the same versions on both sides). Requests
and replies are length-prefixed pickles over the worker's stdin and stdout.
"""

from __future__ import annotations

import datetime
import decimal
import io
import pickle
import struct
import sys
import traceback
import uuid

PLAIN = (type(None), bool, int, float, complex, str, bytes, bytearray, decimal.Decimal, datetime.date,
         datetime.datetime, datetime.time, datetime.timedelta, uuid.UUID, range, slice)


def _ipc(table) -> bytes:
    import pyarrow as pa

    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _from_ipc(data: bytes):
    import pyarrow as pa

    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def _arrow(value):
    """The tagged form of an Arrow object, or None when ``value`` is not one."""
    pa = sys.modules.get("pyarrow")
    if pa is None:
        return None
    if isinstance(value, pa.Table):
        return ("table", _ipc(value))
    if isinstance(value, pa.RecordBatch):
        return ("batch", _ipc(pa.Table.from_batches([value])))
    if isinstance(value, pa.Schema):
        return ("schema", value.serialize().to_pybytes())
    if isinstance(value, pa.Field):
        return ("field", pa.schema([value]).serialize().to_pybytes())
    if isinstance(value, pa.DataType):
        return ("type", pa.schema([pa.field("f", value)]).serialize().to_pybytes())
    if isinstance(value, pa.ChunkedArray):
        return ("chunked", _ipc(pa.table({"f": value})))
    if isinstance(value, pa.Array):
        return ("array", _ipc(pa.table({"f": value})))
    return None


def _from_arrow(kind: str, data: bytes):
    import pyarrow as pa

    if kind == "table":
        return _from_ipc(data)
    if kind == "batch":
        return _from_ipc(data).combine_chunks().to_batches()[0]
    schema = pa.ipc.read_schema(pa.py_buffer(data)) if kind in ("schema", "field", "type") else None
    if kind == "schema":
        return schema
    if kind == "field":
        return schema.field(0)
    if kind == "type":
        return schema.field(0).type
    column = _from_ipc(data).column(0)
    return column if kind == "chunked" else column.combine_chunks()


def _pickled_data(value) -> bool:
    module = type(value).__module__.split(".")[0]
    return module in ("numpy", "pandas")


def encode(value, ref):
    """The tagged tree for ``value``; ``ref(obj)`` gives the reference for an object passed by proxy."""
    if isinstance(value, PLAIN):
        return ("v", value)
    if isinstance(value, list):
        return ("list", [encode(v, ref) for v in value])
    if isinstance(value, tuple) and type(value) is tuple:
        return ("tuple", [encode(v, ref) for v in value])
    if isinstance(value, dict) and type(value) is dict:
        return ("dict", [(encode(k, ref), encode(v, ref)) for k, v in value.items()])
    if isinstance(value, (set, frozenset)):
        return ("set", [encode(v, ref) for v in value])
    arrow = _arrow(value)
    if arrow is not None:
        return arrow
    if _pickled_data(value):
        return ("pickle", pickle.dumps(value))
    return ("ref", ref(value))


def decode(tree, deref):
    """The value a tagged tree stands for; ``deref(id)`` gives the object a reference names."""
    kind, data = tree
    if kind == "v":
        return data
    if kind in ("list", "tuple", "set"):
        items = [decode(v, deref) for v in data]
        return items if kind == "list" else tuple(items) if kind == "tuple" else set(items)
    if kind == "dict":
        return {decode(k, deref): decode(v, deref) for k, v in data}
    if kind == "pickle":
        return pickle.loads(data)
    if kind == "ref":
        return deref(data)
    return _from_arrow(kind, data)


def send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">Q", len(data)))
    stream.write(data)
    stream.flush()


def receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the stream ended")
    (length,) = struct.unpack(">Q", head)
    return pickle.loads(stream.read(length))


class RemoteError(Exception):
    """An exception raised in the worker that has no counterpart here; its message names its type."""


def local_exception(type_name: str, message: str, trace: str) -> BaseException:
    """The exception to raise here for one raised in the worker: the builtin of the same name when
    there is one (so ``pytest.raises(ValueError)`` still works), else :class:`RemoteError`."""
    import builtins

    cls = getattr(builtins, type_name, None)
    text = f"{message}\n(raised in the worker)\n{trace}"
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(text)
        except TypeError:
            pass
    return RemoteError(f"{type_name}: {text}")


# --- the worker's side --------------------------------------------------------------------------


def _serve() -> None:
    import importlib
    import itertools
    import operator
    import time

    out = sys.stdout.buffer
    source = sys.stdin.buffer
    sys.stdout = sys.stderr  # what the library prints must not break the protocol
    objects: dict[int, object] = {}
    handles = itertools.count(1)

    def ref(obj) -> tuple[int, str]:
        handle = next(handles)  # one per proxy: releasing one proxy leaves the others' objects alone
        objects[handle] = obj
        return (handle, type(obj).__qualname__)

    def deref(handle) -> object:
        return objects[handle[0]]

    ops = {
        "getitem": operator.getitem, "len": len, "list": list, "eq": operator.eq, "str": str,
        "repr": repr, "bool": bool, "contains": operator.contains, "hash": hash,
    }
    send(out, ("ready", sys.version))
    while True:
        try:
            request = receive(source)
        except EOFError:
            return
        for gone in request.get("release", ()):
            objects.pop(gone, None)
        op = request["op"]
        if op == "stop":
            return
        try:
            started = time.perf_counter()
            if op == "import":
                result = importlib.import_module(request["name"])
            else:
                target = decode(request["target"], deref)
                args = decode(request.get("args", ("tuple", [])), deref)
                kwargs = decode(request.get("kwargs", ("dict", [])), deref)
                started = time.perf_counter()  # the call's own time, its arguments decoded
                if op == "getattr":
                    result = getattr(target, request["name"])
                elif op == "call":
                    result = target(*args, **kwargs)
                else:
                    result = ops[op](target, *args)
            seconds = time.perf_counter() - started
            reply = ("ok", encode(result, ref), seconds)
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the caller
            reply = ("error", type(exc).__name__, str(exc), traceback.format_exc(limit=6))
        send(out, reply)


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    _serve()
