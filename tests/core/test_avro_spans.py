"""``core.avro_spans``: each record's span and a field's start found by walking the writer's schema
(every kind of node, nulls on either side of a union, nested arrays and maps), checked against
fastavro's encoding of each record alone; and records re-assembled from new leading fields."""
from __future__ import annotations

import io
import random

import fastavro
import numpy as np

from icefloe.core import avro_decode, numba_cache

SCHEMA = {
    "type": "record", "name": "r", "fields": [
        {"name": "a", "type": "int"},
        {"name": "b", "type": ["null", "long"]},
        {"name": "body", "type": {"type": "record", "name": "body", "fields": [
            {"name": "f", "type": "float"}, {"name": "d", "type": ["double", "null"]},
            {"name": "x", "type": {"type": "fixed", "name": "x", "size": 3}}, {"name": "t", "type": "boolean"},
            {"name": "s", "type": "string"}, {"name": "raw", "type": ["null", "bytes"]},
            {"name": "arr", "type": ["null", {"type": "array", "items": {"type": "array", "items": "long"}}]},
            {"name": "m", "type": {"type": "map", "values": ["null", "string"]}},
            {"name": "n", "type": "null"},
            {"name": "last", "type": ["null", "long"]},
        ]}},
    ]}


def _record(rng: random.Random) -> dict:
    maybe = lambda v: None if rng.random() < 0.3 else v  # noqa: E731
    return {"a": rng.randint(-2**31, 2**31 - 1), "b": maybe(rng.randint(-2**63, 2**63 - 1)),
            "body": {"f": rng.random(), "d": maybe(rng.random()), "x": rng.randbytes(3), "t": rng.random() < 0.5,
                     "s": "é" * rng.randint(0, 5), "raw": maybe(rng.randbytes(rng.randint(0, 9))),
                     "arr": maybe([[rng.randint(-9, 9) for _ in range(rng.randint(0, 3))] for _ in range(rng.randint(0, 3))]),
                     "m": {str(i): maybe("v") for i in range(rng.randint(0, 4))}, "n": None,
                     "last": maybe(rng.randint(0, 10**12))}}


def counts_before(counts, i: int) -> bool:
    """Whether record ``i`` is not the first of its block (then it starts where the one before ends)."""
    firsts = set(np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist())
    return i not in firsts


def test_spans_and_assembly_match_fastavro():
    rng = random.Random(3)
    recs = [_record(rng) for _ in range(500)]
    parsed = fastavro.parse_schema(SCHEMA)
    buf = io.BytesIO()
    fastavro.writer(buf, parsed, recs, codec="null", sync_interval=2000)
    meta, _, starts, ends, counts = avro_decode.frames(buf.getvalue())
    data = np.frombuffer(buf.getvalue(), np.uint8)
    prog = avro_decode.Program(SCHEMA)
    body = prog.root.children[2]
    last = body.children[-1]
    marks = np.array([body.index, last.index, last.end], np.int64)
    at = np.empty((len(recs), 3), np.int64)
    rec_end = np.empty(len(recs), np.int64)
    spans = numba_cache.spans()
    assert spans.record_spans(data, starts, ends, counts, prog.kind, prog.end, prog.nullbr, prog.fsize,
                              marks, at, rec_end) == len(recs)
    head_schema = fastavro.parse_schema({"type": "record", "name": "h", "fields": SCHEMA["fields"][:2]})
    for i, r in enumerate(recs):
        whole, head = io.BytesIO(), io.BytesIO()
        fastavro.schemaless_writer(whole, parsed, r)
        fastavro.schemaless_writer(head, head_schema, r)
        begin = int(rec_end[i]) - len(whole.getvalue())
        assert begin == (rec_end[i - 1] if i and counts_before(counts, i) else begin)
        assert data[begin:rec_end[i]].tobytes() == whole.getvalue()
        assert at[i, 0] - begin == len(head.getvalue())
        assert at[i, 2] == rec_end[i]            # the last field's end is the record's
    # records re-assembled: new a and b, the body copied around a new ``last``
    segs = np.stack([at[:, 0], at[:, 1], at[:, 2], rec_end], axis=1)
    lead = np.array([[i, -i, i * 7] for i in range(len(recs))], np.int64)
    nulls = np.array([[0, i % 2, i % 3 == 0] for i in range(len(recs))], np.uint8)
    out = np.empty(len(data) + 64 * len(recs), np.uint8)
    offsets = np.empty(len(recs) + 1, np.int64)
    used = spans.assemble(data, segs, lead, nulls, np.array([-1, 0, 0], np.int64), out, offsets)
    got = []
    for i in range(len(recs)):
        got.append(fastavro.schemaless_reader(io.BytesIO(out[offsets[i]:offsets[i + 1]].tobytes()), parsed, parsed))
    assert offsets[-1] == used
    read_back = list(fastavro.reader(io.BytesIO(buf.getvalue())))     # floats as stored
    for i, (r, g) in enumerate(zip(read_back, got)):
        want = dict(r, a=i, b=None if i % 2 else -i, body=dict(r["body"], last=None if i % 3 == 0 else i * 7))
        assert g == want
