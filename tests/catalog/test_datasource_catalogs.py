"""The data source takes a table of any catalog by name: ``option("catalog", <configured name>)``
or the catalog's settings as ``catalog.<key>`` options, then ``.load("db.t")`` / ``.save("db.t")``;
the table is resolved through its catalog (SQL, REST or Hadoop) and committed through it, tasks
read and write against the metadata that was resolved. (Spark runs the data source in its Python
workers, which see the configuration the JVM started with; the options reach them always.)"""
import pyarrow as pa
import pytest

import icefloe


@pytest.fixture
def catalogs(tmp_path):
    return {"shared": {"catalog.warehouse": str(tmp_path / "wh"), "catalog.type": "sql",
                       "catalog.uri": f"sqlite:///{tmp_path / 'c.db'}"},
            "files": {"catalog.warehouse": str(tmp_path / "hwh")}}


def _catalog(opts, spark):
    return icefloe.Catalog(opts["catalog.warehouse"], type=opts.get("catalog.type"), uri=opts.get("catalog.uri"),
                           spark=spark)


@pytest.mark.parametrize("name", ["shared", "files"])
def test_read_and_write_a_catalog_table_by_name(catalogs, spark, name):
    opts = catalogs[name]
    cat = _catalog(opts, spark)
    t = cat.create_table("db.t", "id bigint not null, s string", partitioned_by=["s"])
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}))
    df = spark.read.format("icefloe").options(**opts).load("db.t")
    assert sorted(r.id for r in df.collect()) == [1, 2]
    assert [r.id for r in df.where("s = 'b'").collect()] == [2]
    (spark.createDataFrame([(3, "c"), (4, "a")], "id bigint, s string")
     .write.format("icefloe").options(**opts).mode("append").save("db.t"))
    t = cat.load_table("db.t")
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == [1, 2, 3, 4] and len(t.snapshots()) == 2
    if name == "shared":                  # the commit went through the catalog row, not a version hint
        assert t.metadata_location.split("/")[-1].startswith("00003-")
    (spark.createDataFrame([(9, "z")], "id bigint, s string")
     .write.format("icefloe").options(**opts).mode("overwrite").save("db.t"))
    assert [r.id for r in spark.read.format("icefloe").options(**opts).load("db.t").collect()] == [9]


def test_a_missing_catalog_table_is_named(catalogs, spark):
    _catalog(catalogs["shared"], spark).create_namespace("db")
    with pytest.raises(Exception, match="db.nope"):
        spark.read.format("icefloe").options(**catalogs["shared"]).load("db.nope").collect()
    with pytest.raises(Exception, match="has no warehouse"):
        spark.read.format("icefloe").option("catalog", "not-configured-anywhere").load("db.t").collect()


def test_a_catalog_write_without_a_table_name_says_so(tmp_path):
    from icefloe.errors import InvalidNameError
    from icefloe.spark.datasource import IcefloeWriter

    for kind in ("hadoop", "sql"):
        options = {"catalog.warehouse": str(tmp_path), "catalog.type": kind, "catalog.uri": f"sqlite:///{tmp_path}/c.db"}
        with pytest.raises(InvalidNameError, match=r"needs a table name: \.load\('<db>\.<table>'\)"):
            IcefloeWriter(options, None, False)
