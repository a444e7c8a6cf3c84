"""``file.format = 'orc'`` on Paimon append tables: data files written as ORC (named ``.orc`` as Paimon
names them) by SQL, Spark DataFrames and Arrow, read back by Spark and by pyarrow, their manifest
statistics counted from their rows, compaction and DML keeping the format; the formats icefloe cannot
write refused at CREATE with the table left uncreated (primary-key, deletion-vector and row-tracking
tables in ORC: ``test_paimon_orc_tables.py``). Paimon 1.4's Java engine
reads icefloe's ORC tables and writes ORC tables icefloe reads (``make test-long``)."""
import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.orc as po
import pytest

from icefloe.errors import SchemaError
from tests.paimon_referee import APPEND, APPEND_COLUMNS, BundleSide, arrow, ice_files, ice_rows

DDL = "id bigint not null, v string, d double, n decimal(10,2), day date, p string"


@pytest.fixture
def pcat(spark_catalog):
    return spark_catalog


def _rows(t):
    return sorted(tuple(r.values()) for r in t.refresh().to_arrow().to_pylist())


def _live(t):
    return [e.file for e in t.refresh().plan()]


def _batch(ids, p):
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "v": [None if i % 3 == 0 else f"s{i:03d}" for i in ids],
        "d": [None if i % 4 == 1 else i / 2 for i in ids],
        "n": pa.array([decimal.Decimal(i).scaleb(-2) for i in ids], pa.decimal128(10, 2)),
        "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids],
        "p": [p] * len(ids),
    })


def _assert_orc_files(t):
    """Every live file is a real ORC file named ``.orc`` whose manifest statistics are those of its rows."""
    fields = t.table_schema.fields
    types = [f.type for f in fields]
    files = _live(t)
    assert files
    for f in files:
        assert f.file_name.startswith("data-") and f.file_name.endswith(".orc"), f.file_name
        with open(f.file_path, "rb") as fh:
            assert fh.read(3) == b"ORC"
        data = po.ORCFile(f.file_path).read()
        assert data.num_rows == f.row_count and f.file_size == os.path.getsize(f.file_path)
        mins, maxs, nulls = f.value_stats.decode(types)
        for i, field in enumerate(fields):
            col = [x for x in data.column(field.name).to_pylist()]
            present = [x for x in col if x is not None]
            assert nulls[i] == len(col) - len(present), (f.file_name, field.name)
            assert (mins[i], maxs[i]) == ((min(present), max(present)) if present else (None, None)), \
                (f.file_name, field.name)


def test_sql_create_with_orc_writes_reads_deletes_and_compacts_orc(pcat):
    pcat.sql("CREATE TABLE default.o (id bigint not null, v string, d double, n decimal(10,2), day date, "
             "p string) PARTITIONED BY (p) TBLPROPERTIES ('file.format' = 'orc')")
    t = pcat.load_table("default.o")
    assert t.table_schema.options["file.format"] == "orc"
    pcat.sql("INSERT INTO default.o VALUES (1, 'a', 0.5, 1.25, DATE '2024-01-02', 'x'), "
             "(2, NULL, NULL, 2.50, DATE '2024-01-03', 'x'), (3, 'c', 1.5, 3.75, DATE '2024-01-04', 'y')")
    t.append(_batch([10, 11, 12, 13], "x"))              # a DataFrame-free write of the same table
    _assert_orc_files(t)
    want = sorted([(1, "a", 0.5, decimal.Decimal("1.25"), dt.date(2024, 1, 2), "x"),
                   (2, None, None, decimal.Decimal("2.50"), dt.date(2024, 1, 3), "x"),
                   (3, "c", 1.5, decimal.Decimal("3.75"), dt.date(2024, 1, 4), "y"),
                   *[tuple(r.values()) for r in _batch([10, 11, 12, 13], "x").to_pylist()]])
    assert _rows(t) == want
    # Spark's own ORC reader, with a filter and a projection
    got = pcat.sql("SELECT id, v FROM default.o WHERE p = 'x' AND id > 1 ORDER BY id").collect()
    assert [tuple(r) for r in got] == [(2, None), (10, "s010"), (11, "s011"), (12, None), (13, "s013")]
    # DML rewrites the touched files as ORC
    pcat.sql("DELETE FROM default.o WHERE id = 11")
    want = [r for r in want if r[0] != 11]
    assert _rows(t) == want
    _assert_orc_files(t)
    # compaction keeps the format
    before = {f.file_name for f in _live(t)}
    t.compact()
    after = _live(t)
    assert len([f for f in after if f.file_name not in before]) >= 1
    assert len(after) == 2 and t.current_snapshot().commit_kind == "COMPACT"
    assert _rows(t) == want
    _assert_orc_files(t)


