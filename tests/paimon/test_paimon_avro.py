"""``file.format = 'avro'`` on Paimon tables: data files written with the Avro schema Paimon derives
from the columns' types (checked field by field), read back by pyarrow-free fastavro and by Spark
(through Python tasks), on append tables (SQL, DML, compaction) and primary-key tables (merges,
deletion vectors, compaction) with the same rows as a Parquet twin; what Avro cannot hold refused
with the table unchanged. Paimon 1.4's Java engine reads icefloe's Avro tables and icefloe reads
Paimon's (``make test-long``)."""
import datetime as dt
import decimal
import io
import json
import random

import fastavro
import pyarrow as pa
import pytest

from icefloe.errors import SchemaError
from icefloe.paimon import avro_data
from icefloe.paimon.schema import list_schema_ids

WIDE = ("id bigint not null, b boolean, t tinyint, i int, f float, d double, s string, bin binary, "
        "n decimal(12,3), day date, ts timestamp_ntz, ltz timestamp, tags array<int>, m map<string,bigint>, "
        "im map<int,string>, r struct<x:int,y:string>")


def _wide(ids):
    base = dt.datetime(2024, 3, 1, 12, 30, 15, 123456)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "b": [i % 2 == 0 for i in ids],
        "t": pa.array([i % 100 for i in ids], pa.int8()),
        "i": pa.array([None if i % 5 == 0 else i * 7 for i in ids], pa.int32()),
        "f": pa.array([i / 4 for i in ids], pa.float32()),
        "d": [None if i % 3 == 0 else i / 3 for i in ids],
        "s": [f"s{i}" for i in ids],
        "bin": [bytes([i % 256, 1]) for i in ids],
        "n": pa.array([decimal.Decimal(i).scaleb(-3) for i in ids], pa.decimal128(12, 3)),
        "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids],
        "ts": pa.array([base + dt.timedelta(seconds=i) for i in ids], pa.timestamp("us")),
        "ltz": pa.array([base.replace(tzinfo=dt.timezone.utc) + dt.timedelta(minutes=i) for i in ids],
                        pa.timestamp("us", tz="UTC")),
        "tags": [[i, i + 1] if i % 4 else None for i in ids],
        "m": pa.array([[("a", i), ("b", None)] for i in ids], pa.map_(pa.string(), pa.int64())),
        "im": pa.array([[(i, f"v{i}")] for i in ids], pa.map_(pa.int32(), pa.string())),
        "r": [{"x": i, "y": None if i % 2 else f"y{i}"} for i in ids],
    })


def _norm(v):
    """Values comparable across readers (maps as sorted pairs, instants in UTC)."""
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return v


def _rows(t, **at):
    return sorted((tuple(_norm(x) for x in r.values()) for r in t.refresh().to_arrow(**at).to_pylist()), key=repr)


def _spark_rows(t):
    return sorted((tuple(_norm(x) for x in r.asDict(recursive=True).values()) for r in t.refresh().to_spark().collect()),
                  key=repr)


def _avro_files(t):
    files = [e.file for e in t.refresh().plan()]
    assert files
    for f in files:
        assert f.file_name.endswith(".avro"), f.file_name
        with open(f.file_path, "rb") as fh:
            assert fh.read(4) == b"Obj\x01"
    return files


def test_avro_files_carry_paimons_schema_and_read_back(paimon_catalog):
    t = paimon_catalog.create_table("db.wide", WIDE, properties={"file.format": "avro"})
    data = _wide(list(range(1, 9)))
    t.append(data)
    [f] = _avro_files(t)
    with open(f.file_path, "rb") as fh:
        reader = fastavro.reader(fh)
        schema = json.loads(reader.metadata["avro.schema"])
        assert reader.metadata["avro.codec"] == "zstandard"   # file.compression zstd
        records = list(reader)
    assert schema["name"] == "org.apache.paimon.avro.generated.record"
    types = {fld["name"]: fld["type"] for fld in schema["fields"]}
    assert types["id"] == "long"                              # NOT NULL: no union
    assert types["t"] == ["null", "int"] and types["f"] == ["null", "float"] and types["bin"] == ["null", "bytes"]
    assert types["n"] == ["null", {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3}]
    assert types["day"] == ["null", {"type": "int", "logicalType": "date"}]
    assert types["ts"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]
    assert types["ltz"] == ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]
    assert types["m"] == ["null", {"type": "map", "values": ["null", "long"]}]
    im = types["im"][1]
    assert im["type"] == "array" and im["logicalType"] == "map"
    assert [x["name"] for x in im["items"]["fields"]] == ["key", "value"]
    assert types["r"][1]["name"] == "org.apache.paimon.avro.generated.record_r"
    assert all(fld.get("default", "absent") is None for fld in schema["fields"] if fld["name"] != "id")
    assert len(records) == 8 and records[0]["s"] == "s1" and records[0]["n"] == decimal.Decimal("0.001")
    # icefloe reads the rows it wrote, exactly
    want = sorted((tuple(_norm(x) for x in r.values()) for r in data.to_pylist()), key=repr)
    assert _rows(t) == want
    # statistics counted from the rows
    mins, maxs, nulls = f.value_stats.decode([fld.type for fld in t.table_schema.fields])
    assert (mins[0], maxs[0], nulls[0]) == (1, 8, 0) and nulls[3] == 1


