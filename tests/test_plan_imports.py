"""A plan in a fresh process pays for nothing it does not use: pyarrow imports pandas (~0.3 s)
on the first ``pa.array`` of a NumPy array and the first ``to_numpy``, so the planning path moves
its columns between NumPy and Arrow by their buffers (``core.arrow``)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

from icefloe.core.arrow import arrow_of, numpy_of

PLAN = textwrap.dedent("""
    import sys
    from icefloe.catalog import load_table
    from icefloe.iceberg import manifest_reader
    manifest_reader.COLUMNS_MIN_ENTRIES = 1
    t = load_table(sys.argv[1])
    counts = [sum(1 for _ in t.iter_tasks(where)) for where in (None, "id = 7007", "id > 1000 AND ts IS NOT NULL")]
    print(counts, "pandas" in sys.modules, flush=True)
""")


def test_a_plan_in_a_fresh_process_does_not_import_pandas(tmp_path):
    import icefloe
    from icefloe.iceberg.manifest import DataFile

    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint not null, ts timestamp, v string")
    files = [DataFile(file_path=f"{t.location}/data/{i}.parquet", file_format="PARQUET", partition=(),
                      record_count=1000, file_size_in_bytes=4000, value_counts={1: 1000}, null_value_counts={1: 0},
                      lower_bounds={1: (i * 1000).to_bytes(8, "little")},
                      upper_bounds={1: (i * 1000 + 999).to_bytes(8, "little")})
             for i in range(40)]
    t.commit_files(files[:20])
    t.commit_files(files[20:])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", PLAN, t.location], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[40,", "1,", "39]", "False"], out.stdout


@pytest.mark.parametrize("typ", [pa.int8(), pa.int32(), pa.int64(), pa.uint16(), pa.bool_()])
def test_numpy_of_and_arrow_of_agree_with_pyarrow(typ):
    values = [True, False, True, True, False] * 3 if pa.types.is_boolean(typ) else [3, 1, 0, 7, 2] * 3
    arr = pa.array(values, typ)
    for part in (arr, arr.slice(3, 9), arr.slice(15), pa.chunked_array([arr.slice(1, 4), arr.slice(0, 0), arr])):
        got = numpy_of(part)
        assert got.tolist() == part.to_pylist()
        back = arrow_of(np.ascontiguousarray(got))
        assert back.to_pylist() == part.to_pylist()
    with pytest.raises(ValueError, match="nulls"):
        numpy_of(pa.array([1, None], typ if not pa.types.is_boolean(typ) else pa.int8()))


PAIMON_PLAN = textwrap.dedent("""
    import sys
    import icefloe
    from icefloe.paimon import manifest_columns
    manifest_columns.COLUMNS_MIN_ENTRIES = 1
    t = icefloe.Catalog(sys.argv[1], format="paimon").load_table("db.t")
    counts = [len(t.plan_files(where=where)) for where in (None, "p = 3")]
    print(counts, "pandas" in sys.modules, flush=True)
""")


def test_a_paimon_plan_in_a_fresh_process_does_not_import_pandas(tmp_path):
    import icefloe
    from icefloe.paimon.data_file import CommitMessage, DataFileMeta

    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    t = cat.create_table("db.t", "id bigint, p int", partitioned_by=["p"])
    t.commit([CommitMessage((i % 5,), 0, -1, [DataFileMeta(file_name=f"data-{i}.parquet", file_size=4000,
                                                            row_count=100)]) for i in range(30)])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", PAIMON_PLAN, str(tmp_path / "wh")], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[30,", "6]", "False"], out.stdout
