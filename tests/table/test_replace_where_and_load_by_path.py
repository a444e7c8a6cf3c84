"""What a Delta Lake user reaches for: a table opened by its directory with the format detected
(``icefloe.load_table(path)``, like ``DeltaTable.forPath``), and ``overwrite(df, where=...)``
replacing the rows a condition selects (like ``replaceWhere``), in one snapshot, on both formats."""
import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import NoSuchTableError, NotSupportedError, SchemaMismatchError


def _rows(ids, day):
    return pa.table({"id": pa.array(ids, pa.int64()), "day": [day] * len(ids), "v": [f"v{i}" for i in ids]})


@pytest.fixture(params=["iceberg", "paimon"])
def table(request, tmp_path, spark):
    cat = icefloe.Catalog(str(tmp_path / "wh"), format=request.param, spark=spark)
    t = cat.create_table("db.t", "id bigint not null, day string, v string", partitioned_by=["day"])
    t.append(_rows([1, 2], "d1"))
    t.append(_rows([3, 4], "d2"))
    return t


def test_load_table_by_path_detects_the_format(table):
    loaded = icefloe.load_table(table.location)
    assert loaded.format == table.format and loaded.name == "db.t"
    assert sorted(r["id"] for r in loaded.to_arrow().to_pylist()) == [1, 2, 3, 4]
    with pytest.raises(NoSuchTableError, match="no Iceberg or Paimon table"):
        icefloe.load_table(os.path.dirname(table.location))


def test_overwrite_where_replaces_the_matching_rows(table, spark):
    before = len(table.snapshots())
    result = table.overwrite(_rows([3, 9], "d2"), where="day = 'd2' AND id >= 3")
    assert (result["deleted"], result["inserted"]) == (2, 2)
    assert len(table.snapshots()) == before + 1                # one snapshot
    assert sorted((r["id"], r["day"]) for r in table.to_arrow().to_pylist()) == \
        [(1, "d1"), (2, "d1"), (3, "d2"), (9, "d2")]
    # a condition cutting through a file: the other rows of the file stay
    df = spark.createDataFrame([(1, "d1", "new")], "id bigint, day string, v string")
    table.overwrite(df, where="id = 1")
    assert sorted((r["id"], r["v"]) for r in table.to_arrow().to_pylist()) == \
        [(1, "new"), (2, "v2"), (3, "v3"), (9, "v9")]


def test_overwrite_where_refuses_rows_outside_the_condition(table):
    before = len(table.snapshots())
    with pytest.raises(SchemaMismatchError, match="does not match it"):
        table.overwrite(_rows([5], "d3"), where="day = 'd2'")
    assert len(table.snapshots()) == before
    assert sorted(r["id"] for r in table.to_arrow().to_pylist()) == [1, 2, 3, 4]


def test_overwrite_where_on_a_primary_key_table_is_refused(tmp_path, spark):
    t = icefloe.Catalog(str(tmp_path / "p"), format="paimon", spark=spark).create_table(
        "db.k", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "1"})
    with pytest.raises(NotSupportedError, match="primary-key"):
        t.overwrite(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}), where="id = 1")
