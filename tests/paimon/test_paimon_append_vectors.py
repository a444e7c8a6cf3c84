"""Deletion vectors of Paimon append tables ('deletion-vectors.enabled' without a primary key): icefloe's
DELETE, UPDATE and MERGE mark the old rows in vectors (no file rewritten, one APPEND snapshot), every
read path applies them (to_arrow, to_spark, SQL, the ``icefloe`` data source in batch and streaming,
time travel, ``audit_log``/``ro``, the metadata columns, incremental queries), compaction applies and
drops them, a commit removing a file drops its vector; pypaimon and Paimon 1.4's Java engine read
what icefloe reads, and icefloe reads what Paimon's engines mark."""
import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.paimon import deletion_vectors as dv

DDL = "id bigint not null, p string, v string"
PROPS = {"deletion-vectors.enabled": "true", "bucket": "-1"}


def rows(n0, n1, p, v="v"):
    return pa.table({"id": pa.array(range(n0, n1), pa.int64()), "p": [p] * (n1 - n0),
                     "v": [f"{v}{i}" for i in range(n0, n1)]})


def referee(wh, name="db.a"):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    t = CatalogFactory.create({"warehouse": wh}).get_table(name)
    rb = t.new_read_builder()
    return sorted((r["id"], r["p"], r["v"]) for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


def ids(df_or_table):
    if isinstance(df_or_table, pa.Table):
        return sorted(df_or_table.column("id").to_pylist())
    return sorted(r["id"] for r in df_or_table.collect())


def live(t):
    return {e.file.file_name for e in t.refresh().plan()}


def marked(t, snapshot=None):
    """data file name -> the positions its vector marks, at ``snapshot`` (default: the latest)."""
    snap = t.refresh().current_snapshot() if snapshot is None else snapshot
    out = {}
    for bv in dv.bucket_vectors(t.store, snap).values():
        out.update({name: sorted(b) for name, b in bv.load(t.io).items()})
    return out


def _deleted(spark_catalog):
    """db.a: ids 0-4 in x's file, 5-9 in y's, 1, 2 and 7 deleted (snapshot 3); its files before."""
    t = spark_catalog.create_table("db.a", DDL, partitioned_by=["p"], properties=PROPS)
    t.append(rows(0, 5, "x"))
    t.append(rows(5, 10, "y"))
    files = live(t)
    return t, files, t.delete("id IN (1, 2, 7)")


def test_delete_marks_rows_and_every_read_path_applies_the_vectors(spark_catalog, paimon_warehouse, paimon_spark):
    spark = paimon_spark
    t, files, r = _deleted(spark_catalog)
    assert (r["deleted"], r["updated"], r["inserted"]) == (3, 0, 0)
    snap = t.current_snapshot()
    assert snap.id == r["snapshot_id"] == 3 and snap.commit_kind == "APPEND"
    assert live(t) == files                      # no file rewritten: the rows are marked
    assert sorted(sum(marked(t).values(), [])) == [1, 2, 2]     # positions 1, 2 of x's file, 2 of y's
    want = sorted(set(range(10)) - {1, 2, 7})
    assert ids(t.to_arrow()) == want
    assert ids(t.to_arrow(where="id > 4")) == [i for i in want if i > 4]
    assert ids(t.to_spark()) == want
    assert ids(t.to_spark(where="p = 'y'")) == [5, 6, 8, 9]
    ds = spark.read.format("icefloe").load(t.location)
    assert ids(ds) == want and ds.count() == len(want)
    assert ids(ds.where("id < 6")) == [0, 3, 4, 5]
    assert ids(t.to_arrow(snapshot_id=2)) == list(range(10))    # time travel: before the delete
    assert ids(t.to_spark(snapshot_id=2)) == list(range(10))
    assert [r[0] for r in referee(paimon_warehouse)] == want


def test_sql_system_tables_metadata_columns_and_streams_apply_the_vectors(spark_catalog, paimon_warehouse,
                                                                         paimon_spark):
    spark = paimon_spark
    t, _files, _r = _deleted(spark_catalog)
    want = sorted(set(range(10)) - {1, 2, 7})
    q = lambda s: icefloe.sql(spark, s, warehouse=paimon_warehouse, format="paimon", catalog_name="paimon")  # noqa: E731
    assert ids(q("SELECT id FROM db.a")) == want
    assert q("SELECT count(*) AS n FROM db.a").collect()[0]["n"] == len(want)
    assert ids(q("SELECT id FROM db.a VERSION AS OF 2")) == list(range(10))
    assert q("SELECT rowkind, count(*) AS n FROM db.`a$audit_log` GROUP BY rowkind").collect()[0]["n"] == len(want)
    assert q("SELECT count(*) AS n FROM db.`a$ro`").collect()[0]["n"] == len(want)
    meta = t.to_spark_with_metadata(["__paimon_row_index"]).collect()
    assert sorted(r["id"] for r in meta) == want
    assert all(r["__paimon_row_index"] == r["id"] % 5 for r in meta)      # each row's own position
    sq = (spark.readStream.format("icefloe").load(t.location).writeStream.format("memory")
          .queryName("appdv_stream").trigger(availableNow=True).start())
    sq.awaitTermination()
    assert ids(spark.sql("SELECT id FROM appdv_stream")) == want
    t.create_tag("t1", 1)                   # incremental: the files only the end has, less its vectors
    t.create_tag("t3", 3)
    assert ids(t.diff_between_tags("t1", "t3")) == [5, 6, 8, 9]


def test_update_merge_and_compaction_keep_the_vectors_consistent(spark_catalog, paimon_warehouse, paimon_spark):
    t = spark_catalog.create_table("db.a", DDL, partitioned_by=["p"], properties=PROPS)
    t.append(rows(0, 5, "x"))
    t.append(rows(5, 10, "x"))
    model = {i: ("x", f"v{i}") for i in range(10)}
    t.delete("id = 0")
    model.pop(0)
    files = live(t)
    r = t.update({"v": "'u'"}, "id IN (3, 6)")
    assert r["updated"] == 2 and t.current_snapshot().commit_kind == "APPEND"
    assert files < live(t)                        # the old files stay, the new rows are a new file
    model.update({3: ("x", "u"), 6: ("x", "u")})
    assert sorted(sum(marked(t).values(), [])) == [0, 1, 3]      # the deleted row and both old versions
    src = paimon_spark.createDataFrame([(4, "x", "m4"), (8, "x", "gone"), (20, "x", "new")],
                                       "id bigint, p string, v string")
    r = t.merge(src, "t.id = s.id").when_matched_delete("s.v = 'gone'").when_matched_update({"v": "s.v"}) \
        .when_not_matched_insert_all().execute()
    assert (r["updated"], r["deleted"], r["inserted"]) == (1, 1, 1)
    model.update({4: ("x", "m4"), 20: ("x", "new")})
    model.pop(8)
    want = sorted((i, p, v) for i, (p, v) in model.items())
    got = sorted((x["id"], x["p"], x["v"]) for x in t.to_arrow().to_pylist())
    assert got == want
    assert referee(paimon_warehouse) == want
    before = live(t)
    assert t.compact() is not None
    assert not (before & live(t)) and not marked(t)     # the small files rewritten, their vectors gone
    assert sorted((x["id"], x["p"], x["v"]) for x in t.to_spark().collect()) == want
    assert referee(paimon_warehouse) == want


def test_a_commit_removing_marked_files_drops_their_vectors(spark_catalog, paimon_warehouse):
    t = spark_catalog.create_table("db.a", DDL, partitioned_by=["p"], properties=PROPS)
    t.append(rows(0, 5, "x"))
    t.append(rows(5, 10, "y"))
    t.delete("id IN (1, 6)")
    assert len(marked(t)) == 2
    # a copy-on-write replace of x's rows 3 and 4: x's file is rewritten without its marked row
    t.overwrite(rows(50, 51, "x"), where="p = 'x' AND id >= 3")
    left = marked(t)
    assert len(left) == 1 and set(left) <= live(t)
    assert ids(t.to_arrow()) == [0, 2, 5, 7, 8, 9, 50]
    t.overwrite(rows(100, 102, "y"), partition={"p": "y"})     # y's file goes: its vector with it
    assert not marked(t)
    assert ids(t.to_arrow()) == [0, 2, 50, 100, 101]
    t.overwrite(rows(200, 201, "x"))                            # every file goes: no vector left
    assert not marked(t) and ids(t.to_spark()) == [200]
    assert [r[0] for r in referee(paimon_warehouse)] == [200]


def test_paimon_java_reads_icefloes_vectors_and_compacts_them(paimon_bundle, paimon_spark):
    """Paimon 1.4's Java engine (no Spark) reads the rows icefloe's DELETE and UPDATE marked, compacts
    the table (applying the vectors), and icefloe reads that and deletes again."""
    from icefloe.catalog import Catalog

    pj = paimon_bundle
    ice = Catalog(pj.warehouse, "paimon", paimon_spark)
    t = ice.create_table("db.appdv", DDL, partitioned_by=["p"], properties=PROPS)
    t.append(rows(0, 6, "x"))
    t.append(rows(6, 9, "y"))
    t.delete("id IN (0, 4, 7)")
    t.update({"v": "'u'"}, "id = 5")
    model = {i: ("x" if i < 6 else "y", f"v{i}") for i in range(9) if i not in (0, 4, 7)}
    model[5] = ("x", "u")

    def java_rows():
        return sorted((r[0], r[1], r[2]) for r in pj.rows("db.appdv"))

    want = sorted((i, p, v) for i, (p, v) in model.items())
    assert java_rows() == want
    pj.compact("db.appdv", full=True)
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    assert sorted((x["id"], x["p"], x["v"]) for x in t.to_arrow().to_pylist()) == want
    t.delete("id = 1")
    model.pop(1)
    want = sorted((i, p, v) for i, (p, v) in model.items())
    assert java_rows() == want
    assert sorted((x["id"], x["p"], x["v"]) for x in t.to_spark().collect()) == want
    assert os.path.isdir(os.path.join(t.location, "index"))


@pytest.mark.long
@pytest.mark.parametrize("props", ["'bucket'='-1'", "'bucket'='2', 'bucket-key'='id'"])
def test_paimon_09_spark_deletes_icefloe_reads_deletes_and_compacts(paimon_java, paimon_spark, props):
    """Paimon 0.9's Spark runtime DELETEs from an append table with deletion vectors (it marks rows);
    icefloe reads it by every path, deletes and updates by marking, compacts, and Paimon reads each
    result; Paimon deletes again after icefloe's compaction, and icefloe reads that."""
    from icefloe.catalog import Catalog

    pj = paimon_java
    name = "dv_unaware" if "-1" in props else "dv_bucketed"
    pj.sql(f"CREATE TABLE db.{name} (id BIGINT, s STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES "
           f"('deletion-vectors.enabled'='true', {props})")
    pj.sql(f"INSERT INTO db.{name} SELECT id, cast(id AS string), cast(id % 2 AS string) FROM range(20)")
    pj.sql(f"DELETE FROM db.{name} WHERE id % 3 = 0")
    model = {i: (str(i), str(i % 2)) for i in range(20) if i % 3}

    def want():
        return sorted((i, s, dt) for i, (s, dt) in model.items())

    def java_rows():
        return sorted(tuple(r) for r in pj.sql(f"SELECT id, s, dt FROM db.{name}"))

    assert java_rows() == want()
    ice = Catalog(str(pj.warehouse), "paimon", paimon_spark)
    t = ice.load_table(f"db.{name}")
    assert marked(t)                                  # Paimon marked the rows, rewrote no file
    assert sorted((x["id"], x["s"], x["dt"]) for x in t.to_arrow().to_pylist()) == want()
    assert sorted((x["id"], x["s"], x["dt"]) for x in t.to_spark().collect()) == want()
    ds = paimon_spark.read.format("icefloe").load(t.location)
    assert ids(ds) == sorted(model) and ds.count() == len(model)
    q = lambda s: icefloe.sql(paimon_spark, s, warehouse=str(pj.warehouse), format="paimon",  # noqa: E731
                              catalog_name="paimon")
    assert ids(q(f"SELECT id FROM db.{name}")) == sorted(model)
    assert ids(q(f"SELECT id FROM db.{name} VERSION AS OF 1")) == list(range(20))
    files = live(t)
    t.delete("id IN (1, 2)")
    t.update({"s": "'u'"}, "id = 4")
    model.pop(1)
    model.pop(2)
    model[4] = ("u", "0")
    assert files <= live(t)                           # marked, not rewritten
    assert java_rows() == want()
    t.compact()
    assert not (files & live(t)) and not marked(t)
    assert java_rows() == want()
    pj.sql(f"DELETE FROM db.{name} WHERE id = 5")
    model.pop(5)
    assert sorted((x["id"], x["s"], x["dt"]) for x in t.refresh().to_spark().collect()) == want()
    assert sorted((x["id"], x["s"], x["dt"]) for x in t.to_arrow().to_pylist()) == want()


def test_the_iceberg_view_carries_an_append_tables_vectors(spark_catalog):
    """With Iceberg compatibility the marked rows are Iceberg v3 deletion vectors (format 3 is
    required, as for primary-key tables: with 2 Iceberg readers would see the deleted rows)."""
    from icefloe.errors import SchemaError

    view = {**PROPS, "metadata.iceberg.storage": "table-location"}
    with pytest.raises(SchemaError, match="deletion vectors needs metadata.iceberg.format-version = 3"):
        spark_catalog.create_table("db.v2", DDL, properties=view)
    t = spark_catalog.create_table("db.v3", DDL, partitioned_by=["p"],
                                   properties={**view, "metadata.iceberg.format-version": "3"})
    t.append(rows(0, 5, "x"))
    t.delete("id IN (1, 3)")
    it = t.iceberg()
    assert it.metadata.format_version == 3
    assert ids(it.to_arrow()) == [0, 2, 4] == ids(t.to_arrow())
    assert it.current_snapshot().summary["total-delete-files"] == "1"
    t.compact()                                      # the vectors applied and gone: no delete file left
    assert t.iceberg().current_snapshot().summary["total-delete-files"] == "0"
    assert ids(t.iceberg().to_arrow()) == [0, 2, 4]


def test_a_compaction_conflicts_with_marks_made_while_it_ran(spark_catalog):
    """Rows another writer marks in a file a compaction is rewriting would come back with the new
    file: the compaction's commit is refused, and nothing of it is committed."""
    from icefloe.errors import CommitConflictError
    from icefloe.paimon import maintenance

    t = spark_catalog.create_table("db.a", DDL, properties=PROPS)
    t.append(rows(0, 5, "x"))
    t.append(rows(5, 10, "x"))
    t.delete("id = 1")
    other = spark_catalog.load_table("db.a")

    def rewrite(groups, target):
        done = [maintenance.rewrite_group(t.io, t.table_schema, g, target) for g in groups]
        other.delete("id = 6")                  # a mark on a file being rewritten
        return done

    with pytest.raises(CommitConflictError, match="deletion vectors"):
        maintenance.compact(t, rewrite=rewrite)
    assert ids(t.refresh().to_arrow()) == [0, 2, 3, 4, 5, 7, 8, 9]


def test_the_driver_receives_one_bitmap_per_marked_file_never_positions(spark_catalog, paimon_spark, monkeypatch):
    """DELETE and UPDATE marking thousands of rows: every result the driver collects is small (no
    row per position, no list of positions, no position column); the bitmaps come as one row per
    file marked, and the marks are exact (a file with a vector already, two partitions)."""
    import numbers

    t = spark_catalog.create_table("db.a", DDL, partitioned_by=["p"], properties=PROPS)
    t.append(rows(0, 3000, "x"))
    t.append(rows(3000, 6000, "y"))
    t.delete("id = 1")                               # a vector there before the statements below
    cls = type(paimon_spark.range(1))
    real = cls.collect
    seen = []

    def spy(self):
        got = real(self)
        seen.append((list(self.columns), got))
        return got

    monkeypatch.setattr(cls, "collect", spy)
    r = t.delete("id % 3 = 0 OR id = 1")             # id 1 is marked already: not read, not counted
    assert r.deleted == 2000
    r = t.update({"v": "'u'"}, "id % 3 = 1 AND p = 'x'")
    assert r.updated == 999                           # 0..2999 less id 1
    monkeypatch.setattr(cls, "collect", real)
    bitmaps = [got for cols, got in seen if cols == ["file", "bitmap"]]
    assert [len(b) for b in bitmaps] == [2, 1]        # one row per file marked
    for cols, got in seen:
        assert "_icefloe_pos" not in cols and len(got) <= 64
        for row in got:
            assert all(isinstance(v, (str, bytes, bytearray, numbers.Number, type(None))) for v in row)
    by_file = marked(t)
    assert sum(len(v) for v in by_file.values()) == 1 + 2000 + 999
    assert ids(t.to_arrow()) == sorted(i for i in range(6000) if i % 3 != 0 and i != 1)
    assert all(x["v"] == "u" for x in t.to_arrow().to_pylist() if x["id"] % 3 == 1 and x["p"] == "x")


def _old_positions(rows, file_col, pos_col, files):
    """The marking path as it was: every position collected to the driver, per file."""
    from pyspark.sql import functions as F

    return {r[file_col]: r["p"] for r in rows.groupBy(file_col).agg(F.collect_list(pos_col).alias("p")).collect()}


def test_vectors_equal_those_the_positions_collected_on_the_driver_made(spark_catalog, paimon_spark, monkeypatch):
    """The same DELETE, MERGE and UPDATE on two copies of a random table (two partitions, two buckets,
    vectors already there), one marking by bitmaps built in tasks, the other by the positions
    collected on the driver (the old path): the same vectors, file by file, and the same rows."""
    import random
    import shutil

    from icefloe.catalog import Catalog
    from icefloe.spark import paimon_append_dml

    rnd = random.Random(51)
    props = {"deletion-vectors.enabled": "true", "bucket": "2", "bucket-key": "id"}
    t = spark_catalog.create_table("db.a", DDL, partitioned_by=["p"], properties=props)
    for n in range(3):
        t.append(pa.table({"id": pa.array([n * 1000 + i for i in range(1000)], pa.int64()),
                           "p": [rnd.choice("xy") for _ in range(1000)], "v": [f"v{i}" for i in range(1000)]}))
    t.delete(f"id % 7 = {rnd.randrange(7)}")
    base = t.location.rstrip("/").rsplit("/", 2)[0]
    copies = []
    for side in ("tasks", "driver"):
        shutil.copytree(base, f"{base}-{side}")
        copies.append(Catalog(f"{base}-{side}", "paimon", paimon_spark).load_table("db.a"))
    src = paimon_spark.createDataFrame([(i, "x", f"m{i}") for i in rnd.sample(range(3000), 300)] +
                                       [(5000 + i, "y", "new") for i in range(20)], "id bigint, p string, v string")
    k, m = rnd.randrange(5), rnd.randrange(11)
    results = []
    for side, c in zip(("tasks", "driver"), copies):
        if side == "driver":
            monkeypatch.setattr(paimon_append_dml, "position_bitmaps", _old_positions)
        # the UPDATE takes rows of the first files only (the new files' row order is Spark's to choose)
        got = [c.delete(f"id % 5 = {k} AND id < 2500"),
               c.merge(src, "t.id = s.id").when_matched_update({"v": "s.v"}).when_not_matched_insert_all().execute(),
               c.update({"v": "'u'"}, f"id % 11 = {m} AND v LIKE 'v%'")]
        results.append([(r.deleted, r.updated, r.inserted) for r in got])
    monkeypatch.undo()
    assert results[0] == results[1]
    a, b = (marked(c) for c in copies)
    old = live(t)                                    # the files both copies share, by name
    assert a == b and set(a) <= old
    assert sum(len(v) for v in a.values()) > 1000
    assert sorted((x["id"], x["p"], x["v"]) for x in copies[0].to_arrow().to_pylist()) == \
        sorted((x["id"], x["p"], x["v"]) for x in copies[1].to_arrow().to_pylist())


def test_sql_delete_update_and_merge_mark_rows(spark_catalog):
    """SQL's DELETE, UPDATE and MERGE INTO on an append table with vectors mark the rows (one APPEND
    snapshot each, no file rewritten), in several buckets of two partitions."""
    spark_catalog.sql("CREATE TABLE default.s (id bigint not null, p string, v string) PARTITIONED BY (p) "
                      "TBLPROPERTIES ('deletion-vectors.enabled' = 'true', 'bucket' = '2', 'bucket-key' = 'id')")
    t = spark_catalog.load_table("default.s")
    t.append(pa.table({"id": pa.array(range(40), pa.int64()), "p": ["x" if i % 2 else "y" for i in range(40)],
                       "v": [f"v{i}" for i in range(40)]}))
    files = live(t)
    spark_catalog.sql("DELETE FROM default.s WHERE id % 4 = 0")
    spark_catalog.sql("UPDATE default.s SET v = 'u' WHERE id % 4 = 1")
    spark_catalog.sql("MERGE INTO default.s t USING (SELECT id, 'm' AS v FROM range(38, 42)) s ON t.id = s.id "
                      "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, p, v) VALUES (s.id, 'x', s.v)")
    assert files <= live(t) and t.current_snapshot().commit_kind == "APPEND"
    assert sum(len(v) for f, v in marked(t).items() if f in files) == 10 + 10 + 2
    want = {i: f"v{i}" for i in range(38) if i % 4 != 0}
    want.update({i: "u" for i in want if i % 4 == 1})
    want.update({40: "m", 41: "m"})
    assert {x["id"]: x["v"] for x in t.to_arrow().to_pylist()} == want


def test_marked_rows_are_dropped_by_the_scan_or_else_joined_away(spark_catalog, paimon_spark, monkeypatch):
    """DELETE and UPDATE on files that carry vectors, and their metadata columns: the rows already
    marked are dropped inside the Parquet scan (no marked position read into a join on the driver);
    where the scan cannot drop them, joining them away gives the same marks, counts and rows."""
    from icefloe.spark import paimon_append_dml
    from icefloe.spark import paimon_metadata_columns as pmc

    joined = []
    real = pmc.without_marked

    def spy(*args, **kwargs):
        joined.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(paimon_append_dml, "without_marked", spy)
    monkeypatch.setattr(pmc, "without_marked", spy)

    def run(name):
        t = spark_catalog.create_table(name, DDL, partitioned_by=["p"], properties=PROPS)
        t.append(rows(0, 300, "x"))
        t.append(rows(300, 600, "y"))
        first = t.delete("id % 5 = 0")
        second = t.delete("id % 7 = 0")          # every file marked already
        third = t.update({"v": "'u'"}, "id % 11 = 0")
        meta = sorted((r["id"], r["__paimon_row_index"]) for r in
                      t.to_spark_with_metadata(["__paimon_row_index"]).collect())
        return ((first.deleted, second.deleted, third.updated), sorted(sorted(v) for v in marked(t).values()),
                sorted((r["id"], r["p"], r["v"]) for r in t.to_arrow().to_pylist()), meta)

    in_scan = run("db.scan")
    assert joined == []
    monkeypatch.setattr(paimon_append_dml, "vectors_in_scan", lambda *args: None)
    monkeypatch.setattr(pmc, "vectors_in_scan", lambda *args: None)
    by_join = run("db.join")
    assert joined
    assert in_scan == by_join
    counts, _marks, kept, meta = in_scan
    assert counts == (120, len([i for i in range(600) if i % 7 == 0 and i % 5]),
                      len([i for i in range(600) if i % 11 == 0 and i % 5 and i % 7]))
    assert [r[0] for r in kept] == [i for i in range(600) if i % 5 and i % 7]
    assert all(i % 11 != 0 or i in {r[0] for r in kept if r[2] == "u"} for i, _ in meta)
    assert [i for i, _ in meta] == [i for i in range(600) if i % 5 and i % 7]
