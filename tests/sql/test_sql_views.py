"""Iceberg views through SQL on the SQL catalog: each statement's effect on the view's metadata
files (versions, version log, schema ids) and on the rows read through the view."""
import json

import pytest

import icefloe
from icefloe.errors import NotSupportedError
from icefloe.sql import SqlError


@pytest.fixture(scope="module")
def cat(tmp_path_factory, spark):
    c = icefloe.Catalog(str(tmp_path_factory.mktemp("views") / "wh"), type="sql", spark=spark)
    c.sql("CREATE NAMESPACE db")
    c.sql("CREATE TABLE db.t (id bigint, data string) USING iceberg")
    c.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    return c


def _doc(cat, name):
    loaded = cat.load_view(name)
    with open(loaded.metadata_location) as f:
        return loaded.metadata_location, json.load(f)


def test_create_view_with_aliases_comments_and_properties(cat):
    cat.sql("CREATE VIEW db.v (id COMMENT 'the id', d) COMMENT 'some rows' TBLPROPERTIES ('owner' = 'me') "
            "AS SELECT id, data FROM db.t WHERE id > 1")
    assert [tuple(r) for r in cat.sql("SELECT * FROM db.v ORDER BY id").collect()] == [(2, "b"), (3, "c")]
    assert cat.sql("SELECT * FROM db.v").columns == ["id", "d"]
    path, doc = _doc(cat, "db.v")
    assert path.split("/")[-1].startswith("00001-") and path.endswith(".metadata.json")
    assert doc["format-version"] == 1 and doc["current-version-id"] == 1
    (version,) = doc["versions"]
    assert version["representations"] == [{"type": "sql", "sql": "SELECT id, data FROM db.t WHERE id > 1",
                                           "dialect": "spark"}]
    assert version["default-namespace"] == ["default"] and "default-catalog" not in version   # its own catalog
    assert version["summary"]["engine-name"] == "spark"
    assert [e["version-id"] for e in doc["version-log"]] == [1]
    (schema,) = doc["schemas"]
    assert [(f["id"], f["name"], f["type"], f.get("doc")) for f in schema["fields"]] == \
        [(1, "id", "long", "the id"), (2, "d", "string", None)]
    assert doc["properties"] == {"comment": "some rows", "owner": "me", "spark.query-column-names": "id,data"}


def test_view_reads_current_table_data_and_view_over_view(cat):
    cat.sql("CREATE VIEW db.rv AS SELECT id, upper(data) AS up FROM db.t")
    cat.sql("CREATE VIEW db.rvv AS SELECT count(*) AS n, max(up) AS m FROM db.rv")
    assert [tuple(r) for r in cat.sql("SELECT * FROM db.rvv").collect()] == [(3, "C")]
    cat.sql("INSERT INTO db.t VALUES (4, 'd')")
    assert [tuple(r) for r in cat.sql("SELECT * FROM db.rvv").collect()] == [(4, "D")]
    cat.sql("DELETE FROM db.t WHERE id = 4")
    # after USE, one-part names resolve; the stored SQL keeps its namespace
    cat.sql("USE db")
    assert cat.sql("SELECT n FROM rvv").first()[0] == 3


def test_create_or_replace_and_if_not_exists_and_alter_as(cat):
    cat.sql("CREATE VIEW db.cv AS SELECT id FROM db.t")
    cat.sql("CREATE VIEW IF NOT EXISTS db.cv AS SELECT data FROM db.t")          # kept as it was
    assert cat.sql("SELECT * FROM db.cv").columns == ["id"]
    with pytest.raises(SqlError, match="already exists"):
        cat.sql("CREATE VIEW db.cv AS SELECT data FROM db.t")
    cat.sql("CREATE OR REPLACE VIEW db.cv AS SELECT id, data FROM db.t WHERE id = 1")
    assert [tuple(r) for r in cat.sql("SELECT * FROM db.cv").collect()] == [(1, "a")]
    cat.sql("ALTER VIEW db.cv AS SELECT id FROM db.t")
    assert sorted(r[0] for r in cat.sql("SELECT * FROM db.cv").collect()) == [1, 2, 3]
    path, doc = _doc(cat, "db.cv")
    assert path.split("/")[-1].startswith("00003-")
    # the last query is the first one again: version 1 (and its schema 0) is made current again, as
    # Java's ViewMetadata.Builder reuses an equal version; the version log records the return
    assert [v["version-id"] for v in doc["versions"]] == [1, 2] and doc["current-version-id"] == 1
    assert [e["version-id"] for e in doc["version-log"]] == [1, 2, 1]
    assert [v["schema-id"] for v in doc["versions"]] == [0, 1]
    assert [s["schema-id"] for s in doc["schemas"]] == [0, 1]
    cat.sql("ALTER VIEW db.cv AS SELECT id AS ident FROM db.t")
    _path, doc = _doc(cat, "db.cv")
    assert doc["current-version-id"] == 3 and [v["schema-id"] for v in doc["versions"]] == [0, 1, 2]


