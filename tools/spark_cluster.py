"""A Spark standalone cluster on this machine for tests: a master and workers started from PySpark's
own launch script (``bin/spark-class`` with ``org.apache.spark.deploy.master.Master`` and
``...deploy.worker.Worker``), each a process of its own on the loopback address.

Each worker runs in a mount namespace of its own (``unshare --mount``) in which its own directory is
bind-mounted over ``/tmp``: its work directory (``SPARK_WORKER_DIR``), its executors' scratch space
(``SPARK_LOCAL_DIRS``) and their temporary files (``TMPDIR``, ``java.io.tmpdir``) are all there, and
nothing the driver keeps under ``/tmp`` (a test's ``tmp_path``, its working directory) is visible to
the executors, as on separate machines; and each worker has a loopback address of its own, so Spark
takes the workers for separate hosts too. From outside, a worker's ``/tmp`` is ``root(i)``, where its
executors' logs can be read (``executor_logs()``).

Spark 4.3's launcher adds ``--sun-misc-unsafe-memory-access`` to executor command lines, which a Java
17 runtime refuses; each worker's ``JAVA_HOME`` is a small wrapper that drops that one option.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Optional

from tools.local_servers import free_port, stop, wait_listening

JAVA_WRAPPER = """#!/bin/sh
real="{java}"
for a in "$@"; do
  shift
  case "$a" in --sun-misc-unsafe-memory-access=*) ;; *) set -- "$@" "$a" ;; esac
done
exec "$real" "$@"
"""
# inside a worker's namespace: its own directory over /tmp, then Spark's launch script
ISOLATE = 'mount --bind "$0" /tmp && exec "$@"'


class ClusterUnavailable(RuntimeError):
    """The cluster could not be started (no ``unshare``, no permission for mount namespaces...)."""


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def real_java() -> str:
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not java:
        raise ClusterUnavailable("no java on PATH (nor JAVA_HOME)")
    return os.path.realpath(java)


def java_home_wrapper(where: Path) -> Path:
    """A directory to use as ``JAVA_HOME`` whose ``bin/java`` runs the real one without the option
    Java 17 refuses."""
    wrapper = where / "bin" / "java"
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(JAVA_WRAPPER.format(java=real_java()))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return where


class SparkStandalone:
    """``SparkStandalone(base, workers=2)`` starts the cluster; ``master_url`` is
    ``spark://127.0.0.1:<port>``; ``close()`` stops it."""

    def __init__(self, base: str | os.PathLike | None = None, workers: int = 2, cores: int = 1,
                 memory: str = "1g", daemon_memory: str = "256m", env: Optional[dict] = None,
                 timeout: float = 180):
        if shutil.which("unshare") is None:
            raise ClusterUnavailable("the cluster's workers need `unshare` (util-linux) for their own /tmp")
        self.base = Path(base or tempfile.mkdtemp(prefix="spark-standalone-")).resolve()
        self.base.mkdir(parents=True, exist_ok=True)
        self.procs: list[subprocess.Popen] = []
        self._logs: list = []
        self.workers = workers
        home = spark_home()
        common = dict(os.environ, SPARK_HOME=str(home), SPARK_DAEMON_MEMORY=daemon_memory, SPARK_NO_DAEMONIZE="1", **(env or {}))
        common.pop("PYTHONPATH", None)          # the executors' Python sees only what the application ships
        java_home_wrapper(self.base / "java")
        port, ui = free_port(), free_port()
        self.master_url = f"spark://127.0.0.1:{port}"
        self.master_ui = f"http://127.0.0.1:{ui}"
        spark_class = str(home / "bin" / "spark-class")
        try:
            self._start([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(port), "--webui-port", str(ui)],
                        dict(common, JAVA_HOME=str(self.base / "java"), SPARK_LOCAL_IP="127.0.0.1"), "master")
            wait_listening(port, self.procs[0], "the Spark master", timeout)
            for i in range(workers):
                root = self.root(i)
                (root / "work").mkdir(parents=True, exist_ok=True)
                (root / "local").mkdir(exist_ok=True)
                java_home_wrapper(root / "java")
                host = self.host(i)
                worker_env = dict(common, JAVA_HOME="/tmp/java", TMPDIR="/tmp", SPARK_LOCAL_DIRS="/tmp/local",
                                  SPARK_WORKER_DIR="/tmp/work", SPARK_LOCAL_IP=host,
                                  SPARK_WORKER_OPTS="-Djava.io.tmpdir=/tmp")
                cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", ISOLATE, str(root),
                       spark_class, "org.apache.spark.deploy.worker.Worker", "--host", host,
                       "--cores", str(cores), "--memory", memory, "--work-dir", "/tmp/work",
                       "--webui-port", str(free_port()), self.master_url]
                self._start(cmd, worker_env, f"worker-{i}")
            self._wait_for_workers(timeout)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def host(i: int) -> str:
        """Worker ``i``'s address: a loopback address of its own (``127.0.0.2``, ``127.0.0.3``...), so
        Spark takes each worker for a host of its own and never reads another's shuffle files from
        what it would think is a shared local disk (``spark.shuffle.readHostLocalDisk``)."""
        return f"127.0.0.{i + 2}"

    def root(self, i: int) -> Path:
        """Worker ``i``'s ``/tmp``, seen from outside its namespace."""
        return self.base / f"worker-{i}"

    def _start(self, cmd: list, env: dict, name: str) -> None:
        log = open(self.base / f"{name}.log", "wb")
        self._logs.append(log)
        self.procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, cwd=self.base))

    def _wait_for_workers(self, timeout: float) -> None:
        import http.client
        import json

        deadline = time.time() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.master_ui}/json/", timeout=2) as r:
                    alive = [w for w in json.load(r).get("workers", []) if w.get("state") == "ALIVE"]
                if len(alive) >= self.workers:
                    return
            except (OSError, ValueError, http.client.HTTPException):
                pass  # the master's web UI is not up yet, or answered before it had a page to give
            dead = [p for p in self.procs if p.poll() is not None]
            if dead or time.time() > deadline:
                raise ClusterUnavailable(f"the Spark cluster did not start: {self.log_tail()}")
            time.sleep(0.5)

    def log_tail(self, chars: int = 3000) -> str:
        out = []
        for f in sorted(self.base.glob("*.log")):
            out.append(f"--- {f.name}\n{f.read_text(errors='replace')[-chars:]}")
        return "\n".join(out)

    def executor_logs(self, chars: int = 4000) -> str:
        """The tail of every executor's stderr, from each worker's work directory."""
        out = []
        for i in range(self.workers):
            for f in sorted((self.root(i) / "work").glob("*/*/stderr")):
                out.append(f"--- worker-{i} {f.parent.parent.name}/{f.parent.name}\n"
                           f"{f.read_text(errors='replace')[-chars:]}")
        return "\n".join(out)

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                stop(p)
        for log in self._logs:
            log.close()
        self.procs = []

    def __enter__(self) -> "SparkStandalone":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
