"""Paimon schema evolution: new ``schema-N`` files, reads by field id, time travel, refused
changes, concurrent changes, and pypaimon 2.1 reading what we evolve (and the reverse)."""
import datetime as dt
import decimal
import json
import os
import threading

import pyarrow as pa
import pytest

from icefloe.errors import SchemaError
from icefloe.paimon.types import root

D = decimal.Decimal


# --------------------------------------------------------------------------- helpers
def schema_ids(t):
    return sorted(int(n.split("-")[1]) for n in os.listdir(os.path.join(t.location, "schema")))


def schema_json(t, sid):
    with open(os.path.join(t.location, "schema", f"schema-{sid}")) as f:
        return json.load(f)


def field_ids(doc):
    return {f["name"]: f["id"] for f in doc["fields"]}


def rows(table: pa.Table, key="id"):
    out = table.to_pylist()
    for r in out:
        for k, v in list(r.items()):
            if isinstance(v, dt.datetime) and v.tzinfo is not None:
                r[k] = v.astimezone(dt.timezone.utc)
    return sorted(out, key=lambda r: (r[key] is None, r[key] if r[key] is not None else 0))


def spark_rows(df, key="id"):
    return rows(df.toArrow(), key)


def pypaimon_read(pcat, name, snapshot_id=None):
    t = pcat.get_table(name)
    if snapshot_id is not None:
        t = t.copy({"scan.snapshot-id": str(snapshot_id)})
    rb = t.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def pypaimon_write(pcat, name, data):
    """``data`` written by pypaimon to table ``name`` in one batch commit (in its worker)."""
    from tools.pypaimon_env import remote_module

    remote_module("tools.pypaimon_side").append_arrow(pcat, name, data)


def i64(*v):
    return pa.array(v, pa.int64())


def i32(*v):
    return pa.array(v, pa.int32())


