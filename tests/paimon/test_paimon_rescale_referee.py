"""Bucket rescale against Apache Paimon 1.4's Java engine (``paimon-bundle``, ``tools/paimon_java.py``):
Paimon Java reads and writes a table icefloe rescaled (``ALTER TABLE ... SET TBLPROPERTIES ('bucket')``
then ``CALL sys.rescale``), and icefloe reads and writes a table Paimon Java rescaled (the option set,
then an INSERT OVERWRITE of a partition, as Paimon's "Rescale Bucket" page does it). Each engine's
writers refuse rows for a partition still holding files of the old bucket number. Long."""
from __future__ import annotations

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from icefloe.paimon.bucket import bucket_of
from tools.paimon_java import PaimonJavaError

pytestmark = pytest.mark.long

OLD_BUCKETS_REFUSED = r"previous bucket num is 2|changed from 2 to"


@pytest.fixture(scope="module")
def ice(paimon_bundle, paimon_spark):
    return Catalog(paimon_bundle.warehouse, "paimon", paimon_spark)


def _arrow(rows):
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "v": [r[1] for r in rows],
                     "dt": [r[2] for r in rows]})


def _ice_rows(t):
    t.refresh()
    return sorted(tuple(r.values()) for r in t.to_arrow(columns=["id", "v", "dt"]).to_pylist())


def _totals(t):
    t.refresh()
    out: dict = {}
    for e in t.plan():
        out.setdefault(t.store.partition_values(e.partition)[0], set()).add(e.total_buckets)
    return out


def _check_layout(t):
    """Each file holds the keys its bucket takes among its own total, and a read by key finds each key."""
    key_type = [f.type for f in t.table_schema.fields if f.name == "id"]
    t.refresh()
    rows = _ice_rows(t)
    for i, v, dt in rows:
        got = t.plan(f"id = {i} AND dt = '{dt}'")
        assert got and all(e.bucket == bucket_of([i], key_type, e.total_buckets) for e in got)
        assert [tuple(r.values()) for r in t.to_arrow(where=f"id = {i}", columns=["id", "v", "dt"]).to_pylist()] \
            == [(i, v, dt)]


def test_paimon_java_reads_and_writes_a_table_icefloe_rescaled(paimon_bundle, ice):
    pj = paimon_bundle
    t = ice.create_table("db.rs_ice", "id bigint not null, v string, dt string not null", partitioned_by=["dt"],
                         properties={"primary-key": "id,dt", "bucket": "2"})
    model = {(i, "d1" if i <= 6 else "d2"): f"v{i}" for i in range(1, 10)}
    t.append(_arrow([(i, v, dt) for (i, dt), v in model.items()]))
    t.append(_arrow([(2, "w2", "d1"), (8, "w8", "d2")]))
    model.update({(2, "d1"): "w2", (8, "d2"): "w8"})

    def want():
        return sorted((i, v, dt) for (i, dt), v in model.items())

    ice.sql("ALTER TABLE db.rs_ice SET TBLPROPERTIES ('bucket' = '4')")
    ice.sql("CALL sys.rescale(table => 'db.rs_ice', partitions => 'dt=\"d1\"')")
    assert _totals(t) == {"d1": {4}, "d2": {2}}
    assert sorted(pj.rows("db.rs_ice")) == want()
    # Paimon Java writes the rescaled partition with 4 buckets and refuses the old one
    pj.write("db.rs_ice", [(1, "x1", "d1"), (10, "x10", "d1")])
    model.update({(1, "d1"): "x1", (10, "d1"): "x10"})
    with pytest.raises(PaimonJavaError, match=OLD_BUCKETS_REFUSED):
        pj.write("db.rs_ice", [(7, "x7", "d2"), (8, "x8", "d2"), (9, "x9", "d2")])
    assert _ice_rows(t) == want() and _totals(t) == {"d1": {4}, "d2": {2}}
    _check_layout(t)
    # icefloe's rescale of the rest; Paimon Java reads and writes it
    ice.sql("CALL sys.rescale(table => 'db.rs_ice')")
    assert _totals(t) == {"d1": {4}, "d2": {4}}
    pj.write("db.rs_ice", [(7, "y7", "d2")])
    model[(7, "d2")] = "y7"
    assert sorted(pj.rows("db.rs_ice")) == want() == _ice_rows(t)
    _check_layout(t)


def test_icefloe_reads_and_writes_a_table_paimon_java_rescaled(paimon_bundle, ice):
    pj = paimon_bundle
    pj.create_table("db.rs_java", [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
                    partition_keys=("dt",), primary_keys=("id", "dt"), options={"bucket": "2"})
    model = {(i, "d1" if i <= 6 else "d2"): f"v{i}" for i in range(1, 10)}
    pj.write("db.rs_java", [(i, v, dt) for (i, dt), v in model.items()])

    def want():
        return sorted((i, v, dt) for (i, dt), v in model.items())

    pj.alter("db.rs_java", ("set_option", "bucket", "3"))
    pj.write("db.rs_java", [(i, v, dt) for (i, dt), v in model.items() if dt == "d1"], overwrite={"dt": "d1"})
    t = ice.load_table("db.rs_java")
    assert t.table_schema.options["bucket"] == "3"
    assert _totals(t) == {"d1": {3}, "d2": {2}}
    assert _ice_rows(t) == want()
    _check_layout(t)
    # icefloe writes the rescaled partition with 3 buckets and refuses the old one, as Paimon's writers do
    t.append(_arrow([(3, "z3", "d1"), (11, "z11", "d1")]))
    model.update({(3, "d1"): "z3", (11, "d1"): "z11"})
    with pytest.raises(Exception, match=r"Try to write partition \{dt=d2\} with a new bucket num 3, but the previous "
                                        r"bucket num is 2"):
        t.append(_arrow([(7, "z7", "d2")]))
    assert sorted(pj.rows("db.rs_java")) == want()
    # icefloe's rescale of the old partition; Paimon Java then writes it
    ice.sql("CALL sys.rescale(table => 'db.rs_java', bucket_num => 3, where => 'dt = \"d2\"')")
    assert _totals(t) == {"d1": {3}, "d2": {3}}
    pj.write("db.rs_java", [(7, "j7", "d2")])
    model[(7, "d2")] = "j7"
    assert sorted(pj.rows("db.rs_java")) == want() == _ice_rows(t)
    _check_layout(t)
