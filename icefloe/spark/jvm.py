"""icefloe's JVM extension: the jar of the Java classes beside this module (``jvm/``), and whether
a Spark session can load them.

The classes (the Parquet format that drops deleted rows inside the scan, ``deleted_rows``; the
bucket, bitmap and row-writing functions their callers build as JVM columns) are compiled when the
wheel is built and shipped in it beside their sources (``setup.py``); where the package has no jar
for the installed Spark they are compiled once per source and Spark version with the JDK's
``javac`` into a cache directory (``ICEFLOE_CACHE_DIR``, else ``~/.cache/icefloe``). The jar is on
the ``spark.jars`` of the session icefloe starts and of a user's session built with
``icefloe.configure_spark(builder)``; a running session without it gets it added to its class
loaders (:func:`available`). Where the classes are still not loadable (no jar, Spark Connect),
:func:`available` says False, a warning says why once, and the callers take their slower paths.
"""
from __future__ import annotations

import logging
import os
import subprocess
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from icefloe.spark import connect
from icefloe.spark.javac import JavacError, compile_jar, extension_jar_name, extension_sources, find_javac, spark_jars

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

# a class of the extension, asked for to tell whether a session can load the jar
PROBE_CLASS = "icefloe.jvm.DeletedRowsParquetFormat"
SOURCES = Path(__file__).resolve().parent / "jvm"  # the Java sources, and the jar a wheel ships

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_jar_lock = threading.Lock()
_jar: dict = {}
_available: dict = {}


def _cache_dir() -> Path:
    return Path(os.environ.get("ICEFLOE_CACHE_DIR") or Path.home() / ".cache" / "icefloe")


def jar_path() -> Optional[str]:
    """The compiled class's jar (built on first call), or None when it cannot be built here."""
    with _jar_lock:
        if "path" not in _jar:
            _jar["path"] = _build()
        return _jar["path"]


def _build() -> Optional[str]:
    """The jar shipped in the package (built when the wheel was), else one compiled here with
    ``javac`` into the cache directory, else None."""
    version, classpath = spark_jars()
    if version is None:
        return None
    name = extension_jar_name(version, extension_sources(SOURCES))
    for target in (SOURCES / name, _cache_dir() / name):
        if target.exists():
            return str(target)
    if find_javac() is None:
        _log.info("no javac and no jar of icefloe's JVM extension in the package: "
                  "the callers take their slower paths (deleted rows filtered in Spark SQL)")
        return None
    target = _cache_dir() / name
    try:
        compile_jar(extension_sources(SOURCES), classpath, target)
    except (JavacError, OSError, subprocess.SubprocessError) as e:
        _log.warning("building %s failed; deleted rows are filtered in Spark SQL: %s", target, e)
        return None
    return str(target)


FIX = ("create the session with icefloe.configure_spark(SparkSession.builder...).getOrCreate(), or add "
       "icefloe.spark.jvm.jar_path() to its spark.jars")
_warned: list = []


def _loadable(jvm: Any) -> bool:
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(PROBE_CLASS, False, loader)
        return True
    except Exception:
        return False


def _load_into(spark: SparkSession) -> str:
    """Add the extension's jar to a running session that was created without it: to the driver's
    class loader (Spark's ``MutableURLClassLoader``, shared by the threads py4j calls on, and the
    parent of a local executor's) and, through ``SparkContext.addJar``, to every executor's. Spark's
    ``ADD JAR`` is not enough: it sets the loader of the calling thread alone. Returns why it was
    not loaded, or "" when it was."""
    jar = jar_path()
    if jar is None:
        return "its jar is not in the package and could not be compiled here (no javac)"
    try:
        jvm: Any = spark._jvm       # py4j's view of the JVM: its classes are known at run time
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        if loader.getClass().getName() != "org.apache.spark.util.MutableURLClassLoader":
            return f"the driver's class loader ({loader.getClass().getName()}) takes no jar once started"
        loader.addURL(jvm.java.io.File(jar).toURI().toURL())
        jsc: Any = spark._jsc
        jsc.addJar(jar)
    except Exception as e:
        return f"adding {jar} failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    return "" if _loadable(jvm) else f"{PROBE_CLASS} is still not loadable after adding {jar}"


def available(spark: SparkSession) -> bool:
    """Whether ``spark`` can load the extension's classes (checked once per SparkContext). A session
    created without the extension's jar gets it added (``_load_into``); where that fails, a
    warning, once per process, names why and the fix, and the callers take the slower paths."""
    try:
        jsc = spark._jsc
        key = id(jsc)
    except Exception:           # Spark Connect: no JVM in this process
        return False
    hit = _available.get(key)
    if hit is None or hit[0] is not jsc:
        try:
            jvm = spark._jvm
        except Exception:
            jvm = None
        ok = jvm is not None and _loadable(jvm)
        if not ok and jvm is not None:
            with _lock:
                ok = _loadable(jvm)
                why = "" if ok else _load_into(spark)
            ok = not why
            if why and not _warned:
                _warned.append(why)
                warnings.warn(f"this SparkSession runs without icefloe's JVM extension ({why}): scans of tables "
                              f"with deleted rows and some writes take slower paths; to fix, {FIX}",
                              RuntimeWarning, stacklevel=2)
        hit = _available[key] = (jsc, ok)
    return hit[1]


def jvm_column(build: Callable[[Any], Any]) -> Optional[Column]:
    """The Column ``build(spark)`` makes in the JVM (given the active classic session, whose py4j
    gateway is untyped), as a PySpark Column; None where that session cannot load icefloe's classes
    (Spark Connect, no jar)."""
    from pyspark.sql import SparkSession

    try:
        from pyspark.sql.classic.column import Column
    except ImportError:
        return None
    if connect.connect_mode():      # the classic session in this process (if any) serves a Connect client
        return None
    spark = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if spark is None or not available(spark):
        return None
    return Column(build(spark))
