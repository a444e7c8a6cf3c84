"""After a failed Spark job of writing tasks (either format's): its files removed once no task
can still write one."""
from __future__ import annotations

import time


def wait_until_idle(spark, timeout_s: float = 60.0) -> None:
    """Wait until no Spark task of this session runs (the tasks of a failed job are killed
    asynchronously and may still write)."""
    tracker = spark.sparkContext._jsc.sc().statusTracker()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(e.numRunningTasks() for e in tracker.getExecutorInfos()):
            return
        time.sleep(0.1)


def clean_up_failed_job(spark, remove, python_workers: bool = True) -> None:
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
    try:
        kill_timeout = spark.sparkContext._jsc.sc().conf().getTimeAsSeconds(
            "spark.python.task.killTimeout", "2s")
    except Exception:  # noqa: BLE001 - a conf the JVM cannot parse: Spark's default
        kill_timeout = 2
    time.sleep(kill_timeout + 0.5)
    remove()
