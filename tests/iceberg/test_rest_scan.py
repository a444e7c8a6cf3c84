"""The REST spec's scan-planning JSON (``icefloe.iceberg.rest_scan``): filters in the forms Java's
``ExpressionParser`` writes and the spec's newer ones bind as the same predicate as SQL text;
content files as Java's ``ContentFileParser`` writes them, both ways; and the sequence numbers a
client gives tasks reproduce exactly the delete files the server attached."""
import datetime

import pytest

from icefloe.core import expressions as ex
from icefloe.core.schema_input import to_schema
from icefloe.errors import ExpressionError
from icefloe.iceberg.manifest import DATA, EQUALITY_DELETES, POSITION_DELETES, DataFile
from icefloe.iceberg.partitioning import build_spec
from icefloe.iceberg.rest_scan import (
    PlanningError, content_file_from_json, content_file_to_json, filter_from_json, filter_to_json, sequence_order,
)
from icefloe.iceberg.scan import FileScanTask

SCHEMA = to_schema("id bigint, d date, ts timestamp, s string, amount decimal(10, 2)")


def _sql(text):
    return ex.bind(ex.parse_predicate(text), SCHEMA, case_sensitive=True)


@pytest.mark.parametrize("doc, sql", [
    ({"type": "eq", "term": "id", "value": 5}, "id = 5"),
    ({"type": "lt", "term": "d", "value": 19723}, "d < DATE '2024-01-01'"),            # Java: a date as its days
    ({"type": "gt-eq", "term": "d", "value": "2024-01-01"}, "d >= DATE '2024-01-01'"),
    ({"type": "gt", "term": "ts", "value": 1704067200000000}, "ts > TIMESTAMP '2024-01-01 00:00:00'"),
    ({"type": "in", "term": "id", "values": [1, 2, 3]}, "id IN (1, 2, 3)"),
    ({"type": "not-in", "term": "s", "values": ["a"]}, "s NOT IN ('a')"),
    ({"type": "starts-with", "term": "s", "value": "ab"}, "s LIKE 'ab%'"),
    ({"type": "is-null", "term": "s"}, "s IS NULL"),
    ({"type": "eq", "term": "amount", "value": "12.50"}, "amount = 12.50"),
    ({"type": "and", "left": {"type": "not-null", "term": {"type": "reference", "term": "id"}},
      "right": {"type": "not", "child": {"type": "eq", "term": "id", "value": 1}}}, "id IS NOT NULL AND NOT id = 1"),
    ({"type": "or", "left": {"type": "lt-eq", "left": {"type": "reference", "name": "id"},
                             "right": {"type": "literal", "value": 3}},
      "right": {"type": "is-null", "child": {"type": "reference", "name": "d"}}}, "id <= 3 OR d IS NULL"),
])
def test_filters_bind_as_the_same_predicate_as_sql(doc, sql):
    expected = ex.rewrite_not(_sql(sql))
    assert ex.rewrite_not(filter_from_json(doc, SCHEMA)) == expected
    assert ex.rewrite_not(filter_from_json(filter_to_json(_sql(sql)), SCHEMA)) == expected      # and back


def test_constant_filters_and_refusals():
    assert filter_from_json(True, SCHEMA) == ex.AlwaysTrue()
    assert filter_from_json({"type": "false"}, SCHEMA) == ex.AlwaysFalse()
    with pytest.raises(ExpressionError, match="no column 'ID'"):
        filter_from_json({"type": "eq", "term": "ID", "value": 1}, SCHEMA)
    assert filter_from_json({"type": "eq", "term": "ID", "value": 1}, SCHEMA, case_sensitive=False) == _sql("id = 1")
    with pytest.raises(PlanningError, match="unknown filter type 'like'"):
        filter_from_json({"type": "like", "term": "s", "value": "a"}, SCHEMA)
    with pytest.raises(PlanningError, match="lacks 'values'"):
        filter_from_json({"type": "in", "term": "id"}, SCHEMA)
    with pytest.raises(ExpressionError, match="invalid date .yesterday."):
        filter_from_json({"type": "eq", "term": "d", "value": "yesterday"}, SCHEMA)


def test_unknown_parts_of_a_filter_keep_every_file():
    expr = ex.bind(ex.And(ex.Unknown("f(id)"), ex.EqualTo(ex.Reference("id"), 1)), SCHEMA)
    assert filter_to_json(expr) == {"type": "and", "left": True, "right": {"type": "eq", "term": "id", "value": 1}}
    negated = ex.bind(ex.Not(ex.And(ex.Unknown("f(id)"), ex.EqualTo(ex.Reference("id"), 1))), SCHEMA)
    assert filter_to_json(negated) == {"type": "or", "left": True, "right": {"type": "not-eq", "term": "id",
                                                                             "value": 1}}


