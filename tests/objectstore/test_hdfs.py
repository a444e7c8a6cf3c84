"""``hdfs://`` warehouses on a real HDFS (Hadoop's MiniDFSCluster on the loopback address, the
``hdfs`` fixture): both formats, data through Spark's own HDFS client, metadata through hdfs-native
on the driver, commits by HDFS's atomic rename without overwrite.

* The commit primitive: many writers of one name, exactly one wins; no temporary file is left.
* Iceberg and Paimon tables on HDFS, read and written by Apache Iceberg's and Apache Paimon's Java
  runtimes (one Spark 3.5 process with both) in both directions.
* Writers in separate processes lose nothing and double nothing.

pyiceberg cannot take part: its HDFS file system is pyarrow's, which needs libhdfs (a native
library of Hadoop's binary distribution, in no package this project installs).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pyarrow as pa
import pytest

import icefloe
from icefloe.core.hdfs_io import HdfsIO
from icefloe.errors import FileAlreadyExistsError, ObjectStoreError
from tools.local_servers import free_port

pytestmark = pytest.mark.long


def _rows(ids, s="x"):
    return pa.table({"id": pa.array(list(ids), pa.int64()), "s": [s] * len(ids)})


def _ours(t) -> list:
    return sorted((r["id"], r["s"]) for r in t.refresh().to_arrow().to_pylist())


def test_rename_without_overwrite_has_exactly_one_winner(hdfs):
    io = HdfsIO()
    base = hdfs.url()
    path = f"{base}/metadata/v1.metadata.json"
    won, lost = [], []
    start = threading.Barrier(6)

    def put(i):
        start.wait()
        try:
            io.write_bytes(path, f"writer {i}".encode(), overwrite=False)
            won.append(i)
        except FileAlreadyExistsError:
            lost.append(i)

    threads = [threading.Thread(target=put, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(won) == 1 and len(lost) == 5
    assert io.read_bytes(path) == f"writer {won[0]}".encode()
    assert io.list_dir(f"{base}/metadata") == ["v1.metadata.json"]        # no temporary file left
    io.write_hint(f"{base}/metadata/version-hint.text", b"1")
    io.write_hint(f"{base}/metadata/version-hint.text", b"2")              # a hint is replaced
    assert io.read_bytes(f"{base}/metadata/version-hint.text") == b"2"
    with io.open_read(path) as f:                                          # seekable reads (Parquet footers)
        assert f.seek(-1, 2) == io.size(path) - 1                          # seek returns the new position
        assert f.read() == str(won[0]).encode() and f.tell() == io.size(path)
        assert f.size() == io.size(path)                                   # the reader knows its size too
    assert list(io.walk_files(base)) == [f"{base}/metadata/v1.metadata.json", f"{base}/metadata/version-hint.text"]
    io.delete_tree(base)
    assert not io.exists(path) and io.list_dir(base) == []


def test_the_configuration_pages_hdfs_example_runs(hdfs):
    """The configuration page's HDFS example, with the test cluster's NameNode for ``namenode:8020``."""
    from tests.docs.test_docs_examples import blocks

    code = [b for b in blocks("configuration.md", "python") if "hdfs://" in b]
    assert len(code) == 1
    namenode = hdfs.uri.split("://", 1)[1].split("/", 1)[0]
    scope: dict = {}
    exec(compile(code[0].replace("namenode:8020", namenode), "configuration.md HDFS", "exec"), scope)  # noqa: S102
    assert scope["cat"].warehouse.startswith(f"hdfs://{namenode}/") and scope["events"].format == "paimon"


def test_an_unreachable_namenode_is_named(hdfs):
    started = time.perf_counter()
    with pytest.raises(ObjectStoreError, match=r"NameNode hdfs://127\.0\.0\.1:\d+ is unreachable"):
        icefloe.Catalog(f"hdfs://127.0.0.1:{free_port()}/wh")
    assert time.perf_counter() - started < 30


@pytest.fixture(scope="module")
def java(hdfs):
    """Apache Iceberg's (catalog ``jvm``, a Hadoop catalog) and Apache Paimon's (catalog ``paimon``,
    its filesystem catalog) Java runtimes in one Spark 3.5 process, over warehouses on the cluster."""
    from tools.jvm_runtime import JvmRuntime, runtime_jars

    iceberg_wh, paimon_wh = hdfs.url("java-iceberg"), hdfs.url("java-paimon")
    conf = {"spark.sql.catalog.jvm.cache-enabled": "false",               # icefloe commits too
            "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
            "spark.sql.catalog.paimon.warehouse": paimon_wh,
            "spark.sql.catalog.paimon.cache-enabled": "false"}
    with JvmRuntime(iceberg_wh, conf=conf, extra_jars=tuple(runtime_jars("paimon"))) as runtime:
        yield runtime, iceberg_wh, paimon_wh


def test_iceberg_on_hdfs_both_ways_with_the_java_runtime(java, spark):
    jvm, wh, _ = java
    cat = icefloe.Catalog(wh, spark=spark)
    t = cat.create_table("db.ours", "id bigint, s string", partitioned_by=["bucket(4, id)"])
    t.append(_rows([1, 2, 3], "a"))
    t.delete("id = 2")
    t.append(_rows([4], "b"))
    io = cat.io
    meta = f"{wh}/db/ours/metadata"
    assert [n for n in io.list_dir(meta) if n.endswith(".metadata.json")] == [f"v{i}.metadata.json" for i in (1, 2, 3, 4)]
    assert io.read_bytes(f"{meta}/version-hint.text").strip() == b"4"
    assert all(p.startswith(f"{wh}/db/ours/data/id_bucket=") for p in io.walk_files(f"{wh}/db/ours/data"))
    # the Java runtime reads icefloe's commits through its Hadoop catalog on the same HDFS
    assert [tuple(r) for r in jvm.sql("SELECT id, s FROM jvm.db.ours ORDER BY id")] == [(1, "a"), (3, "a"), (4, "b")]
    assert [tuple(r) for r in jvm.sql("SELECT count(*) FROM jvm.db.ours.snapshots")] == [(3,)]
    jvm.sql("INSERT INTO jvm.db.ours VALUES (5, 'j')")                # its rename commit on icefloe's table
    assert _ours(t) == [(1, "a"), (3, "a"), (4, "b"), (5, "j")]
    # and icefloe reads and extends a table the runtime made
    jvm.sql("CREATE TABLE jvm.db.theirs (id bigint, s string) USING iceberg PARTITIONED BY (s)")
    jvm.sql("INSERT INTO jvm.db.theirs VALUES (10, 'j'), (11, 'k')")
    theirs = cat.load_table("db.theirs")
    assert _ours(theirs) == [(10, "j"), (11, "k")]
    theirs.append(_rows([12], "i"))
    theirs.delete("id = 10")
    assert [tuple(r) for r in jvm.sql("SELECT id, s FROM jvm.db.theirs ORDER BY id")] == [(11, "k"), (12, "i")]


def test_paimon_on_hdfs_both_ways_with_the_java_runtime(java, spark):
    jvm, _, wh = java
    cat = icefloe.Catalog(wh, format="paimon", spark=spark)
    t = cat.create_table("db.ours", "id bigint not null, s string", properties={"primary-key": "id", "bucket": "2"})
    t.append(_rows([1, 2, 3], "a"))
    t.append(_rows([2, 4], "b"))                                      # an upsert of key 2
    io = cat.io
    assert io.list_dir(f"{wh}/db.db/ours/snapshot") == ["EARLIEST", "LATEST", "snapshot-1", "snapshot-2"]
    assert [tuple(r) for r in jvm.sql("SELECT id, s FROM paimon.db.ours ORDER BY id")] == \
        [(1, "a"), (2, "b"), (3, "a"), (4, "b")]
    jvm.sql("INSERT INTO paimon.db.ours VALUES (3L, 'j'), (5L, 'j')")  # Paimon Java's snapshot-3 by rename
    assert _ours(t) == [(1, "a"), (2, "b"), (3, "j"), (4, "b"), (5, "j")]
    assert [s.id for s in t.refresh().snapshots()] == [1, 2, 3]
    jvm.sql("CREATE TABLE paimon.db.theirs (id bigint NOT NULL, s string) TBLPROPERTIES ('bucket' = '-1')")
    jvm.sql("INSERT INTO paimon.db.theirs VALUES (10L, 'j'), (11L, 'k')")     # bigint literals: no
    # implicit casts without Paimon's SQL extensions, which this session (Iceberg's) does not load
    theirs = cat.load_table("db.theirs")
    assert _ours(theirs) == [(10, "j"), (11, "k")]
    theirs.append(_rows([12], "i"))
    assert [tuple(r) for r in jvm.sql("SELECT id, s FROM paimon.db.theirs ORDER BY id")] == \
        [(10, "j"), (11, "k"), (12, "i")]


WRITER = textwrap.dedent("""
    import sys
    import pyarrow as pa
    import icefloe
    wh, fmt, worker, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    t = icefloe.Catalog(wh, format=fmt).load_table("db.t")
    for i in range(n):
        k = worker * 1000 + i
        t.append(pa.table({"id": pa.array([k], pa.int64()), "s": [str(k)]}))
    print("DONE")
