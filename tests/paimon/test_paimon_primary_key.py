"""Primary-key tables written by pypaimon read merged in icefloe exactly as pypaimon reads
them, for each merge engine: through the Arrow API (on the caller) and through Spark (one
task per bucket). A model test checks random upserts and deletes against a dict."""
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.errors import NotSupportedError, UnsupportedTableError
from icefloe.paimon import merge as mg

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                    ("a", pa.int64()), ("b", pa.string())])


def create(pcat, name, options, partitioned=True, schema=SCHEMA):
    from pypaimon import Schema

    pcat.create_database("db", True)
    keys = ["id", "dt"] if partitioned else ["id"]
    pcat.create_table(name, Schema.from_pyarrow_schema(schema, primary_keys=keys,
                                                       partition_keys=["dt"] if partitioned else None,
                                                       options=options), False)
    return pcat.get_table(name)


def write(ptable, rows, schema=SCHEMA):
    wb = ptable.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(pa.Table.from_pylist(rows, schema=schema))
    c.commit(w.prepare_commit())
    w.close()
    c.close()


def referee(ptable):
    rb = ptable.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def rows(table):
    return sorted(table.to_pylist(), key=lambda r: (r["id"], r.get("dt")))


def spark_rows(df):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["id"], r.get("dt")))


UPDATES = [
    [{"id": 1, "dt": "x", "a": 1, "b": "one"}, {"id": 2, "dt": "x", "a": 2, "b": None},
     {"id": 1, "dt": "x", "a": 10, "b": None}, {"id": 3, "dt": "y", "a": 3, "b": "three"}],   # key 1 twice
    [{"id": 2, "dt": "x", "a": None, "b": "two"}, {"id": 4, "dt": "y", "a": 4, "b": "four"}],
    [{"id": 1, "dt": "x", "a": 5, "b": None}, {"id": 3, "dt": "y", "a": None, "b": "drei"}],
]


@pytest.mark.parametrize("options", [
    {"bucket": "2"},
    {"bucket": "1", "merge-engine": "partial-update"},
    {"bucket": "2", "merge-engine": "aggregation", "fields.a.aggregate-function": "sum"},
    {"bucket": "2", "merge-engine": "aggregation", "fields.a.aggregate-function": "max",
     "fields.b.aggregate-function": "first_non_null_value"},
    {"bucket": "1", "merge-engine": "aggregation", "fields.default-aggregate-function": "last_value"},
    {"bucket": "2", "sequence.field": "a"},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items() if k != "bucket"))
def test_we_read_pypaimon_primary_key_tables_as_pypaimon_does(options, pypaimon_catalog, spark_catalog):
    pt = create(pypaimon_catalog, "db.t", options)
    t = spark_catalog.load_table("db.t")
    for i, batch in enumerate(UPDATES):
        write(pt, batch)
        expected = rows(referee(pt))
        assert rows(t.refresh().to_arrow()) == expected, i
    assert len(expected) == 4 and len(t.plan_files()) > 2       # records of one key sit in several files
    assert t.check().ok, t.check()                               # no EARLIEST hint: not a problem
    assert spark_rows(t.to_spark()) == expected
    # a filter applies to merged rows: an older record of a key never shows
    key1 = [r for r in expected if r["id"] == 1]
    assert rows(t.to_arrow(where="id = 1")) == key1
    assert spark_rows(t.to_spark(where="id = 1")) == key1
    stale = {"a": 1} if options.get("merge-engine") is None else {}
    if stale:
        assert t.to_arrow(where="a = 1").num_rows == 0 and t.to_spark(where="a = 1").count() == 0


