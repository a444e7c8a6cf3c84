"""``SET spark.paimon.<key>`` goes through the audit of Paimon's options: options with nothing for
icefloe to do are taken, refused ones are errors giving the audit's reason; and Paimon's Spark write
option ``write.merge-schema`` lets ``INSERT ... BY NAME`` add the query's new columns (Paimon's docs:
spark/sql-write, "Write Merge Schema")."""
import pytest

import icefloe
from icefloe.sql import SqlError


@pytest.fixture
def pai(tmp_path, spark):
    c = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    c.sql("CREATE DATABASE db")
    c.sql("CREATE TABLE db.t (a INT, b STRING)")
    c.sql("INSERT INTO db.t VALUES (1, '1'), (2, '2')")
    yield c
    for k in list(spark.conf.getAll):
        if k.startswith("spark.paimon."):
            spark.conf.unset(k)


def test_accepted_options_are_taken_and_refused_ones_give_the_audits_reason(pai, spark):
    pai.sql("SET spark.paimon.write-buffer-size = 512 mb")
    assert spark.conf.get("spark.paimon.write-buffer-size") == "512 mb"
    assert pai.sql("SELECT count(*) FROM db.t").first()[0] == 2         # reads go on as before
    with pytest.raises(SqlError, match="'file.compression.per.level'.*every level"):
        pai.sql("SET spark.paimon.file.compression.per.level=0:lz4")
    with pytest.raises(SqlError, match="'file.block-size'.*as a table option"):
        pai.sql("SET spark.paimon.file.block-size=512M")
    with pytest.raises(SqlError, match="'bucket'.*as a table option"):
        pai.sql("SET spark.paimon.*.db.t.bucket = 4")
    with pytest.raises(SqlError, match="'write.merge-schema.explicit-cast'"):
        pai.sql("SET spark.paimon.write.merge-schema.explicit-cast = true")
    assert "spark.paimon.file.block-size" not in spark.conf.getAll


def test_merge_schema_insert_by_name_adds_the_new_column(pai):
    with pytest.raises(SqlError, match="column c is not a column of the table"):
        pai.sql("INSERT INTO db.t BY NAME SELECT 3 AS a, '3' AS b, 3 AS c")     # without the setting
    pai.sql("SET `spark.paimon.write.merge-schema` = true")
    pai.sql("INSERT INTO db.t BY NAME SELECT 3 AS a, '3' AS b, 3 AS c")
    t = pai.load_table("db.t")
    assert t.schema.column_names == ["a", "b", "c"]
    assert [f["name"] for f in __import__("json").loads(t.metadata_table("schemas").to_pylist()[-1]["fields"])] == \
        ["a", "b", "c"]
    assert sorted(tuple(r) for r in pai.sql("SELECT * FROM db.t").collect()) == \
        [(1, "1", None), (2, "2", None), (3, "3", 3)]
    # scoped to another table: not this one's
    pai.sql("RESET spark.paimon.write.merge-schema")
    pai.sql("SET spark.paimon.*.db.other.write.merge-schema = true")
    with pytest.raises(SqlError, match="column d is not a column of the table"):
        pai.sql("INSERT INTO db.t BY NAME SELECT 4 AS a, 4 AS d")
    assert pai.load_table("db.t").schema.column_names == ["a", "b", "c"]
