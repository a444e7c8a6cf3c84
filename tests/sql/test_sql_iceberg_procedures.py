"""Iceberg's spark-procedures page, the procedures and arguments icefloe lacked:
set_current_snapshot (``ref``, a non-ancestor target), expire_snapshots (``snapshot_ids``),
ancestors_of, register_table, rewrite_manifests (``spec_id``, ``use_caching``)."""
import json

import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError


def _meta(t) -> dict:
    return json.loads(t.io.read_bytes(t.refresh().metadata_location))


def _ids(run, table="db.p"):
    return sorted(r[0] for r in run(f"SELECT id FROM {table}").collect())


def test_snapshot_procedures(catalog):
    run = catalog.sql
    run("CREATE TABLE db.p (id bigint) USING iceberg")
    run("INSERT INTO db.p VALUES (1)")
    run("INSERT INTO db.p VALUES (2)")
    t = catalog.load_table("db.p")
    first, second = [s["snapshot-id"] for s in _meta(t)["snapshots"]]
    out = [tuple(r) for r in run("CALL system.ancestors_of('db.p')").collect()]
    assert [r[0] for r in out] == [second, first]
    assert out[0][1] == _meta(t)["snapshots"][1]["timestamp-ms"]
    assert [tuple(r)[0] for r in run(f"CALL system.ancestors_of('db.p', {first})").collect()] == [first]

    # a branch off the first snapshot: its head is no ancestor of main, and still can become current
    run(f"ALTER TABLE db.p CREATE BRANCH side AS OF VERSION {first}")
    run("INSERT INTO db.p.branch_side VALUES (3)")
    side = _meta(t)["refs"]["side"]["snapshot-id"]
    out = [tuple(r) for r in run(f"CALL system.set_current_snapshot('db.p', {side})").collect()]
    assert out == [(second, side)]
    meta = _meta(t)
    assert meta["current-snapshot-id"] == side == meta["refs"]["main"]["snapshot-id"]
    assert _ids(run) == [1, 3]
    out = [tuple(r) for r in run(f"CALL system.set_current_snapshot(table => 'db.p', snapshot_id => {second})")
           .collect()]
    assert out == [(side, second)] and _ids(run) == [1, 2]
    run("ALTER TABLE db.p CREATE TAG t1 AS OF VERSION " + str(first))
    out = [tuple(r) for r in run("CALL system.set_current_snapshot(table => 'db.p', ref => 't1')").collect()]
    assert out == [(second, first)] and _ids(run) == [1]
    with pytest.raises(SqlError, match="either snapshot_id or ref"):
        run(f"CALL system.set_current_snapshot(table => 'db.p', snapshot_id => {first}, ref => 't1')")
    run(f"CALL system.set_current_snapshot('db.p', {second})")

    # expire one snapshot by id, whatever its age; a ref's head is refused
    with pytest.raises(SqlError, match="still refers to it"):
        run(f"CALL system.expire_snapshots(table => 'db.p', snapshot_ids => array({side}))")
    run("ALTER TABLE db.p DROP TAG t1")
    out = run(f"CALL system.expire_snapshots(table => 'db.p', snapshot_ids => array({first}))").collect()
    assert len(out) == 1
    assert first not in [s["snapshot-id"] for s in _meta(t)["snapshots"]]
    assert _ids(run) == [1, 2]


