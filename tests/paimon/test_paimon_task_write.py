"""What a Spark task of the ``icefloe`` data source does to write a Paimon table's files
(``icefloe.spark.paimon_tasks``): the files and their statistics, and what a fresh worker has to
import for it (every new Python worker of a query pays those imports before its first batch)."""
from __future__ import annotations

import datetime as dt
import json
import pickle
import subprocess
import sys

import pyarrow as pa
import pytest

from icefloe.paimon.catalog import PaimonCatalog
from icefloe.paimon.stats import stats_from_arrow
from icefloe.paimon.types import DataField, parse_type

ZONES = ("UTC", "Europe/Paris", "America/Los_Angeles", "+05:30")
# a leap second's neighbourhood, the epoch, a daylight-saving change, far past and far future
MICROS = [1483228799999999, 0, -1, 1711846800000001, -62000000000000000, 253000000000000000]


def _ts_array(unit: str, tz: str) -> pa.Array:
    per = {"s": 1_000_000, "ms": 1000, "us": 1}[unit]
    values = [m // per for m in MICROS]
    return pa.array(values + [None], pa.int64()).cast(pa.timestamp(unit, tz=tz))


@pytest.mark.parametrize("tz", ZONES)
@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_timestamp_statistics_are_pyarrows_values(tz, unit):
    """Min and max of a time-zoned timestamp column are the values pyarrow's ``as_py`` gives
    (same instant, same zone, same wall clock), though computed without it."""
    import pyarrow.compute as pc

    col = _ts_array(unit, tz)
    ltz, plain = parse_type("TIMESTAMP(6) WITH LOCAL TIME ZONE")[0], parse_type("TIMESTAMP(6)")[0]
    fields = [DataField(0, "a", ltz), DataField(1, "b", plain)]
    stats = stats_from_arrow(pa.table({"a": col, "b": col}), fields)
    mm = pc.min_max(col)
    want_lo, want_hi = mm["min"].as_py(), mm["max"].as_py()
    for s in stats:
        assert s.null_count == 1
        for got, want in ((s.min, want_lo), (s.max, want_hi)):
            assert got == want and got.utcoffset() == want.utcoffset()
            assert got.replace(tzinfo=None) == want.replace(tzinfo=None) and str(got.tzinfo) == str(want.tzinfo)


_TASK = r"""
import json, pickle, sys
import pyarrow as pa
from icefloe.spark.paimon_tasks import paimon_write_batches
batch = pa.ipc.open_file(sys.argv[2]).get_batch(0)
messages = paimon_write_batches(sys.argv[1], [batch])
heavy = [m for m in ("pandas", "icefloe.paimon.commit", "icefloe.paimon.table", "icefloe.spark.paimon_write",
                     "icefloe.iceberg.table_metadata") if m in sys.modules]
pickle.dump(messages, open(sys.argv[3], "wb"))
print(json.dumps({"heavy": heavy}))
"""


def test_a_fresh_worker_writes_an_append_tables_files_with_few_imports(tmp_path):
    """A new Python worker writes a Paimon append table's batch without importing pandas (a
    time-zoned timestamp column's statistics used to), the commit or the table API; the driver
    commits what it wrote and the rows read back."""
    cat = PaimonCatalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint not null, name string, ts timestamp")
    n = 1000
    ts = pa.array([1_700_000_000_000_000 + i for i in range(n)], pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    batch = pa.RecordBatch.from_arrays([pa.array(range(n), pa.int64()), pa.array([f"n{i}" for i in range(n)]), ts],
                                       names=["id", "name", "ts"])
    ipc = tmp_path / "batch.arrow"
    with pa.ipc.new_file(str(ipc), batch.schema) as f:
        f.write_batch(batch)
    out = subprocess.run([sys.executable, "-c", _TASK, t.location, str(ipc), str(tmp_path / "messages")],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1])["heavy"] == []
    from icefloe.spark.paimon_tasks import paimon_commit

    with open(tmp_path / "messages", "rb") as f:
        messages = pickle.load(f)
    assert paimon_commit(t.location, messages) is not None
    rows = t.refresh().to_arrow().sort_by("id")
    assert rows.column("id").to_pylist() == list(range(n))
    assert rows.column("name").to_pylist() == [f"n{i}" for i in range(n)]
    (meta,) = [f for m in messages for f in m.new_files]
    assert meta.row_count == n
    stats = stats_from_arrow(pa.table({"ts": ts}), [f for f in t.table_schema.fields if f.name == "ts"])[0]
    assert stats.min == dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.timezone.utc)
    assert stats.max == dt.datetime(2023, 11, 14, 22, 13, 20, 999, tzinfo=dt.timezone.utc)
