"""Paimon's ``audit_log``: the table's rows with their kinds, from the API, SQL and the data source."""
import pyarrow as pa

import icefloe


def test_audit_log_of_a_primary_key_table(spark, warehouse):
    cat = icefloe.Catalog(warehouse, "paimon", spark)
    t = cat.create_table("db.a", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "1"})
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}))
    t.append(pa.table({"id": pa.array([2], pa.int64()), "v": ["B"]}))
    t.delete("id = 3")
    # as Paimon's audit_log: merged with each key's kind, a retraction no compaction dropped yet shown
    want = [("+I", 1, "a"), ("+I", 2, "B"), ("-D", 3, "c")]
    api = t.audit_log()
    assert api.columns == ["rowkind", "id", "v"]
    assert sorted(tuple(r) for r in api.collect()) == want
    sql = icefloe.sql(spark, "SELECT * FROM db.`a$audit_log`", warehouse=warehouse, format="paimon")
    assert sorted(tuple(r) for r in sql.collect()) == want
    ds = spark.read.format("icefloe").option("read.changelog", "true").load(t.location)
    assert sorted(tuple(r) for r in ds.collect()) == want
    # time travel: the first snapshot's rows
    first = t.snapshots()[0].id
    assert sorted(tuple(r) for r in t.audit_log(snapshot_id=first).collect()) == [
        ("+I", 1, "a"), ("+I", 2, "b"), ("+I", 3, "c")]


def test_audit_log_shows_updates_and_vector_tables(spark, warehouse):
    """An UPDATE writes +U records, which the audit log shows; after a full compaction (retractions
    dropped) only live keys remain; a deletion-vector table shows each live row's stored kind."""
    cat = icefloe.Catalog(warehouse, "paimon", spark)
    for name, extra in (("db.u", {}), ("db.v", {"deletion-vectors.enabled": "true"})):
        t = cat.create_table(name, "id bigint not null, v string",
                             properties={"primary-key": "id", "bucket": "2", **extra})
        t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}))
        t.update({"v": "'B'"}, "id = 2")
        t.delete("id = 3")
        got = sorted(tuple(r) for r in t.audit_log().collect())
        if extra:                         # vectors: level 0 waits for its compaction, which ran
            assert got == [("+I", 1, "a"), ("+U", 2, "B")], name
        else:
            assert got == [("+I", 1, "a"), ("+U", 2, "B"), ("-D", 3, "c")], name
        t.compact()
        assert sorted(tuple(r) for r in t.audit_log().collect()) == [("+I", 1, "a"), ("+U", 2, "B")], name
        ds = spark.read.format("icefloe").option("read.changelog", "true").load(t.location)
        assert sorted(tuple(r) for r in ds.collect()) == [("+I", 1, "a"), ("+U", 2, "B")], name
