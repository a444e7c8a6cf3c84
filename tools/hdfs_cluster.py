"""A real HDFS for tests and benchmarks: Hadoop's MiniDFSCluster (one NameNode, one DataNode, in one
JVM) on the loopback address, started and stopped by its users.

The cluster is Hadoop's own (``org.apache.hadoop.test.MiniDFSClusterManager`` from
``hadoop-client-minicluster``, pinned in ``jvm-jars.txt`` and fetched by ``make jvm``), the release of
the Hadoop client PySpark ships, whose jars (``pyspark/jars``) complete its class path. It formats a
fresh name directory under ``base``, writes its NameNode port to a file once it is up, and is stopped
by terminating the process.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tools import maven_jars
from tools.local_servers import stop

JARS = ("hadoop-client-minicluster", "junit-jupiter-api", "opentest4j", "junit-platform-commons")
MAIN = "org.apache.hadoop.test.MiniDFSClusterManager"
# close() returns once the NameNode has the last block committed, without waiting for the DataNode's
# report of it (a client then polls with a half-second back-off); a real cluster setting, which
# keeps a commit on a busy two-core machine from waiting on that report.
SETTINGS = {"dfs.namenode.file.close.num-committed-allowed": "1"}


class HdfsUnavailable(RuntimeError):
    """The cluster's jars are missing or it did not start."""


def class_path() -> str:
    import pyspark

    try:
        pinned = [str(maven_jars.path(a)) for a in JARS]
    except maven_jars.JarError as e:
        raise HdfsUnavailable(str(e)) from None
    return os.pathsep.join([*pinned, str(Path(pyspark.__file__).parent / "jars" / "*")])


class MiniHdfs:
    """``MiniHdfs(base)`` starts the cluster; ``uri`` is ``hdfs://127.0.0.1:<port>``, ``url(path)``
    a location on it; ``close()`` stops it."""

    def __init__(self, base: str | os.PathLike | None = None, timeout: float = 240):
        self.base = Path(base or tempfile.mkdtemp(prefix="minihdfs-"))
        self.base.mkdir(parents=True, exist_ok=True)
        details = self.base / "details.json"
        self._log = open(self.base / "cluster.log", "wb")
        cmd = ["java", "-Xmx512m", f"-Dtest.build.data={self.base / 'data'}", "-cp", class_path(), MAIN,
               "-format", "-datanodes", "1", "-nnport", "0", "-httpport", "0", "-writeDetails", str(details)]
        for key, value in SETTINGS.items():
            cmd += ["-D", f"{key}={value}"]
        self.proc = subprocess.Popen(cmd, cwd=self.base, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while not details.exists() or not details.read_text().strip().endswith("}"):
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                tail = (self.base / "cluster.log").read_text(errors="replace")[-3000:]
                raise HdfsUnavailable(f"the MiniDFSCluster did not start:\n{tail}")
            time.sleep(0.2)
        self.port = int(json.loads(details.read_text())["namenode_port"])
        self.uri = f"hdfs://127.0.0.1:{self.port}"

    def url(self, path: str = "") -> str:
        """A location on the cluster; a fresh directory name when ``path`` is empty."""
        return f"{self.uri}/{path.lstrip('/') or 'wh-' + uuid.uuid4().hex[:12]}"

    def close(self) -> None:
        if self.proc.poll() is None:
            stop(self.proc)
        self._log.close()

    def __enter__(self) -> "MiniHdfs":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":
    with MiniHdfs() as cluster:
        print(cluster.uri, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