def test_arrow_writer_without_spark_writes_orc_and_reads_it_back(paimon_catalog):
    t = paimon_catalog.create_table("db.o", DDL, partitioned_by=["p"],
                                    properties={"file.format": "orc", "bucket": "2", "bucket-key": "id"})
    t.append(_batch(list(range(8)), "x"))
    t.append(_batch([20, 21], "y"))
    _assert_orc_files(t)
    assert {e.bucket for e in t.plan()} == {0, 1}
    assert _rows(t) == sorted(tuple(r.values()) for r in
                              pa.concat_tables([_batch(list(range(8)), "x"), _batch([20, 21], "y")]).to_pylist())
    # in-bucket sequence numbers continue across commits, as for parquet
    for f in _live(t):
        assert f.max_sequence_number - f.min_sequence_number == f.row_count - 1


@pytest.mark.parametrize("props, message", [
    ({"file.format": "csv"}, "file.format 'csv' is not supported"),
    ({"file.format": "orc", "file.compression": "gzip"}, "not an ORC codec"),
    ({"file.format.per.level": "0:orc,1:parquet"}, "file.format.per.level"),
])
def test_what_icefloe_cannot_write_in_orc_is_refused_at_create(paimon_catalog, props, message):
    with pytest.raises(SchemaError, match=message):
        paimon_catalog.create_table("db.bad", "id bigint not null, v string", properties=props)
    assert not paimon_catalog.table_exists("db.bad")


def test_the_option_audit_names_orc(paimon_catalog):
    from icefloe.paimon.options import AUDIT

    assert "orc" in AUDIT["file.format"][1].lower()


@pytest.mark.long
def test_paimon_java_reads_icefloe_orc_and_icefloe_reads_java_orc(paimon_bundle, paimon_spark):
    from icefloe.catalog import Catalog

    pj, java = paimon_bundle, BundleSide(paimon_bundle)
    ice = Catalog(pj.warehouse, "paimon", paimon_spark)
    props = {"file.format": "orc", "bucket": "2", "bucket-key": "id"}
    t = ice.create_table("db.orc_ice", "id bigint not null, v string, dt string", partitioned_by=["dt"],
                         properties=props)
    pj.create_table("db.orc_java", APPEND_COLUMNS, partition_keys=("dt",), options=props)
    jt = ice.load_table("db.orc_java")
    model = {}
    for i in range(3):
        rows = [(i * 10 + j, None if j == 1 else f"v{i}", "x" if j % 2 else "y") for j in range(3)]
        t.append(arrow(APPEND, rows))
        pj.write("db.orc_java", rows)
        model.update({r[0]: r for r in rows})
    want = sorted(model.values(), key=repr)
    assert java.rows("orc_ice") == want
    assert java.files("orc_ice") == ice_files(t)
    assert all(name.endswith(".orc") for name in ice_files(jt))
    assert ice_rows(jt, ["id", "v", "dt"]) == want
    # Paimon's ORC writer's statistics are the ones icefloe computes from the rows
    types = [f.type for f in jt.table_schema.fields]
    for f in _live(jt):
        data = po.ORCFile(f.file_path).read()
        mins, maxs, nulls = f.value_stats.decode(types)
        assert nulls == tuple(data.column(c).null_count for c in ("id", "v", "dt"))
        assert mins[0] == min(data.column("id").to_pylist()) and maxs[0] == max(data.column("id").to_pylist())
    # each side compacts and writes on the other's table
    pj.compact("db.orc_ice", options={"compaction.min.file-num": "2"})
    jt.compact()
    assert all(name.endswith(".orc") for name in ice_files(t) | ice_files(jt))
    assert ice_rows(t, ["id", "v", "dt"]) == want == java.rows("orc_java")
    t.delete("id = 10")
    assert java.rows("orc_ice") == [r for r in want if r[0] != 10]


def test_switching_an_append_table_to_orc_keeps_its_parquet_files_readable(paimon_catalog):
    t = paimon_catalog.create_table("db.mix", DDL, partitioned_by=["p"])
    t.append(_batch([1, 2], "x"))
    t.update_properties(set={"file.format": "orc"})
    t.append(_batch([3, 4], "x"))
    assert sorted(f.file_name.rsplit(".", 1)[1] for f in _live(t)) == ["orc", "parquet"]
    assert [r[0] for r in _rows(t)] == [1, 2, 3, 4]
    t.compact()
    assert [f.file_name.rsplit(".", 1)[1] for f in _live(t)] == ["orc"]
    assert [r[0] for r in _rows(t)] == [1, 2, 3, 4]
    _assert_orc_files(t)
