"""Bad input gets a clear, typed error and leaves the table exactly as it was, with no stray files."""
import datetime as dt
import os

import pyarrow as pa
import pytest

from icefloe.errors import (
    InvalidNameError, RequiredFieldNullError, SchemaError, SchemaMismatchError, UnknownTransformError,
)


def _snapshot_of_dir(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)


@pytest.fixture
def t(catalog, spark):
    t = catalog.create_table("db.t", "id bigint not null, name string, ts timestamp not null",
                             partitioned_by=["day(ts)"])
    t.append(spark.createDataFrame([(1, "a", dt.datetime(2024, 1, 1))], "id bigint, name string, ts timestamp"))
    return t


def _unchanged(t, before_files, before_snaps):
    assert _snapshot_of_dir(t.location) == before_files
    assert [s.snapshot_id for s in t.snapshots()] == before_snaps


def test_unknown_column_rejected(t, spark):
    before, snaps = _snapshot_of_dir(t.location), [s.snapshot_id for s in t.snapshots()]
    df = spark.createDataFrame([(2, "b", dt.datetime(2024, 1, 2), 1)], "id bigint, name string, ts timestamp, extra int")
    with pytest.raises(SchemaMismatchError, match="extra"):
        t.append(df)
    _unchanged(t, before, snaps)


def test_missing_required_column_rejected(t, spark):
    before, snaps = _snapshot_of_dir(t.location), [s.snapshot_id for s in t.snapshots()]
    with pytest.raises(SchemaMismatchError, match="ts"):
        t.append(spark.createDataFrame([(2, "b")], "id bigint, name string"))
    _unchanged(t, before, snaps)


def test_wrong_type_rejected(t, spark):
    before, snaps = _snapshot_of_dir(t.location), [s.snapshot_id for s in t.snapshots()]
    with pytest.raises(SchemaMismatchError, match="'id'"):
        t.append(spark.createDataFrame([("x", "b", dt.datetime(2024, 1, 2))], "id string, name string, ts timestamp"))
    _unchanged(t, before, snaps)


def test_safe_widening_accepted(t, spark):
    t.append(spark.createDataFrame([(7, "w", dt.datetime(2024, 1, 3))], "id int, name string, ts timestamp"))
    assert sorted(r.id for r in t.to_spark().collect()) == [1, 7]


def test_null_in_required_column_spark(t, spark):
    before, snaps = _snapshot_of_dir(t.location), [s.snapshot_id for s in t.snapshots()]
    df = spark.createDataFrame([(2, "b", dt.datetime(2024, 1, 2)), (None, "c", dt.datetime(2024, 1, 3))],
                               "id bigint, name string, ts timestamp")
    with pytest.raises(RequiredFieldNullError, match="required column 'id'"):
        t.append(df)
    _unchanged(t, before, snaps)


def test_null_in_required_column_arrow(t):
    before, snaps = _snapshot_of_dir(t.location), [s.snapshot_id for s in t.snapshots()]
    data = pa.table({"id": pa.array([1, None], pa.int64()), "name": ["a", "b"],
                     "ts": pa.array([dt.datetime(2024, 1, 1)] * 2, pa.timestamp("us", tz="UTC"))})
    with pytest.raises(RequiredFieldNullError, match="'id'"):
        t.append(data)
    _unchanged(t, before, snaps)


def test_unknown_transform(catalog):
    with pytest.raises(UnknownTransformError, match="frobnicate"):
        catalog.create_table("db.u", "id bigint", partitioned_by=["frobnicate(id)"])
    with pytest.raises(UnknownTransformError):
        catalog.create_table("db.u", "name string", partitioned_by=["year(name)"])
    with pytest.raises(SchemaError, match="nope"):
        catalog.create_table("db.u", "id bigint", partitioned_by=["nope"])
    assert not catalog.table_exists("db.u")


@pytest.mark.parametrize("name", ["../x.t", "db.t/../../x", "db/x.t", "db.", ".t", "db.t.u", "db.t x", "db..",
                                  "db.t\n", "db\n.t", "db.t:x", "db.t\\x", "db.t\x00", "db.t\u00e4", "db.t*",
                                  "db.t?", "db. t", "db.t\t"])
def test_bad_names_rejected(catalog, name, warehouse):
    with pytest.raises(InvalidNameError):
        catalog.create_table(name, "id bigint")
    parent = os.path.dirname(warehouse)
    assert sorted(os.listdir(parent)) == ["warehouse"]


def test_bad_schema_string(catalog):
    with pytest.raises(SchemaError, match="frob"):
        catalog.create_table("db.v", "id frob")
    with pytest.raises(SchemaError, match="duplicate"):
        catalog.create_table("db.v", "id bigint, ID int")