def test_alter_view_properties_and_rename(cat):
    cat.sql("CREATE VIEW db.pv TBLPROPERTIES ('a' = '1', 'b' = '2') AS SELECT id FROM db.t")
    cat.sql("ALTER VIEW db.pv SET TBLPROPERTIES ('c' = '3')")
    cat.sql("ALTER VIEW db.pv UNSET TBLPROPERTIES ('a')")
    with pytest.raises(SqlError, match="no property zz"):
        cat.sql("ALTER VIEW db.pv UNSET TBLPROPERTIES ('zz')")
    cat.sql("ALTER VIEW db.pv UNSET TBLPROPERTIES IF EXISTS ('zz')")
    props = dict(tuple(r) for r in cat.sql("SHOW TBLPROPERTIES db.pv").collect())
    assert props == {"b": "2", "c": "3", "spark.query-column-names": "id"}
    _path, doc = _doc(cat, "db.pv")
    assert len(doc["versions"]) == 1 and doc["current-version-id"] == 1      # properties make no version
    cat.sql("ALTER VIEW db.pv RENAME TO db.pw")
    assert not cat.view_exists("db.pv") and cat.view_exists("db.pw")
    assert sorted(r[0] for r in cat.sql("SELECT * FROM db.pw").collect()) == [1, 2, 3]


def test_show_views_describe_and_show_create(cat):
    cat.sql("CREATE NAMESPACE sns")
    cat.sql("CREATE VIEW sns.v1 (k COMMENT 'key') COMMENT 'first' AS SELECT id FROM db.t")
    cat.sql("CREATE VIEW sns.v2 AS SELECT data FROM db.t")
    cat.sql("CREATE VIEW sns.other AS SELECT 1 AS one")
    # Spark's temporary views (other tests' among them) are listed too, as isTemporary rows
    rows = [tuple(r) for r in cat.sql("SHOW VIEWS IN sns").collect() if not r[2]]
    assert rows == [("sns", "other", False), ("sns", "v1", False), ("sns", "v2", False)]
    assert [r[1] for r in cat.sql("SHOW VIEWS IN sns LIKE 'v*'").collect() if not r[2]] == ["v1", "v2"]
    cat.sql("USE sns")
    assert [r[1] for r in cat.sql("SHOW VIEWS").collect() if not r[2]] == ["other", "v1", "v2"]
    cat.sql("USE db")
    assert [tuple(r) for r in cat.sql("DESCRIBE sns.v1").collect()] == [("k", "bigint", "key")]
    extended = {r[0]: r[1] for r in cat.sql("DESCRIBE EXTENDED sns.v1").collect()}
    assert extended["View Text"] == "SELECT id FROM db.t" and extended["Comment"] == "first"
    text = cat.sql("SHOW CREATE TABLE sns.v1").first()[0]
    assert "CREATE VIEW local.sns.v1" in text and "k COMMENT 'key'" in text and text.strip().endswith(
        "AS SELECT id FROM db.t")


def test_drop_view_and_broken_view(cat):
    cat.sql("CREATE VIEW db.dv AS SELECT id FROM db.t")
    cat.sql("CREATE VIEW db.dvv AS SELECT * FROM db.dv")
    cat.sql("DROP VIEW db.dv")
    assert not cat.view_exists("db.dv")
    with pytest.raises(SqlError, match=r"view db.dvv cannot be read: its query no longer resolves"):
        cat.sql("SELECT * FROM db.dvv")
    cat.sql("DROP VIEW IF EXISTS db.dv")
    with pytest.raises(SqlError, match="view db.dv does not exist"):
        cat.sql("DROP VIEW db.dv")
    # the table changed under a view: its columns no longer match
    cat.sql("CREATE TABLE db.t2 (id bigint, data string) USING iceberg")
    cat.sql("CREATE VIEW db.dstar AS SELECT * FROM db.t2")
    cat.sql("ALTER TABLE db.t2 ADD COLUMN extra int")
    with pytest.raises(SqlError, match="view db.dstar cannot be read: its query now returns 3 columns"):
        cat.sql("SELECT * FROM db.dstar")


