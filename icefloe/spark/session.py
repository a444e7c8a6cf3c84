"""The embedded Spark: a local SparkSession created on first use, or the user's own.

Whatever session is used, the settings the table formats rely on are applied:
Parquet timestamps as INT64 microseconds (the Iceberg spec forbids INT96),
column matching by Parquet field id on read, and Python workers that run the
interpreter icefloe is installed in.
"""
from __future__ import annotations

import os
import tempfile
import shutil
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any, Optional

from icefloe.errors import JavaMissingError, WorkerPythonError
from icefloe.spark import connect, jvm, scans
from icefloe.spark.source import IcefloeDataSource

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

_lock = threading.Lock()
_session: Optional[SparkSession] = None

# Settings every session used with icefloe needs, for correctness.
REQUIRED_CONF = {
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.parquet.fieldId.write.enabled": "true",
    "spark.sql.parquet.fieldId.read.enabled": "true",
    "spark.sql.python.filterPushdown.enabled": "true",
}


def configure_spark(builder: SparkSession.Builder) -> SparkSession.Builder:
    """``builder`` (a ``SparkSession.builder``) set up for icefloe, returned for chaining:
    ``icefloe.configure_spark(SparkSession.builder.master(...)).getOrCreate()``, as delta-spark's
    ``configure_spark_with_delta_pip``. It adds icefloe's JVM extension (``jvm.jar_path()``)
    to the builder's ``spark.jars`` (after any jars already there) and sets ``REQUIRED_CONF``. A
    builder of a Spark Connect session (``remote``, ``spark.api.mode=connect``) gets the settings
    alone: icefloe reaches the extension through the py4j gateway, which a Connect client has not,
    so it takes the DataFrame API's paths there whatever the server's jars."""
    options = getattr(builder, "_options", None)
    if not isinstance(options, dict) or not hasattr(builder, "config"):
        raise TypeError(f"configure_spark takes a SparkSession.builder, not {type(builder).__name__}")
    remote = bool(options.get("spark.remote") or options.get("spark.api.mode") == "connect")
    jar = None if remote else jvm.jar_path()
    if jar is not None:
        jars = [j for j in str(options.get("spark.jars") or "").split(",") if j.strip()]
        if jar not in jars:
            builder = builder.config("spark.jars", ",".join([*jars, jar]))
    for k, v in REQUIRED_CONF.items():
        builder = builder.config(k, v)
    return builder


