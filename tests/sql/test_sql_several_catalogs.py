"""Several catalogs in one SQL session: ``cat.sql(text, catalogs={"other": other_catalog})`` reads,
writes, creates and drops tables of each by name (``local.db.t``, ``other.db.t``) in the same
statements: a cross-catalog CTAS, INSERT ... SELECT, a join, MERGE from one into the other."""
import pyarrow as pa
import pytest

import icefloe
from icefloe.sql.errors import SqlError


def rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_two_catalogs_in_one_session(tmp_path, spark):
    main = icefloe.Catalog(str(tmp_path / "ice"), spark=spark)
    sql_cat = icefloe.Catalog(str(tmp_path / "sqlwh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}", spark=spark)
    pai = icefloe.Catalog(str(tmp_path / "pai"), format="paimon", spark=spark)
    others = {"shared": sql_cat, "lake": pai}

    def run(text):
        return main.sql(text, catalogs=others)

    t = main.create_table("db.src", "id bigint not null, s string")
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]}))
    run("CREATE TABLE shared.db.copy AS SELECT * FROM local.db.src WHERE id > 1")     # cross-catalog CTAS
    assert sql_cat.load_table("db.copy").metadata_location.split("/")[-1].startswith("00002-")
    run("CREATE TABLE lake.db.p (id bigint, s string) USING paimon")
    run("INSERT INTO lake.db.p SELECT id, upper(s) FROM shared.db.copy")
    assert rows(run("SELECT c.id, p.s FROM shared.db.copy c JOIN lake.db.p p ON c.id = p.id")) == \
        [(2, "B"), (3, "C")]
    run("MERGE INTO local.db.src t USING lake.db.p s ON t.id = s.id WHEN MATCHED THEN UPDATE SET s = s.s")
    assert rows(run("SELECT * FROM db.src")) == [(1, "a"), (2, "B"), (3, "C")]
    assert rows(run("SELECT count(*) FROM shared.db.copy.snapshots")) == [(1,)]
    run("DROP TABLE shared.db.copy")
    assert not sql_cat.table_exists("db.copy")
    with pytest.raises(SqlError, match="unknown table"):
        run("SELECT * FROM shared.db.copy")
