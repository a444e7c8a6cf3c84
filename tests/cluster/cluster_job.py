"""The driver of the standalone cluster test (``test_standalone.py`` runs it as its own process, the
way a user's ``spark-submit``'d application runs): a session on ``spark://...`` with icefloe shipped
to the executors as a zip in ``spark.submit.pyFiles``, the warehouse on the S3 server, and for each
format an append, a stream from one table into another, a MERGE, reads, a compaction and an expiry,
each checked by its rows and by the table's metadata. It prints one JSON line (``RESULT {...}``) the
test reads the tables back from with the independent readers.

    python cluster_job.py <master-url> <settings.json>

The settings: ``warehouse`` (``s3://bucket/prefix``), ``properties`` (the catalog's S3 settings, with
``spark.native-io`` in them for the native mode), ``spark`` (extra session settings: the S3A
connector's), ``py_files`` (the zip), ``marker`` (a file only the driver can see), ``checkpoints``.
"""
import json
import os
import sys
import time

from pyspark.sql import SparkSession

import icefloe


def session(master: str, settings: dict) -> SparkSession:
    builder = (SparkSession.builder.master(master).appName("icefloe-standalone")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.pyspark.python", sys.executable)
               .config("spark.submit.pyFiles", settings["py_files"])       # icefloe for the executors
               .config("spark.executor.memory", "640m").config("spark.executor.cores", "1")
               .config("spark.cores.max", "2").config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", "4")
               # tasks start once both executors are there, so both do work
               .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
               .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "300s")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false"))
    for key, value in settings.get("spark", {}).items():
        builder = builder.config(key, value)
    return icefloe.configure_spark(builder).getOrCreate()          # its JVM extension, as documented


def executors_see(spark: SparkSession, marker: str) -> list:
    """What each task's Python process sees: its executor's process, where icefloe was imported
    from, whether the driver's marker file exists, and its working directory."""
    def probe(_):
        import os as os_

        import icefloe as shipped
        return [(os_.getppid(), shipped.__file__, os_.path.exists(marker), os_.getcwd())]
    return spark.sparkContext.parallelize(range(8), 8).mapPartitions(probe).collect()


def rows(df) -> list:
    return sorted((r.id, r.v) for r in df.select("id", "v").collect())


START = time.time()


