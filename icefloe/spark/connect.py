"""What differs between a classic SparkSession and a Spark Connect one, in one place.

A classic session lives in this process beside its JVM (py4j's gateway: ``spark.sparkContext``,
``spark._jvm``, RDDs). A Spark Connect session (``SparkSession.builder.remote(...)``, Spark 4's
``spark.api.mode=connect``) is a client of a server elsewhere: it has the DataFrame API, SQL and
Python data sources, and no gateway. icefloe's Spark work takes the DataFrame API's paths on it;
the few things that need the gateway refuse, in one line naming the alternative
(:func:`require_gateway`).
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from icefloe.errors import GatewayRequiredError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_parallelism: dict = {}         # id(session) -> (the session, its default parallelism)


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no JVM in this process to reach). Told by its
    class's module, so that a classic session never imports the Connect client (gRPC)."""
    return type(spark).__module__.startswith("pyspark.sql.connect.")


def connect_mode() -> bool:
    """Whether this process has switched PySpark to Spark Connect (``remote(...)``): a classic session
    PySpark holds then (the one ``remote("local")`` starts to serve the client) is not the user's."""
    try:
        from pyspark.sql.utils import is_remote
    except ImportError:
        return False
    return is_remote()


def require_gateway(spark: SparkSession, what: str, alternative: str) -> None:
    """Refuse ``what`` on a Spark Connect session, naming ``alternative``; nothing on a classic one."""
    if is_connect(spark):
        raise GatewayRequiredError(f"{what} needs the JVM of a classic SparkSession, which a Spark Connect "
                                   f"session does not expose; {alternative}")


def default_parallelism(spark: SparkSession) -> int:
    """The session's default parallelism (``SparkContext.defaultParallelism``). Over Spark Connect:
    ``spark.default.parallelism`` if set, else the cores of a ``local[N]`` master, else the
    shuffle partitions."""
    if not is_connect(spark):
        return spark.sparkContext.defaultParallelism
    hit = _parallelism.get(id(spark))
    if hit is not None and hit[0] is spark:
        return hit[1]
    conf = spark.conf
    value = conf.get("spark.default.parallelism", None)
    if value and value.isdigit():
        n = int(value)
    else:
        master = conf.get("spark.master", None) or ""
        m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master)
        if m:
            n = int(m.group(1)) if m.group(1) and m.group(1) != "*" else (1 if not m.group(1) else os.cpu_count() or 1)
        else:
            n = int(conf.get("spark.sql.shuffle.partitions", "200") or 200)
    _parallelism[id(spark)] = (spark, max(1, n))
    return max(1, n)


def task_frame(spark: SparkSession, rows: list, schema: str, slices: int) -> DataFrame:
    """A DataFrame of ``rows`` (tuples of ``schema``, a DDL string) in ``slices`` partitions: the
    input of Python tasks (``mapInArrow``) that each take a share of the rows. A classic session
    parallelizes them as an RDD; a Connect session sends them in the plan and deals them out round
    robin (one row a partition when there are as many partitions as rows)."""
    slices = max(1, min(slices, len(rows)))
    if not is_connect(spark):
        return spark.createDataFrame(spark.sparkContext.parallelize(rows, slices), schema)
    df = spark.createDataFrame(rows, schema)
    return df if slices == 1 else df.repartition(slices)


__all__ = ["is_connect", "connect_mode", "require_gateway", "default_parallelism", "task_frame"]