# --------------------------------------------------------------------------- the changes, read back
def test_each_change_is_a_new_schema_file_and_old_files_read_by_field_id(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table(
        "db.t", "id bigint not null, n int, s string, amt decimal(5,2), f float, p string",
        partitioned_by=["p"], properties={"bucket": "2", "bucket-key": "id"})
    t.append(pa.table({"id": i64(1, 2, 3, 4), "n": i32(10, 20, 30, 40), "s": ["a", "b", "c", "d"],
                       "amt": pa.array([D("1.25"), D("2.50"), None, D("-4.75")], pa.decimal128(5, 2)),
                       "f": pa.array([0.5, 1.5, 2.5, None], pa.float32()), "p": ["x", "y", "x", "y"]}))
    assert schema_json(t, 0)["highestFieldId"] == 5

    with t.update_schema() as u:
        u.rename_column("s", "label")
        u.update_column_type("n", "BIGINT")
        u.add_column("extra", "INT", comment="added", after="id")
    s1 = schema_json(t, 1)
    assert [f["name"] for f in s1["fields"]] == ["id", "extra", "n", "label", "amt", "f", "p"]
    assert field_ids(s1) == {"id": 0, "extra": 6, "n": 1, "label": 2, "amt": 3, "f": 4, "p": 5}
    assert s1["highestFieldId"] == 6 and s1["id"] == 1
    assert {f["name"]: f["type"] for f in s1["fields"]}["n"] == "BIGINT"
    assert [f.get("description") for f in s1["fields"] if f["name"] == "extra"] == ["added"]
    assert s1["partitionKeys"] == ["p"] and s1["options"]["bucket-key"] == "id"
    t.append(pa.table({"id": i64(5, 6), "extra": i32(7, None), "n": i64(2**40, 60), "label": ["e", "f"],
                       "amt": pa.array([D("5.00"), D("6.00")], pa.decimal128(5, 2)),
                       "f": pa.array([5.5, 6.5], pa.float32()), "p": ["x", "y"]}))

    with t.update_schema() as u:
        u.drop_column("label")
        u.add_column("label", "STRING")      # a new column: id 7, never the old id 2
        u.update_column_type("amt", "DECIMAL(9, 2)")
        u.update_column_type("f", "DOUBLE")
    s2 = schema_json(t, 2)
    assert field_ids(s2)["label"] == 7 and s2["highestFieldId"] == 7
    t.append(pa.table({"id": i64(7), "extra": i32(70), "n": i64(70), "label": ["new"],
                       "amt": pa.array([D("1234567.89")], pa.decimal128(9, 2)), "f": [0.25], "p": ["x"]}))

    assert schema_ids(t) == [0, 1, 2]
    snaps = t.snapshots()
    assert [s.schema_id for s in snaps] == [0, 1, 2]
    for s in snaps:   # files record the schema they were written with
        added = {f.file_name for f in t.plan_files(snapshot_id=s.id)} - \
            ({f.file_name for f in t.plan_files(snapshot_id=s.id - 1)} if s.id > 1 else set())
        assert {f.schema_id for f in t.plan_files() if f.file_name in added} == {s.schema_id}

    now = rows(t.to_arrow())
    assert t.to_arrow().column_names == ["id", "extra", "n", "amt", "f", "p", "label"]
    assert t.to_arrow().schema.field("n").type == pa.int64()
    assert t.to_arrow().schema.field("amt").type == pa.decimal128(9, 2)
    assert [r["label"] for r in now] == [None] * 6 + ["new"]       # old values do not come back
    assert [r["extra"] for r in now] == [None] * 4 + [7, None, 70]
    assert [r["n"] for r in now] == [10, 20, 30, 40, 2**40, 60, 70]
    assert [r["amt"] for r in now] == [D("1.25"), D("2.50"), None, D("-4.75"), D("5.00"), D("6.00"),
                                       D("1234567.89")]
    assert [r["f"] for r in now] == [0.5, 1.5, 2.5, None, 5.5, 6.5, 0.25]

    # time travel reads with each snapshot's own schema
    old = t.to_arrow(snapshot_id=1)
    assert old.column_names == ["id", "n", "s", "amt", "f", "p"]
    assert [r["s"] for r in rows(old)] == ["a", "b", "c", "d"]
    mid = t.to_arrow(snapshot_id=2)
    assert mid.column_names == ["id", "extra", "n", "label", "amt", "f", "p"]
    assert [r["label"] for r in rows(mid)] == ["a", "b", "c", "d", "e", "f"]   # the renamed column keeps its data
    assert rows(t.to_arrow(as_of=snaps[1].time_millis)) == rows(mid)
    assert t.table_schema_for(snapshot_id=1).id == 0 and t.table_schema_for().id == 2
    # filters bind to the read schema's names
    assert [r["id"] for r in rows(t.to_arrow(snapshot_id=1, where="s = 'c'"))] == [3]
    assert [r["id"] for r in rows(t.to_arrow(snapshot_id=2, where="label >= 'e'"))] == [5, 6]
    assert [r["id"] for r in rows(t.to_arrow(where="label = 'new'"))] == [7]

    # pypaimon reads every snapshot identically, with that snapshot's schema
    for s in snaps:
        ours = t.to_arrow(snapshot_id=s.id)
        theirs = pypaimon_read(pypaimon_catalog, "db.t", s.id)
        assert theirs.column_names == ours.column_names
        assert rows(theirs) == rows(ours)
    assert rows(pypaimon_read(pypaimon_catalog, "db.t")) == now


def test_widening_type_changes_cast_old_files(paimon_catalog, pypaimon_catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("t", pa.int8()), ("s", pa.int16()),
                        ("i", pa.int32()), ("f", pa.float32()), ("d", pa.decimal128(5, 2))])
    t = paimon_catalog.create_table("db.w", schema)
    assert [root(f.type) for f in t.table_schema.fields] == ["BIGINT", "TINYINT", "SMALLINT", "INT", "FLOAT",
                                                             "DECIMAL"]
    t.append(pa.table({"id": i64(1, 2), "t": pa.array([-128, 127], pa.int8()),
                       "s": pa.array([-32768, 5], pa.int16()), "i": i32(-2**31, 2**31 - 1),
                       "f": pa.array([1.25, None], pa.float32()),
                       "d": pa.array([D("-999.99"), D("0.01")], pa.decimal128(5, 2))}))
    for step in ("SMALLINT", "INT", "BIGINT"):        # one schema file per step, a write in between
        with t.update_schema() as u:
            u.update_column_type("t", step)
        t.append(pa.table({"id": i64(10 + len(schema_ids(t))), "t": pa.array([1], pa.int8())}))
    with t.update_schema() as u:
        u.update_column_type("s", "DOUBLE")
        u.update_column_type("i", "DECIMAL(12, 2)")
        u.update_column_type("f", "DOUBLE")
        u.update_column_type("d", "DECIMAL(8, 3)")
    assert schema_ids(t) == [0, 1, 2, 3, 4]
    got = t.to_arrow()
    assert [str(got.schema.field(c).type) for c in ("t", "s", "i", "f", "d")] == \
        ["int64", "double", "decimal128(12, 2)", "double", "decimal128(8, 3)"]
    first = rows(got)[:2]
    assert [(r["t"], r["s"], r["i"], r["f"], r["d"]) for r in first] == [
        (-128, -32768.0, D("-2147483648.00"), 1.25, D("-999.990")),
        (127, 5.0, D("2147483647.00"), None, D("0.010"))]
    assert [r["t"] for r in rows(got)] == [-128, 127, 1, 1, 1]
    assert rows(pypaimon_read(pypaimon_catalog, "db.w")) == rows(got)