def test_sql_spark_reads_dml_and_compaction_on_an_avro_append_table(spark_catalog):
    spark_catalog.sql("CREATE TABLE default.a (id bigint not null, v string, p string) PARTITIONED BY (p) "
                      "TBLPROPERTIES ('file.format' = 'avro')")
    t = spark_catalog.load_table("default.a")
    spark_catalog.sql("INSERT INTO default.a VALUES (1, 'a', 'x'), (2, NULL, 'x'), (3, 'c', 'y')")
    t.append(pa.table({"id": pa.array([4, 5], pa.int64()), "v": ["d", "e"], "p": ["y", "y"]}))
    _avro_files(t)
    want = [(1, "a", "x"), (2, None, "x"), (3, "c", "y"), (4, "d", "y"), (5, "e", "y")]
    assert _rows(t) == want
    got = spark_catalog.sql("SELECT id, v FROM default.a WHERE p = 'y' AND id > 3 ORDER BY id").collect()
    assert [tuple(r) for r in got] == [(4, "d"), (5, "e")]
    spark_catalog.sql("DELETE FROM default.a WHERE id = 4")
    spark_catalog.sql("UPDATE default.a SET v = 'B' WHERE id = 2")
    want = [(1, "a", "x"), (2, "B", "x"), (3, "c", "y"), (5, "e", "y")]
    assert _rows(t) == want and _spark_rows(t) == want
    t.compact()
    assert len(_avro_files(t)) == 2 and _rows(t) == want


def _kv(ids, tag):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}-{i}" for i in ids]})


@pytest.mark.parametrize("extra", [{}, {"deletion-vectors.enabled": "true"}], ids=["merge", "vectors"])
def test_primary_key_avro_table_reads_as_its_parquet_twin(spark_catalog, extra):
    props = {"primary-key": "id", "bucket": "2", **extra}
    twins = [spark_catalog.create_table(f"db.kv_{fmt}", "id bigint not null, v string",
                                        properties={**props, "file.format": fmt}) for fmt in ("parquet", "avro")]
    rnd = random.Random(4)
    model = {}
    for step in range(5):
        ids = rnd.sample(range(25), rnd.randint(2, 8))
        for t in twins:
            t.append(_kv(ids, f"s{step}"))
        model.update({i: (i, f"s{step}-{i}") for i in ids})
        if step % 2:
            gone = sorted(model)[step]
            for t in twins:
                t.delete(f"id = {gone}")
            del model[gone]
    want = sorted(model.values(), key=repr)           # as _rows sorts
    pq_t, avro_t = twins
    files = _avro_files(avro_t)
    with open(files[0].file_path, "rb") as fh:
        names = [fld["name"] for fld in json.loads(fastavro.reader(fh).metadata["avro.schema"])["fields"]]
    assert names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "v"]
    assert _rows(avro_t) == _rows(pq_t) == want
    assert _spark_rows(avro_t) == want
    avro_t.compact()
    pq_t.compact()
    _avro_files(avro_t)
    assert _rows(avro_t) == _spark_rows(avro_t) == want
    report = avro_t.check()
    assert report.ok, report.problems


NANOS = pa.schema([pa.field("id", pa.int64(), False), ("ts", pa.timestamp("ns"))])