def test_content_files_as_java_writes_them():
    spec = build_spec(SCHEMA, ["d", "bucket(4, id)"])
    ptype = spec.partition_type(SCHEMA)
    f = DataFile("/wh/t/data/a.parquet", "PARQUET", (19723, 3), 10, 1234, DATA, column_sizes={1: 40},
                 value_counts={1: 10}, null_value_counts={1: 0}, nan_value_counts={},
                 lower_bounds={1: (1).to_bytes(8, "little")}, upper_bounds={1: (10).to_bytes(8, "little")},
                 split_offsets=[4], sort_order_id=0, spec_id=spec.spec_id)
    doc = content_file_to_json(f, ptype)
    assert doc == {"spec-id": 0, "content": "data", "file-path": "/wh/t/data/a.parquet", "file-format": "parquet",
                   "partition": ["2024-01-01", 3], "file-size-in-bytes": 1234, "record-count": 10,
                   "column-sizes": {"keys": [1], "values": [40]}, "value-counts": {"keys": [1], "values": [10]},
                   "null-value-counts": {"keys": [1], "values": [0]}, "nan-value-counts": {"keys": [], "values": []},
                   "lower-bounds": {"keys": [1], "values": ["0100000000000000"]},
                   "upper-bounds": {"keys": [1], "values": ["0A00000000000000"]}, "split-offsets": [4],
                   "sort-order-id": 0}
    assert content_file_from_json(doc, {0: ptype}) == f
    dv = DataFile("/wh/t/data/d.puffin", "PUFFIN", (19723, 3), 2, 99, POSITION_DELETES, spec_id=0,
                  referenced_data_file=f.file_path, content_offset=4, content_size_in_bytes=40)
    back = content_file_from_json(content_file_to_json(dv, ptype), {0: ptype})
    assert back == dv and back.delete_key == "/wh/t/data/d.puffin#4"
    with pytest.raises(PlanningError, match="partition spec 7"):
        content_file_from_json({**doc, "spec-id": 7}, {0: ptype})
    with pytest.raises(PlanningError, match="1 partition values for spec 0's 2 fields"):
        content_file_from_json({**doc, "partition": ["2024-01-01"]}, {0: ptype})
    assert datetime.date(2024, 1, 1) == datetime.date(1970, 1, 1) + datetime.timedelta(days=19723)


def _eq(name, partition=("a",), spec_id=0):
    return DataFile(f"/t/{name}", "PARQUET", partition, 1, 1, EQUALITY_DELETES, equality_ids=[1], spec_id=spec_id)


def _applies(task, d) -> bool:
    """The spec's rule, as a reader re-checks it per row, with the numbers the tasks carry."""
    seq, dseq = task.data_sequence_number, task.delete_sequence_numbers.get(d.delete_key)
    return dseq is not None and (seq < dseq if d.content == EQUALITY_DELETES else seq <= dseq)


def test_sequence_numbers_reproduce_the_servers_delete_assignment():
    class Spec:
        def __init__(self, unpartitioned):
            self.is_unpartitioned = unpartitioned
    specs = {0: Spec(False), 1: Spec(True)}
    e1, e2, e3, g = _eq("e1"), _eq("e2"), _eq("e3", ("b",)), _eq("g", (), 1)
    data = [DataFile(f"/t/f{i}", "PARQUET", p, 1, 1, DATA) for i, p in enumerate([("a",), ("a",), ("a",), ("b",)])]
    # oldest first: f0, e1, f1, g, e2, f2 in partition a; f3 in b is older than e3 and g
    attached = [[e1, e2, g], [e2, g], [], [e3, g]]
    tasks = [FileScanTask(f, 0, list(ds)) for f, ds in zip(data, attached)]
    sequence_order(tasks, specs)
    everything = {d.delete_key: d for t in tasks for d in t.deletes}
    for t, mine in zip(tasks, attached):
        for d in everything.values():
            in_scope = specs[d.spec_id].is_unpartitioned or d.partition == t.file.partition
            # the reader applies each delete of the scan to every file of its scope the rule admits
            t.delete_sequence_numbers.setdefault(d.delete_key, _number(tasks, d))
            assert (in_scope and _applies(t, d)) == (d in mine), (t.path, d.file_path)
    # an assignment no order allows: f0 has e1 without e2, f1 has e2 without e1, both in partition a
    bad = [FileScanTask(data[0], 0, [e1]), FileScanTask(data[1], 0, [e2])]
    with pytest.raises(PlanningError, match="no sequence numbers can give|leaves equality delete"):
        sequence_order(bad, specs)


def _number(tasks, d) -> int:
    return next(t.delete_sequence_numbers[d.delete_key] for t in tasks if d.delete_key in t.delete_sequence_numbers)