# --------------------------------------------------------------------------- refused changes
REFUSED = [
    (lambda u: u.update_column_type("v", "SMALLINT"), r"table db\.r: cannot change column 'v' from INT to SMALLINT"),
    (lambda u: u.update_column_type("s", "INT"), r"column 's' from STRING to INT"),
    (lambda u: u.update_column_type("v", "FLOAT"), r"column 'v' from INT to FLOAT"),
    (lambda u: u.update_column_type("v", "DECIMAL(9, 0)"), r"from INT to DECIMAL\(9, 0\)"),
    (lambda u: u.update_column_type("v", "array<int>"), r"from INT to ARRAY<INT>"),
    (lambda u: u.rename_column("p", "q"), r"db\.r: cannot rename partition column 'p'"),
    (lambda u: u.drop_column("p"), r"cannot drop partition column 'p'"),
    (lambda u: u.update_column_type("p", "VARCHAR(10)"), r"cannot change the type of partition column 'p'"),
    (lambda u: u.drop_column("id"), r"cannot drop bucket-key column 'id'"),
    (lambda u: u.update_column_type("id", "DECIMAL(20, 0)"), r"cannot change the type of bucket-key column 'id'"),
    (lambda u: u.add_column("x", "INT NOT NULL"), r"new column 'x' cannot be NOT NULL"),
    (lambda u: u.add_column("V", "INT"), r"db\.r already has a column 'v'"),
    (lambda u: u.rename_column("v", "S"), r"already has a column 's'"),
    (lambda u: u.drop_column("nope"), r"db\.r has no column 'nope'"),
    (lambda u: u.update_column_nullability("v", False), r"cannot make column 'v' NOT NULL"),
    (lambda u: u.update_column_type("v", "INT NOT NULL"), r"nullable column cannot become NOT NULL"),
    (lambda u: u.move_after("v", "v"), r"relative to itself"),
    (lambda u: u.add_column("y", "INT", after="nope"), r"no column 'nope'"),
    (lambda u: u.update_column_comment("s.inner", "c"), r"no column 's\.inner'"),
    (lambda u: u.add_column("r2", "struct<a: int>") and u.update_column_type("r2.a", "STRING"),
     r"cannot change nested field 'r2\.a' from INT to STRING"),
    (lambda u: u.add_column("r2", "struct<a: int>") and u.drop_column("r2.a"), r"the last field of its row"),
]