@pytest.mark.parametrize("ddl, props, message", [
    ("id bigint not null", {"file.format": "avro", "file.block-size": "1 mb"}, "'file.block-size'.*Avro"),
    ("id bigint not null", {"file.format": "avro", "file.compression": "lz4"}, "not an Avro codec"),
    (NANOS, {"file.format": "avro"}, "precision 6 at most"),
])
def test_what_avro_cannot_hold_is_refused_with_the_table_unchanged(paimon_catalog, ddl, props, message):
    with pytest.raises(SchemaError, match=message):
        paimon_catalog.create_table("db.bad", ddl, properties=props)
    assert not paimon_catalog.table_exists("db.bad")
    t = paimon_catalog.create_table("db.ok", ddl)
    with pytest.raises(SchemaError, match=message):
        t.update_properties(set=props)
    assert list(list_schema_ids(t.io, t.location)) == [0]
    assert t.refresh().table_schema.core_options.file_format == "parquet"


def test_avro_schema_of_every_column_kind_round_trips_through_the_reader():
    from icefloe.paimon import types as pt

    fields = pt.fields_from_arrow_schema(_wide(list(range(1, 6))).schema)
    columns = [(f.name, f.type, f.name != "id") for f in fields]
    data = _wide(list(range(1, 6)))
    raw = avro_data.write_avro_bytes(data, columns, "deflate")
    back = avro_data.read_avro_table(io.BytesIO(raw))
    assert back.column_names == data.column_names
    assert [tuple(_norm(x) for x in r.values()) for r in back.to_pylist()] == \
        [tuple(_norm(x) for x in r.values()) for r in data.to_pylist()]
    assert avro_data.read_avro_table(io.BytesIO(raw), columns=["s", "id"]).column_names == ["s", "id"]


@pytest.mark.long
def test_paimon_java_and_icefloe_read_each_others_avro_tables(paimon_bundle, paimon_spark):
    from icefloe.catalog import Catalog
    from tests.paimon_referee import APPEND, APPEND_COLUMNS, KV, KV_COLUMNS, BundleSide, arrow, ice_files, ice_rows

    pj, java = paimon_bundle, BundleSide(paimon_bundle)
    ice = Catalog(pj.warehouse, "paimon", paimon_spark)
    # append tables
    props = {"file.format": "avro", "bucket": "2", "bucket-key": "id"}
    t = ice.create_table("db.avro_ice", "id bigint not null, v string, dt string", partitioned_by=["dt"],
                         properties=props)
    pj.create_table("db.avro_java", APPEND_COLUMNS, partition_keys=("dt",), options=props)
    jt = ice.load_table("db.avro_java")
    rows = [(i, None if i == 1 else f"v{i}", "x" if i % 2 else "y") for i in range(6)]
    t.append(arrow(APPEND, rows))
    pj.write("db.avro_java", rows)
    want = sorted(rows, key=repr)
    assert java.rows("avro_ice") == want == ice_rows(jt, ["id", "v", "dt"])
    assert all(name.endswith(".avro") for name in ice_files(jt))
    # primary-key tables, with deletion vectors
    for suffix, extra in (("", {}), ("_dv", {"deletion-vectors.enabled": "true"})):
        kprops = {"file.format": "avro", "bucket": "1", **extra}
        k = ice.create_table(f"db.avro_pk_ice{suffix}", "id bigint not null, v string",
                             properties={"primary-key": "id", **kprops})
        pj.create_table(f"db.avro_pk_java{suffix}", KV_COLUMNS, primary_keys=("id",), options=kprops)
        jk = ice.load_table(f"db.avro_pk_java{suffix}")
        model = {}
        for i in range(3):
            batch = [(i * 2 + j, f"v{i}") for j in range(3)]
            k.append(arrow(KV, batch))
            pj.write(f"db.avro_pk_java{suffix}", batch)
            model.update(dict(batch))
        want = sorted(model.items(), key=repr)
        assert java.rows(f"avro_pk_ice{suffix}") == want == ice_rows(jk, ["id", "v"]) == ice_rows(k, ["id", "v"])
        pj.compact(f"db.avro_pk_ice{suffix}")
        jk.refresh().compact()
        assert all(name.endswith(".avro") for name in ice_files(k) | ice_files(jk))
        assert ice_rows(k, ["id", "v"]) == want == java.rows(f"avro_pk_java{suffix}")
