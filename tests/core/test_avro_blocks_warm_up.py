"""The decoder's block selection (``avro_decode.decode(..., blocks=...)``) and its background warm-up
(``avro_columns.warm_up``): chosen blocks decode to exactly fastavro's records of those blocks, and a
process that warms the decoder up while several threads decode at once gets every answer right."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import fastavro
import numpy as np
import pytest

from icefloe.core import avro_columns, avro_decode

SCHEMA = {"type": "record", "name": "r", "fields": [
    {"name": "i", "type": "long"}, {"name": "s", "type": ["null", "string"]},
    {"name": "m", "type": {"type": "array", "items": {"type": "record", "name": "kv", "fields": [
        {"name": "key", "type": "int"}, {"name": "value", "type": "bytes"}]}}}]}


def _file(n: int, codec: str = "deflate") -> tuple[bytes, list[dict]]:
    records = [{"i": i, "s": None if i % 3 == 0 else f"v{i}" * (i % 5),
                "m": [{"key": k, "value": bytes([k % 256]) * (i % 4)} for k in range(i % 3)]} for i in range(n)]
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(SCHEMA), records, codec=codec, sync_interval=200)
    return buf.getvalue(), records


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_chosen_blocks_decode_to_their_records(codec: str) -> None:
    data, records = _file(700, codec)
    counts = avro_columns.block_counts(data)
    assert counts is not None and len(counts) > 8 and int(counts.sum()) == len(records)
    firsts = np.concatenate([[0], np.cumsum(counts)])
    rng = np.random.default_rng(5)
    for _ in range(6):
        blocks = np.sort(rng.choice(len(counts), size=int(rng.integers(0, len(counts))), replace=False))
        want = [r for b in blocks.tolist() for r in records[firsts[b]:firsts[b + 1]]]
        got = avro_decode.decode(data, blocks=blocks.astype(np.int64)).to_pylist()
        assert got == want
    with pytest.raises(ValueError, match="blocks"):
        avro_decode.decode(data, blocks=np.array([len(counts)], np.int64))


def test_the_warm_up_file_is_an_avro_file_fastavro_reads() -> None:
    data = avro_columns._tiny_file()
    assert list(fastavro.reader(io.BytesIO(data))) == [{"s": "a", "n": 5, "m": [{"key": 3, "value": b"x"}]}]
    assert avro_decode.decode(data).to_pylist() == [{"s": "a", "n": 5, "m": [(3, b"x")]}]


def test_decoding_on_several_threads_while_the_decoder_warms_up(tmp_path) -> None:
    """In a fresh process (the decoder not yet loaded): the warm-up starts, and four threads decode
    at once before it has finished; each gets fastavro's records, and the process exits cleanly."""
    data, _ = _file(3000)
    path = tmp_path / "f.avro"
    path.write_bytes(data)
    script = textwrap.dedent(f"""
        import io, sys, fastavro
        from concurrent.futures import ThreadPoolExecutor
        from icefloe.core import avro_columns, avro_decode
        data = open({str(path)!r}, "rb").read()
        want = list(fastavro.reader(io.BytesIO(data)))
        assert "numba" not in sys.modules
        avro_columns.warm_up()
        def one(_):
            return avro_decode.decode(data).to_pylist() == want
        with ThreadPoolExecutor(4) as pool:
            assert all(pool.map(one, range(4)))
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
