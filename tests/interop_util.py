"""Helpers to open our tables with the independent readers (pyiceberg, DuckDB, the JVM runtime),
and to serve a catalog to REST clients."""
import contextlib
import glob
import os
import threading
import time

import pyarrow as pa
import pytest

from tools.jvm_runtime import newest_iceberg_version
from tools.local_servers import free_port

# The start of a snippet run in the JVM runtime's worker (``JvmRuntime.run``): ``t`` is the Iceberg
# table at ``location``, loaded through Iceberg's Java API, ``jvm`` the py4j gateway's JVM view.
JVM_LOAD_TABLE = """
jvm = spark._jvm
t = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).load(location)
"""



def iceberg_referees():
    """The Java runtimes a v3 module runs against: the default referee in ``make test``, and the newest
    pinned release (the v3 referee, another Spark session: ``make test-long``). A module-scoped ``jvm``
    fixture with these params runs its Java tests once with each; ``request.param`` is the version."""
    newest = newest_iceberg_version()
    return [pytest.param(None, id="iceberg-default"),
            pytest.param(newest, id=f"iceberg-{newest}", marks=pytest.mark.long)]


def duckdb_connection():
    import duckdb
    import duckdb_extension_avro
    import duckdb_extension_iceberg

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    for mod, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
        path = glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", "*", f"{name}.duckdb_extension"))[0]
        con.execute(f"LOAD '{path}'")
    return con


def pyiceberg_table(metadata_location):
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata_location)


@contextlib.contextmanager
def served(catalog, settings=None, auth=None, seen=None, **tls):
    """``icefloe serve``'s app over ``catalog`` (with ``ServerSettings`` ``settings``) in a thread on
    a free loopback port; yields its URI. ``auth``: an ``icefloe.rest.auth.Authenticator``; ``seen``:
    a list that gets each request's (method, path, headers) as the server receives it; ``tls``:
    uvicorn's ``ssl_certfile``/``ssl_keyfile``."""
    import uvicorn

    from icefloe.rest.server import RestCatalogApp

    app = RestCatalogApp(catalog, settings, auth)
    if seen is not None:
        inner = app

        async def app(scope, receive, send):
            if scope["type"] == "http":
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
                seen.append((scope["method"], scope["path"], headers))
            await inner(scope, receive, send)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", **tls))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def arrow_column_values(arr, canon) -> list:
    """The values of an Arrow column in a form that compares across readers: timestamps as
    ("tz" | "ntz", microseconds), structs as tuples of (field, value), other values through ``canon``."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    t = arr.type
    if pa.types.is_timestamp(t):
        kind = "tz" if t.tz else "ntz"
        ints = arr.cast(pa.timestamp("us", tz=t.tz)).cast(pa.int64()).to_pylist()
        return [None if x is None else (kind, x) for x in ints]
    if pa.types.is_struct(t):
        children = [arrow_column_values(c, canon) for c in arr.flatten()]
        valid = arr.is_valid().to_pylist()
        return [tuple((t.field(j).name, children[j][r]) for j in range(t.num_fields)) if valid[r] else None
                for r in range(len(arr))]
    return [canon(x) for x in arr.to_pylist()]
