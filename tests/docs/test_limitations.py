"""The limitations page's refusals are real: each row of its "What is refused" table is run, and
must raise the error it names, with the words it shows, leaving every table as it was."""
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors

PAGE = Path(__file__).resolve().parents[2] / "docs" / "limitations.md"


def refusals() -> list:
    text = PAGE.read_text()
    section = text.split("## What is refused", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 5 or not cells[1].startswith("`"):
            continue
        what, call, error, words, _why = cells
        rows.append(pytest.param(call.strip("`"), error.strip("`"), words.strip("`"), id=what))
    return rows


def test_the_page_lists_refusals():
    assert len(refusals()) >= 20


@pytest.fixture(scope="module")
def tables(tmp_path_factory, spark):
    """The tables, made once: every refusal is checked to leave them as they were."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("limits"))
        yield make_tables(spark)


def make_tables(spark) -> dict:
    ice_cat = icefloe.Catalog("warehouse", spark=spark)
    ice = ice_cat.create_table("db.ice", "id bigint not null, kind string")
    ice.append(pa.table({"id": pa.array([1], pa.int64()), "kind": ["a"]}))
    pcat = icefloe.Catalog("warehouse", format="paimon", spark=spark)
    schema = "id bigint not null, v string"
    row = pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]})
    found = {"icefloe": icefloe, "pa": pa, "ice_cat": ice_cat, "ice": ice, "pcat": pcat}
    for name, props in {"logs": {"bucket": "-1"},
                        "users": {"primary-key": "id", "bucket": "1"},
                        "firsts": {"primary-key": "id", "bucket": "1", "merge-engine": "first-row"},
                        "partial": {"primary-key": "id", "bucket": "1", "merge-engine": "partial-update"}}.items():
        t = pcat.create_table(f"db.{name}", schema, properties=props)
        t.append(row)
        found[name] = t
    return found


def state(ns: dict) -> dict:
    """Every table's current snapshot, and the tables each catalog holds."""
    out = {name: (t.refresh() or t).current_snapshot() for name, t in ns.items()
           if name in ("ice", "logs", "users", "firsts", "partial")}
    out = {name: getattr(s, "snapshot_id", getattr(s, "id", None)) for name, s in out.items()}
    out["iceberg tables"] = sorted(ns["ice_cat"].list_tables("db"))
    out["paimon tables"] = sorted(ns["pcat"].list_tables("db"))
    return out


@pytest.mark.parametrize("call, error, words", refusals())
def test_refusal_raises_the_error_the_page_names(tables, call, error, words):
    kind = getattr(errors, error)
    before = state(tables)
    with pytest.raises(kind) as info:
        exec(compile(call, "limitations.md", "exec"), dict(tables))   # noqa: S102
    assert words.lower() in str(info.value).lower(), str(info.value)
    assert state(tables) == before
