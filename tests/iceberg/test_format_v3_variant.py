"""Format v3's ``variant``: stored as Parquet's VARIANT group (``metadata`` and ``value``, annotated,
with the column's field id) by both writers, read by Spark as its ``variant`` and by Arrow as the two
byte strings, kept through row-level changes in both modes and compaction; DuckDB reads icefloe's
values; icefloe reads and appends to a table Iceberg's Java runtime wrote through its own API (its
Spark 3.5 integration has no variant type, and in this environment its core cannot read variant data:
its reader needs a newer commons-lang3 than Spark 3.5 ships, so the runtime is checked on metadata)."""
from __future__ import annotations

import glob
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from icefloe.errors import SchemaError, UnknownTransformError, UnsupportedFeatureError  # noqa: E402
from tests.interop_util import JVM_LOAD_TABLE, iceberg_referees, duckdb_connection  # noqa: E402

V3 = {"format-version": "3"}
MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}
DOCS = {i: {"a": i, "tags": ["x", str(i)], "nested": {"ok": i % 2 == 0}} for i in range(6)}


@pytest.fixture(scope="module", params=iceberg_referees())
def jvm(request, tmp_path_factory, iceberg_runtime):
    return iceberg_runtime(request.param, tmp_path_factory.mktemp("jvm-variant"))


def _source(spark, ids):
    """Rows of ``ids`` with a variant parsed by Spark from each one's JSON document."""
    values = ", ".join(f"({i}L, '{json.dumps(DOCS[i])}')" for i in ids)
    return spark.sql(f"SELECT id, parse_json(doc) AS v, CAST(id AS STRING) AS s FROM VALUES {values} AS t(id, doc)")


def _json(t, where=None):
    df = t.refresh().to_spark(where=where) if where else t.refresh().to_spark()
    return {r.id: (json.loads(r.j) if r.j is not None else None, r.s) for r in df.selectExpr("id", "to_json(v) AS j", "s").collect()}


def _files(t):
    return sorted(glob.glob(os.path.join(t.location, "data", "**", "*.parquet"), recursive=True))


def test_variant_needs_v3_and_has_no_default(catalog):
    with pytest.raises(SchemaError, match="variant need format version 3"):
        catalog.create_table("db.v2", "id bigint not null, v variant")
    t = catalog.create_table("db.ok", "id bigint not null, v variant", properties=V3)
    assert str(t.schema.find_field("v").field_type) == "variant"
    with pytest.raises(UnknownTransformError, match="type variant"):
        catalog.create_table("db.p", "id bigint not null, v variant", partitioned_by=["v"], properties=V3)


