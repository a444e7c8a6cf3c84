"""Timestamps as pandas and pyarrow give them: nanoseconds stored as microseconds when no
digit is lost, naive values for a zoned column taken as UTC instants; losing digits or a zone
is refused, naming the column."""
import datetime as dt

import pandas as pd
import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import SchemaMismatchError


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_pandas_and_arrow_timestamps_are_taken_when_lossless(tmp_path, fmt):
    t = icefloe.Catalog(str(tmp_path / "wh"), fmt).create_table("db.ts", "id bigint, ts timestamp, tn timestamp_ntz")
    t.append(pd.DataFrame({"id": [1], "ts": [pd.Timestamp("2024-01-01 10:00:00.123456")],       # naive, ns
                           "tn": [pd.Timestamp("2024-01-01 10:00:00.5")]}))
    t.append(pa.table({"id": [2], "ts": pa.array([1_700_000_000_000_000], pa.timestamp("us")),    # naive, us
                       "tn": pa.array([1_700_000_000_000_000_000], pa.timestamp("ns"))}))
    utc = dt.timezone.utc
    got = {r["id"]: (r["ts"], r["tn"]) for r in t.to_arrow().to_pylist()}
    assert got[1] == (dt.datetime(2024, 1, 1, 10, 0, 0, 123456, tzinfo=utc), dt.datetime(2024, 1, 1, 10, 0, 0, 500000))
    assert got[2] == (dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=utc), dt.datetime(2023, 11, 14, 22, 13, 20))
    before = len(t.snapshots())
    with pytest.raises(SchemaMismatchError, match="'ts'.*lose data"):
        t.append(pa.table({"id": [3], "ts": pa.array([1_700_000_000_000_000_001], pa.timestamp("ns", "UTC")),
                           "tn": pa.array([0], pa.timestamp("us"))}))
    with pytest.raises(SchemaMismatchError, match="'tn'"):      # a zoned value for a naive column
        t.append(pa.table({"id": [4], "ts": pa.array([0], pa.timestamp("us", "UTC")),
                           "tn": pa.array([0], pa.timestamp("us", "UTC"))}))
    assert len(t.snapshots()) == before
