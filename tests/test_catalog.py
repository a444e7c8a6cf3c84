"""The user-facing Catalog over its warehouse backends: namespaces and the refusals that name what
a kind of catalog does not do (no Spark job runs here)."""
from __future__ import annotations

import pytest

import icefloe
from icefloe.errors import (
    NamespaceAlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, NotSupportedError,
)


@pytest.mark.parametrize("fmt, ns_dir", [("iceberg", "db"), ("paimon", "db.db")])
def test_a_warehouse_namespace_is_its_directory(tmp_path, fmt, ns_dir):
    cat = icefloe.Catalog(str(tmp_path), format=fmt)
    assert not cat.namespace_exists("db")
    cat.create_namespace("db")
    assert cat.namespace_exists("db") and (tmp_path / ns_dir).is_dir()
    cat.create_namespace("db", exist_ok=True)
    with pytest.raises(NamespaceAlreadyExistsError, match=f"namespace db already exists in .*{tmp_path.name}"):
        cat.create_namespace("db")
    with pytest.raises(NotSupportedError, match="a hadoop catalog's namespace is a directory"):
        cat.create_namespace("other", properties={"owner": "me"})
    assert not cat.namespace_exists("other")
    with pytest.raises(NotSupportedError, match="kept by the SQL catalog only"):
        cat.update_namespace_properties("db", updates={"owner": "me"})
    assert cat.update_namespace_properties("db", removals=["owner"]) == ([], [], ["owner"])
    assert cat.namespace_properties("db") == {}
    cat.create_table("db.t", "id bigint")
    with pytest.raises(NamespaceNotEmptyError, match=r"holds 1 table\(s\) \(db.t\); drop them first"):
        cat.drop_namespace("db")
    (tmp_path / ns_dir / "notes.txt").write_text("kept")
    with pytest.raises(NamespaceNotEmptyError, match="belong to no table"):
        cat.drop_namespace("db", cascade=True)
    assert not cat.table_exists("db.t") and (tmp_path / ns_dir / "notes.txt").exists()
    (tmp_path / ns_dir / "notes.txt").unlink()
    cat.drop_namespace("db")
    assert not cat.namespace_exists("db")
    with pytest.raises(NoSuchNamespaceError, match=f"namespace db does not exist in .*{tmp_path.name}"):
        cat.drop_namespace("db")
    cat.drop_namespace("db", missing_ok=True)


def test_a_paimon_catalog_refuses_to_check_a_table_location_by_name(tmp_path):
    cat = icefloe.Catalog(str(tmp_path), format="paimon")
    with pytest.raises(NotSupportedError, match="checking a new table's location.*places its tables itself"):
        cat.check_new_location("db.t", str(tmp_path / "elsewhere"))
    sql = icefloe.Catalog(str(tmp_path / "ice"), type="sql")      # a catalog that places tables by its rows
    sql.create_table("db.t", "id bigint")
    sql.check_new_location("db.u", str(tmp_path / "ice" / "db" / "u"))
    with pytest.raises(icefloe.IcefloeError, match="table location of db.u: two tables never share a location"):
        sql.check_new_location("db.u", str(tmp_path / "ice" / "db" / "t"))
