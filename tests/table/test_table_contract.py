"""The Table contract: both formats answer the same calls, and what a format cannot do is one
typed error naming the operation, the table and the format, with the table left as it was."""
import inspect

import pyarrow as pa
import pytest

import icefloe
from icefloe.core.reports import ExpireReport
from icefloe.errors import NotSupportedError
from icefloe.table import IcebergTable, PaimonTable, Table

PUBLIC = sorted({n for c in Table.__mro__[:-1] for n, v in vars(c).items()      # Table and its parts (refs)
                 if not n.startswith("_") and (callable(v) or isinstance(v, property)) and n != "unsupported"})


def _rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]})


@pytest.fixture
def tables(tmp_path, spark):
    ice = icefloe.Catalog(str(tmp_path / "ice"), spark=spark).create_table("db.t", "id bigint not null, name string")
    pai = icefloe.Catalog(str(tmp_path / "pai"), "paimon", spark=spark).create_table(
        "db.t", "id bigint not null, name string")
    return ice, pai


@pytest.mark.parametrize("cls", [IcebergTable, PaimonTable])
def test_every_contract_method_keeps_the_contract_signature(cls):
    # a format may add optional parameters, never drop or rename one of the contract's
    for name in PUBLIC:
        ours = getattr(Table, name)
        theirs = getattr(cls, name)
        if isinstance(ours, property):
            assert isinstance(theirs, property), f"{cls.__name__}.{name} is not a property"
            continue
        want = [p for p in inspect.signature(ours).parameters.values() if p.name != "self"]
        got = inspect.signature(theirs).parameters
        for p in want:
            if p.kind is p.VAR_POSITIONAL:
                assert any(q.kind is q.VAR_POSITIONAL for q in got.values()), (cls.__name__, name)
                continue
            assert p.name in got, f"{cls.__name__}.{name} lacks parameter {p.name!r} of the contract"
            q = got[p.name]
            if p.default is not p.empty:        # a call leaving it out works on every format
                assert q.default is not q.empty, f"{cls.__name__}.{name}: parameter {p.name!r} has no default"
            # and a call passing it by position means the same (Iceberg's; Paimon's commit and to_arrow
            # still put options of their own before some of the contract's)
            if p.kind is p.POSITIONAL_OR_KEYWORD and cls is IcebergTable:
                assert q.kind is q.POSITIONAL_OR_KEYWORD and \
                    [n for n in got if n != "self"].index(p.name) == want.index(p), \
                    f"{cls.__name__}.{name}: parameter {p.name!r} is not where the contract has it"


@pytest.mark.parametrize("cls", [IcebergTable, PaimonTable])
def test_contract_parameters_keep_their_positions(cls):
    # a call written against the contract with positional arguments means the same on every format:
    # a format's own options come after the contract's (keyword-only where they would shift them)
    for name in PUBLIC:
        ours = getattr(Table, name)
        if isinstance(ours, property):
            continue
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        want = [p.name for p in inspect.signature(ours).parameters.values() if p.kind in positional]
        got = [p.name for p in inspect.signature(getattr(cls, name)).parameters.values() if p.kind in positional]
        assert got[:len(want)] == want, f"{cls.__name__}.{name}{tuple(got)} moves the contract's {tuple(want)}"


def test_paimon_to_arrow_takes_the_contract_arguments(tables, spark):
    from pyspark.sql import functions as F

    from icefloe.errors import UnsupportedFilterError

    _, pai = tables
    pai.append(_rows([1, 2]))
    pai.create_tag("t1")
    pai.append(_rows([3]))
    assert sorted(pai.to_arrow(None, None, "id > 1", "t1").column("id").to_pylist()) == [2]   # ref 4th
    assert pai.to_arrow(where="id = 3", columns=["name"]).to_pylist() == [{"name": "n3"}]
    with pytest.raises(UnsupportedFilterError, match="Spark Column"):
        pai.to_arrow(where=F.col("id") > 1)


