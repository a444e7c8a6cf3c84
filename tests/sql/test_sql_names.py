"""Name resolution in ``cat.sql``, both formats: subqueries reading other tables inside DELETE,
UPDATE and MERGE; names after USE; struct fields; nested schema changes."""
import pytest

import icefloe
from icefloe.sql.errors import NotSupportedYetError, SqlError


@pytest.fixture(params=["iceberg", "paimon"])
def fcat(request, warehouse, spark):
    return icefloe.Catalog(warehouse, format=request.param, spark=spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _snapshots(cat, name):
    return len(list(cat.load_table(name).snapshots()))


def test_subqueries_read_other_tables_in_row_level_conditions(fcat):
    run = fcat.sql
    run(f"CREATE TABLE db.t (id bigint, v string) USING {fcat.format}")
    run(f"CREATE TABLE db.o (id bigint) USING {fcat.format}")
    run("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    run("INSERT INTO db.o VALUES (2)")
    run("DELETE FROM db.t WHERE id IN (SELECT id FROM db.o)")
    assert _rows(run("SELECT * FROM db.t")) == [(1, "a"), (3, "c"), (4, "d")]
    # correlated: t.id is the target's id although db.o has a column id too
    run("UPDATE db.t SET v = 'z' WHERE EXISTS (SELECT 1 FROM db.o WHERE o.id + 1 = t.id)")
    run("UPDATE db.t x SET v = (SELECT max(o.id) FROM db.o WHERE o.id < x.id) WHERE x.id = 4")
    assert _rows(run("SELECT * FROM db.t")) == [(1, "a"), (3, "z"), (4, "2")]
    run("MERGE INTO db.t t USING (SELECT 1 AS id, 'm' AS v UNION ALL SELECT 5, 'n' UNION ALL SELECT 6, 'p') s "
        "ON t.id = s.id WHEN MATCHED AND s.id NOT IN (SELECT id - 1 FROM db.o) THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED AND NOT EXISTS (SELECT 1 FROM db.o WHERE o.id + 4 = s.id) THEN INSERT *")
    assert _rows(run("SELECT * FROM db.t")) == [(1, "a"), (3, "z"), (4, "2"), (5, "n")]
    assert _snapshots(fcat, "db.t") == 5


def test_two_part_create_without_using_and_bare_names_in_call(fcat, warehouse):
    run = fcat.sql
    run("CREATE NAMESPACE db")
    run("CREATE TABLE db.t (id bigint, v string)")            # no USING: the catalog's namespace db
    assert fcat.table_exists("db.t") and not fcat.spark.catalog.tableExists("db.t")
    run("CREATE TABLE db.c AS SELECT 1 AS id")
    assert fcat.table_exists("db.c") and _rows(run("SELECT * FROM db.c")) == [(1,)]
    run("INSERT INTO db.t VALUES (1, 'a')")
    run("INSERT INTO db.t VALUES (2, 'b')")
    run("INSERT INTO db.t VALUES (3, 'c')")
    first, second, _third = [s.snapshot_id if hasattr(s, "snapshot_id") else s.id
                             for s in fcat.load_table("db.t").snapshots()]
    run("USE db")
    run(f"CALL system.rollback_to_snapshot('t', {second})")
    assert _rows(run("SELECT id FROM t")) == [(1,), (2,)]
    run("USE local.db")
    run(f"CALL system.rollback_to_snapshot(table => 't', snapshot_id => {first})")
    assert _rows(run("SELECT id FROM db.t")) == [(1,)]


def test_struct_fields_in_update_and_conditional_merge_without_aliases(fcat):
    run = fcat.sql
    pk = "TBLPROPERTIES ('primary-key' = 'id')" if fcat.format == "paimon" else ""
    run(f"CREATE TABLE db.st (id bigint, s struct<c1:int, c2:string, n:struct<a:int, b:int>>) USING {fcat.format} {pk}")
    run("INSERT INTO db.st VALUES (1, named_struct('c1', 1, 'c2', 'x', 'n', named_struct('a', 1, 'b', 2))), "
        "(2, named_struct('c1', 2, 'c2', 'y', 'n', named_struct('a', 3, 'b', 4)))")
    run("UPDATE db.st SET s.c2 = 'z', s.n.b = 9 WHERE s.c1 = 1")
    run("UPDATE db.st t SET t.s.c1 = 5 WHERE t.s.c1 = 2")
    assert _rows(run("SELECT id, s.c1, s.c2, s.n.a, s.n.b FROM db.st")) == [(1, 1, "z", 1, 9), (2, 5, "y", 3, 4)]
    assert _snapshots(fcat, "db.st") == 3
    # MERGE's SET of struct fields (t.s.f, s.f, nested): the struct's other fields keep their values
    run("MERGE INTO db.st t USING (SELECT 1 AS id, 'm' AS v) src ON t.id = src.id "
        "WHEN MATCHED THEN UPDATE SET t.s.c2 = src.v, s.n.a = 7")
    assert _rows(run("SELECT id, s.c1, s.c2, s.n.a, s.n.b FROM db.st")) == [(1, 1, "m", 7, 9), (2, 5, "y", 3, 4)]
    with pytest.raises(SqlError, match="not a column of the target t"):
        run("MERGE INTO db.st t USING (SELECT 1 AS id, 'm' AS v) src ON t.id = src.id "
            "WHEN MATCHED THEN UPDATE SET src.v = 'q'")

    # Paimon's sql-write example: no aliases, both tables have a, b, c
    run(f"CREATE TABLE db.target (a int, b int, c string) USING {fcat.format}")
    run("INSERT INTO db.target VALUES (5, 1, 'c1'), (6, 2, 'c3'), (7, 3, 'c0')")
    run("CREATE TABLE db.source AS SELECT * FROM VALUES (5, 10, 'c1'), (6, 20, 'c3'), (7, 30, 'c1'), "
        "(8, 40, 'cz'), (9, 50, 'c1') AS v(a, b, c)")
    run("MERGE INTO db.target USING db.source ON target.a = source.a "
        "WHEN MATCHED AND target.a = 5 THEN UPDATE SET b = source.b + target.b "
        "WHEN MATCHED AND source.c > 'c2' THEN UPDATE SET * WHEN MATCHED THEN DELETE "
        "WHEN NOT MATCHED AND c > 'c9' THEN INSERT (a, b, c) VALUES (a, b * 2, c) WHEN NOT MATCHED THEN INSERT *")
    assert _rows(run("SELECT * FROM db.target")) == [(5, 11, "c1"), (6, 20, "c3"), (8, 80, "cz"), (9, 50, "c1")]
    with pytest.raises(SqlError, match="WHEN NOT MATCHED clauses see only the source's row .*t.b"):
        run("MERGE INTO db.target t USING db.source s ON t.a = s.a WHEN NOT MATCHED AND t.b = 1 THEN INSERT *")
    run("MERGE INTO db.target t USING (SELECT 5 AS a) s ON t.a = s.a "
        "WHEN NOT MATCHED BY SOURCE AND b > 50 THEN DELETE WHEN NOT MATCHED BY SOURCE THEN UPDATE SET c = 'old'")
    assert _rows(run("SELECT * FROM db.target")) == [(5, 11, "c1"), (6, 20, "old"), (9, 50, "old")]
    assert _snapshots(fcat, "db.target") == 3          # the refused MERGE wrote nothing


def test_nested_schema_changes_iceberg_field_ids(catalog):
    run = catalog.sql
    run("CREATE TABLE db.nt (id bigint, point struct<x:int, y:int>, points array<struct<x:int>>, "
        "pm map<string, struct<a:int>>, nested struct<a:int, b:int>) USING iceberg")
    run("INSERT INTO db.nt VALUES (1, named_struct('x', 1, 'y', 2), array(named_struct('x', 3)), "
        "map('k', named_struct('a', 4)), named_struct('a', 5, 'b', 6))")
    last = catalog.load_table("db.nt").metadata.last_column_id
    run("ALTER TABLE db.nt ADD COLUMN point.z double")
    run("ALTER TABLE db.nt ADD COLUMNS (points.element.z double, pm.value.b string)")
    run("ALTER TABLE db.nt ADD COLUMN nested.new_column bigint FIRST")
    run("ALTER TABLE db.nt ADD COLUMN nested.c2 bigint AFTER a")
    run("ALTER TABLE db.nt RENAME COLUMN point.y TO yy")
    run("ALTER TABLE db.nt ALTER COLUMN point.x TYPE bigint")
    run("ALTER TABLE db.nt DROP COLUMN nested.b")
    meta = catalog.load_table("db.nt").metadata
    ids = {name: f.field_id for name, f in meta.schema.all_fields()}
    # each added field takes the next id after the table's last column id, in order
    assert [ids["point.z"], ids["points.element.z"], ids["pm.value.b"], ids["nested.new_column"],
            ids["nested.c2"]] == [last + 1, last + 2, last + 3, last + 4, last + 5]
    assert meta.last_column_id == last + 5 and len(meta.schemas) == 8
    assert "nested.b" not in ids and "point.yy" in ids
    assert [f.name for f in meta.schema.find_field("nested").field_type.fields] == ["new_column", "a", "c2"]
    row = run("SELECT point, points, pm, nested FROM db.nt").first()
    assert (tuple(row.point), [tuple(p) for p in row.points], {k: tuple(v) for k, v in row.pm.items()},
            tuple(row.nested)) == ((1, 2, None), [(3, None)], {"k": (4, None)}, (None, 5, None))


def test_nested_schema_changes_on_paimon(warehouse, spark):
    """Paimon's sql-alter nested changes: each a new schema-N; a new field takes the next id above the
    schema's highest, the others keep theirs, and rows written before read the new fields as null."""
    pcat = icefloe.Catalog(warehouse, format="paimon", spark=spark)
    run = pcat.sql
    run("CREATE TABLE db.nt (id bigint, point struct<x:int, y:int>, points array<struct<x:int>>, "
        "pm map<string, struct<a:int>>, nested struct<a:int, b:int>) USING paimon")
    run("INSERT INTO db.nt VALUES (1, named_struct('x', 1, 'y', 2), array(named_struct('x', 3)), "
        "map('k', named_struct('a', 4)), named_struct('a', 5, 'b', 6))")
    highest = pcat.load_table("db.nt").table_schema.highest_field_id
    run("ALTER TABLE db.nt ADD COLUMN point.z double")
    run("ALTER TABLE db.nt ADD COLUMNS (points.element.z double, pm.value.b string)")
    run("ALTER TABLE db.nt ADD COLUMN nested.new_column bigint FIRST")
    run("ALTER TABLE db.nt ADD COLUMN nested.c2 bigint AFTER a")
    run("ALTER TABLE db.nt RENAME COLUMN point.y TO yy")
    run("ALTER TABLE db.nt ALTER COLUMN point.x TYPE bigint")
    run("ALTER TABLE db.nt DROP COLUMN nested.b")
    ts = pcat.load_table("db.nt").table_schema
    rows = {f.name: f for f in ts.fields}
    point = {f.name: (f.field_id, str(f.field_type)) for f in rows["point"].type.fields}
    assert point == {"x": (2, "long"), "yy": (3, "int"), "z": (highest + 1, "double")}
    assert [(f.name, f.field_id) for f in rows["nested"].type.fields] == \
        [("new_column", highest + 4), ("a", 9), ("c2", highest + 5)]
    assert [f.name for f in rows["points"].type.element_type.fields] == ["x", "z"]
    assert [f.name for f in rows["pm"].type.value_type.fields] == ["a", "b"]
    assert ts.highest_field_id == highest + 5 and ts.id == 7
    row = run("SELECT point, points, pm, nested FROM db.nt").first()
    assert (tuple(row.point), [tuple(p) for p in row.points], {k: tuple(v) for k, v in row.pm.items()},
            tuple(row.nested)) == ((1, 2, None), [(3, None)], {"k": (4, None)}, (None, 5, None))
    with pytest.raises(SqlError, match="not 'key'"):
        run("ALTER TABLE db.nt ADD COLUMN pm.key.q int")
    with pytest.raises(SqlError, match="only widening"):
        run("ALTER TABLE db.nt ALTER COLUMN point.x TYPE int")
    assert pcat.load_table("db.nt").table_schema.id == 7


def test_messages_name_icefloe_tables_not_sparks_catalog(fcat):
    run = fcat.sql
    run(f"CREATE TABLE db.t (id bigint, v string) USING {fcat.format}")
    names = ", ".join(fcat.load_table("db.t").metadata_table_names())
    for stmt, col in [("SELECT * FROM db.t.xyz", 15), ("SELECT * FROM db.`t$xyz`", 15),
                      ("SELECT * FROM local.db.t.xyz", 15), ("DESCRIBE db.t.xyz", 10)]:
        with pytest.raises(SqlError) as e:
            run(stmt)
        assert e.value.reason == f"table db.t has no metadata table xyz; {fcat.format} tables have {names}"
        assert (e.value.line, e.value.column) == (1, col)
    assert [r.col_name for r in run("SHOW COLUMNS FROM db.t").collect()] == ["id", "v"]
    assert [r.col_name for r in run("SHOW COLUMNS IN t IN db").collect()] == ["id", "v"]
    run("REFRESH TABLE db.t")
    if fcat.format == "paimon":      # Paimon's Spark catalog answers SHOW PARTITIONS (tests/sql/test_sql_paimon_branches.py)
        with pytest.raises(SqlError, match="table db.t is not partitioned"):
            run("SHOW PARTITIONS db.t")
    else:
        with pytest.raises(NotSupportedYetError, match="SHOW PARTITIONS on icefloe table db.t"):
            run("SHOW PARTITIONS db.t")
    if fcat.format == "paimon":      # Paimon's statistics file (tests/sql/test_sql_paimon_system.py); no rows yet
        run("ANALYZE TABLE db.t COMPUTE STATISTICS")
    else:
        with pytest.raises(NotSupportedYetError, match="ANALYZE TABLE on icefloe table db.t"):
            run("ANALYZE TABLE db.t COMPUTE STATISTICS")
    assert [(r.namespace, r.tableName) for r in run("SHOW TABLE EXTENDED IN db LIKE 't'").collect()] == [("db", "t")]
    run("INSERT INTO db.t VALUES (1, 'x')")
    with pytest.raises(SqlError, match="AMBIGUOUS_REFERENCE"):     # Spark's analysis, as a SqlError
        run("MERGE INTO db.t USING (SELECT 1 AS id, 'x' AS v) s ON t.id = s.id WHEN MATCHED AND v = 'x' THEN DELETE")
    assert _snapshots(fcat, "db.t") == 1


def test_show_table_extended_lists_icefloe_tables_as_spark_does(fcat):
    run = fcat.sql
    part = "PARTITIONED BY (dt)"
    run(f"CREATE TABLE db.sales (id bigint not null, dt string) USING {fcat.format} {part} "
        "TBLPROPERTIES ('owner'='ops')")
    run(f"CREATE TABLE db.stock (id bigint) USING {fcat.format} COMMENT 'on hand'")
    run(f"CREATE TABLE db.other (id bigint) USING {fcat.format}")
    run("INSERT INTO db.sales VALUES (1, '2024-01-01'), (2, '2024-01-02')")
    fcat.spark.range(1).createOrReplaceTempView("s_view")
    try:
        df = run("SHOW TABLE EXTENDED IN db LIKE 's*'")
        assert df.columns == ["namespace", "tableName", "isTemporary", "information"]
        rows = df.collect()
        listed = [(r.namespace, r.tableName, r.isTemporary) for r in rows]
        # the session's other temporary views starting with s (other tests') are listed too, after the tables
        assert listed[:2] == [("db", "sales", False), ("db", "stock", False)] and ("", "s_view", True) in listed
        assert all(temporary for _, _, temporary in listed[2:])
        info = dict(line.split(": ", 1) for line in rows[0].information.splitlines() if ": " in line
                    and not line.startswith(" "))
        sales = fcat.load_table("db.sales")
        assert (info["Catalog"], info["Namespace"], info["Table"], info["Type"], info["Provider"]) == \
            ("local", "db", "sales", "MANAGED", fcat.format)
        assert info["Location"] == sales.location and "owner=ops" in info["Table Properties"]
        assert rows[0].information.endswith("Schema: root\n |-- id: long (nullable = false)\n"
                                            " |-- dt: string (nullable = true)\n\n")
        assert "Comment: on hand" in rows[1].information.splitlines()
        if fcat.format == "paimon":     # Paimon's Spark catalog manages partitions
            assert info["Partition Columns"] == "[`dt`]"
        else:
            assert "Partition Columns" not in info
        # alternatives with |, no case; USE db names the namespace; catalog-qualified namespaces
        got = [(r.tableName, r.isTemporary) for r in run("SHOW TABLE EXTENDED FROM local.db LIKE 'OTHER|st*'").collect()]
        assert got[:2] == [("other", False), ("stock", False)] and all(temp for _, temp in got[2:])
        run("USE db")
        assert [r.tableName for r in run("SHOW TABLE EXTENDED LIKE 'sales'").collect()] == ["sales"]
    finally:
        fcat.spark.catalog.dropTempView("s_view")
    if fcat.format == "paimon":
        row = run("SHOW TABLE EXTENDED IN db LIKE 'sales' PARTITION (dt = '2024-01-02')").collect()
        assert [(r.tableName, r.information) for r in row] == [("sales", "Partition Values: [dt=2024-01-02]\n")]
        with pytest.raises(SqlError, match="has no partition \\(dt=2024-01-09\\)"):
            run("SHOW TABLE EXTENDED IN db LIKE 'sales' PARTITION (dt = '2024-01-09')")
        with pytest.raises(SqlError, match="must name every partition key of db.sales \\(dt\\)"):
            run("SHOW TABLE EXTENDED IN db LIKE 'sales' PARTITION (id = 1)")
    else:
        with pytest.raises(NotSupportedYetError, match="does not manage partitions; SELECT \\* FROM db.sales.partitions"):
            run("SHOW TABLE EXTENDED IN db LIKE 'sales' PARTITION (dt = '2024-01-02')")