def test_register_table_and_rewrite_manifests_by_spec(catalog, spark, tmp_path):
    import icefloe

    run = catalog.sql
    other = icefloe.Catalog(str(tmp_path / "elsewhere"), spark=spark)     # a table of another catalog
    other.sql("CREATE TABLE db.ext (id bigint, k string) USING iceberg")
    other.sql("INSERT INTO db.ext VALUES (1, 'a')")
    other.sql("INSERT INTO db.ext VALUES (2, 'b')")
    ext = other.load_table("db.ext")
    out = [tuple(r) for r in run(f"CALL system.register_table(table => 'db.adopted', "
                                 f"metadata_file => '{ext.metadata_location}')").collect()]
    assert out == [(ext.current_snapshot().snapshot_id, 2, 2)]
    assert _ids(run, "db.adopted") == [1, 2]
    with pytest.raises(SqlError, match="register_table"):
        run(f"CALL system.register_table('db.adopted', '{ext.metadata_location}')")

    run("CREATE TABLE db.src (id bigint, k string) USING iceberg")
    run("INSERT INTO db.src VALUES (1, 'a')")
    run("INSERT INTO db.src VALUES (2, 'b')")
    src = catalog.load_table("db.src")
    with pytest.raises(SqlError, match="share a location"):     # a second name for db.src's files
        run(f"CALL system.register_table('db.copy', '{src.metadata_location}')")

    run("ALTER TABLE db.src ADD PARTITION FIELD k")
    run("INSERT INTO db.src VALUES (3, 'c')")
    before = {m["path"]: m["partition_spec_id"] for m in src.refresh().manifest_files()}
    assert sorted(before.values()) == [0, 0, 1]
    out = [tuple(r) for r in run("CALL system.rewrite_manifests(table => 'db.src', spec_id => 0, "
                                 "use_caching => false)").collect()]
    after = {m["path"]: m["partition_spec_id"] for m in src.refresh().manifest_files()}
    assert out == [(2, 1)]
    assert [p for p, s in before.items() if s == 1] == [p for p, s in after.items() if s == 1]   # kept
    assert _meta(src)["snapshots"][-1]["summary"]["manifests-kept"] == "1"
    assert _ids(run, "db.src") == [1, 2, 3]

    # sort_by clusters by the partition fields it names; an unknown one is an error, nothing written
    run("INSERT INTO db.src VALUES (4, 'a'), (5, 'd')")
    out = [tuple(r) for r in run("CALL system.rewrite_manifests(table => 'db.src', spec_id => 1, "
                                 "sort_by => array('k'))").collect()]
    assert out == [(2, 1)]
    entries = [r["data_file"]["partition"]["k"] for r in src.refresh().metadata_table("entries").to_pylist()
               if r["data_file"]["spec_id"] == 1]
    assert entries == sorted(entries) == ["a", "c", "d"]
    location = src.refresh().metadata_location
    with pytest.raises(SqlError, match="has no field nope; its fields are k"):
        run("CALL system.rewrite_manifests(table => 'db.src', spec_id => 1, sort_by => array('nope'))")
    with pytest.raises(NotSupportedYetError, match="target_manifest_size_bytes"):
        run("CALL system.rewrite_manifests(table => 'db.src', target_manifest_size_bytes => 1024)")
    assert src.refresh().metadata_location == location


def _delete_files(t) -> list:
    return sorted((r["file_path"], r["partition"]["part"], r["file_size_in_bytes"])
                  for r in t.refresh().metadata_table("delete_files").to_pylist())