def test_both_writers_store_the_annotated_group_and_both_reads_give_the_values(catalog, spark):
    t = catalog.create_table("db.v", "id bigint not null, v variant, s string", properties=V3)
    t.append(_source(spark, [0, 1, 2]))                                   # Spark's writer
    raw = _source(spark, [3, 4]).selectExpr("id", "v", "s").collect()
    t.append(pa.table({"id": pa.array([r.id for r in raw] + [5], pa.int64()),   # Arrow's writer, one null
                       "v": pa.array([{"metadata": bytes(r.v.metadata), "value": bytes(r.v.value)} for r in raw]
                                     + [None], pa.struct([("metadata", pa.binary()), ("value", pa.binary())])),
                       "s": ["3", "4", None]}))
    expected = {i: (DOCS[i], str(i)) for i in range(5)}
    expected[5] = (None, None)
    assert _json(t) == expected
    # every file holds one group for column 2, annotated VARIANT, with the column's field id
    files = _files(t)
    assert len(files) >= 2
    for f in files:
        schema = pq.ParquetFile(f).schema
        group = schema.to_arrow_schema().field("v")
        assert group.metadata[b"PARQUET:field_id"] == b"2"
        assert "Variant" in str(schema), f"{f} lacks the VARIANT annotation:\n{schema}"
        assert sorted(group.type.field(i).name for i in range(group.type.num_fields)) == ["metadata", "value"]
    # metrics: value and null counts for the column, never bounds
    data_files = t.plan_files()
    assert sum(df.value_counts[2] for df in data_files) == 6
    assert sum(df.null_value_counts[2] for df in data_files) == 1
    assert all(2 not in df.lower_bounds and 2 not in df.upper_bounds for df in data_files)
    # Arrow reads the two byte strings, the same Spark's variant holds
    arrow = {r["id"]: r["v"] for r in t.to_arrow().to_pylist()}
    by_spark = {r.id: r.v for r in t.to_spark().collect()}
    assert arrow[5] is None and by_spark[5] is None
    for i in range(5):
        assert arrow[i] == {"metadata": bytes(by_spark[i].metadata), "value": bytes(by_spark[i].value)}
    # Spark's variant functions work on the column, filters included
    assert sorted(r.id for r in t.to_spark(where="variant_get(v, '$.a', 'int') >= 3").collect()) == [3, 4]
    # DuckDB's Iceberg reader gives the same documents
    con = duckdb_connection()
    rows = con.execute(f"SELECT id, CAST(v AS JSON) FROM iceberg_scan('{t.metadata_location}')").fetchall()
    assert {i: (json.loads(j) if j is not None else None) for i, j in rows} == {i: e[0] for i, e in expected.items()}


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_changes_and_compaction_keep_the_values(catalog, spark, mode):
    props = dict(V3, **(MOR if mode == "merge-on-read" else {}))
    t = catalog.create_table("db.rl", "id bigint not null, v variant, s string", properties=props)
    t.append(_source(spark, range(6)))
    catalog.sql("DELETE FROM db.rl WHERE variant_get(v, '$.a', 'int') = 1")
    catalog.sql("UPDATE db.rl SET s = 'u' WHERE id = 2")
    catalog.sql("UPDATE db.rl SET v = parse_json('{\"q\": [1, 2]}') WHERE id = 3")
    catalog.sql("MERGE INTO db.rl t USING (SELECT 4L AS id, parse_json('{\"z\": true}') AS v, 'm' AS s "
                "UNION ALL SELECT 9L, parse_json('\"text\"'), 'n') src ON t.id = src.id "
                "WHEN MATCHED THEN UPDATE SET v = src.v, s = src.s WHEN NOT MATCHED THEN INSERT *")
    expected = {0: (DOCS[0], "0"), 2: (DOCS[2], "u"), 3: ({"q": [1, 2]}, "3"), 4: ({"z": True}, "m"),
                5: (DOCS[5], "5"), 9: ("text", "n")}
    assert _json(t) == expected
    for f in _files(t):
        assert "Variant" in str(pq.ParquetFile(f).schema), f"{f} lacks the VARIANT annotation"
    arrow = {r["id"] for r in t.to_arrow().to_pylist()}
    assert arrow == set(expected)
    t.refresh().compact()
    assert _json(t) == expected
    live = [f.file_path for f in t.refresh().plan_files()]
    assert all("Variant" in str(pq.ParquetFile(p.removeprefix("file:")).schema) for p in live)


def test_a_shredded_variant_is_read_by_spark_and_refused_by_the_arrow_read(catalog, spark):
    t = catalog.create_table("db.sh", "id bigint not null, v variant, s string", properties=V3)
    key = "spark.sql.variant.writeShredding.enabled"
    spark.conf.set(key, "true")
    try:
        t.append(_source(spark, [0, 1]))
    finally:
        spark.conf.set(key, "false")
    assert any("typed_value" in str(pq.ParquetFile(f).schema) for f in _files(t))
    assert _json(t) == {i: (DOCS[i], str(i)) for i in (0, 1)}
    with pytest.raises(UnsupportedFeatureError, match="shredded"):
        t.to_arrow()


