"""Apache Iceberg's Java runtime (1.10, Spark 3.5) through icefloe's catalogs, both ways.

* ``RESTCatalog`` against ``icefloe serve``: the runtime's own catalog (``type=rest``) end to end, its
  request and response models, JSON, error handling and its own transport (Apache HttpClient 5, shaded
  in the runtime jar as published).
* ``RESTCatalog`` with OAuth2 (``credential``) against ``icefloe serve --auth``: the runtime fetches its
  token from the server's token endpoint, creates, writes and reads; a read-only principal's write
  is refused (403) and changes nothing.
* ``JdbcCatalog`` on the PostgreSQL database icefloe's SQL catalog uses: the same two tables, each
  side listing, loading, reading and committing to the other's tables (the driver comes from the
  system's package archive).
"""
from __future__ import annotations

import os
import sys
from urllib.parse import parse_qs, urlparse

import pyarrow as pa
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.jvm_runtime import JvmRuntime, JvmRuntimeError, postgres_jdbc_jar  # noqa: E402

import icefloe  # noqa: E402
from icefloe.rest.auth import Authenticator, hash_secret, load_auth  # noqa: E402

from tests.interop_util import served  # noqa: E402


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory, postgres_url):
    """(icefloe's catalog behind the REST server, icefloe's PostgreSQL catalog, the runtime, icefloe's
    catalog behind an authenticating REST server, the requests both servers received)."""
    base = tmp_path_factory.mktemp("jvm-catalogs")
    rest_side = icefloe.Catalog(str(base / "rest-wh"), type="sql", uri=f"sqlite:///{base / 'rest.db'}")
    pg_side = icefloe.Catalog(str(base / "pg-wh"), type="sql", uri=postgres_url, name="pg")
    secured_side = icefloe.Catalog(str(base / "secured-wh"), type="sql", uri=f"sqlite:///{base / 'secured.db'}")
    (base / "auth.yaml").write_text(
        f"principals:\n  etl: {{secret: '{hash_secret('etl-secret')}', grants: {{'*': [read, write, create, drop]}}}}\n"
        f"  analyst: {{secret: '{hash_secret('analyst-secret')}', grants: {{'*': [read]}}}}\n")
    auth = Authenticator(load_auth(str(base / "auth.yaml")))
    query = parse_qs(urlparse(postgres_url).query)
    jdbc = f"jdbc:postgresql://127.0.0.1:{query['port'][0]}/postgres"
    seen: list = []
    with served(rest_side, seen=seen) as uri, served(secured_side, auth=auth, seen=seen) as secured_uri:
        conf = {
            "spark.sql.catalog.rest": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.rest.type": "rest",
            "spark.sql.catalog.rest.uri": uri,
            "spark.sql.catalog.rest.cache-enabled": "false",
            # Iceberg's OAuth2 client credentials against the server's /v1/oauth/tokens
            **{f"spark.sql.catalog.{name}{k}": v for name, credential in (("etl", "etl:etl-secret"),
                                                                          ("analyst", "analyst:analyst-secret"))
               for k, v in (("", "org.apache.iceberg.spark.SparkCatalog"),
                            (".type", "rest"), (".uri", secured_uri),
                            (".credential", credential), (".cache-enabled", "false"))},
            "spark.sql.catalog.pg": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.pg.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            "spark.sql.catalog.pg.uri": jdbc,
            "spark.sql.catalog.pg.jdbc.user": "postgres",
            "spark.sql.catalog.pg.warehouse": f"file://{base / 'pg-wh'}",
            "spark.sql.catalog.pg.cache-enabled": "false",
            # JDBC drivers register with DriverManager only from the JVM's own class path
            "spark.driver.extraClassPath": str(postgres_jdbc_jar()),
        }
        with JvmRuntime(base / "jvm-wh", conf=conf) as jvm:
            yield rest_side, pg_side, jvm, secured_side, seen


def _ids(jvm, table: str) -> list:
    return [tuple(r) for r in jvm.sql(f"SELECT id, s FROM {table} ORDER BY id")]


def _ours(t) -> list:
    return sorted((r["id"], r["s"]) for r in t.refresh().to_arrow().to_pylist())


def _rows(ids, s):
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [s] * len(ids)})