def test_deletes_through_rowkind_field_and_time_travel(pypaimon_catalog, spark_catalog, paimon_spark):
    schema = SCHEMA.append(pa.field("op", pa.string()))
    pt = create(pypaimon_catalog, "db.d", {"bucket": "2", "rowkind.field": "op"}, schema=schema)
    write(pt, [{"id": i, "dt": "x", "a": i, "b": str(i), "op": "+I"} for i in range(6)], schema)
    write(pt, [{"id": 2, "dt": "x", "a": None, "b": None, "op": "-D"},
               {"id": 3, "dt": "x", "a": 30, "b": "3", "op": "-U"},
               {"id": 3, "dt": "x", "a": 31, "b": "3b", "op": "+U"},
               {"id": 5, "dt": "x", "a": None, "b": None, "op": "-D"},
               {"id": 5, "dt": "x", "a": 50, "b": "back", "op": "+I"}], schema)
    t = spark_catalog.load_table("db.d")
    expected = rows(referee(pt))
    assert [r["id"] for r in expected] == [0, 1, 3, 4, 5] and expected[2]["a"] == 31 and expected[4]["b"] == "back"
    assert rows(t.to_arrow()) == expected
    assert spark_rows(t.to_spark()) == expected
    assert [r["id"] for r in rows(t.to_arrow(snapshot_id=1))] == list(range(6))
    # the thinner layout (no _KEY_ columns, as pypaimon-rust writes) reads the same
    import pyarrow.parquet as pq

    for f in t.plan_files():
        data = pq.ParquetFile(f.file_path).read()
        assert any(c.startswith("_KEY_") for c in data.column_names)
        pq.write_table(data.select([c for c in data.column_names if not c.startswith("_KEY_")]), f.file_path)
    assert rows(t.to_arrow()) == expected
    # the data source merges per bucket too, and Spark's filters apply to the merged rows
    df = paimon_spark.read.format("icefloe").load(t.location)
    assert spark_rows(df) == expected
    assert spark_rows(df.where("a = 30")) == [] and [r["b"] for r in spark_rows(df.where("id = 3"))] == ["3b"]
    assert spark_rows(paimon_spark.read.format("icefloe").option("snapshot-id", "1").load(t.location)) == \
        rows(t.to_arrow(snapshot_id=1))


def test_merge_engines_refuse_what_they_cannot_merge(pypaimon_catalog, paimon_catalog):
    create(pypaimon_catalog, "db.s", {"bucket": "1", "merge-engine": "partial-update",
                                      "fields.a.sequence-group": "b"})
    with pytest.raises(NotSupportedError, match="sequence groups"):
        paimon_catalog.load_table("db.s").to_arrow()
    create(pypaimon_catalog, "db.m", {"bucket": "1", "merge-engine": "aggregation",
                                      "fields.b.aggregate-function": "listagg"})
    with pytest.raises(NotSupportedError, match="listagg"):
        paimon_catalog.load_table("db.m").to_arrow()
    data = pa.table({"id": [1, 1], "a": [1, 2], SEQ: [0, 1], KIND: pa.array([0, 3], pa.int8())})
    with pytest.raises(UnsupportedTableError, match="ignore-delete"):
        mg.merge(data, ["id"], ["id", "a"], "partial-update", {})
    assert mg.merge(data, ["id"], ["id", "a"], "partial-update", {"ignore-delete": "true"}).to_pylist() == \
        [{"id": 1, "a": 1}]                                       # the DELETE record is ignored


SEQ, KIND = mg.SEQUENCE, mg.VALUE_KIND
RECORDS = st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0, 2, 3]), st.one_of(st.none(), st.integers(-9, 9))),
                   min_size=1, max_size=40)


def _model(records, engine):
    """The merged table of (key, kind, value) records in arrival order, by a plain dict."""
    state: dict = {}
    for key, kind, value in records:
        if engine == "deduplicate":
            if kind == 3:
                state.pop(key, None)
            else:
                state[key] = value
        elif engine == "first-row":
            state.setdefault(key, value)
        elif engine == "partial-update":
            if key not in state or value is not None:
                state[key] = value if value is not None else state.get(key)
        elif engine == "aggregation":         # sum
            state[key] = value if state.get(key) is None else (state[key] + value if value is not None
                                                               else state[key])
    return [{"id": k, "a": state[k]} for k in sorted(state)]


@pytest.mark.parametrize("engine", mg.ENGINES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=RECORDS, shuffle=st.randoms(use_true_random=False))
def test_merge_matches_a_dict_model(engine, records, shuffle):
    if engine != "deduplicate":
        records = [(k, 0, v) for k, kind, v in records]          # retractions need ignore-delete there
    order = list(range(len(records)))
    shuffle.shuffle(order)                                        # files hand records over in any order
    data = pa.table({"id": pa.array([records[i][0] for i in order], pa.int64()),
                     "a": pa.array([records[i][2] for i in order], pa.int64()),
                     SEQ: pa.array(order, pa.int64()), KIND: pa.array([records[i][1] for i in order], pa.int8())})
    options = {"fields.a.aggregate-function": "sum"}
    got = mg.merge(data, ["id"], ["id", "a"], engine, options, ["id"]).to_pylist()
    assert got == _model(records, engine)
