"""ORC on every kind of Paimon table and ``file.block-size``: primary-key tables write their key-value,
compacted and changelog files as ORC and read the same rows as a Parquet twin through upserts, deletes,
merges and compaction; deletion vectors are applied to ORC files (Python tasks read the marked ones);
row-tracking tables keep their row ids in the ORC files rows move to. ``file.block-size`` (or the
format's own ``parquet.block.size`` / ``orc.stripe.size``) cuts Parquet row groups and ORC stripes in
Arrow's and Spark's writers. Bad values and formats icefloe does not write are refused with the table
unchanged. Paimon 1.4's Java engine reads icefloe's ORC primary-key tables and icefloe reads Paimon's
(``make test-long``)."""
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from icefloe.core.io import strip_scheme
from icefloe.errors import SchemaError
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import kv_compact
from icefloe.paimon.schema import list_schema_ids

KV_DDL = "id bigint not null, v string, n bigint"


def _kv(ids, tag):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}-{i}" for i in ids],
                     "n": pa.array([i * 10 for i in ids], pa.int64())})


def _rows(t, **at):
    return sorted(tuple(r.values()) for r in t.refresh().to_arrow(**at).to_pylist())


def _spark_rows(t):
    return sorted(tuple(r) for r in t.refresh().to_spark().collect())


def _formats(t):
    return sorted({f.file_name.rsplit(".", 1)[1] for f in (e.file for e in t.refresh().plan())})


def _assert_orc_kv_files(t):
    """Every live file is a real ORC file with Paimon's key-value layout and the manifest's row count."""
    for e in t.refresh().plan():
        f = e.file
        assert f.file_name.endswith(".orc"), f.file_name
        with open(f.file_path, "rb") as fh:
            assert fh.read(3) == b"ORC"
        data = po.ORCFile(f.file_path).read()
        assert data.column_names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "v", "n"]
        assert data.num_rows == f.row_count
        seqs = data.column("_SEQUENCE_NUMBER").to_pylist()
        assert (min(seqs), max(seqs)) == (f.min_sequence_number, f.max_sequence_number)
        keys = data.column("_KEY_id").to_pylist()
        assert keys == sorted(set(keys))                      # each key once, in key order


def _twins(cat, name, props):
    """The same table in Parquet and in ORC."""
    return (cat.create_table(f"db.{name}_pq", KV_DDL, properties=props),
            cat.create_table(f"db.{name}_orc", KV_DDL, properties={**props, "file.format": "orc"}))


def _play(tables, rounds, seed, delete=True):
    """The same random upserts and deletes on every table; the model of the rows."""
    rnd = random.Random(seed)
    model = {}
    for step in range(rounds):
        ids = rnd.sample(range(30), rnd.randint(2, 9))
        for t in tables:
            t.append(_kv(ids, f"s{step}"))
        model.update({i: (i, f"s{step}-{i}", i * 10) for i in ids})
        if delete and step % 3 == 2:
            gone = rnd.sample(sorted(model), 2)
            for t in tables:
                t.delete(f"id in ({gone[0]}, {gone[1]})")
            for g in gone:
                del model[g]
    return sorted(model.values())


@pytest.mark.long        # over ten seconds of Spark jobs
def test_primary_key_orc_table_merges_and_compacts_as_its_parquet_twin(spark_catalog):
    pq_t, orc_t = _twins(spark_catalog, "kv", {"primary-key": "id", "bucket": "2"})
    want = _play([pq_t, orc_t], 5, seed=3)
    assert _formats(orc_t) == ["orc"] and _formats(pq_t) == ["parquet"]
    _assert_orc_kv_files(orc_t)
    assert any(e.file.level == 0 for e in orc_t.plan())      # merge reads of level-0 ORC files
    assert _rows(orc_t) == _rows(pq_t) == want
    assert _spark_rows(orc_t) == want                         # merged in Spark tasks
    assert sorted(tuple(r) for r in spark_catalog.sql("SELECT * FROM db.kv_orc WHERE n >= 100").collect()) == \
        [r for r in want if r[2] >= 100]
    # full compaction rewrites the key-value files as ORC at the top level: read without merging
    # (Spark's ORC reader), the same rows
    assert orc_t.compact() is not None and pq_t.compact() is not None
    assert {e.file.level for e in orc_t.refresh().plan()} == {kv_compact.max_level(orc_t.table_schema.options)}
    _assert_orc_kv_files(orc_t)
    assert _rows(orc_t) == _rows(pq_t) == want
    assert _spark_rows(orc_t) == want
    report = orc_t.check()
    assert report.ok and report.checked.get("primary-key files", 0) > 0, report.problems
    # an older snapshot still reads through its level-0 ORC files
    assert _rows(orc_t, snapshot_id=2) == _rows(pq_t, snapshot_id=2)