def test_tables_and_views_share_names(cat):
    cat.sql("CREATE VIEW db.nv AS SELECT id FROM db.t")
    with pytest.raises(SqlError, match="a table of that name exists"):
        cat.sql("CREATE VIEW db.t AS SELECT 1 AS x")
    with pytest.raises(SqlError, match="a view of that name exists"):
        cat.sql("CREATE TABLE db.nv (x int) USING iceberg")
    with pytest.raises(SqlError, match="is a table, not a view: use DROP TABLE"):
        cat.sql("DROP VIEW db.t")
    with pytest.raises(SqlError, match="is a view, not a table: use DROP VIEW"):
        cat.sql("DROP TABLE db.nv")
    assert cat.table_exists("db.t") and cat.view_exists("db.nv")


def test_view_errors_leave_the_view_as_it_was(cat):
    cat.sql("CREATE VIEW db.ev AS SELECT id FROM db.t")
    before = cat.load_view("db.ev").metadata_location
    with pytest.raises(SqlError, match="2 column names but its query returns 1"):
        cat.sql("CREATE OR REPLACE VIEW db.ev (a, b) AS SELECT id FROM db.t")
    with pytest.raises(SqlError, match="cannot be analyzed"):
        cat.sql("ALTER VIEW db.ev AS SELECT nope FROM db.t")
    cat.sql("CREATE VIEW db.ev2 AS SELECT * FROM db.ev")
    with pytest.raises(SqlError, match="would refer to itself"):
        cat.sql("CREATE OR REPLACE VIEW db.ev AS SELECT * FROM db.ev")
    with pytest.raises(SqlError, match="would refer to itself"):
        cat.sql("ALTER VIEW db.ev AS SELECT * FROM db.ev2")
    assert cat.load_view("db.ev").metadata_location == before


def test_temporary_views_stay_sparks(cat):
    cat.sql("CREATE TEMPORARY VIEW tmp_v AS SELECT 5 AS x")
    assert cat.sql("SELECT * FROM tmp_v").first()[0] == 5
    assert "db.tmp_v" not in cat.list_views("db")
    rows = [tuple(r) for r in cat.sql("SHOW VIEWS IN db LIKE 'tmp*'").collect()]
    assert rows == [("", "tmp_v", True)]          # Spark's SHOW VIEWS lists temporary views too
    cat.sql("DROP VIEW tmp_v")
    assert cat.sql("SHOW VIEWS IN db LIKE 'tmp*'").collect() == []


def test_directory_catalog_refuses_views(catalog):
    catalog.sql("CREATE NAMESPACE db")
    with pytest.raises(SqlError, match="SQL catalog.*REST catalog"):
        catalog.sql("CREATE VIEW db.v AS SELECT 1 AS x")
    with pytest.raises(NotSupportedError, match="HadoopCatalog keeps none"):
        catalog.drop_view("db.v")


def test_the_sql_reference_views_example_runs(tmp_path, spark):
    """docs/sql.md's view statements, in order, on a SQL catalog with the page's orders table."""
    import re
    from pathlib import Path

    from icefloe.sql.parser import split

    page = (Path(__file__).resolve().parents[2] / "docs" / "sql.md").read_text()
    (block,) = re.findall(r'^```sql title="views.sql"\n(.*?)^```', page, re.S | re.M)
    c = icefloe.Catalog(str(tmp_path / "wh"), type="sql", spark=spark)
    c.sql("CREATE NAMESPACE shop")
    c.sql("CREATE TABLE shop.orders (id bigint NOT NULL, item string, qty int) USING iceberg")
    c.sql("INSERT INTO shop.orders VALUES (1, 'pen', 3), (2, 'ink', 1), (3, 'pad', 7)")
    results = {s.text.split("\n")[0]: c.sql(s.text) for s in split(block)}
    assert results["SELECT * FROM shop.big_count"].first()[0] == 2
    assert not c.view_exists("shop.order_count") and c.view_exists("shop.big_orders")
    meta = c.load_view("shop.big_orders").metadata
    assert [v.version_id for v in meta.versions] == [1, 2, 3] and meta.current_version_id == 3
    assert "owner" not in meta.properties and meta.properties["reviewed"] == "yes"


def test_a_namespace_with_views_is_not_empty(cat):
    from icefloe.errors import NamespaceNotEmptyError

    cat.create_namespace("vns")
    cat.sql("CREATE VIEW vns.v AS SELECT 1 AS one")
    with pytest.raises(NamespaceNotEmptyError, match=r"1 view\(s\) \(vns.v\)"):
        cat.drop_namespace("vns")
    cat.drop_namespace("vns", cascade=True)
    assert not cat.namespace_exists("vns") and not cat.view_exists("vns.v")