def test_both_formats_are_tables_with_one_shape(tables):
    for t in tables:
        assert isinstance(t, Table)
        t.append(_rows([1, 2]))
        t.overwrite(_rows([3]))
        assert t.to_arrow().column("id").to_pylist() == [3]
        assert sorted(r.id for r in t.to_spark().collect()) == [3]
        assert len(t.plan_files()) == 1
        first = t.snapshots()[0]
        first_id = getattr(first, "snapshot_id", getattr(first, "id", None))
        assert t.to_arrow(snapshot_id=first_id).column("id").to_pylist() == [1, 2]
        assert [f.name for f in t.schema_for(snapshot_id=first_id).fields] == ["id", "name"]
        report = t.expire_snapshots(older_than=2**62, retain_last=1)
        assert isinstance(report, ExpireReport) and report.expired_snapshot_ids == [first_id]


def test_row_level_changes_give_one_result_on_both_formats(tables, spark):
    """DELETE, UPDATE and MERGE through the contract: the same statements, the same rows and
    counts on an Iceberg table and a Paimon append table."""
    src = spark.createDataFrame([(2, "m2"), (7, "m7")], "id bigint, name string")
    results = []
    for t in tables:
        t.append(_rows([1, 2, 3]))
        t.append(_rows([4, 5]))
        counts = [t.delete("id = 1"), t.update({"name": "upper(name)"}, where="id >= 4"),
                  t.merge(src, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()]
        results.append(([{k: v for k, v in c.items() if k != "snapshot_id"} for c in counts],
                        sorted(tuple(r.values()) for r in t.to_arrow().to_pylist())))
    assert results[0] == results[1]
    assert results[0][1] == [(2, "m2"), (3, "n3"), (4, "N4"), (5, "N5"), (7, "m7")]


def test_what_a_format_cannot_do_names_operation_table_and_format(tables):
    _ice, pai = tables
    pai.append(_rows([1, 2]))
    before = [s.id for s in pai.snapshots()]
    for call, operation in [(lambda: pai.update_spec(), "update_spec"),
                            (lambda: pai.create_branch("b", snapshot_id=1), "create_branch with snapshot_id"),
                            (lambda: pai.replace_branch("b", 1), "replace_branch")]:
        with pytest.raises(NotSupportedError, match=operation) as info:
            call()
        assert info.value.table == "db.t" and info.value.format == "paimon"
        assert "paimon table db.t" in str(info.value)
    assert [s.id for s in pai.snapshots()] == before
    assert sorted(pai.to_arrow().column("id").to_pylist()) == [1, 2]


def test_iceberg_partition_overwrite_through_the_table_api(tmp_path, spark):
    t = icefloe.Catalog(str(tmp_path / "ice"), spark=spark).create_table(
        "db.p", "id bigint not null, p string", partitioned_by=["p"])
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "p": ["a", "b", "c"]}))
    t.overwrite(pa.table({"id": pa.array([10], pa.int64()), "p": ["a"]}), partition={"p": "a"})
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 2, "p": "b"}, {"id": 3, "p": "c"}, {"id": 10, "p": "a"}]
    t.overwrite(pa.table({"id": pa.array([20, 30], pa.int64()), "p": ["b", "d"]}), dynamic=True)
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 3, "p": "c"}, {"id": 10, "p": "a"}, {"id": 20, "p": "b"}, {"id": 30, "p": "d"}]
    assert t.current_snapshot().summary["operation"] == "overwrite"
    with pytest.raises(ValueError, match="not both"):
        t.overwrite(_rows([1]), partition={"p": "a"}, dynamic=True)


def test_an_iceberg_tag_replaced_without_a_snapshot_takes_the_current_one(tables):
    ice, _ = tables
    ice.append(_rows([1]))
    first = ice.current_snapshot().snapshot_id
    ice.create_tag("v1")
    ice.append(_rows([2]))
    assert ice.refs()["v1"].snapshot_id == first
    ice.replace_tag("v1")           # the contract's default: the current snapshot
    assert ice.refs()["v1"].snapshot_id == ice.current_snapshot().snapshot_id != first


def test_an_iceberg_manifest_rewrite_adds_the_summary_it_is_given(tables):
    ice, _ = tables
    ice.append(_rows([1]))
    ice.append(_rows([2]))
    snap = ice.rewrite_manifests(summary={"written-by": "nightly-job"})
    assert snap.summary["written-by"] == "nightly-job" and snap.summary["operation"] == "replace"