def test_merge_engines_on_orc_read_as_on_parquet(paimon_catalog):
    props = {"primary-key": "id", "bucket": "1", "merge-engine": "partial-update"}
    pq_t, orc_t = _twins(paimon_catalog, "pu", props)
    for t in (pq_t, orc_t):
        t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", None], "n": pa.array([None, 5], pa.int64())}))
        t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": [None, "b"], "n": pa.array([7, None], pa.int64())}))
    assert _rows(orc_t) == _rows(pq_t) == [(1, "a", 7), (2, "b", 5)]
    _assert_orc_kv_files(orc_t)


@pytest.mark.long        # over ten seconds of Spark jobs
def test_deletion_vectors_apply_to_orc_files(spark_catalog):
    props = {"primary-key": "id", "bucket": "2", "deletion-vectors.enabled": "true"}
    pq_t, orc_t = _twins(spark_catalog, "dv", props)
    want = _play([pq_t, orc_t], 6, seed=7)
    vectors = dv.bucket_vectors(orc_t.store, orc_t.refresh().current_snapshot())
    assert sum(card for bv in vectors.values() for _o, _s, card in bv.ranges.values()) > 0   # rows were marked
    _assert_orc_kv_files(orc_t)
    assert _rows(orc_t) == _rows(pq_t) == want
    assert _spark_rows(orc_t) == _spark_rows(pq_t) == want     # marked ORC files in Python tasks, the rest by Spark
    assert sorted(tuple(r) for r in orc_t.to_spark(where="id < 15").collect()) == [r for r in want if r[0] < 15]
    report = orc_t.check()
    assert report.ok and report.checked.get("deletion vectors", 0) > 0, report.problems


def test_changelog_files_are_written_in_the_tables_format(paimon_catalog):
    t = paimon_catalog.create_table("db.cl", KV_DDL, properties={"primary-key": "id", "bucket": "1",
                                                                 "changelog-producer": "input", "file.format": "orc"})
    t.append(_kv([1, 2], "a"))
    t.append(_kv([2], "b"))
    files = sorted(Path(strip_scheme(t.location)).rglob("changelog-*"))
    assert len(files) == 2 and all(f.name.endswith(".orc") for f in files), files
    records = [po.ORCFile(str(f)).read() for f in files]
    assert all(r.column_names[:3] == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND"] for r in records)
    assert sorted(k for r in records for k in r.column("id").to_pylist()) == [1, 2, 2]
    assert _rows(t) == [(1, "a-1", 10), (2, "b-2", 20)]


def test_row_tracking_orc_table_keeps_row_ids_through_updates_and_compaction(spark_catalog):
    props = {"row-tracking.enabled": "true"}
    tables = [spark_catalog.create_table(f"db.rt_{fmt}", "id bigint, v string", properties={**props, "file.format": fmt})
              for fmt in ("parquet", "orc")]

    def tracked(t):
        return sorted(tuple(r) for r in t.refresh().to_spark_with_metadata(["_ROW_ID", "_SEQUENCE_NUMBER"]).collect())

    for t in tables:
        t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}))
        t.append(pa.table({"id": pa.array([3], pa.int64()), "v": ["c"]}))
        t.update({"v": "'B'"}, "id = 2")                 # the moved rows keep their ids, as columns of an ORC file
    want = [(1, "a", 0, 1), (2, "B", 1, 3), (3, "c", 2, 2)]
    assert tracked(tables[0]) == tracked(tables[1]) == want
    orc_t = tables[1]
    moved = [e.file for e in orc_t.refresh().plan() if e.file.write_cols]
    assert moved and all(f.file_name.endswith(".orc") for f in moved)
    assert moved[0].write_cols == ("id", "v", "_ROW_ID", "_SEQUENCE_NUMBER")
    assert "_ROW_ID" in po.ORCFile(moved[0].file_path).schema.names
    orc_t.rewrite_data_files()
    assert _formats(orc_t) == ["orc"] and tracked(orc_t) == want


