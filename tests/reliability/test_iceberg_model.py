"""Random operation sequences with random injected faults, checked against an in-memory model.

Operations: append, overwrite, rewrite manifests, expire snapshots, roll back to the
parent snapshot -- each through a FileIO that may fail at its k-th write, rename or
delete. After every step the table reads exactly what the model says, sequence numbers
strictly increase, and every file the metadata references exists.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.core.faults import InjectedFault
from icefloe.catalog import Catalog
from tests.reliability.rel_util import faulty_io, make_table, read_ids, referenced_files, rows

OP_NAMES = ["append", "overwrite", "rewrite_manifests", "expire", "rollback"]


def ops_strategy(max_size):
    return st.lists(st.tuples(st.sampled_from(OP_NAMES), st.integers(1, 4),
                              st.one_of(st.none(), st.integers(1, 8))), min_size=1, max_size=max_size)


def run_model(wh, ops, storage=None):
    """``storage``: the object store's settings when ``wh`` is on one."""
    make_table(wh, storage=storage)
    model: list = []
    states = {}          # snapshot id -> the ids it shows
    next_id = 0
    for op, n, fault in ops:
        t = Catalog(wh, io=faulty_io(fault, storage)).load_table("db.t")
        current = t.current_snapshot()
        expected = model
        try:
            if op in ("append", "overwrite"):
                ids = list(range(next_id, next_id + n))
                getattr(t, op)(rows(next_id, n))
                next_id += n
                expected = sorted(model + ids) if op == "append" else ids
            elif op == "rewrite_manifests":
                if current is None:
                    continue
                t.rewrite_manifests()
            elif op == "expire":
                t.expire_snapshots(older_than=2**62, retain_last=1)
            elif op == "rollback":
                parent = current.parent_snapshot_id if current is not None else None
                if parent is None or parent not in states or parent not in {s.snapshot_id for s in t.snapshots()}:
                    continue
                t.rollback_to_snapshot(parent)
                expected = states[parent]
            ok = True
        except InjectedFault:
            ok = False
        if ok:
            model = expected
        clean = Catalog(wh, **(storage or {})).load_table("db.t")
        cur = clean.current_snapshot()
        if cur is not None:
            states.setdefault(cur.snapshot_id, model)
        assert read_ids(wh, storage) == model, (op, fault)
        seqs = [s.sequence_number for s in clean.snapshots()]
        assert seqs == sorted(set(seqs)), seqs
        assert all(clean.io.exists(p) for p in referenced_files(clean))
    return model


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy(6))
def test_random_ops_with_faults_match_model(tmp_path_factory, ops):
    run_model(str(tmp_path_factory.mktemp("model")), ops)


@pytest.mark.long
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy(6))
def test_random_ops_with_faults_match_model_on_s3(s3_server, ops):
    """The same model with the warehouse on the S3 server and faults at its object writes (long:
    ``make test`` runs the model on local files and tests/objectstore/test_s3_commits.py a fault at
    every object write of a commit on S3)."""
    run_model(f"s3://{s3_server.new_bucket()}/wh", ops, s3_server.properties)


@pytest.mark.stress
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy(20))
def test_random_ops_with_faults_match_model_stress(tmp_path_factory, ops):
    run_model(str(tmp_path_factory.mktemp("model")), ops)
