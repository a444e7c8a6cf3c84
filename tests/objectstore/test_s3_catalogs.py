"""The catalogs with their warehouse on an S3 server: the SQL catalog (pyiceberg's SqlCatalog on
the same database reads and commits icefloe's tables and icefloe pyiceberg's), and ``icefloe
serve`` (pyiceberg's RestCatalog, doing its own S3 I/O, creates, appends and reads through it)."""

import pyarrow as pa
import pytest

import icefloe
from icefloe.iceberg.sql_catalog import CatalogDatabaseError
from tests.interop_util import served

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())])


def _table(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [str(i) for i in ids]}, schema=SCHEMA)


def _ids(arrow):
    return sorted(arrow.column("id").to_pylist())


def test_sql_catalog_on_s3_shared_with_pyiceberg(spark, s3_server, s3_warehouse, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    cat = icefloe.Catalog(s3_warehouse, type="sql", uri=uri, spark=spark, **s3_server.properties)
    t = cat.create_table("db.t", "id bigint not null, v string")
    t.append(_table([1, 2]))
    t.append(spark.range(3, 5).selectExpr("id", "cast(id as string) as v"))
    assert t.metadata_location.startswith(s3_warehouse)
    pc = SqlCatalog("default", uri=uri, warehouse=s3_warehouse, **s3_server.properties)
    pt = pc.load_table("db.t")
    assert _ids(pt.scan().to_arrow()) == [1, 2, 3, 4]
    pt.append(_table([5]))
    pc.create_namespace("other")
    pc.create_table("other.p", schema=SCHEMA).append(_table([7, 8]))
    assert _ids(cat.load_table("db.t").to_arrow()) == [1, 2, 3, 4, 5]
    assert sorted(r.id for r in cat.load_table("other.p").to_spark().collect()) == [7, 8]
    with pytest.raises(CatalogDatabaseError, match="needs uri="):
        icefloe.Catalog(s3_warehouse, type="sql", **s3_server.properties)


def test_rest_catalog_over_an_s3_warehouse(s3_server, s3_warehouse):
    from pyiceberg.catalog.rest import RestCatalog

    cat = icefloe.Catalog(s3_warehouse, **s3_server.properties)
    with served(cat) as uri:
        rc = RestCatalog("rest", uri=uri, **s3_server.properties)
        rc.create_namespace("db")
        pt = rc.create_table("db.t", schema=SCHEMA)
        assert pt.location().startswith(s3_warehouse)
        pt.append(_table([1, 2, 3]))
        t = cat.load_table("db.t")
        assert _ids(t.to_arrow()) == [1, 2, 3]
        t.append(_table([4]))
        assert _ids(rc.load_table("db.t").scan().to_arrow()) == [1, 2, 3, 4]
        rest = icefloe.Catalog(type="rest", uri=uri, **s3_server.properties)
        rest.load_table("db.t").append(_table([5]))
        assert _ids(cat.load_table("db.t").to_arrow()) == [1, 2, 3, 4, 5]