def test_rewrite_position_delete_files(catalog):
    import pyarrow.parquet as pq

    run = catalog.sql
    run("CREATE TABLE db.pd (id bigint, part string) USING iceberg PARTITIONED BY (part) "
        "TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'format-version' = '2')")
    run("INSERT INTO db.pd SELECT id, IF(id < 10, 'a', 'b') FROM range(20)")
    for ids in ("1", "2, 3", "4"):
        run(f"DELETE FROM db.pd WHERE id IN ({ids})")
    run("DELETE FROM db.pd WHERE id = 15")
    t = catalog.load_table("db.pd")
    before = _delete_files(t)
    assert sorted(p for _, p, _ in before) == ["a", "a", "a", "b"]
    expected = [0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19]

    # Iceberg's defaults: three small files are fewer than min-input-files (5): nothing to do
    out = [tuple(r) for r in run("CALL system.rewrite_position_delete_files('db.pd')").collect()]
    assert out == [(0, 0, 0, 0)] and _delete_files(t) == before
    with pytest.raises(SqlError, match="unknown rewrite_position_delete_files option 'min-input-file'"):
        run("CALL system.rewrite_position_delete_files(table => 'db.pd', options => map('min-input-file', '2'))")
    with pytest.raises(SqlError, match="partial-progress.enabled=true is not supported: icefloe rewrites every"):
        run("CALL system.rewrite_position_delete_files(table => 'db.pd', "
            "options => map('partial-progress.enabled', 'true'))")
    assert _delete_files(t) == before

    out = [tuple(r) for r in run("CALL system.rewrite_position_delete_files(table => 'db.pd', "
                                 "options => map('min-input-files', '2'))").collect()]
    after = _delete_files(t)
    added = [f for f in after if f not in before]
    assert [p for _, p, _ in added] == ["a"] and [f for f in after if f[1] == "b"] == [f for f in before if f[1] == "b"]
    assert out == [(3, 1, sum(s for _, p, s in before if p == "a"), added[0][2])]
    rows = pq.read_table(t.io.open_read(added[0][0])).to_pylist()
    assert [r["pos"] for r in rows] == [1, 2, 3, 4] and len({r["file_path"] for r in rows}) == 1
    meta = _meta(t)
    assert meta["snapshots"][-1]["summary"]["operation"] == "replace"
    assert _ids(run, "db.pd") == expected

    # where limits the rewrite to the delete files of the data files it selects
    run("DELETE FROM db.pd WHERE id = 16")
    out = [tuple(r) for r in run("CALL system.rewrite_position_delete_files(table => 'db.pd', "
                                 "where => \"part = 'a'\", options => map('rewrite-all', 'true'))").collect()]
    assert [r[:2] for r in out] == [(1, 1)]
    assert sorted(p for _, p, _ in _delete_files(t)) == ["a", "b", "b"]
    assert _ids(run, "db.pd") == [i for i in expected if i != 16]

    # the deletes of a data file no longer live (a whole partition deleted) are dropped
    run("DELETE FROM db.pd WHERE part = 'b'")
    dangling = _delete_files(t)
    assert sorted(p for _, p, _ in dangling) == ["a", "b", "b"]
    out = [tuple(r) for r in run("CALL system.rewrite_position_delete_files(table => 'db.pd', "
                                 "options => map('rewrite-all', 'true'))").collect()]
    after = _delete_files(t)
    assert [p for _, p, _ in after] == ["a"]
    assert out == [(3, 1, sum(f[2] for f in dangling), after[0][2])]
    assert _ids(run, "db.pd") == [i for i in expected if i < 10]

    # format v3 keeps positions in deletion vectors: nothing to rewrite, as in Iceberg
    run("CREATE TABLE db.dv (id bigint) USING iceberg TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', "
        "'format-version' = '3')")
    run("INSERT INTO db.dv SELECT id FROM range(5)")
    run("DELETE FROM db.dv WHERE id = 1")
    dv = catalog.load_table("db.dv")
    location = dv.metadata_location
    out = [tuple(r) for r in run("CALL system.rewrite_position_delete_files(table => 'db.dv', "
                                 "options => map('rewrite-all', 'true'))").collect()]
    assert out == [(0, 0, 0, 0)] and dv.refresh().metadata_location == location


