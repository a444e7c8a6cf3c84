"""The plain-Python model and icefloe's side of the Paimon referee tests, shared by the referees
(Paimon's Spark runtime in ``tests/paimon/test_paimon_java_referee.py``, Paimon's Java engine without
Spark in ``tests/paimon/test_paimon_bundle_referee.py``): the table kinds' schemas, each merge
engine's commits and rows worked out by hand, ``merge_model`` (the merge engines in plain Python),
and what icefloe reads of a table (rows, snapshots, files, changes), sorted for comparison."""
from __future__ import annotations

import os

import pyarrow as pa


def arrow(schema: dict, rows: list[tuple]) -> pa.Table:
    names = list(schema)
    return pa.table({n: pa.array([r[i] for r in rows], schema[n]) for i, n in enumerate(names)})


def ice_rows(table, cols: list[str] | None = None, **at) -> list[tuple]:
    data = table.refresh().to_arrow(**at)
    cols = cols or data.column_names
    return sorted((tuple(r[c] for c in cols) for r in data.to_pylist()), key=repr)


def ice_snapshots(table) -> list[tuple]:
    return [(s.id, s.commit_kind) for s in table.refresh().snapshots()]


def ice_files(table) -> set[str]:
    return {os.path.basename(f.file_path) for f in table.refresh().plan_files()}


def ice_changes(table, start: int) -> list[tuple]:
    return sorted((tuple(r) for r in table.refresh().changes(start).collect()), key=repr)


APPEND = {"id": pa.int64(), "v": pa.string(), "dt": pa.string()}


PK = {"id": pa.int64(), "a": pa.string(), "n": pa.int64(), "s": pa.int64()}
PK_DDL = "id bigint not null, a string, n bigint, s bigint"

# Each engine: options, commits, the rows expected after the last one (by hand, from Paimon's docs).
ENGINES = {
    "dedup_seq": ({"sequence.field": "s"},
                  [[(1, "a", 1, 5), (2, "b", 1, 5)], [(1, "old", 9, 4), (2, "new", 2, 6)], [(3, "c", 3, 1)]],
                  [(1, "a", 1, 5), (2, "new", 2, 6), (3, "c", 3, 1)]),
    "partial_seq_group": ({"merge-engine": "partial-update", "fields.s.sequence-group": "a"},
                          [[(1, "a", 1, 5), (2, "b", None, 5)], [(1, "stale", 7, 4), (2, None, 8, 9)],
                           [(1, None, None, 6)]],
                          [(1, None, 7, 6), (2, None, 8, 9)]),
    "aggregation": ({"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                     "fields.s.aggregate-function": "max", "fields.a.aggregate-function": "last_non_null_value"},
                    [[(1, "a", 1, 5), (2, "b", 2, 1)], [(1, None, 10, 3), (2, "B", 5, 7)], [(1, "z", 100, 2)]],
                    [(1, "z", 111, 5), (2, "B", 7, 7)]),
    "first_row": ({"merge-engine": "first-row"},
                  [[(1, "a", 1, 1)], [(1, "later", 2, 2), (2, "b", 3, 3)], [(2, "later", 4, 4), (3, "c", 5, 5)]],
                  [(1, "a", 1, 1), (2, "b", 3, 3), (3, "c", 5, 5)]),
}


def merge_model(engine: str, state: dict, rows: list[tuple]) -> dict:
    """Each merge engine in plain Python, from Paimon's docs: rows (id, a, n, s) merged into
    ``state`` (id -> row) in commit order."""
    state = dict(state)
    for r in rows:
        old = state.get(r[0])
        if old is None and engine != "partial_seq_group":
            state[r[0]] = r
        elif engine == "dedup_seq":                     # the larger sequence.field wins
            state[r[0]] = r if r[3] >= old[3] else old
        elif engine == "partial_seq_group":             # n: non-null overwrites; (a, s): the group s guards
            old = old or (r[0], None, None, None)
            a, s = old[1], old[3]
            if r[3] is not None and (s is None or r[3] >= s):
                a, s = r[1], r[3]
            state[r[0]] = (r[0], a, r[2] if r[2] is not None else old[2], s)
        elif engine == "aggregation":                   # a last_non_null_value, n sum, s max
            state[r[0]] = (r[0], r[1] if r[1] is not None else old[1],
                           None if old[2] is None and r[2] is None else (old[2] or 0) + (r[2] or 0),
                           max(x for x in (old[3], r[3]) if x is not None))
        elif engine == "first_row":
            pass
    return state


KV = {"id": pa.int64(), "v": pa.string()}