def test_the_java_rest_catalog_through_icefloe_serve(catalogs, spark):
    cat, _, jvm, _, requests = catalogs
    jvm.sql("CREATE NAMESPACE rest.db")
    assert ["db"] in jvm.sql("SHOW NAMESPACES IN rest")
    jvm.sql("CREATE TABLE rest.db.t (id bigint, s string) USING iceberg PARTITIONED BY (bucket(4, id))")
    jvm.sql("INSERT INTO rest.db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    t = cat.load_table("db.t")                                  # icefloe reads the runtime's commit
    assert _ours(t) == [(1, "a"), (2, "b"), (3, "c")]
    assert [f.name for f in t.spec.fields] == ["id_bucket"]
    t.append(_rows([4, 5], "d"))                                # and commits on top of it
    t.delete("id = 2")
    assert _ids(jvm, "rest.db.t") == [(1, "a"), (3, "c"), (4, "d"), (5, "d")]
    jvm.sql("ALTER TABLE rest.db.t SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    jvm.sql("DELETE FROM rest.db.t WHERE id = 3")                # the runtime's position deletes
    jvm.sql("ALTER TABLE rest.db.t ADD COLUMN x double")
    jvm.sql("UPDATE rest.db.t SET x = 1.5 WHERE id = 4")
    t.refresh()
    assert [f.name for f in t.schema.fields] == ["id", "s", "x"]
    got = sorted((r["id"], r["x"]) for r in t.to_arrow().to_pylist())
    assert got == [(1, None), (4, 1.5), (5, None)]
    assert len(t.snapshots()) == 5     # insert, append, delete (icefloe), DELETE, UPDATE (runtime)
    assert [tuple(r) for r in jvm.sql("SELECT count(*) FROM rest.db.t.snapshots")] == [(5,)]
    # Errors come back through the runtime's own handlers: a missing table, a duplicate create
    with pytest.raises(JvmRuntimeError, match="(?i)not found|cannot be found"):
        jvm.sql("SELECT * FROM rest.db.missing")
    with pytest.raises(JvmRuntimeError, match="(?i)already exists"):
        jvm.sql("CREATE TABLE rest.db.t (id bigint) USING iceberg")
    jvm.sql("DROP TABLE rest.db.t")
    assert not cat.table_exists("db.t")
    # Every request came over the runtime's own transport: Iceberg's HTTPClient on HttpClient 5
    agents = {h.get("user-agent", "").split(" ")[0] for _, _, h in requests}
    versions = {h.get("x-client-version") for _, _, h in requests}
    assert len(requests) > 10 and all(a.startswith("Apache-HttpClient/5.") for a in agents), agents
    assert all(v and jvm.version in v for v in versions), versions       # Iceberg's X-Client-Version


def test_the_java_jdbc_catalog_shares_icefloe_sql_catalog(catalogs):
    _, cat, jvm, _, _ = catalogs
    cat.create_namespace("db")
    ours = cat.create_table("db.ours", "id bigint, s string")
    ours.append(_rows([1, 2], "a"))
    assert ["db", "ours", False] in jvm.sql("SHOW TABLES IN pg.db")
    assert _ids(jvm, "pg.db.ours") == [(1, "a"), (2, "a")]
    jvm.sql("INSERT INTO pg.db.ours VALUES (3, 'j')")            # the runtime's compare-and-swap commit
    assert _ours(ours) == [(1, "a"), (2, "a"), (3, "j")]
    assert len(ours.snapshots()) == 2
    jvm.sql("CREATE TABLE pg.db.theirs (id bigint, s string) USING iceberg")
    jvm.sql("INSERT INTO pg.db.theirs VALUES (10, 'j')")
    assert sorted(cat.list_tables("db")) == ["db.ours", "db.theirs"]
    theirs = cat.load_table("db.theirs")
    assert _ours(theirs) == [(10, "j")]
    theirs.append(_rows([11], "i"))
    assert _ids(jvm, "pg.db.theirs") == [(10, "j"), (11, "i")]
    cat.drop_table("db.theirs")
    assert ["db", "theirs", False] not in jvm.sql("SHOW TABLES IN pg.db")


def test_the_java_rest_catalog_with_oauth2_credentials(catalogs):
    _, _, jvm, cat, requests = catalogs
    jvm.sql("CREATE NAMESPACE etl.db")
    jvm.sql("CREATE TABLE etl.db.t (id bigint, s string) USING iceberg")
    jvm.sql("INSERT INTO etl.db.t VALUES (1, 'a'), (2, 'b')")
    t = cat.load_table("db.t")
    assert _ours(t) == [(1, "a"), (2, "b")]
    t.append(_rows([3], "c"))
    assert _ids(jvm, "analyst.db.t") == [(1, "a"), (2, "b"), (3, "c")]      # read-only: reads
    before = t.refresh().metadata_location
    with pytest.raises(JvmRuntimeError, match="(?i)ForbiddenException.*lacks the write grant"):
        jvm.sql("INSERT INTO analyst.db.t VALUES (9, 'x')")
    with pytest.raises(JvmRuntimeError, match="(?i)ForbiddenException.*lacks the drop grant"):
        jvm.sql("DROP TABLE analyst.db.t")
    # The runtime's OAuth2 client asked the token endpoint, then sent the bearer token it got
    token_posts = [h for m, p, h in requests if m == "POST" and p == "/v1/oauth/tokens"]
    assert token_posts and all(h.get("content-type", "").startswith("application/x-www-form-urlencoded")
                               for h in token_posts)
    assert any(h.get("authorization", "").startswith("Bearer ") for _, p, h in requests if p != "/v1/oauth/tokens")
    assert cat.load_table("db.t").metadata_location == before and _ours(t) == [(1, "a"), (2, "b"), (3, "c")]