@pytest.mark.parametrize("change,message", REFUSED, ids=[m for _, m in REFUSED])
def test_bad_changes_are_refused_and_the_table_is_unchanged(paimon_catalog, change, message):
    t = paimon_catalog.create_table("db.r", "id bigint not null, v int, s string, p string", partitioned_by=["p"],
                                    properties={"bucket": "2", "bucket-key": "id"})
    t.append(pa.table({"id": i64(1, 2), "v": i32(1, 2), "s": ["a", "b"], "p": ["x", "y"]}))
    before = rows(t.to_arrow())
    with pytest.raises(SchemaError, match=message):
        with t.update_schema() as u:
            u.add_column("fine", "INT")          # a good change in the same block is not committed either
            change(u)
    assert schema_ids(t) == [0]
    assert rows(paimon_catalog.load_table("db.r").to_arrow()) == before
    assert t.table_schema.field_names == ["id", "v", "s", "p"]


def test_last_column_cannot_be_dropped_and_no_op_changes_write_nothing(paimon_catalog):
    t = paimon_catalog.create_table("db.one", "a int")
    with pytest.raises(SchemaError, match="cannot drop its last column 'a'"):
        with t.update_schema() as u:
            u.drop_column("a")
    with t.update_schema() as u:
        u.rename_column("a", "a")
        u.update_column_type("a", "INT")
        u.update_column_nullability("a", True)
    with t.update_schema():
        pass
    assert schema_ids(t) == [0]
    with t.update_schema() as u:            # a block that ends where it started changes nothing either
        u.add_column("b", "INT")
        u.move_first("b")
        u.move_after("b", "a")
        u.drop_column("b")
    assert schema_ids(t) == [0, 1]
    assert schema_json(t, 1)["highestFieldId"] == 1   # ...but the id 1 is spent: ids are never reused
    with t.update_schema() as u:
        u.add_column("b", "INT")
    assert field_ids(schema_json(t, 2))["b"] == 2


def test_positions_comments_and_nullability(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.pos", "a int not null, b string, c double, p string", partitioned_by=["p"],
                                    properties={"add-column-before-partition": "true"})
    t.append(pa.table({"a": i32(1), "b": ["x"], "c": [1.5], "p": ["q"]}))
    with t.update_schema() as u:
        u.add_column("z", "BIGINT")                     # before the partition column, by the option
        u.add_column("f", "INT", first=True)
        u.add_column("m", "STRING", comment="middle", after="a")
        u.add_column("n", "DATE", before="c")
        u.move_after("c", "f")
        u.move_first("p")
        u.move_last("f")
        u.update_column_comment("b", "bee")
        u.update_column_nullability("a", True)
        u.update_comment("a table")
        u.add_column("r", "struct<x: int, y: string>")
    doc = schema_json(t, 1)
    # r: added while p was first, so before it
    assert [f["name"] for f in doc["fields"]] == ["r", "p", "c", "a", "m", "b", "n", "z", "f"]
    by = {f["name"]: f for f in doc["fields"]}
    assert by["m"]["description"] == "middle" and by["b"]["description"] == "bee"
    assert by["a"]["type"] == "INT" and doc["comment"] == "a table"
    # the ROW column takes the next id, its fields the ids after it
    assert by["r"]["id"] == 8 and [x["id"] for x in by["r"]["type"]["fields"]] == [9, 10]
    assert doc["highestFieldId"] == 10
    got = t.to_arrow()
    assert got.column_names == ["r", "p", "c", "a", "m", "b", "n", "z", "f"]
    assert got.to_pylist() == [{"r": None, "p": "q", "c": 1.5, "a": 1, "m": None, "b": "x", "n": None, "z": None,
                                "f": None}]
    t.append(pa.table({"a": i32(None), "r": pa.array([{"x": 1, "y": "k"}]), "p": ["q"]}))
    assert rows(pypaimon_read(pypaimon_catalog, "db.pos"), "a") == rows(t.to_arrow(), "a")


