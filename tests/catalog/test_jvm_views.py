"""Iceberg views between icefloe and Apache Iceberg's Java runtime (1.10, Spark 3.5, its view
support in IcebergSparkSessionExtensions), both ways, through ``icefloe serve`` (the runtime's
``RESTCatalog``) and through the JDBC catalog's database (the runtime's ``JdbcCatalog``, schema V1,
on the PostgreSQL database icefloe's SQL catalog uses). Views record no default catalog, so each
engine reads them in the catalog that holds them, whatever it calls it."""
from __future__ import annotations

import os
import sys
from urllib.parse import parse_qs, urlparse

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.jvm_runtime import JvmRuntime, postgres_jdbc_jar  # noqa: E402

import icefloe  # noqa: E402

from tests.interop_util import served  # noqa: E402

pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def sides(tmp_path_factory, postgres_url, spark):
    base = tmp_path_factory.mktemp("jvm-views")
    rest_side = icefloe.Catalog(str(base / "rest-wh"), type="sql", uri=f"sqlite:///{base / 'rest.db'}", spark=spark)
    pg_side = icefloe.Catalog(str(base / "pg-wh"), type="sql", uri=postgres_url, name="pg", spark=spark)
    query = parse_qs(urlparse(postgres_url).query)
    with served(rest_side) as uri:
        conf = {
            "spark.sql.catalog.rest": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.rest.type": "rest",
            "spark.sql.catalog.rest.uri": uri,
            "spark.sql.catalog.rest.cache-enabled": "false",
            "spark.sql.catalog.pg": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.pg.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            "spark.sql.catalog.pg.uri": f"jdbc:postgresql://127.0.0.1:{query['port'][0]}/postgres",
            "spark.sql.catalog.pg.jdbc.user": "postgres",
            "spark.sql.catalog.pg.jdbc.schema-version": "V1",
            "spark.sql.catalog.pg.warehouse": f"file://{base / 'pg-wh'}",
            "spark.sql.catalog.pg.cache-enabled": "false",
            "spark.driver.extraClassPath": str(postgres_jdbc_jar()),
        }
        with JvmRuntime(base / "jvm-wh", conf=conf) as jvm:
            yield rest_side, pg_side, jvm


def test_views_both_ways_through_icefloe_serve(sides):
    cat, _, jvm = sides
    cat.create_namespace("db")
    cat.sql("CREATE TABLE db.t (id bigint, data string) USING iceberg")
    cat.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    cat.sql("CREATE VIEW db.v (ident COMMENT 'the id', d) AS SELECT id, data FROM db.t WHERE id > 1")
    # the runtime expands icefloe's view (its SQL, default catalog and namespace, column aliases)
    assert [tuple(r) for r in jvm.sql("SELECT * FROM rest.db.v ORDER BY ident")] == [(2, "b"), (3, "c")]
    assert ["db", "v", False] in [list(r) for r in jvm.sql("SHOW VIEWS IN rest.db")]
    # the runtime's view, read by icefloe
    jvm.sql("USE rest.db")
    jvm.sql("CREATE VIEW jv COMMENT 'from java' AS SELECT count(*) AS n FROM t")
    meta = cat.load_view("db.jv").metadata
    # made in the runtime's current catalog: no default-catalog (the view's own), namespace db
    assert meta.current_version.default_catalog is None and meta.current_version.default_namespace == ("db",)
    assert meta.properties.get("comment") == "from java"
    assert cat.sql("SELECT n FROM db.jv").first()[0] == 3
    jvm.sql("CREATE OR REPLACE VIEW jv AS SELECT max(ident) AS m FROM v")    # a view over icefloe's view
    assert cat.sql("SELECT * FROM db.jv").first()[0] == 3
    assert [v.version_id for v in cat.load_view("db.jv").metadata.versions] == [1, 2]
    # icefloe replaces the runtime's view; the runtime reads the new version
    cat.sql("CREATE OR REPLACE VIEW db.jv AS SELECT min(id) AS m FROM db.t")
    assert [tuple(r) for r in jvm.sql("SELECT * FROM rest.db.jv")] == [(1,)]
    jvm.sql("DROP VIEW rest.db.jv")
    assert not cat.view_exists("db.jv")


def test_views_both_ways_through_the_jdbc_catalog(sides):
    _, cat, jvm = sides
    cat.create_namespace("db")
    cat.sql("CREATE TABLE db.t (id bigint, data string) USING iceberg", catalog_name="pg")
    cat.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')", catalog_name="pg")
    cat.sql("CREATE VIEW db.v AS SELECT id * 10 AS x FROM db.t", catalog_name="pg")
    assert sorted(r[0] for r in jvm.sql("SELECT x FROM pg.db.v")) == [10, 20]
    jvm.sql("USE pg.db")
    jvm.sql("CREATE VIEW jv AS SELECT data FROM t WHERE id = 2")
    assert cat.view_exists("db.jv") and sorted(cat.list_views("db")) == ["db.jv", "db.v"]
    assert cat.load_view("db.jv").metadata_location.endswith(".gz.metadata.json")     # Java compresses views
    assert [tuple(r) for r in cat.sql("SELECT * FROM db.jv", catalog_name="pg").collect()] == [("b",)]
    jvm.sql("ALTER VIEW jv SET TBLPROPERTIES ('k' = 'v')")
    assert cat.load_view("db.jv").metadata.properties["k"] == "v"
    cat.sql("DROP VIEW db.jv", catalog_name="pg")
    assert ["db", "jv", False] not in [list(r) for r in jvm.sql("SHOW VIEWS IN pg.db")]