def test_rewrite_position_delete_files_turns_v2_deletes_of_an_upgraded_table_into_vectors(catalog):
    run = catalog.sql
    run("CREATE TABLE db.up (id bigint, part string) USING iceberg PARTITIONED BY (part) "
        "TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'format-version' = '2', "
        "'write.delete.granularity' = 'partition')")
    run("INSERT INTO db.up SELECT id, 'a' FROM range(10)")
    run("INSERT INTO db.up SELECT id, 'a' FROM range(10, 20)")
    run("DELETE FROM db.up WHERE id IN (1, 12)")       # one v2 position delete file for both data files
    run("ALTER TABLE db.up SET TBLPROPERTIES ('format-version' = '3')")
    run("DELETE FROM db.up WHERE id = 2")      # a vector for the first data file, holding its v2 delete too
    t = catalog.load_table("db.up")
    expected = sorted(i for i in range(20) if i not in (1, 2, 12))
    formats = lambda: sorted(r[0] for r in run("SELECT file_format FROM db.up.delete_files").collect())  # noqa: E731
    assert formats() == ["PARQUET", "PUFFIN"]
    # Iceberg's size rules still choose the groups: one small file is no group by default
    out = [tuple(r) for r in run("CALL system.rewrite_position_delete_files('db.up')").collect()]
    assert out == [(0, 0, 0, 0)] and formats() == ["PARQUET", "PUFFIN"]

    before = _delete_files(t)
    out = [tuple(r) for r in run("CALL system.rewrite_position_delete_files(table => 'db.up', "
                                 "options => map('rewrite-all', 'true'))").collect()]
    # the v2 file becomes a vector for the second data file; the first one's vector holds its
    # positions already (readers take a data file's vector over v2 files): one vector per data file
    assert out[0][:3] == (1, 1, sum(size for path, _, size in before if path.endswith(".parquet")))
    assert formats() == ["PUFFIN", "PUFFIN"]
    vectors = {r[0]: r[1] for r in run("SELECT referenced_data_file, record_count FROM db.up.delete_files").collect()}
    data = [r[0] for r in run("SELECT file_path FROM db.up.files WHERE content = 0 ORDER BY readable_metrics.id.lower_bound")
            .collect()]
    assert vectors == {data[0]: 2, data[1]: 1}
    assert _meta(t)["snapshots"][-1]["summary"]["operation"] == "replace"
    assert sorted(r[0] for r in run("SELECT id FROM db.up").collect()) == expected
    # nothing left to turn into vectors
    assert [tuple(r) for r in run("CALL system.rewrite_position_delete_files(table => 'db.up', "
                                  "options => map('rewrite-all', 'true'))").collect()] == [(0, 0, 0, 0)]


def test_compute_table_stats_writes_theta_sketches_datasketches_reads(catalog):
    import datasketches

    from icefloe.iceberg.puffin import read_footer

    run = catalog.sql
    run("CREATE TABLE db.st (id bigint, name string, d date, v double, ok boolean, amount decimal(10,2), "
        "n int) USING iceberg")
    run("INSERT INTO db.st SELECT id, concat('n', id % 7), date_add(DATE '2024-01-01', CAST(id % 5 AS INT)), "
        "id % 3 * 0.5, id % 2 = 0, CAST(id % 4 AS DECIMAL(10,2)), IF(id % 6 = 0, NULL, CAST(id % 6 AS INT)) "
        "FROM range(40)")
    t = catalog.load_table("db.st")
    first = t.current_snapshot().snapshot_id
    out = [tuple(r) for r in run("CALL system.compute_table_stats('db.st')").collect()]
    meta = _meta(t)
    [stats] = meta["statistics"]
    assert out == [(stats["statistics-path"],)] and stats["snapshot-id"] == first
    ndv = {b["fields"][0]: int(b["properties"]["ndv"]) for b in stats["blob-metadata"]}
    assert ndv == {1: 40, 2: 7, 3: 5, 4: 3, 5: 2, 6: 4, 7: 5}        # nulls are not values
    blobs = read_footer(t.io, stats["statistics-path"])
    assert [b.type for b in blobs] == ["apache-datasketches-theta-v1"] * 7
    data = t.io.read_bytes(stats["statistics-path"])
    assert stats["file-size-in-bytes"] == len(data)
    sketches = {b.fields[0]: data[b.offset:b.offset + b.length] for b in blobs}
    for field_id, blob in sketches.items():
        assert datasketches.compact_theta_sketch.deserialize(blob).get_estimate() == ndv[field_id]
    # the library's own sketches of the same values (longs as 8 bytes, strings as UTF-8): the same bytes
    ids, names = datasketches.update_theta_sketch(), datasketches.update_theta_sketch()
    for i in range(40):
        ids.update(i)
        names.update(f"n{i % 7}")
    assert sketches[1] == ids.compact().serialize() and sketches[2] == names.compact().serialize()

    # columns and snapshot_id; errors name what is wrong and leave the table as it was
    run("INSERT INTO db.st (id, name) VALUES (100, 'x')")
    out = run(f"CALL system.compute_table_stats(table => 'db.st', snapshot_id => {first}, "
              "columns => array('name', 'n'))").collect()
    meta = _meta(t)
    assert len(meta["statistics"]) == 1              # one statistics file per snapshot: replaced
    assert [b["fields"] for b in meta["statistics"][0]["blob-metadata"]] == [[2], [7]]
    location = t.refresh().metadata_location
    with pytest.raises(SqlError, match="no top-level column 'nope'"):
        run("CALL system.compute_table_stats(table => 'db.st', columns => array('nope'))")
    with pytest.raises(SqlError, match="unknown argument 'column'"):
        run("CALL system.compute_table_stats(table => 'db.st', column => array('id'))")
    assert t.refresh().metadata_location == location
    run("CALL system.compute_table_stats(table => 'db.st', columns => array('id'))")
    assert sorted(s["snapshot-id"] for s in _meta(t)["statistics"]) == sorted([first, t.current_snapshot().snapshot_id])


