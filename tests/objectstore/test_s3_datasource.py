"""The ``icefloe`` data source with tables on an S3 server: the storage settings given as options
(``s3.endpoint``, ...) or as a catalog's (``catalog.s3.endpoint``); writes from Spark tasks,
reads by Spark tasks, both formats, read back by the independent readers."""
import pyarrow as pa

import icefloe


def _ids(df):
    return sorted(r.id for r in df.select("id").collect())


def test_data_source_reads_and_writes_tables_on_s3(spark, s3_server, s3_warehouse):
    props = s3_server.properties
    df = spark.range(0, 50).selectExpr("id", "cast(id as string) as v").repartition(3)
    ice = f"{s3_warehouse}/db/t"
    df.write.format("icefloe").options(**props).mode("append").save(ice)
    df.where("id < 5").write.format("icefloe").options(**props).mode("append").save(ice)
    read = spark.read.format("icefloe").options(**props).load(ice)
    assert _ids(read) == sorted(list(range(50)) + list(range(5)))
    assert _ids(read.where("id >= 45")) == list(range(45, 50))
    from pyiceberg.table import StaticTable

    t = icefloe.Catalog(s3_warehouse, **props).load_table("db.t")
    assert sorted(StaticTable.from_metadata(t.metadata_location, properties=props).scan().to_arrow()
                  .column("id").to_pylist()) == _ids(read)

    pai = f"{s3_warehouse}/db.db/p"
    df.write.format("icefloe").options(**props).option("format", "paimon").mode("append").save(pai)
    assert _ids(spark.read.format("icefloe").options(**props).load(pai)) == list(range(50))
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    pt = CatalogFactory.create({"warehouse": s3_warehouse, **s3_server.paimon_options}).get_table("db.p")
    rb = pt.new_read_builder()
    assert sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist()) == list(range(50))

    by_catalog = {"catalog.warehouse": s3_warehouse, **{f"catalog.{k}": v for k, v in props.items()}}
    spark.range(100, 103).selectExpr("id", "cast(id as string) as v").write.format("icefloe") \
        .options(**by_catalog).mode("append").save("db.t")
    assert _ids(spark.read.format("icefloe").options(**by_catalog).load("db.t")) == \
        sorted(list(range(50)) + list(range(5)) + [100, 101, 102])
    assert icefloe.Catalog(s3_warehouse, **props).load_table("db.t").to_arrow().num_rows == 58
    assert isinstance(t.to_arrow(), pa.Table)