def step(what: str) -> None:
    """A line in the driver's log with the seconds since it started, to see where a slow run went."""
    print(f"[cluster-job {time.time() - START:7.1f}s] {what}", file=sys.stderr, flush=True)


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def run_format(spark: SparkSession, fmt: str, settings: dict, native: bool) -> dict:
    props = settings["properties"]
    cat = icefloe.Catalog(f"{settings['warehouse']}/{fmt}", format=fmt, spark=spark, **props)
    t = cat.create_table("db.t", "id bigint not null, v string")
    model = {i: str(i) for i in range(1000)}

    # append: four tasks, one data file each, written by the executors
    t.append(spark.range(1000).selectExpr("id", "cast(id as string) as v").repartition(4))
    t.append(spark.range(1000, 1200).selectExpr("id", "cast(id as string) as v").repartition(2))
    model.update({i: str(i) for i in range(1000, 1200)})
    expect(rows(t.to_spark()) == sorted(model.items()), f"{fmt}: rows after the appends")
    expect(len(t.snapshots()) == 2, f"{fmt}: one snapshot per append")
    appended = t.data_files()
    expect(len(appended) >= 4 and sum(f.records for f in appended) == 1200, f"{fmt}: data files {appended}")
    expect(all(f.path.startswith(settings["warehouse"]) for f in appended), f"{fmt}: files outside the warehouse")
    step(f"{fmt}: appends checked")

    # read: Spark's own Parquet scan over s3:// with native I/O, Python tasks through the FileIO without
    plan = t.to_spark(where="id < 10")._jdf.queryExecution().executedPlan().toString()
    expect(("FileScan" in plan or "icefloe-parquet" in plan) == native, f"{fmt}: native={native} read plan:\n{plan}")
    expect(rows(t.to_spark(where="id < 10")) == [(i, str(i)) for i in range(10)], f"{fmt}: a filtered read")
    step(f"{fmt}: reads checked")

    # a stream: the table as a source, a second table as the sink, checkpoints on the driver's disk
    s = cat.create_table("db.s", "id bigint not null, v string")
    checkpoint = os.path.join(settings["checkpoints"], fmt)
    q = (spark.readStream.format("icefloe").options(**props).option("format", fmt).load(t.location)
         .writeStream.format("icefloe").options(**props).option("format", fmt)
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(s.location))
    q.awaitTermination()
    s = cat.load_table("db.s")
    expect(rows(s.to_spark()) == sorted(model.items()), f"{fmt}: the stream's sink holds the source's rows")
    expect(len(s.snapshots()) >= 1, f"{fmt}: the sink committed")
    step(f"{fmt}: stream checked")

    # MERGE: ten rows updated, ten inserted
    src = spark.range(1190, 1210).selectExpr("id", "'new' as v")
    r = t.merge(src, "t.id = s.id").when_matched_update({"v": "s.v"}).when_not_matched_insert_all().execute()
    expect((r.updated, r.inserted) == (10, 10), f"{fmt}: merge counts {r}")
    expect(len(t.snapshots()) == 3, f"{fmt}: the MERGE's snapshot")
    model.update({i: "new" for i in range(1190, 1210)})
    expect(rows(t.to_spark()) == sorted(model.items()), f"{fmt}: rows after the MERGE")
    expect(sorted(x.id for x in t.to_spark(where="v = 'new'").collect()) == list(range(1190, 1210)),
           f"{fmt}: the merged rows by filter")
    step(f"{fmt}: merge checked")

    # compaction: the small files rewritten into one, the rows unchanged
    before = len(t.data_files())
    done = t.compact()
    expect(done is not None, f"{fmt}: compaction found nothing to rewrite in {before} files")
    after = len(t.data_files())
    expect(after < before, f"{fmt}: compaction left {after} of {before} data files")
    expect(rows(t.to_spark()) == sorted(model.items()), f"{fmt}: rows after compaction")
    step(f"{fmt}: compaction checked")

    # expiry: every snapshot but the current one, and the files only they used
    stored_before = [p for p in cat.io.walk_files(t.location) if p.endswith(".parquet")]
    time.sleep(0.01)
    report = t.expire_snapshots(older_than=int(time.time() * 1000), retain_last=1)
    expect(len(t.snapshots()) == 1, f"{fmt}: {len(t.snapshots())} snapshots after expiry")
    expect(len(report.expired_snapshot_ids) == 3, f"{fmt}: expiry {report}")
    stored = sorted(p for p in cat.io.walk_files(t.location) if p.endswith(".parquet"))
    current = sorted(f.path for f in t.data_files())
    expect(stored == current and len(stored_before) > len(stored),
           f"{fmt}: Parquet objects in the store after expiry {stored}, the table's {current}")
    expect(rows(t.to_spark()) == sorted(model.items()), f"{fmt}: rows after expiry")
    step(f"{fmt}: expiry checked")
    check = t.check()
    expect(check.ok, f"{fmt}: check after expiry: {check.problems}")
    return {"rows": len(model), "new": sorted(i for i, v in model.items() if v == "new"),
            "files_before_compaction": before, "files_after": after, "deleted_data_files": len(stored_before) - len(stored)}


def main(master: str, settings: dict) -> None:
    spark = session(master, settings)
    native = settings["properties"].get("spark.native-io") == "true"
    step("session started")
    seen = executors_see(spark, settings["marker"])
    expect(len({pid for pid, *_ in seen}) == 2, f"tasks ran in two executors: {seen}")
    expect(all(".zip" in where for _, where, _, _ in seen), f"icefloe is the shipped zip's: {seen}")
    expect(not any(visible for _, _, visible, _ in seen), f"the executors see the driver's files: {seen}")
    out = {"executors": seen, "formats": {fmt: run_format(spark, fmt, settings, native)
                                          for fmt in ("iceberg", "paimon")}}
    print("RESULT " + json.dumps(out), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], json.loads(open(sys.argv[2]).read()))
