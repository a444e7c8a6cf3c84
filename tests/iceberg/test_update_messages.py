"""UPDATE values that name no column: one clear error, never icefloe's internal columns."""
import pyarrow as pa
import pytest

from icefloe.errors import ExpressionError


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_an_unquoted_string_value_is_named_with_the_fix(catalog, mode):
    t = catalog.create_table("db.u", "id bigint not null, name string", properties={"write.update.mode": mode})
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}))
    before = len(t.snapshots())
    with pytest.raises(ExpressionError) as e:
        t.update({"name": "upd2"}, where="id = 1")
    msg = str(e.value)
    assert "'upd2' names no column of table db.u (columns: id, name)" in msg and "\"'upd2'\"" in msg
    assert "_icefloe" not in msg
    assert len(t.snapshots()) == before
    t.update({"name": "'upd2'"}, where="id = 1")
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [{"id": 1, "name": "upd2"},
                                                                       {"id": 2, "name": "b"}]
