"""Apache Paimon's Java engine without Spark (``paimon-bundle``, pinned in ``jvm-jars.txt``): a second
Paimon referee, newer than the Spark runtime ``tools/jvm_runtime.py`` runs.

``PaimonJava(warehouse)`` starts one JVM of its own running ``paimon_java/PaimonReferee.java`` (compiled
with the JDK's ``javac`` by ``make jvm``, or on first use, into the jar cache) on a class path of the
bundle and the Hadoop client jars PySpark ships, with Paimon's filesystem catalog over the warehouse.
Requests and answers are JSON lines over the process's stdin and stdout; each method below is one
request. Values travel as JSON: strings, numbers, booleans, null; decimals and timestamps as text,
binary as base64; rows as lists in the table's column order.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Optional

from tools import maven_jars

SOURCE = Path(__file__).resolve().parent / "paimon_java" / "PaimonReferee.java"
BUNDLE = "paimon-bundle"
# PySpark's jars the engine needs beside the bundle: Hadoop's client (Paimon's Parquet and ORC
# readers use its Configuration), the logging API, and Snappy (the Avro codec of the Iceberg manifests
# Paimon's Iceberg compatibility writes).
HADOOP_JARS = ("hadoop-client-api-", "hadoop-client-runtime-", "slf4j-api-", "jcl-over-slf4j-", "snappy-java-")


class PaimonJavaUnavailable(RuntimeError):
    """The engine's jar, its helper or a JVM is missing."""


class PaimonJavaError(RuntimeError):
    """Paimon's Java engine refused a request; the message is the Java exception and where it was raised."""


def _pyspark_jars() -> list[Path]:
    import pyspark

    folder = Path(pyspark.__file__).resolve().parent / "jars"
    found = [j for j in sorted(folder.glob("*.jar")) if j.name.startswith(HADOOP_JARS)]
    if len({j.name.rsplit("-", 1)[0] for j in found}) != len(HADOOP_JARS):
        raise PaimonJavaUnavailable(f"{folder} lacks one of {', '.join(HADOOP_JARS)}")
    return found


def _bundle() -> Path:
    try:
        return maven_jars.path(BUNDLE)
    except maven_jars.JarError as e:
        raise PaimonJavaUnavailable(str(e)) from None


def class_path() -> list[Path]:
    return [_bundle(), *_pyspark_jars()]


def helper_jar() -> Path:
    """The compiled referee program, one jar per version of its source and of the bundle."""
    digest = hashlib.sha256(SOURCE.read_bytes() + maven_jars.pinned(BUNDLE).sha256.encode()).hexdigest()[:16]
    target = maven_jars.cache_dir() / f"paimon-referee-{digest}.jar"
    if not target.exists():
        from icefloe.spark.javac import JavacError, compile_jar

        try:
            compile_jar([SOURCE], os.pathsep.join(map(str, class_path())), target)
        except JavacError as e:
            raise PaimonJavaUnavailable(str(e)) from None
    return target


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return "java"