def test_iceberg_metadata_of_an_orc_table_names_its_files_orc(paimon_catalog):
    t = paimon_catalog.create_table("db.ib", "id bigint not null, v string",
                                    properties={"file.format": "orc", "metadata.iceberg.storage": "table-location"})
    t.append(_kv([1, 2], "a").select(["id", "v"]))
    files = t.iceberg().plan_files()
    assert files and all(f.file_path.endswith(".orc") for f in files)
    assert {str(getattr(f.file_format, "value", f.file_format)).upper() for f in files} == {"ORC"}


# ---------------------------------------------------------------- file.block-size
def _many(n):
    return pa.table({"id": pa.array(range(n), pa.int64()), "v": [f"value-{i:08d}" for i in range(n)]})


def test_block_size_cuts_arrow_parquet_row_groups(paimon_catalog):
    plain = paimon_catalog.create_table("db.b0", "id bigint not null, v string")
    sized = paimon_catalog.create_table("db.b1", "id bigint not null, v string", properties={"file.block-size": "64 kb"})
    for t in (plain, sized):
        t.append(_many(30_000))
    [p0] = [e.file.file_path for e in plain.plan()]
    [p1] = [e.file.file_path for e in sized.plan()]
    assert pq.ParquetFile(p0).num_row_groups == 1
    md = pq.ParquetFile(p1).metadata
    assert md.num_row_groups > 5
    # each row group holds about the size asked for (its rows' in-memory size)
    per_row = _many(30_000).nbytes / 30_000
    assert all(md.row_group(i).num_rows * per_row <= 64 * 1024 + per_row for i in range(md.num_row_groups))
    assert _rows(sized) == _rows(plain)


def test_block_size_cuts_orc_stripes_of_primary_key_files(paimon_catalog):
    props = {"primary-key": "id", "bucket": "1", "file.format": "orc"}
    plain = paimon_catalog.create_table("db.s0", "id bigint not null, v string", properties=props)
    sized = paimon_catalog.create_table("db.s1", "id bigint not null, v string",
                                        properties={**props, "file.block-size": "64 kb"})
    rnd = random.Random(11)       # values that do not compress: ORC's stripes count compressed bytes
    data = pa.table({"id": pa.array(rnd.sample(range(10**12), 30_000), pa.int64()),
                     "v": [rnd.randbytes(8).hex() for _ in range(30_000)]})
    for t in (plain, sized):
        t.append(data)
    [p0] = [e.file.file_path for e in plain.plan()]
    [p1] = [e.file.file_path for e in sized.plan()]
    assert po.ORCFile(p0).nstripes == 1
    assert po.ORCFile(p1).nstripes > 2
    assert _rows(sized) == _rows(plain)


def test_format_keys_give_the_size_and_file_block_size_wins(paimon_catalog):
    by_key = paimon_catalog.create_table("db.k", "id bigint not null, v string",
                                         properties={"parquet.block.size": "65536"})
    both = paimon_catalog.create_table("db.kb", "id bigint not null, v string",
                                       properties={"parquet.block.size": "65536", "file.block-size": "1 mb"})
    for t in (by_key, both):
        t.append(_many(30_000))
    n_key = pq.ParquetFile(by_key.plan()[0].file.file_path).num_row_groups
    n_both = pq.ParquetFile(both.plan()[0].file.file_path).num_row_groups
    assert n_key > 5 and n_both < n_key
    assert by_key.table_schema.core_options.block_size() == 65536
    assert both.table_schema.core_options.block_size() == 1 << 20


def test_spark_parquet_writer_takes_the_block_size(spark_catalog, paimon_spark):
    plain = spark_catalog.create_table("db.sp0", "id bigint not null, v string")
    sized = spark_catalog.create_table("db.sp1", "id bigint not null, v string", properties={"file.block-size": "64 kb"})
    df = paimon_spark.range(0, 40_000, 1, 1).selectExpr("id", "concat('value-', lpad(cast(id as string), 12, '0')) as v")
    for t in (plain, sized):
        t.append(df)
    [p0] = [e.file.file_path for e in plain.plan()]
    [p1] = [e.file.file_path for e in sized.plan()]
    assert pq.ParquetFile(p0).num_row_groups == 1
    assert pq.ParquetFile(p1).num_row_groups > 3
    assert _rows(sized) == _rows(plain)


