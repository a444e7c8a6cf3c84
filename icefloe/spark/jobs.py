"""After a failed Spark job of writing tasks (either format's): its files removed once no task
can still write one."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from icefloe.spark import connect

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def wait_until_idle(spark: SparkSession, timeout_s: float = 60.0) -> None:
    """Wait until no Spark task of this session runs (the tasks of a failed job are killed
    asynchronously and may still write). A Spark Connect session shows no executors' tasks: there
    the wait is the tasks' kill timeout (``clean_up_failed_job`` waits it again)."""
    if connect.is_connect(spark):
        time.sleep(_kill_timeout(spark) + 0.5)
        return
    jsc: Any = spark.sparkContext._jsc      # py4j: the JVM's JavaSparkContext
    tracker = jsc.sc().statusTracker()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(e.numRunningTasks() for e in tracker.getExecutorInfos()):
            return
        time.sleep(0.1)


def clean_up_failed_job(spark: SparkSession, remove: Callable[[], object], python_workers: bool = True) -> None:
    """Run ``remove`` (which deletes a failed job's files by name) once the job's tasks have
    stopped, and again once their Python workers must have too: a Python worker outlives its
    killed task by up to ``spark.python.task.killTimeout`` and may finish writing a file in
    that time (it then sees the abort marker and removes its files, unless it is killed first,
    mid-file). A job whose files only the JVM's tasks write (``python_workers`` False) is done
    with once they have stopped: a task reports itself stopped from its own thread, after its
    last write (and ``ChangeWriter``'s tasks look for the abort marker after it, removing their
    files if it is there), so the second wait would only delay the error."""
    wait_until_idle(spark)
    remove()
    if not python_workers:
        return
    time.sleep(_kill_timeout(spark) + 0.5)
    remove()


def _kill_timeout(spark: SparkSession) -> float:
    """``spark.python.task.killTimeout`` in seconds (Spark's default, 2 s, where it cannot be read)."""
    try:
        if connect.is_connect(spark):
            text = (spark.conf.get("spark.python.task.killTimeout", None) or "2s").strip().lower()
            units = {"ms": 0.001, "s": 1, "m": 60, "min": 60}
            for unit in sorted(units, key=len, reverse=True):
                if text.endswith(unit) and text[:-len(unit)].strip().isdigit():
                    return int(text[:-len(unit)]) * units[unit]
            return float(text) if text.isdigit() else 2.0
        jsc: Any = spark.sparkContext._jsc
        return jsc.sc().conf().getTimeAsSeconds("spark.python.task.killTimeout", "2s")
    except Exception:  # noqa: BLE001 - a conf the JVM cannot parse: Spark's default
        return 2.0