# --------------------------------------------------------------------------- concurrent changes
def test_two_updaters_from_one_base_replay_on_the_winner(paimon_catalog):
    t = paimon_catalog.create_table("db.c", "id bigint, a int")
    t2 = paimon_catalog.load_table("db.c")
    u1, u2 = t.update_schema(), t2.update_schema()
    u1.add_column("x", "INT")
    u2.add_column("y", "STRING")
    u1.commit()
    u2.commit()                               # schema-1 is taken: replayed on it as schema-2
    assert schema_ids(t) == [0, 1, 2]
    doc = schema_json(t, 2)
    assert field_ids(doc) == {"id": 0, "a": 1, "x": 2, "y": 3} and doc["highestFieldId"] == 3
    assert t2.table_schema.id == 2

    # a change that no longer applies on the winner's schema fails and writes nothing
    u3, u4 = t.update_schema(), t2.update_schema()
    u3.rename_column("a", "a2")
    u4.update_column_type("a", "BIGINT")
    u3.commit()
    with pytest.raises(SchemaError, match="no column 'a'"):
        u4.commit()
    u5, u6 = t.update_schema(), t2.update_schema()
    u5.add_column("z", "INT")
    u6.add_column("z", "BIGINT")
    u5.commit()
    with pytest.raises(SchemaError, match="already has a column 'z'"):
        u6.commit()
    assert schema_ids(t) == [0, 1, 2, 3, 4]
    assert {f["name"]: f["type"] for f in schema_json(t, 4)["fields"]}["z"] == "INT"


def test_a_lost_race_for_schema_n_is_retried_on_schema_n(paimon_catalog, monkeypatch):
    """Both read schema-0; the other change takes schema-1 between our read and our write:
    our create-if-absent write of schema-1 fails, and the replay writes schema-2."""
    from icefloe.paimon import schema_update

    t = paimon_catalog.create_table("db.race", "id bigint")
    other = paimon_catalog.load_table("db.race")
    real = schema_update.latest_schema
    calls = []

    def stale_once(io, path):
        calls.append(path)
        base = real(io, path)
        if len(calls) == 2:                 # our first commit attempt: the other one wins now
            with other.update_schema() as o:
                o.add_column("theirs", "INT")
        return base

    monkeypatch.setattr(schema_update, "latest_schema", stale_once)
    with t.update_schema() as u:
        u.add_column("ours", "STRING")
    monkeypatch.setattr(schema_update, "latest_schema", real)
    assert schema_ids(t) == [0, 1, 2]
    assert [f["name"] for f in schema_json(t, 1)["fields"]] == ["id", "theirs"]      # theirs, untouched
    assert field_ids(schema_json(t, 2)) == {"id": 0, "theirs": 1, "ours": 2}


def test_concurrent_updaters_in_threads_all_land(paimon_catalog):
    paimon_catalog.create_table("db.th", "id bigint")
    tables = [paimon_catalog.load_table("db.th") for _ in range(6)]
    barrier = threading.Barrier(len(tables))
    errors = []

    def run(i, t):
        try:
            u = t.update_schema()
            u.add_column(f"c{i}", "INT")
            barrier.wait()
            u.commit()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i, t)) for i, t in enumerate(tables)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    t = paimon_catalog.load_table("db.th")
    assert schema_ids(t) == list(range(7))
    ids = field_ids(schema_json(t, 6))
    assert set(ids) == {"id"} | {f"c{i}" for i in range(6)}
    assert sorted(ids.values()) == list(range(7)) and schema_json(t, 6)["highestFieldId"] == 6