@pytest.mark.parametrize("props, message", [
    ({"file.block-size": "lots"}, "invalid memory size 'lots'"),
    ({"file.block-size": "0"}, "'file.block-size' must be a positive size"),
    ({"orc.stripe.size": "big", "file.format": "orc"}, "invalid memory size 'big'"),
    ({"file.format": "lance"}, "file.format 'lance' is not supported"),
    ({"file.format": "orc", "changelog-file.format": "parquet", "primary-key": "id", "bucket": "1"},
     "changelog-file.format 'parquet'"),
])
def test_bad_formats_and_sizes_are_refused_at_create_and_alter(paimon_catalog, props, message):
    with pytest.raises(SchemaError, match=message):
        paimon_catalog.create_table("db.bad", "id bigint not null, v string", properties=props)
    assert not paimon_catalog.table_exists("db.bad")
    keys = {"primary-key": "id", "bucket": "1"} if "primary-key" in props else {}
    t = paimon_catalog.create_table("db.ok", "id bigint not null, v string", properties=keys)
    t.append(_kv([1], "a").select(["id", "v"]))
    with pytest.raises(SchemaError, match=message):
        t.update_properties(set={k: v for k, v in props.items() if k not in keys})
    assert list(list_schema_ids(t.io, t.location)) == [0]
    assert t.refresh().table_schema.core_options.file_format == "parquet"
    assert _rows(t) == [(1, "a-1")]


def test_a_primary_key_table_switched_to_orc_reads_both_formats(paimon_catalog):
    t = paimon_catalog.create_table("db.sw", KV_DDL, properties={"primary-key": "id", "bucket": "1"})
    t.append(_kv([1, 2, 3], "a"))
    t.update_properties(set={"file.format": "orc"})
    t.append(_kv([2, 4], "b"))
    assert _formats(t) == ["orc", "parquet"]
    want = [(1, "a-1", 10), (2, "b-2", 20), (3, "a-3", 30), (4, "b-4", 40)]
    assert _rows(t) == want
    t.compact()
    assert _formats(t) == ["orc"] and _rows(t) == want


# ---------------------------------------------------------------- Paimon 1.4's Java engine
@pytest.mark.long
def test_paimon_java_and_icefloe_read_each_others_orc_primary_key_tables(paimon_bundle, paimon_spark):
    from icefloe.catalog import Catalog
    from tests.paimon_referee import KV, KV_COLUMNS, BundleSide, arrow, ice_files, ice_rows

    pj, java = paimon_bundle, BundleSide(paimon_bundle)
    ice = Catalog(pj.warehouse, "paimon", paimon_spark)
    for suffix, extra in (("", {}), ("_dv", {"deletion-vectors.enabled": "true"})):
        props = {"file.format": "orc", "bucket": "2", "file.block-size": "1 mb", **extra}
        t = ice.create_table(f"db.orc_pk_ice{suffix}", "id bigint not null, v string",
                             properties={"primary-key": "id", **props})
        pj.create_table(f"db.orc_pk_java{suffix}", KV_COLUMNS, primary_keys=("id",), options=props)
        jt = ice.load_table(f"db.orc_pk_java{suffix}")
        model = {}
        for i in range(3):
            rows = [(i * 3 + j, f"v{i}") for j in range(4)]         # keys overlap between rounds
            t.append(arrow(KV, rows))
            pj.write(f"db.orc_pk_java{suffix}", rows)
            model.update(dict(rows))
        want = sorted(model.items(), key=repr)
        assert java.rows(f"orc_pk_ice{suffix}") == want
        assert java.files(f"orc_pk_ice{suffix}") == ice_files(t)
        assert all(name.endswith(".orc") for name in ice_files(jt))
        assert ice_rows(jt, ["id", "v"]) == want == ice_rows(t, ["id", "v"])
        # deletes both ways; each side compacts the other's table
        t.delete("id = 3")
        java.delete(f"orc_pk_java{suffix}", (4, "v1"))
        jt.refresh().delete("id = 3")
        pj.write(f"db.orc_pk_ice{suffix}", [(4, "v1")], kinds=["-D"])
        model.pop(3)
        model.pop(4)
        want = sorted(model.items(), key=repr)
        pj.compact(f"db.orc_pk_ice{suffix}")
        jt.refresh().compact()
        assert all(name.endswith(".orc") for name in ice_files(t) | ice_files(jt))
        assert ice_rows(t, ["id", "v"]) == want == java.rows(f"orc_pk_ice{suffix}")
        assert ice_rows(jt, ["id", "v"]) == want == java.rows(f"orc_pk_java{suffix}")
