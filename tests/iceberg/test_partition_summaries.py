"""``write.summary.partition-limit``: a commit changing at most that many partitions lists each one's
figures in its snapshot summary (``partitions.<path>``, ``partition-summaries-included``), as Apache
Iceberg's Java runtime writes them; more partitions, or the property unset, list none; a value that is no
count is refused naming the property, before anything is written."""
from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import IcefloeError


def _rows(ids, p) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([p(i) for i in ids], pa.string())})


def _partitions(summary: dict) -> dict:
    return {k: dict(kv.split("=") for kv in v.split(",")) for k, v in summary.items() if k.startswith("partitions.")}


def test_each_changed_partition_is_summarised_up_to_the_limit(tmp_path):
    t = icefloe.Catalog(str(tmp_path / "wh")).create_table(
        "db.t", "id bigint, p string", partitioned_by=["p"], properties={"write.summary.partition-limit": "3"})
    t.append(_rows(range(10), lambda i: "a b" if i < 4 else "c"))
    s = t.refresh().current_snapshot().summary
    assert s["partition-summaries-included"] == "true" and s["changed-partition-count"] == "2"
    parts = _partitions(s)
    assert set(parts) == {"partitions.p=a+b", "partitions.p=c"}          # the path escaped as Iceberg escapes it
    assert parts["partitions.p=a+b"]["added-data-files"] == "1" and parts["partitions.p=a+b"]["added-records"] == "4"
    assert parts["partitions.p=c"]["added-records"] == "6" and int(parts["partitions.p=c"]["added-files-size"]) > 0
    t.delete("p = 'c'")
    s = t.refresh().current_snapshot().summary
    assert _partitions(s)["partitions.p=c"] == {"deleted-data-files": "1", "deleted-records": "6",
                                                 "removed-files-size": s["removed-files-size"]}
    t.append(_rows(range(10, 15), str))        # five partitions, over the limit
    s = t.refresh().current_snapshot().summary
    assert not _partitions(s) and "partition-summaries-included" not in s and s["changed-partition-count"] == "5"


def test_unset_none_and_a_bad_value_refused(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint, p string", partitioned_by=["p"])
    t.append(_rows(range(3), str))
    assert not _partitions(t.refresh().current_snapshot().summary)
    t.update_properties(set={"write.summary.partition-limit": "many"})
    before = t.refresh().metadata_location
    with pytest.raises(IcefloeError, match="write.summary.partition-limit"):
        t.append(_rows(range(3, 6), str))
    assert t.refresh().metadata_location == before


@pytest.fixture(scope="module")
def jvm(tmp_path_factory, iceberg_runtime):
    return iceberg_runtime(None, tmp_path_factory.mktemp("jvm-summaries"))


def test_the_same_figures_as_the_java_runtime(jvm, catalog, spark):
    """The Java runtime and icefloe append the same rows to tables of the same properties: the same
    partition keys and, per partition, the same figures (sizes aside: the files differ)."""
    props = "'write.summary.partition-limit'='5', 'write.parquet.compression-codec'='zstd'"
    jvm.sql(f"CREATE TABLE jvm.db.sums (id bigint, p string) USING iceberg PARTITIONED BY (p) TBLPROPERTIES ({props})")
    jvm.sql("INSERT INTO jvm.db.sums SELECT id, CASE WHEN id < 4 THEN 'x y' ELSE 'z' END FROM range(0, 10)")
    theirs = icefloe.load_table(jvm.table_location("db.sums")).current_snapshot().summary
    t = catalog.create_table("db.sums", "id bigint, p string", partitioned_by=["p"],
                             properties={"write.summary.partition-limit": "5"})
    t.append(spark.createDataFrame([(i, "x y" if i < 4 else "z") for i in range(10)], "id bigint, p string")
             .coalesce(1))
    ours = t.refresh().current_snapshot().summary

    def shape(summary):
        return {k: {f: (v if "size" not in f else "size") for f, v in figures.items()}
                for k, figures in _partitions(summary).items()}

    assert shape(ours) == shape(theirs) and set(shape(ours)) == {"partitions.p=x+y", "partitions.p=z"}
    assert ours["partition-summaries-included"] == theirs["partition-summaries-included"] == "true"