# --------------------------------------------------------------------------- pruning by field id
def test_statistics_prune_by_field_id(paimon_catalog):
    t = paimon_catalog.create_table("db.st", "id bigint, k int")
    t.append(pa.table({"id": i64(1, 2, 3), "k": i32(1, 2, 3)}))                      # file A, schema 0
    with t.update_schema() as u:
        u.rename_column("k", "kk")
    t.append(pa.table({"id": i64(4), "kk": i32(50)}))                               # file B, schema 1
    a, b = sorted(t.plan_files(), key=lambda f: f.schema_id)
    assert [f.file_name for f in t.plan_files(where="kk = 2")] == [a.file_name]       # A's stats, by id
    assert [f.file_name for f in t.plan_files(where="kk = 50")] == [b.file_name]
    assert [r["id"] for r in rows(t.to_arrow(where="kk = 2"))] == [2]

    with t.update_schema() as u:
        u.drop_column("kk")
        u.add_column("kk", "INT")             # a new id: A's and B's values are not its values
    t.append(pa.table({"id": i64(5), "kk": i32(2)}))                                  # file C, schema 2
    c = [f for f in t.plan_files() if f.schema_id == 2][0]
    assert [f.file_name for f in t.plan_files(where="kk = 2")] == [c.file_name]
    assert [r["id"] for r in rows(t.to_arrow(where="kk = 2"))] == [5]
    assert [r["id"] for r in rows(t.to_arrow(where="kk is null"))] == [1, 2, 3, 4]
    with t.update_schema() as u:
        u.add_column("n", "INT")
    assert t.plan_files(where="n = 1") == [] and t.to_arrow(where="n = 1").num_rows == 0
    assert len(t.plan_files(where="n is null")) == 3
    # time travel: the old name, the old statistics
    assert [f.file_name for f in t.plan_files(where="k = 3", snapshot_id=1)] == [a.file_name]
    assert [r["id"] for r in rows(t.to_arrow(where="k = 3", snapshot_id=1))] == [3]


def test_renamed_bucket_key_keeps_bucket_pruning(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.bk", "id bigint not null, v string",
                                    properties={"bucket": "4", "bucket-key": "id"})
    t.append(pa.table({"id": pa.array(range(40), pa.int64()), "v": [f"v{i}" for i in range(40)]}))
    with t.update_schema() as u:
        u.rename_column("id", "key")
    assert t.options["bucket-key"] == "key"
    t.append(pa.table({"key": pa.array(range(40, 60), pa.int64()), "v": [f"v{i}" for i in range(40, 60)]}))
    for k in (7, 45):
        planned = t.plan(where=f"key = {k}")
        assert len({e.bucket for e in planned}) == 1 and len(planned) < len(t.plan())
        assert [r["key"] for r in rows(t.to_arrow(where=f"key = {k}"), "key")] == [k]
    assert rows(pypaimon_read(pypaimon_catalog, "db.bk"), "key") == rows(t.to_arrow(), "key")
    assert [r["key"] for r in rows(t.to_arrow(), "key")] == list(range(60))


def test_compaction_across_schema_versions(paimon_catalog):
    t = paimon_catalog.create_table("db.cp", "id bigint, v string")
    t.append(pa.table({"id": i64(1), "v": ["a"]}))
    t.append(pa.table({"id": i64(2), "v": ["b"]}))
    with t.update_schema() as u:
        u.add_column("w", "INT")
        u.update_column_type("id", "BIGINT")
    t.append(pa.table({"id": i64(3), "v": ["c"], "w": i32(3)}))
    assert t.rewrite_data_files() is not None       # adding columns keeps names and ids together
    assert rows(t.to_arrow()) == [{"id": 1, "v": "a", "w": None}, {"id": 2, "v": "b", "w": None},
                                  {"id": 3, "v": "c", "w": 3}]
    assert {f.schema_id for f in t.plan_files()} == {1}
    t.append(pa.table({"id": i64(4), "v": ["d"]}))
    with t.update_schema() as u:
        u.rename_column("v", "label")
    t.append(pa.table({"id": i64(5), "label": ["e"]}))
    with t.update_schema() as u:                   # a dropped and re-added name is a new column
        u.drop_column("w")
        u.add_column("w", "INT")
    t.append(pa.table({"id": i64(6), "label": ["f"], "w": i32(6)}))
    before = rows(t.to_arrow())
    assert t.rewrite_data_files() is not None      # files of four schemas, matched by field id
    assert rows(t.to_arrow()) == before
    assert [r["label"] for r in before] == ["a", "b", "c", "d", "e", "f"]
    assert [r["w"] for r in before] == [None] * 5 + [6]
    assert len(t.plan_files()) == 1 and {f.schema_id for f in t.plan_files()} == {t.table_schema.id}