class PaimonJava:
    """One JVM running Paimon's Java engine over a warehouse, driven by requests (one at a time)."""

    def __init__(self, warehouse: str | os.PathLike, heap: str = "1g"):
        cp = os.pathsep.join(map(str, [helper_jar(), *class_path()]))
        self.warehouse = str(warehouse)
        try:
            self._proc = subprocess.Popen(
                [_java(), f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp, "PaimonReferee",
                 json.dumps({"warehouse": self.warehouse})],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as e:
            raise PaimonJavaUnavailable(f"starting java failed: {e}") from None
        self._stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self._lock = threading.Lock()
        ready = self._receive()
        if not ready.get("ready"):
            raise PaimonJavaUnavailable(f"Paimon's Java engine did not start: {ready}")
        self.version: str = ready["version"]

    def _drain(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-200]

    def _receive(self) -> dict:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise PaimonJavaUnavailable("Paimon's Java engine ended:\n" + "".join(self._stderr[-60:]))
        return json.loads(line)

    def request(self, op: str, **fields: Any) -> Any:
        assert self._proc.stdin is not None
        with self._lock:
            self._proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
            self._proc.stdin.flush()
            reply = self._receive()
        if "error" in reply:
            raise PaimonJavaError(reply["error"])
        return reply["result"]

    # ---------------------------------------------------------------- catalog and schema
    def create_database(self, database: str) -> None:
        self.request("create_database", database=database)

    def create_table(self, table: str, columns: list[tuple[str, str]], partition_keys: tuple[str, ...] = (),
                     primary_keys: tuple[str, ...] = (), options: Optional[dict[str, str]] = None) -> None:
        """``columns``: (name, Paimon SQL type such as ``BIGINT NOT NULL``)."""
        self.request("create_table", table=table, columns=[list(c) for c in columns],
                     partition_keys=list(partition_keys), primary_keys=list(primary_keys), options=options or {})

    def drop_table(self, table: str) -> None:
        self.request("drop_table", table=table)

    def alter(self, table: str, *changes: tuple[str, ...]) -> None:
        """Schema changes, each ``("add_column", name, type)``, ``("rename_column", old, new)``,
        ``("drop_column", name)`` or ``("set_option", key, value)``, committed as one."""
        self.request("alter", table=table, changes=[list(c) for c in changes])

    # ---------------------------------------------------------------- reads
    def rows(self, table: str, options: Optional[dict[str, str]] = None, kind: bool = False,
             columns: tuple[str, ...] = ()) -> list[tuple]:
        """Every row of a batch read (``options`` are Paimon's dynamic options, e.g. ``scan.snapshot-id``,
        ``scan.tag-name``), of ``columns`` only if any are named; with ``kind`` each row starts with its
        row kind (``+I``, ``-D``...)."""
        return [tuple(r) for r in self.request("rows", table=table, options=options or {}, kind=kind,
                                               columns=list(columns))]

    def stream(self, table: str, options: Optional[dict[str, str]] = None, max_plans: int = 1000) -> list[list[tuple]]:
        """A streaming scan (``StreamTableScan``) from where ``options`` start it until it has caught up
        with the latest snapshot: the rows of each plan that had any, each row led by its row kind."""
        plans = self.request("stream", table=table, options=options or {}, max_plans=max_plans)
        return [[tuple(r) for r in plan] for plan in plans]

    # ---------------------------------------------------------------- writes and maintenance
    def write(self, table: str, rows: list[tuple], kinds: Optional[list[str]] = None,
              overwrite: Optional[dict[str, str]] = None) -> Optional[int]:
        """One batch commit of ``rows`` (every column, in order); the snapshot id after it. ``overwrite``:
        an INSERT OVERWRITE of the partitions it names (``{}``: of the whole table)."""
        return self.request("write", table=table, rows=[list(r) for r in rows], kinds=kinds, overwrite=overwrite)

    def write_columns(self, table: str, columns: tuple[str, ...], first_row_id: int, rows: list[tuple]) -> Optional[int]:
        """A data-evolution table's update of ``columns`` as Paimon's Spark MERGE INTO writes it: one file of
        those columns with a value for every row of the row-id range from ``first_row_id`` (``rows``, in
        row-id order), committed as one APPEND snapshot (unpartitioned tables); the snapshot id after it."""
        return self.request("write_columns", table=table, columns=list(columns), first_row_id=first_row_id,
                            rows=[list(r) for r in rows])

    def compact(self, table: str, full: bool = True, options: Optional[dict[str, str]] = None) -> Optional[int]:
        """Compaction of every bucket (``full``: into one sorted run), committed as one snapshot, with
        ``options`` (e.g. ``compaction.min.file-num``) for this run; the snapshot id after it."""
        return self.request("compact", table=table, full=full, options=options or {})

    def rollback(self, table: str, snapshot: Optional[int] = None, tag: Optional[str] = None) -> Optional[int]:
        return self.request("rollback", table=table, snapshot=snapshot, tag=tag)

    def create_tag(self, table: str, tag: str, snapshot: int) -> None:
        self.request("create_tag", table=table, tag=tag, snapshot=snapshot)

    def create_branch(self, table: str, branch: str, tag: Optional[str] = None) -> None:
        self.request("create_branch", table=table, branch=branch, tag=tag)

    def expire(self, table: str, retain_max: int, retain_min: int = 1, time_retained_ms: int = 0) -> int:
        return self.request("expire", table=table, retain_max=retain_max, retain_min=retain_min,
                            time_retained_ms=time_retained_ms)

    def remove_orphan_files(self, table: str, older_than_ms: int) -> list[str]:
        return self.request("remove_orphan_files", table=table, older_than_ms=older_than_ms)

    def indexed_read(self, table: str, column: str, values: list, options: Optional[dict[str, str]] = None) -> dict:
        """A read filtered by ``column IN values`` as Paimon plans it: ``{"files": data files its scan
        keeps, "rows": the rows of the files its reader does not skip}`` (file indexes skip whole files;
        rows are not filtered one by one)."""
        out = self.request("indexed_read", table=table, column=column, values=list(values), options=options or {})
        return {"files": out["files"], "rows": [tuple(r) for r in out["rows"]]}

    def global_index_rows(self, table: str, column: str, values: list) -> Optional[list[int]]:
        """The row ids Paimon's global index scanner finds for ``column IN values`` (sorted), or None
        when no global index answers."""
        out = self.request("global_index_rows", table=table, column=column, values=list(values))
        return None if out is None else sorted(out)

    def build_global_index(self, table: str, column: str, index_type: str = "bitmap") -> list[str]:
        """A ``bitmap`` or ``btree`` global index of ``column`` of an unpartitioned row-tracking table,
        written and committed by Paimon's own index writer over all rows as one row range; its file names."""
        return self.request("build_global_index", table=table, column=column, index_type=index_type)

    def plan(self, table: str, conditions: tuple[tuple[str, str, Any], ...] = ()) -> dict:
        """A scan's plan timed alone in the JVM (the table loaded anew, then ``newScan().plan()``), filtered
        by the AND of ``conditions`` (``(column, "=" | ">=" | "<", value)``; a date as days since the epoch):
        ``{"files": data files of its splits, "seconds": the plan's time, "peak_rss_mb": the JVM's peak RSS}``."""
        return self.request("plan", table=table, conditions=[list(c) for c in conditions])

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(json.dumps({"stop": True}) + "\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()

    def __enter__(self) -> "PaimonJava":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":
    print(helper_jar())