def test_remove_orphan_files_location_and_file_list_view(catalog, spark):
    import os

    run = catalog.sql
    run("CREATE TABLE db.orph (id bigint) USING iceberg")
    run("INSERT INTO db.orph VALUES (1)")
    t = catalog.load_table("db.orph")
    root = t.location
    for rel in ("data/a/x.parquet", "data/b/y.parquet", "metadata/junk.avro"):
        os.makedirs(os.path.dirname(f"{root}/{rel}"), exist_ok=True)
        with open(f"{root}/{rel}", "wb") as fh:
            fh.write(b"orphan")
    later = "TIMESTAMP '2999-01-01 00:00:00'"

    def orphans(args: str) -> list:
        out = run(f"CALL system.remove_orphan_files(table => 'db.orph', older_than => {later}, {args})").collect()
        return sorted(os.path.relpath(r[0], os.path.realpath(root)) for r in out)

    # location: only that directory; the JVM action's tuning arguments are accepted
    assert orphans(f"location => '{root}/data/a', dry_run => true, max_concurrent_deletes => 4, "
                   "stream_results => true, prefix_listing => false") == ["data/a/x.parquet"]
    # file_list_view: only the files the view lists, by their last_modified
    spark.createDataFrame([(f"{root}/data/b/y.parquet",), (f"{root}/metadata/junk.avro",)], "file_path string") \
        .selectExpr("file_path", "TIMESTAMP '2020-01-01 00:00:00' AS last_modified").createOrReplaceTempView("listed")
    assert orphans("file_list_view => 'listed'") == ["data/b/y.parquet", "metadata/junk.avro"]
    assert not os.path.exists(f"{root}/data/b/y.parquet") and os.path.exists(f"{root}/data/a/x.parquet")
    with pytest.raises(SqlError, match="is not inside the table's location"):
        orphans("location => '/tmp', dry_run => true")
    assert orphans("equal_schemes => map('s3a', 's3'), dry_run => true") == ["data/a/x.parquet"]
    with pytest.raises(SqlError, match="file_list_view nope must be a view"):
        orphans("file_list_view => 'nope'")
    assert _ids(run, "db.orph") == [1]


