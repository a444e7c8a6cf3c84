"""Column defaults written by icefloe's SQL DDL (``DEFAULT`` in CREATE TABLE, ADD COLUMN, ALTER
COLUMN SET DEFAULT) as Apache Iceberg's newest pinned Java runtime (the format v3 referee) reads them."""
import pytest

from tests.interop_util import JVM_LOAD_TABLE
from tools.jvm_runtime import newest_iceberg_version

pytestmark = pytest.mark.long


def test_java_reads_the_defaults_written_in_sql(catalog, tmp_path_factory, iceberg_runtime):
    """Apache Iceberg's newest pinned runtime (the v3 referee) reads the schema's defaults icefloe's
    DDL wrote: the initial default fills the rows written before the column, the write default is
    the one of the last SET DEFAULT."""
    run = catalog.sql
    run("CREATE TABLE db.j (id bigint, s string DEFAULT 'x') USING iceberg TBLPROPERTIES ('format-version'='3')")
    run("INSERT INTO db.j (id) VALUES (1)")
    run("ALTER TABLE db.j ADD COLUMN d int DEFAULT 9")
    run("ALTER TABLE db.j ALTER COLUMN s SET DEFAULT 'z'")
    run("ALTER TABLE db.j ALTER COLUMN d SET DEFAULT 10")
    location = catalog.load_table("db.j").location
    jvm = iceberg_runtime(newest_iceberg_version(), tmp_path_factory.mktemp("jvm-defaults"))
    rows = jvm.run("result = rows(spark.read.format('iceberg').load(location).selectExpr('id', 's', 'd'))",
                   location=location)
    assert sorted(tuple(r) for r in rows) == [(1, "x", 9)]
    got = jvm.run(JVM_LOAD_TABLE + """
s, d = t.schema().findField('s'), t.schema().findField('d')
result = [str(s.initialDefault()), str(s.writeDefault()), str(d.initialDefault()), str(d.writeDefault())]
""", location=location)
    assert list(got) == ["None", "z", "9", "10"]
