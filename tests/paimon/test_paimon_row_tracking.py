"""Row tracking of Paimon append tables (``icefloe.paimon.row_tracking``), without Spark: row ids and
sequence numbers given at commit, the snapshot's ``nextRowId``, the manifest list's row-id range,
compaction writing the ids into the new files, and the rules of the option."""
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.errors import SchemaError
from icefloe.paimon import maintenance, row_tracking
from icefloe.paimon.snapshot import Snapshot


@pytest.fixture
def cat(tmp_path):
    return icefloe.Catalog(str(tmp_path / "wh"), format="paimon")


def _batch(ids):
    return pa.table({"id": pa.array(ids, pa.int32()), "v": [f"v{i}" for i in ids]})


def test_commits_give_row_ids_and_sequence_numbers(cat, tmp_path):
    t = cat.create_table("default.rt", "id int, v string", properties={row_tracking.ENABLED: "true"})
    t.append(_batch([1, 2]))
    t.append(_batch([3]))
    t = cat.load_table("default.rt")
    files = sorted((e.file.first_row_id, e.file.row_count, e.file.min_sequence_number, e.file.max_sequence_number)
                   for e in t.store.live_entries(t.current_snapshot()))
    assert files == [(0, 2, 1, 1), (2, 1, 2, 2)]
    snap_dir = tmp_path / "wh" / "default.db" / "rt" / "snapshot"
    assert [json.loads((snap_dir / f"snapshot-{i}").read_text())["nextRowId"] for i in (1, 2)] == [2, 3]
    assert sorted((m.min_row_id, m.max_row_id) for m in t.store.data_manifests(t.current_snapshot())) == [(0, 1), (2, 2)]


def test_tables_without_row_tracking_write_no_row_ids(cat, tmp_path):
    t = cat.create_table("default.plain", "id int, v string")
    t.append(_batch([1, 2]))
    t = cat.load_table("default.plain")
    [e] = t.store.live_entries(t.current_snapshot())
    assert e.file.first_row_id is None and (e.file.min_sequence_number, e.file.max_sequence_number) == (0, 1)
    doc = json.loads((tmp_path / "wh" / "default.db" / "plain" / "snapshot" / "snapshot-1").read_text())
    assert "nextRowId" not in doc


def test_next_row_id_round_trips_and_is_left_out_when_unset():
    s = Snapshot(id=3, schema_id=0, base_manifest_list="b", delta_manifest_list="d", commit_user="u",
                 commit_identifier=1, commit_kind="APPEND", time_millis=5, total_record_count=4,
                 delta_record_count=1, next_row_id=7)
    assert Snapshot.from_json(s.to_json()).next_row_id == 7
    s.next_row_id = None
    assert "nextRowId" not in json.loads(s.to_json())


def test_compaction_writes_each_rows_id_and_sequence_number_into_the_new_file(cat):
    t = cat.create_table("default.rc", "id int, v string", properties={row_tracking.ENABLED: "true"})
    for ids in ([1, 2], [3], [4]):
        t.append(_batch(ids))
    snap = maintenance.compact(cat.load_table("default.rc"))
    assert snap.commit_kind == "COMPACT" and snap.next_row_id == 4
    t = cat.load_table("default.rc")
    [e] = t.store.live_entries(t.current_snapshot())
    assert e.file.first_row_id is None and e.file.write_cols == ("id", "v", "_ROW_ID", "_SEQUENCE_NUMBER")
    assert (e.file.min_sequence_number, e.file.max_sequence_number) == (1, 3)
    rows = pq.read_table(t.store.data_file_path(e)).to_pylist()
    assert [(r["id"], r["_ROW_ID"], r["_SEQUENCE_NUMBER"]) for r in rows] == [(1, 0, 1), (2, 1, 1), (3, 2, 2), (4, 3, 3)]
    assert t.to_arrow().sort_by("id").column("id").to_pylist() == [1, 2, 3, 4]
    t.append(_batch([5]))
    assert cat.load_table("default.rc").current_snapshot().next_row_id == 5


@pytest.mark.parametrize("kwargs, match", [
    ({"properties": {"primary-key": "id", row_tracking.ENABLED: "true"}, "schema": "id int not null, v string"},
     "append tables"),
    ({"properties": {"bucket": "2", "bucket-key": "id", row_tracking.ENABLED: "true"}}, "bucket"),
    ({"properties": {row_tracking.ENABLED: "true"}, "schema": "id int, _row_id bigint"}, "_row_id"),
])
def test_shapes_paimon_does_not_track_are_refused(cat, kwargs, match):
    with pytest.raises(SchemaError, match=match):
        cat.create_table("default.bad", kwargs.get("schema", "id int, v string"), properties=kwargs["properties"])
    assert not cat.table_exists("default.bad")


def test_the_option_is_fixed_at_create(cat, tmp_path):
    t = cat.create_table("default.fixed", "id int, v string", properties={row_tracking.ENABLED: "true"})
    schema_dir = tmp_path / "wh" / "default.db" / "fixed" / "schema"
    before = sorted(os.listdir(schema_dir))
    with pytest.raises(SchemaError, match="cannot be changed"):
        with t.update_schema() as u:
            u.set_option(row_tracking.ENABLED, "false")
    with pytest.raises(SchemaError, match="row-tracking column"):
        with t.update_schema() as u:
            u.add_column("_SEQUENCE_NUMBER", "bigint")
    assert sorted(os.listdir(schema_dir)) == before