def test_compute_partition_stats_writes_the_specs_file(catalog):
    import pyarrow.parquet as pq

    run = catalog.sql
    run("CREATE TABLE db.ps (id bigint, k string) USING iceberg PARTITIONED BY (k) "
        "TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'format-version' = '2')")
    run("INSERT INTO db.ps VALUES (1, 'b'), (2, 'a'), (3, 'b')")
    run("INSERT INTO db.ps VALUES (4, 'c')")
    run("DELETE FROM db.ps WHERE id = 3")
    t = catalog.load_table("db.ps")
    snap = t.current_snapshot()
    out = [tuple(r) for r in run("CALL system.compute_partition_stats('db.ps')").collect()]
    [entry] = _meta(t)["partition-statistics"]
    assert out == [(entry["statistics-path"],)] and entry["snapshot-id"] == snap.snapshot_id
    assert entry["file-size-in-bytes"] == t.io.size(entry["statistics-path"])
    table = pq.read_table(t.io.open_read(entry["statistics-path"]))
    ids = {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in table.schema}
    assert ids == {"partition": 1, "spec_id": 2, "data_record_count": 3, "data_file_count": 4,
                   "total_data_file_size_in_bytes": 5, "position_delete_record_count": 6,
                   "position_delete_file_count": 7, "equality_delete_record_count": 8,
                   "equality_delete_file_count": 9, "total_record_count": 10, "last_updated_at": 11,
                   "last_updated_snapshot_id": 12}
    assert int(table.schema.field("partition").type[0].metadata[b"PARQUET:field_id"]) == 1000
    rows = [(r["partition"]["k"], r["data_record_count"], r["data_file_count"], r["position_delete_record_count"],
             r["position_delete_file_count"], r["last_updated_snapshot_id"]) for r in table.to_pylist()]
    assert rows == [("a", 1, 1, 0, 0, rows[0][5]), ("b", 2, 1, 1, 1, snap.snapshot_id), ("c", 1, 1, 0, 0, rows[2][5])]
    assert {r["last_updated_at"] for r in table.to_pylist() if r["partition"]["k"] == "b"} == {snap.timestamp_ms}
    assert {r["spec_id"] for r in table.to_pylist()} == {0}

    with pytest.raises(SqlError, match="is not partitioned"):
        run("CREATE TABLE db.flat (id bigint) USING iceberg")
        run("INSERT INTO db.flat VALUES (1)")
        run("CALL system.compute_partition_stats(table => 'db.flat')")


