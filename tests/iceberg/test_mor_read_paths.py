"""Merge-on-read reads take one of three paths: files without deletes are read plainly,
files with only position deletes are matched on Spark's own file path (with or without
narrowing each delete file to the data files it is attached to), anything else goes
through the general anti joins. Every path gives the rows pyiceberg gives."""
import pytest
import icefloe.spark.iceberg_read as ir


def _pyiceberg_ids(catalog, name):
    from pyiceberg.table import StaticTable

    t = StaticTable.from_metadata(catalog.load_table(name).metadata_location)
    return sorted(t.scan().to_arrow().column("id").to_pylist())


@pytest.mark.parametrize("narrowed", [True, False], ids=["whole-partition", "attached-only"])
def test_position_delete_read_paths_agree_with_pyiceberg(catalog, spark, monkeypatch, narrowed):
    if not narrowed:                      # force the small-side join with the attachments
        monkeypatch.setattr(ir, "_attached_to_their_partition", lambda tasks, deletes: False)
    used = []
    real = ir._read_minus_position_deletes
    monkeypatch.setattr(ir, "_read_minus_position_deletes", lambda *a, **kw: used.append(1) or real(*a, **kw))
    t = catalog.create_table("db.mor", "id bigint not null, p int, s string", partitioned_by=["p"],
                             properties={"write.delete.mode": "merge-on-read"})
    t.append(spark.range(300).selectExpr("id", "cast(id % 3 as int) as p", "cast(id as string) as s"))
    t.append(spark.range(300, 330).selectExpr("id", "1 as p", "'late' as s"))
    t.delete("p = 1 and id % 7 = 0")                       # partitions 0 and 2 stay without deletes
    t.delete("p = 1 and id % 11 = 0")                      # a second delete file in that partition
    expected = [i for i in range(330) if not ((i % 3 == 1 or i >= 300) and (i % 7 == 0 or i % 11 == 0))]
    assert sorted(r.id for r in t.to_spark().select("id").collect()) == expected
    assert used, "the read did not take the position-delete path"
    assert sorted(r.id for r in t.to_spark().where("p = 1").select("id").collect()) == \
        [i for i in expected if i % 3 == 1 or i >= 300]
    assert _pyiceberg_ids(catalog, "db.mor") == expected


def test_a_delete_file_kept_from_a_data_file_of_its_partition_is_detected():
    class D:
        def __init__(self, path, part):
            self.file_path, self.spec_id, self.partition = path, 0, part

    class T:
        def __init__(self, deletes, part):
            self.deletes, self.partition_key = deletes, (0, part)

    d1, d2 = D("d1", (1,)), D("d2", (2,))
    assert ir._attached_to_their_partition([T([d1], (1,)), T([d1], (1,)), T([d2], (2,))], [d1, d2])
    assert not ir._attached_to_their_partition([T([d1], (1,)), T([], (1,))], [d1])