def check_java() -> None:
    """Raise a clear error when no Java 17+ runtime can be found."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise JavaMissingError(
            "icefloe runs Apache Spark, which needs a Java 17 runtime, and none was found. "
            "Install Java 17 (for example the 'openjdk-17-jre-headless' package) "
            "or set JAVA_HOME to its location.")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except Exception as e:  # pragma: no cover - broken installation
        raise JavaMissingError(f"could not run {java}: {e}") from e
    import re

    m = re.search(r'version "(\d+)', out)
    if m and int(m.group(1)) < 17:
        raise JavaMissingError(f"Spark 4 needs Java 17 or newer; {java} is version {m.group(1)}")


def apply_required_conf(spark: SparkSession) -> None:
    scans.ensure_conf(spark, REQUIRED_CONF)


_checked_workers: dict[str, Optional[str]] = {}


def worker_python(spark: SparkSession) -> str:
    """The interpreter Spark starts for Python workers: ``spark.pyspark.python``, else the
    ``PYSPARK_PYTHON`` the session was created with (Spark's default: ``python3`` on the PATH)."""
    sc = _context(spark)
    try:
        conf = sc.getConf().get("spark.pyspark.python", None) if sc is not None else None
    except Exception:
        conf = None
    return conf or getattr(sc, "pythonExec", None) or os.environ.get("PYSPARK_PYTHON", "python3")


def _context(spark: SparkSession) -> Optional[SparkContext]:
    """The SparkContext behind ``spark``. Over Spark Connect: the one in this process when the
    server runs here (``remote("local")`` starts it so), else None."""
    if connect.is_connect(spark):
        from pyspark import SparkContext

        return SparkContext._active_spark_context
    return spark.sparkContext


def check_worker_python(spark: SparkSession) -> None:
    """Refuse, with the fix, a local session whose Python workers would run an interpreter
    that cannot import icefloe (a script run with a virtualenv's python, the virtualenv not
    activated: Spark starts ``python3`` from the PATH). Checked once per interpreter; a
    cluster's workers run elsewhere and are not checked."""
    try:
        sc = _context(spark)
        master = (sc.master or "") if sc is not None else ""
    except Exception:
        return
    if not master.startswith("local"):
        return
    exe = worker_python(spark)
    resolved = shutil.which(exe) or exe
    if os.path.realpath(resolved) == os.path.realpath(sys.executable):
        return
    if resolved not in _checked_workers:
        try:
            proc = subprocess.run([resolved, "-c", "import icefloe, pandas, pyarrow, pyspark"], capture_output=True,
                                  text=True, timeout=120)
            _checked_workers[resolved] = None if proc.returncode == 0 else \
                (proc.stderr.strip().splitlines() or ["exit code %d" % proc.returncode])[-1]
        except (OSError, subprocess.SubprocessError) as e:
            _checked_workers[resolved] = str(e)
    problem = _checked_workers[resolved]
    if problem:
        raise WorkerPythonError(
            f"Spark will start its Python workers with {resolved}, which cannot run icefloe ({problem}); "
            f"icefloe is installed for {sys.executable}. Set PYSPARK_PYTHON={sys.executable} before the "
            f"SparkSession is created (or the Spark setting spark.pyspark.python), or activate the virtualenv.")


_workers_checked: dict[int, SparkSession] = {}      # id(session) -> the session: its workers' interpreter checked (reads the whole conf)


def _set_up(spark: SparkSession) -> SparkSession:
    if _workers_checked.get(id(spark)) is not spark:
        check_worker_python(spark)
        _workers_checked[id(spark)] = spark
    apply_required_conf(spark)          # every time: a caller may have changed one since
    _register_data_source(spark)
    return spark


def embedded_started() -> bool:
    """Whether the embedded local session runs already (``get_spark`` starts it when none is active)."""
    return _session is not None


def app_summary(spark: Any) -> dict[str, str]:
    """The snapshot summary properties naming the Spark application that writes (Iceberg's
    ``spark.app.id``, ``engine-name``, ``engine-version``); empty without a session."""
    if spark is None:
        return {}
    try:
        app_id = spark.conf.get("spark.app.id", None) if connect.is_connect(spark) else spark.sparkContext.applicationId
        return {"spark.app.id": app_id, "engine-name": "spark", "engine-version": spark.version}
    except Exception:       # a stopped session has no application to name; the commit goes on
        return {}


def get_spark(spark: Optional[SparkSession] = None) -> SparkSession:
    """Return ``spark`` (configured for icefloe) or the embedded local session."""
    global _session
    if spark is not None:
        return _set_up(spark)
    with _lock:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            return _set_up(active)
        if _session is not None:
            return _session
        check_java()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        memory = os.environ.get("ICEFLOE_DRIVER_MEMORY", "2g")
        # the heap starts at its full size: after a full collection the JVM otherwise hands most of
        # it back, and the next scan pays for growing it again (a 20M-row scan after one: 0.69-0.78 s
        # against 0.62-0.65 s with the heap kept)
        java_options = [f"-Xms{memory}"]
        builder = (
            SparkSession.builder.appName("icefloe")
            .master(os.environ.get("ICEFLOE_SPARK_MASTER", "local[*]"))
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000")
            .config("spark.sql.shuffle.partitions", os.environ.get("ICEFLOE_SHUFFLE_PARTITIONS", "8"))
            .config("spark.driver.memory", memory)
            .config("spark.sql.sources.partitionOverwriteMode", "static")
            .config("spark.python.worker.reuse", "true")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            # PySpark records the Python call site of each DataFrame and Column call, for error
            # messages: five JVM round trips and a stack walk, about a millisecond a call. icefloe
            # builds its plans through those calls (a row-level change makes some 75, a tenth of its
            # time at 4M rows), and the sites recorded would be icefloe's own lines
            .config("spark.python.sql.dataFrameDebugging.enabled", "false")
            # variant values stored whole (metadata and value), never shredded into typed columns:
            # every reader of the table can read them, icefloe's Arrow read included
            .config("spark.sql.variant.writeShredding.enabled", "false")
            # Spark's own catalog (not icefloe's tables) keeps its directory out of the working directory
            .config("spark.sql.warehouse.dir", os.environ.get(
                "ICEFLOE_SPARK_WAREHOUSE", os.path.join(tempfile.gettempdir(), "icefloe-spark-warehouse")))
        )
        for k, v in REQUIRED_CONF.items():
            builder = builder.config(k, v)
        jar = jvm.jar_path()        # deletes applied inside the Parquet scan (deleted_rows.py)
        if jar:
            builder = builder.config("spark.jars", jar)
        if not os.environ.get("ICEFLOE_SPARK_LOG_LEVEL"):   # quiet from the first line on
            quiet = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
            java_options.append(f"-Dlog4j2.configurationFile=file:{quiet}")
            # PySpark logs each analysis error with its query context as JSON before raising it;
            # icefloe reports the error itself, in one line
            import logging

            logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
        builder = builder.config("spark.driver.extraJavaOptions", " ".join(java_options))
        _session = builder.getOrCreate()
        check_worker_python(_session)
        _session.sparkContext.setLogLevel(os.environ.get("ICEFLOE_SPARK_LOG_LEVEL", "ERROR"))
        # a table's files are few and of uneven sizes (a bucket's large sorted run beside small new
        # files): split a scan's bytes into twice as many parts as the cores, so that no core is
        # left with most of them while the other idles
        _session.conf.set("spark.sql.files.minPartitionNum", str(2 * _session.sparkContext.defaultParallelism))
        _register_data_source(_session)
        return _session


_registered: set[int] = set()


def attach_data_source(spark: SparkSession) -> None:
    """Register the pruning ``icefloe`` data source in ``spark`` and turn on the Python filter
    pushdown it needs; nothing else in the session changes."""
    key = "spark.sql.python.filterPushdown.enabled"
    try:
        if spark.conf.get(key, None) != "true":
            spark.conf.set(key, "true")
    except Exception:
        pass
    _register_data_source(spark)


def _register_data_source(spark: SparkSession) -> None:
    key = id(spark)
    if key in _registered:
        return
    try:

        spark.dataSource.register(IcefloeDataSource)
        _registered.add(key)
    except ImportError:  # data source module not available (partial install)
        pass