def test_compute_partition_stats_of_a_v3_table_counts_deletion_vectors(catalog):
    import pyarrow.parquet as pq

    run = catalog.sql
    # v2 first: a position delete file in partition b; then v3: deletion vectors in b and c
    run("CREATE TABLE db.ps3 (id bigint, k string) USING iceberg PARTITIONED BY (k) "
        "TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'format-version' = '2')")
    run("INSERT INTO db.ps3 VALUES (1, 'b'), (2, 'a'), (3, 'b'), (4, 'c'), (5, 'c'), (6, 'c')")
    run("INSERT INTO db.ps3 VALUES (7, 'b'), (8, 'd'), (9, 'b')")
    run("DELETE FROM db.ps3 WHERE id = 3")
    run("ALTER TABLE db.ps3 SET TBLPROPERTIES ('format-version' = '3')")
    run("DELETE FROM db.ps3 WHERE id = 7")
    run("DELETE FROM db.ps3 WHERE id IN (4, 5)")
    t = catalog.load_table("db.ps3")
    assert _meta(t)["format-version"] == 3
    snap = t.current_snapshot()
    [(path,)] = [tuple(r) for r in run("CALL system.compute_partition_stats('db.ps3')").collect()]
    [entry] = _meta(t)["partition-statistics"]
    assert entry["statistics-path"] == path and entry["snapshot-id"] == snap.snapshot_id
    table = pq.read_table(t.io.open_read(path))
    fields = {f.name: (int(f.metadata[b"PARQUET:field_id"]), f.nullable) for f in table.schema}
    assert list(fields) == ["partition", "spec_id", "data_record_count", "data_file_count",
                            "total_data_file_size_in_bytes", "position_delete_record_count",
                            "position_delete_file_count", "equality_delete_record_count",
                            "equality_delete_file_count", "total_record_count", "last_updated_at",
                            "last_updated_snapshot_id", "dv_count"]
    assert fields["dv_count"] == (13, False)
    assert [fields[n] for n in ("position_delete_record_count", "position_delete_file_count",
                                "equality_delete_record_count", "equality_delete_file_count")] == \
        [(6, False), (7, False), (8, False), (9, False)]
    assert fields["total_record_count"] == (10, True) and fields["partition"] == (1, False)

    # what the table holds, from its own file listing
    files = t.metadata_table("files").to_pylist()
    held = {}
    for f in files:
        h = held.setdefault(f["partition"]["k"], {"data": [], "pos": [], "dv": []})
        kind = "data" if f["content"] == 0 else "dv" if f["file_format"] == "PUFFIN" else "pos"
        h[kind].append(f)
    assert {k: (len(h["data"]), len(h["pos"]), len(h["dv"])) for k, h in held.items()} == \
        {"a": (1, 0, 0), "b": (2, 1, 1), "c": (1, 0, 1), "d": (1, 0, 0)}
    rows = table.to_pylist()
    assert [r["partition"]["k"] for r in rows] == ["a", "b", "c", "d"]
    for r in rows:
        h = held[r["partition"]["k"]]
        assert r["spec_id"] == 0
        assert r["data_record_count"] == sum(f["record_count"] for f in h["data"])
        assert r["data_file_count"] == len(h["data"])
        assert r["total_data_file_size_in_bytes"] == sum(f["file_size_in_bytes"] for f in h["data"])
        assert r["position_delete_record_count"] == sum(f["record_count"] for f in h["pos"] + h["dv"])
        assert r["position_delete_file_count"] == len(h["pos"])
        assert r["dv_count"] == len(h["dv"])
        assert (r["equality_delete_record_count"], r["equality_delete_file_count"]) == (0, 0)
    by_k = {r["partition"]["k"]: r for r in rows}
    assert [(by_k[k]["data_record_count"], by_k[k]["position_delete_record_count"], by_k[k]["dv_count"])
            for k in "abcd"] == [(1, 0, 0), (4, 2, 1), (3, 2, 1), (1, 0, 0)]
    # the live count where metadata gives it: none for b (a position delete file needs reading data)
    live = {k: len([1 for r in run(f"SELECT id FROM db.ps3 WHERE k = '{k}'").collect()]) for k in "acd"}
    assert {k: by_k[k]["total_record_count"] for k in "abcd"} == {"a": live["a"], "b": None, "c": live["c"],
                                                                   "d": live["d"]} == {"a": 1, "b": None, "c": 1,
                                                                                       "d": 1}
    assert by_k["c"]["last_updated_snapshot_id"] == snap.snapshot_id
    assert by_k["c"]["last_updated_at"] == snap.timestamp_ms


def test_partition_stats_rows_are_sorted_by_partition_nulls_first(catalog):
    import pyarrow.parquet as pq

    run = catalog.sql
    run("CREATE TABLE db.ps_sort (id bigint, n int) USING iceberg PARTITIONED BY (n)")
    run("INSERT INTO db.ps_sort VALUES (1, 10), (2, 9), (3, NULL), (4, 100)")
    path = run("CALL system.compute_partition_stats('db.ps_sort')").collect()[0][0]
    t = catalog.load_table("db.ps_sort")
    rows = pq.read_table(t.io.open_read(path)).to_pylist()
    assert [(r["partition"]["n"], r["data_record_count"], r["total_record_count"]) for r in rows] == \
        [(None, 1, 1), (9, 1, 1), (10, 1, 1), (100, 1, 1)]