# --------------------------------------------------------------------------- Spark
@pytest.mark.parametrize("layout", ["partitioned-fixed-bucket", "unpartitioned-unaware"])
def test_spark_reads_evolved_tables_by_field_id(spark_catalog, paimon_spark, pypaimon_catalog, layout):
    spark = paimon_spark
    ddl = "id bigint not null, n int, s string, f float, p string"
    if layout == "partitioned-fixed-bucket":
        t = spark_catalog.create_table("db.sp", ddl, partitioned_by=["p"],
                                       properties={"bucket": "3", "bucket-key": "id"})
    else:
        t = spark_catalog.create_table("db.sp", ddl)
    t.append(spark.sql("select id, cast(id * 10 as int) as n, concat('s', id) as s, cast(id / 2 as float) as f, "
                       "concat('p', id % 2) as p from range(0, 6)"))
    with t.update_schema() as u:
        u.rename_column("s", "label")
        u.update_column_type("n", "BIGINT")
        u.update_column_type("f", "DOUBLE")
        u.add_column("extra", "struct<a: int, b: string>", first=True)
    t.append(pa.table({"id": i64(6, 7), "n": i64(2**40, 70), "label": ["s6", "s7"], "f": [3.0, 3.5],
                       "p": ["p0", "p1"], "extra": pa.array([{"a": 1, "b": "x"}, None])}))
    with t.update_schema() as u:
        u.drop_column("label")
        u.add_column("label", "STRING", after="id")
        u.move_after("p", "id")
    t.append(spark.sql("select id, 'fresh' as label, id * 100 as n, 0.25d as f, 'p1' as p "
                       "from range(8, 10)"))
    assert [s.schema_id for s in t.snapshots()] == [0, 1, 2]
    for s in t.snapshots():
        ours = t.to_arrow(snapshot_id=s.id)
        via_spark = t.to_spark(snapshot_id=s.id)
        assert via_spark.columns == ours.column_names
        assert spark_rows(via_spark) == rows(ours)
        theirs = pypaimon_read(pypaimon_catalog, "db.sp", s.id)
        assert theirs.column_names == ours.column_names and rows(theirs) == rows(ours)
    now = rows(t.to_arrow())
    assert [r["label"] for r in now] == [None] * 8 + ["fresh", "fresh"]
    assert [r["n"] for r in now] == [0, 10, 20, 30, 40, 50, 2**40, 70, 800, 900]
    assert [r["extra"] for r in now][6:8] == [{"a": 1, "b": "x"}, None]
    assert spark_rows(t.to_spark()) == now
    assert [r.id for r in t.to_spark(where="n > 45 and label is null").orderBy("id").collect()] == [5, 6, 7]
    assert [r.label for r in t.to_spark(snapshot_id=2, where="label = 's3'").collect()] == ["s3"]
    # the `icefloe` data source reads by field id too
    assert spark_rows(spark.read.format("icefloe").load(t.location)) == now


