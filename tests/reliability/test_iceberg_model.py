"""Random operation sequences with random injected faults, checked against an in-memory model."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.core.faults import FaultInjectingFileIO, InjectedFault
from icefloe.iceberg.catalog import HadoopCatalog
from tests.reliability.rel_util import make_table, read_ids, rows

OPS = st.lists(st.tuples(st.sampled_from(["append", "overwrite"]), st.integers(1, 4),
                         st.one_of(st.none(), st.integers(1, 8))), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_random_ops_with_faults_match_model(tmp_path_factory, ops):
    wh = str(tmp_path_factory.mktemp("model"))
    make_table(wh)
    model: list = []
    next_id = 0
    for op, n, fault in ops:
        data = rows(next_id, n)
        ids = list(range(next_id, next_id + n))
        next_id += n
        t = HadoopCatalog(wh, io=FaultInjectingFileIO(fail_at=fault)).load_table("db.t")
        try:
            getattr(t, op)(data)
            ok = True
        except InjectedFault:
            ok = False
        if ok:
            model = sorted(model + ids) if op == "append" else ids
        assert read_ids(wh) == model
        snaps = HadoopCatalog(wh).load_table("db.t").snapshots()
        assert [s.sequence_number for s in snaps] == list(range(1, len(snaps) + 1))