JVM_META = JVM_LOAD_TABLE + """
files = []
it = t.newScan().includeColumnStats().planFiles().iterator()
while it.hasNext():
    files.append(it.next().file())
result = [str(t.schema().findType(2)), t.operations().current().formatVersion(),
          sum(f.recordCount() for f in files), sum(f.valueCounts().get(2) for f in files),
          sum(f.nullValueCounts().get(2) for f in files)]
"""

JVM_WRITE = """
jvm = spark._jvm
T = jvm.org.apache.iceberg.types.Types
schema = jvm.org.apache.iceberg.Schema([T.NestedField.required(1, "id", T.IntegerType.get()),
                                        T.NestedField.optional(2, "v", T.VariantType.get())])
props = jvm.java.util.HashMap()
props.put("format-version", "3")
t = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).create(
    schema, jvm.org.apache.iceberg.PartitionSpec.unpartitioned(), props, location)
V = jvm.org.apache.iceberg.variants.Variants
out = t.io().newOutputFile(location + "/data/written-by-java.parquet")
D = jvm.org.apache.iceberg.data
old_api = jvm.org.apache.iceberg.IcebergBuild.version().startswith("1.10.")
if old_api:
    appender = D.GenericAppenderFactory(t.schema()).newAppender(out, jvm.org.apache.iceberg.FileFormat.PARQUET)
else:   # 1.12 dropped GenericAppenderFactory for the generic writer factory (its builder public there)
    writers = getattr(D, "GenericFileWriterFactory$Builder")(t) \\
        .dataFileFormat(jvm.org.apache.iceberg.FileFormat.PARQUET).build()
    appender = writers.newDataWriter(jvm.org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(out),
                                     t.spec(), None)
for i in range(3):
    rec = D.GenericRecord.create(t.schema())
    rec.setField("id", i)
    md = V.metadata(["a", "name"])
    obj = V.object(md)
    obj.put("a", V.of(i * 10))
    obj.put("name", V.of("n" + str(i)))
    rec.setField("v", jvm.org.apache.iceberg.variants.Variant.of(md, obj))
    (appender.add if old_api else appender.write)(rec)
appender.close()
if not old_api:
    data_file = appender.toDataFile()
else:
    data_file = jvm.org.apache.iceberg.DataFiles.builder(t.spec()).withInputFile(out.toInputFile()) \\
        .withMetrics(appender.metrics()).withFormat("PARQUET").build()
t.newAppend().appendFile(data_file).commit()
result = 'ok'
"""


def test_the_java_runtime_reads_the_metadata_of_icefloes_variant_table(catalog, spark, jvm):
    t = catalog.create_table("db.vj", "id bigint not null, v variant, s string", properties=V3)
    t.append(_source(spark, [0, 1, 2]))
    t.append(spark.sql("SELECT 7L AS id, CAST(NULL AS VARIANT) AS v, 'x' AS s"))
    assert jvm.run(JVM_META, location=t.location) == ["variant", 3, 4, 4, 1]


def test_icefloe_reads_and_appends_to_the_runtimes_variant_table(spark, jvm):
    import icefloe

    location = os.path.join(jvm.warehouse, "db", "variant")
    assert jvm.run(JVM_WRITE, location=location) == "ok"
    t = icefloe.load_table(location)
    assert str(t.metadata.schema.find_field("v").field_type) == "variant"
    got = {r.id: json.loads(r.j) for r in t.to_spark().selectExpr("id", "to_json(v) AS j").collect()}
    assert got == {i: {"a": i * 10, "name": f"n{i}"} for i in range(3)}
    assert {r["id"] for r in t.to_arrow().to_pylist()} == {0, 1, 2}
    t.append(spark.sql("SELECT 7 AS id, parse_json('{\"a\": 70}') AS v"))
    got = {r.id: json.loads(r.j) for r in t.refresh().to_spark().selectExpr("id", "to_json(v) AS j").collect()}
    assert got[7] == {"a": 70} and len(got) == 4
    assert jvm.run(JVM_META, location=location) == ["variant", 3, 4, 4, 0]