def test_we_read_what_pypaimon_evolves_and_it_reads_what_we_evolve(spark_catalog, paimon_spark, pypaimon_catalog):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema
    from tools.pypaimon_env import remote_module
    AtomicType = remote_module("pypaimon.schema.data_types").AtomicType
    from tools.pypaimon_env import remote_module
    SchemaChange = remote_module("pypaimon.schema.schema_change").SchemaChange

    pypaimon_catalog.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int32()), ("name", pa.string()),
                        ("r", pa.struct([("a", pa.int32()), ("b", pa.string())])), ("p", pa.string())])
    pypaimon_catalog.create_table("db.pp", Schema.from_pyarrow_schema(schema, partition_keys=["p"]), False)
    pypaimon_write(pypaimon_catalog, "db.pp", pa.table({
        "id": i64(1, 2), "v": i32(1, 2), "name": ["a", "b"], "r": pa.array([{"a": 1, "b": "x"}, None]),
        "p": ["x", "y"]}, schema=schema))
    pypaimon_catalog.alter_table("db.pp", [
        SchemaChange.rename_column("name", "title"),
        SchemaChange.update_column_type("v", AtomicType("BIGINT")),
        SchemaChange.add_column("added", AtomicType("DOUBLE")),
        SchemaChange.drop_column(["r", "a"]),
        SchemaChange.add_column(["r", "a"], AtomicType("INT")),   # a nested field with a new id
        SchemaChange.rename_column(["r", "b"], "bb"),
    ])
    t = spark_catalog.load_table("db.pp")
    assert t.table_schema.id == 1
    new_r = [f for f in t.table_schema.fields if f.name == "r"][0].type
    assert [f.name for f in new_r.fields] == ["bb", "a"]
    expected = rows(pypaimon_read(pypaimon_catalog, "db.pp"))
    assert [r["r"] for r in expected] == [{"bb": "x", "a": None}, None]
    assert rows(t.to_arrow()) == expected
    assert spark_rows(t.to_spark()) == expected
    assert [r["title"] for r in expected] == ["a", "b"] and [r["v"] for r in expected] == [1, 2]

    # we write under pypaimon's new schema, and evolve it further; pypaimon reads it all
    r_type = pa.struct([("bb", pa.string()), ("a", pa.int32())])
    t.append(pa.table({"id": i64(3), "v": i64(2**33), "title": ["c"], "r": pa.array([{"bb": "y", "a": 5}], r_type),
                       "p": ["x"], "added": [0.5]}))
    with t.update_schema() as u:
        u.drop_column("title")
        u.add_column("title", "STRING")
        u.update_column_type("v", "DECIMAL(20, 0)")
        u.add_column("k", "INT", first=True)
    t.append(paimon_spark.sql("select 4L as id, 7 as k, 'd' as title, 'y' as p"))
    from tools.pypaimon_env import remote_module
    PyarrowFieldParser = remote_module("pypaimon.schema.data_types").PyarrowFieldParser

    their_schema = PyarrowFieldParser.from_paimon_schema(pypaimon_catalog.get_table("db.pp").fields)
    pypaimon_write(pypaimon_catalog, "db.pp", pa.table({
        "k": i32(8), "id": i64(5), "v": i64(5), "r": pa.array([None], their_schema.field("r").type),
        "p": ["y"], "added": [1.0], "title": ["e"]}).select(their_schema.names).cast(their_schema))
    t.refresh()
    for s in t.snapshots():
        theirs = pypaimon_read(pypaimon_catalog, "db.pp", s.id)
        ours = t.to_arrow(snapshot_id=s.id)
        assert theirs.column_names == ours.column_names
        assert rows(theirs) == rows(ours)
        assert spark_rows(t.to_spark(snapshot_id=s.id)) == rows(ours)
    final = rows(t.to_arrow())
    assert [(r["id"], r["k"], r["title"], r["v"]) for r in final] == [
        (1, None, None, D(1)), (2, None, None, D(2)), (3, None, None, D(2**33)), (4, 7, "d", None), (5, 8, "e", D(5))]


def test_table_options_change_through_new_schema_files(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.opt", "id bigint, p int", partitioned_by=["p"])
    opts = t.update_properties(set={"snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms",
                                    "manifest.merge-min-count": "2"})
    assert opts["snapshot.num-retained.min"] == "1" and t.table_schema.id == 1
    for i in range(3):
        t.append(pa.table({"id": i64(i), "p": i32(0)}))
    assert [s.id for s in t.snapshots()] == [3]            # the new retention is in effect
    assert pypaimon_catalog.get_table("db.opt").table_schema.options["snapshot.time-retained"] == "1 ms"
    assert "manifest.merge-min-count" not in t.update_properties(remove=["manifest.merge-min-count"])
    assert t.table_schema.id == 2
    for key in ("bucket-key", "partition"):
        with pytest.raises(SchemaError, match="cannot change after the table is created"):
            t.update_properties(set={key: "id"})
    with pytest.raises(SchemaError, match="'bucket' must be a whole number"):
        t.update_properties(set={"bucket": "id"})
    with pytest.raises(SchemaError, match="Cannot change bucket when it is -1"):
        t.update_properties(set={"bucket": "4"})
    assert t.refresh().table_schema.id == 2                  # refused changes write nothing
    assert sorted(t.to_arrow()["id"].to_pylist()) == [0, 1, 2]
