"""Runs inside ``.venv-jvm`` (pyspark 3.5): one Spark session with Apache Iceberg's or Apache Paimon's
Java runtime.

Started by ``tools/jvm_runtime.JvmRuntime``. Reads one JSON request per line on stdin and answers one
JSON line on stdout: ``{"sql": text}`` runs a statement and returns its rows; ``{"code": text,
"params": {...}}`` executes Python with ``spark`` and the params in scope and returns ``result``.
For Iceberg the catalog ``jvm`` is a Hadoop catalog over the warehouse and
``spark.read.format("iceberg").load(path)`` reads any table by its location; for Paimon the catalog
``paimon`` is Paimon's filesystem catalog over the warehouse (tables at ``<db>.db/<table>``), with
Paimon's SQL extensions (``CALL sys.<procedure>``) and ``paimon`` the current catalog.
"""

import base64
import datetime
import decimal
import json
import sys
import time
import traceback
import uuid


def plain(value):
    """A JSON value for what a Row holds."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return {"$binary": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, decimal.Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, datetime.datetime):
        return {"$timestamp": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"$date": value.isoformat()}
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {"$map": [[plain(k), plain(v)] for k, v in value.items()]}
    if hasattr(value, "asDict"):
        return {k: plain(v) for k, v in value.asDict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return {"$repr": repr(value)}


def rows(df):
    return [[plain(v) for v in row] for row in df.collect()]


def _paimon_version(spark) -> str:
    """The Paimon release of the runtime jar, from its manifest."""
    loader = spark._jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = loader.loadClass("org.apache.paimon.spark.SparkCatalog")
    return cls.getPackage().getImplementationVersion() or "unknown"


def main() -> None:
    config = json.loads(sys.argv[1])
    out = sys.stdout
    sys.stdout = sys.stderr  # anything a snippet prints must not break the protocol
    from pyspark.sql import SparkSession

    engine = config.get("engine", "iceberg")
    builder = (
        SparkSession.builder.master(config["conf"].pop("master", "local[2]")).appName(f"{engine}-jvm")
        .config("spark.jars", config["jars"])
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
    )
    if engine == "iceberg":
        builder = (
            builder.config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog.jvm", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.jvm.type", "hadoop")
            .config("spark.sql.catalog.jvm.warehouse", config["warehouse"]))
    elif engine == "paimon":
        builder = (
            builder.config("spark.sql.extensions", "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions")
            .config("spark.sql.catalog.paimon", "org.apache.paimon.spark.SparkCatalog")
            .config("spark.sql.catalog.paimon.warehouse", config["warehouse"])
            .config("spark.sql.catalog.paimon.cache-enabled", "false")   # other engines commit too
            .config("spark.sql.defaultCatalog", "paimon"))
    else:
        raise ValueError(f"unknown engine {engine!r}")
    for key, value in config["conf"].items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if engine == "iceberg":
        version = spark._jvm.org.apache.iceberg.IcebergBuild.version()
    else:
        version = _paimon_version(spark)
    out.write(json.dumps({"ready": True, "spark": spark.version, "version": version}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("stop"):
            break
        started = time.perf_counter()
        try:
            if "sql" in request:
                result = rows(spark.sql(request["sql"]))
            else:
                scope = {"spark": spark, "rows": rows, "plain": plain, **request.get("params", {})}
                exec(request["code"], scope)
                result = plain(scope.get("result"))
            reply = {"result": result, "seconds": time.perf_counter() - started}
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
            reply = {"error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
