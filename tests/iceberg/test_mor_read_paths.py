"""Merge-on-read reads take one of several paths: files without deletes are read plainly,
files with only position deletes have them applied inside the Parquet scan (the JVM format of
``icefloe.spark.deleted_rows``), or, without it, filtered by bitmaps or matched on Spark's own file
path (with or without narrowing each delete file to the data files it is attached to); anything
else goes through the general anti joins. Every path gives the rows pyiceberg gives."""
import pytest
import icefloe.spark.iceberg_delete_write as delete_write
import icefloe.spark.iceberg_read as ir


def _pyiceberg_ids(catalog, name):
    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(catalog.load_table(name).metadata_location)
    return sorted(t.scan().to_arrow().column("id").to_pylist())


@pytest.mark.parametrize("path", ["whole-partition", "filtered", "joined", "bitmap", "bitmap-broadcast", "in-scan"])
def test_position_delete_read_paths_agree_with_pyiceberg(catalog, spark, monkeypatch, path):
    """whole-partition: every delete file applies to every data file of its partition;
    filtered: a data file added after the deletes is not attached to them, and their rows
    naming it (none here) are dropped by a filter; joined: the same through the small-side
    join with the attachments (the path for many unattached pairs or unusual paths); bitmap: few
    files, their deleted positions as a bitmap filter (the others force the joins); in-scan: the
    deletes applied inside the Parquet scan (the default where the JVM format is loadable)."""
    from icefloe.spark import deleted_rows, jvm

    in_scan = path == "in-scan"
    if in_scan:
        assert jvm.available(spark), "the session cannot load " + deleted_rows.CLASS
        path = "bitmap"
    else:
        monkeypatch.setattr(jvm, "available", lambda spark: False)
    if path == "joined":
        monkeypatch.setattr(ir, "_MAX_FILTER_PAIRS", -1)
    broadcast = path == "bitmap-broadcast"
    if broadcast:                           # bitmaps too big to be constants of the plan: joined
        from icefloe.spark import bitmaps
        monkeypatch.setattr(bitmaps, "MAX_LITERAL_ELEMENTS", 0)
        path = "bitmap"
    if path != "bitmap":
        monkeypatch.setattr(ir, "_MAX_FILTER_ROWS", -1)
    # one task writes each delete: its file then covers every data file of the partition it hits
    # (a delete file naming one data file is attached to that file alone, and needs no filter)
    monkeypatch.setattr(delete_write, "_task_count", lambda spark, files: 1)
    used = []
    name = "_read_with_position_filter" if path == "bitmap" else "_read_minus_position_deletes"
    real = getattr(ir, name)
    monkeypatch.setattr(ir, name, lambda *a, **kw: used.append(1) or real(*a, **kw))
    t = catalog.create_table("db.mor", "id bigint not null, p int, s string", partitioned_by=["p"],
                             properties={"write.delete.mode": "merge-on-read", "write.delete.granularity": "partition"})
    t.append(spark.range(300).selectExpr("id", "cast(id % 3 as int) as p", "cast(id as string) as s"))
    t.append(spark.range(300, 330).selectExpr("id", "1 as p", "'late' as s"))
    t.delete("p = 1 and id % 7 = 0")                       # partitions 0 and 2 stay without deletes
    t.delete("p = 1 and id % 11 = 0")                      # a second delete file in that partition
    expected = [i for i in range(330) if not ((i % 3 == 1 or i >= 300) and (i % 7 == 0 or i % 11 == 0))]
    if path not in ("whole-partition", "bitmap"):
        t.append(spark.range(1000, 1010).selectExpr("id", "1 as p", "'after' as s"))
        expected += list(range(1000, 1010))
        meta = t.refresh().metadata
        from icefloe.iceberg import scan as scan_mod
        tasks = scan_mod.plan_files(t.io, meta, meta.current_snapshot, None)
        assert ir._unattached_pairs(tasks, {d.file_path: d for x in tasks for d in x.deletes}.values())
    assert sorted(r.id for r in t.to_spark().select("id").collect()) == expected
    assert used, "the read did not take the position-delete path"
    if path == "bitmap":
        plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
        if in_scan:       # one scan, no filter, join or union: the format drops the rows
            import re

            assert "Join" not in plan and "Union" not in plan and not re.search(r"(^|[-)] )Filter ", plan, re.M), plan
            assert plan.count("FileScan icefloe-parquet") == 1 and "Batched: true" in plan, plan
        elif broadcast:   # the join probes only the files with deletes; the others are read plainly
            assert "Join" in plan and "Union" in plan, plan
        else:             # files with and without deletes in one scan, the bitmaps its filter's constants
            assert "Join" not in plan and "Union" not in plan and plan.count("FileScan") == 1, plan
    assert sorted(r.id for r in t.to_spark().where("p = 1").select("id").collect()) == \
        [i for i in expected if i % 3 == 1 or i >= 300]
    assert _pyiceberg_ids(catalog, "db.mor") == expected


def test_a_delete_file_kept_from_a_data_file_of_its_partition_is_detected():
    class D:
        def __init__(self, path, part, target=None):
            self.file_path, self.spec_id, self.partition, self.referenced_data_file = path, 0, part, target

    class T:
        def __init__(self, path, deletes, part):
            self.path, self.deletes, self.partition_key = path, deletes, (0, part)

    d1, d2 = D("d1", (1,)), D("d2", (2,))
    assert not ir._unattached_pairs([T("a", [d1], (1,)), T("b", [d1], (1,)), T("c", [d2], (2,))], [d1, d2])
    assert ir._unattached_pairs([T("a", [d1], (1,)), T("b", [], (1,))], [d1])
    assert ir._unattached_pairs([T("a", [d1], (1,)), T("b", [], (1,)), T("c", [], (2,))], [d1, d2]) == {"d1": {"b"}, "d2": {"c"}}
    # a delete file scoped to one data file (a deletion vector, or a position delete file naming one
    # file) names no other file of its partition: it is unattached only to its own file, if at all
    d3 = D("d3", (1,), target="a")
    assert ir._unattached_pairs([T("a", [d3], (1,)), T("b", [], (1,))], [d3]) == {}
    assert ir._unattached_pairs([T("a", [], (1,)), T("b", [], (1,))], [d3]) == {"d3": {"a"}}