""")


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_writers_in_separate_processes_lose_nothing(hdfs, spark, fmt):
    wh = hdfs.url()
    # each HDFS file close waits for the NameNode (a half-second back-off on a busy machine), so an
    # Iceberg commit attempt is long and three writers may each lose more than the default 4 retries
    props = {"commit.retry.num-retries": "20"} if fmt == "iceberg" else {}
    icefloe.Catalog(wh, format=fmt, spark=spark).create_table("db.t", "id bigint, s string", properties=props)
    workers, each = 3, 3
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, wh, fmt, str(w), str(each)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(workers)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0 and "DONE" in out, err[-2000:]
    t = icefloe.Catalog(wh, format=fmt, spark=spark).load_table("db.t")
    expected = sorted(w * 1000 + i for w in range(workers) for i in range(each))
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == expected     # every commit once
    snaps = t.snapshots()
    assert len(snaps) == workers * each
    if fmt == "iceberg":                                                     # one line of history
        by_id = {s.snapshot_id: s for s in snaps}
        chain, s = [], t.current_snapshot()
        while s is not None:
            chain.append(s.snapshot_id)
            s = by_id.get(s.parent_snapshot_id)
        assert len(chain) == workers * each
        names = [n for n in t.io.list_dir(f"{wh}/db/t/metadata") if n.endswith(".metadata.json")]
        assert sorted(names) == sorted(f"v{i}.metadata.json" for i in range(1, workers * each + 2))
    else:
        assert [s.id for s in snaps] == list(range(1, workers * each + 1))
    assert not [p for p in t.io.walk_files(wh) if p.rsplit("/", 1)[-1].startswith(".")]   # no temporary file
