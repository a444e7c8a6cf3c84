"""Twin tables for the row-level tests: the same rows in a merge-on-read and a copy-on-write
table, compared after the same statements; and the Spark jobs a statement ran."""

MODES = ("delete", "update", "merge")


def write_modes(mode: str) -> dict:
    """The table properties that make every row-level statement use ``mode``."""
    return {f"write.{op}.mode": mode for op in MODES}


def twins(catalog, spark, suffix: str, rows: int, properties: dict = None) -> tuple:
    """(merge-on-read, copy-on-write) tables ``db.mor<suffix>`` and ``db.cow<suffix>`` of ``rows``
    rows (id, its text, ``p`` = id % 4), partitioned by ``p``, written by three tasks."""
    out = []
    for mode, short in (("merge-on-read", "mor"), ("copy-on-write", "cow")):
        t = catalog.create_table(f"db.{short}{suffix}", "id bigint not null, name string, p int",
                                 partitioned_by=["p"], properties={**(properties or {}), **write_modes(mode)})
        t.append(spark.range(0, rows, 1, 3).selectExpr("id", "cast(id as string) as name", "cast(id % 4 as int) as p"))
        out.append(t)
    return tuple(out)


def sorted_rows(t) -> list:
    return sorted(tuple(r.values()) for r in t.refresh().to_arrow().to_pylist())


def in_group(spark, group: str, fn):
    """``fn()`` with its Spark jobs in job group ``group``."""
    spark.sparkContext.setJobGroup(group, group)
    try:
        return fn()
    finally:
        spark.sparkContext.setJobGroup("tests", "tests")


def jobs(spark, group: str) -> list:
    """Each Spark job of ``group``, in order: the names of its stages."""
    tracker = spark.sparkContext.statusTracker()
    out = []
    for job in sorted(tracker.getJobIdsForGroup(group)):
        stages = [tracker.getStageInfo(s) for s in tracker.getJobInfo(job).stageIds]
        out.append([s.name for s in stages if s is not None])
    return out
