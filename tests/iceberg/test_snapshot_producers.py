"""Snapshot producers (``append``, ``overwrite``, ``row_delta``, ``rewrite`` over ``snapshot_producer``):
the operation, the sequence numbers, the manifests and the summary each one commits.

Files are described, not written: producing a snapshot only reads the metadata of data files.
"""
from __future__ import annotations

import os

import pytest

import icefloe
from icefloe.errors import CommitConflictError
from icefloe.iceberg.append import Append
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, EXISTING, POSITION_DELETES, DataFile
from icefloe.iceberg.manifest_list import DATA_MANIFEST, DELETE_MANIFEST
from icefloe.iceberg.manifest_reader import load_manifest_entries, snapshot_manifests
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.rewrite import RewriteFiles, RewriteManifests
from icefloe.iceberg.row_delta import RowDelta


@pytest.fixture
def table(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    return cat.create_table("db.t", "id bigint not null, p int not null", partitioned_by=["p"],
                            properties={"commit.manifest-merge.enabled": "false"})


def _file(t, name: str, p: int, content: int = DATA, records: int = 10) -> DataFile:
    return DataFile(file_path=f"{t.location}/data/{name}.parquet", file_format="PARQUET", partition=(p,),
                    record_count=records, file_size_in_bytes=100, content=content)


def _head(t):
    return t.refresh().current_snapshot()


def _entries(t, snap) -> dict:
    """{file name: (status, snapshot id, data sequence number, file sequence number)} of ``snap``."""
    out = {}
    for m in snapshot_manifests(t.io, snap):
        for e in load_manifest_entries(t.io, t.metadata, m):
            name = os.path.basename(e.data_file.file_path).removesuffix(".parquet")
            out.setdefault(name, []).append((e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number))
    return out


def test_append(table):
    Append([_file(table, "a", 1), _file(table, "b", 2)], summary_extra={"app": "x"}).commit(table.ops)
    s1 = _head(table)
    Append([_file(table, "c", 1)]).commit(table.ops)
    s2 = _head(table)
    assert (s1.operation, s2.operation) == ("append", "append")
    assert (s1.sequence_number, s2.sequence_number) == (1, 2) and s2.parent_snapshot_id == s1.snapshot_id
    assert s1.summary["app"] == "x" and s1.summary["added-data-files"] == "2"
    assert s2.summary["total-data-files"] == "3" and s2.summary["total-records"] == "30"
    entries = _entries(table, s2)
    assert entries["a"] == [(ADDED, s1.snapshot_id, 1, 1)] and entries["c"] == [(ADDED, s2.snapshot_id, 2, 2)]
    assert [m.added_snapshot_id for m in snapshot_manifests(table.io, s2)] == [s2.snapshot_id, s1.snapshot_id]


def test_empty_append_starts_a_branch_from_main(table):
    Append([_file(table, "a", 1)]).commit(table.ops)
    main = _head(table)
    meta = Append().commit(table.ops, branch="dev")
    dev = meta.snapshot_by_id(meta.refs["dev"].snapshot_id)
    assert dev.parent_snapshot_id == main.snapshot_id and dev.summary["total-data-files"] == "1"
    assert _head(table).snapshot_id == main.snapshot_id


def test_overwrite_replace_all(table):
    Append([_file(table, "a", 1), _file(table, "b", 2)]).commit(table.ops)
    s1 = _head(table)
    Overwrite.replace_all([_file(table, "c", 3)]).commit(table.ops)
    s2 = _head(table)
    assert s2.operation == "overwrite"
    assert (s2.summary["deleted-data-files"], s2.summary["added-data-files"]) == ("2", "1")
    assert s2.summary["total-data-files"] == "1" and s2.summary["changed-partition-count"] == "3"
    entries = _entries(table, s2)
    assert entries["a"] == [(DELETED, s2.snapshot_id, 1, 1)] and entries["c"] == [(ADDED, s2.snapshot_id, 2, 2)]
    assert [f.file_path for f in table.plan_files()] == [_file(table, "c", 3).file_path]
    assert s1.snapshot_id == s2.parent_snapshot_id


def test_removing_one_file_rewrites_its_manifest(table):
    Append([_file(table, "a", 1), _file(table, "b", 1)]).commit(table.ops)
    s1 = _head(table)
    RowDelta(removed_paths={_file(table, "a", 1).file_path}).commit(table.ops)
    s2 = _head(table)
    assert s2.operation == "delete" and s2.summary["deleted-data-files"] == "1"
    assert _entries(table, s2) == {"a": [(DELETED, s2.snapshot_id, 1, 1)], "b": [(EXISTING, s1.snapshot_id, 1, 1)]}


def test_row_delta_operation(table):
    a = _file(table, "a", 1)
    Append([a]).commit(table.ops)
    RowDelta([_file(table, "pos", 1, POSITION_DELETES, records=2)]).commit(table.ops)
    s2 = _head(table)
    assert s2.operation == "delete" and s2.summary["added-position-deletes"] == "2"
    kinds = sorted(m.content for m in snapshot_manifests(table.io, s2))
    assert kinds == [DATA_MANIFEST, DELETE_MANIFEST]
    RowDelta([_file(table, "a2", 1)], {a.file_path}).commit(table.ops)
    assert _head(table).operation == "overwrite"


def test_rewrite_files_keep_the_read_snapshot_sequence_number(table):
    a, b = _file(table, "a", 1), _file(table, "b", 1)
    Append([a]).commit(table.ops)
    Append([b]).commit(table.ops)
    pos = _file(table, "pos", 1, POSITION_DELETES)
    RowDelta([pos]).commit(table.ops)
    read = _head(table)
    Append([_file(table, "later", 2)]).commit(table.ops)     # snapshot isolation: not a conflict
    RewriteFiles(read, [a, b], [_file(table, "ab", 1)], [pos]).commit(table.ops)
    s = _head(table)
    assert s.operation == "replace" and s.sequence_number == 5
    entries = _entries(table, s)
    assert entries["ab"] == [(ADDED, s.snapshot_id, read.sequence_number, s.sequence_number)]
    assert entries["pos"] == [(DELETED, s.snapshot_id, 3, 3)]
    assert s.summary["removed-delete-files"] == "1" and s.summary["total-data-files"] == "2"


def test_rewrite_manifests(table):
    for i in range(3):
        Append([_file(table, f"f{i}", i)]).commit(table.ops)
    before = _head(table)
    RewriteManifests(summary_extra={"app": "x"}).commit(table.ops)
    s = _head(table)
    assert s.operation == "replace" and "changed-partition-count" not in s.summary
    assert {k: s.summary[k] for k in ("manifests-created", "manifests-replaced", "manifests-kept",
                                      "entries-processed", "app", "total-data-files")} == \
        {"manifests-created": "1", "manifests-replaced": "3", "manifests-kept": "0", "entries-processed": "3",
         "app": "x", "total-data-files": "3"}
    first = table.snapshots()[0]
    assert _entries(table, s)["f0"] == [(EXISTING, first.snapshot_id, 1, 1)]
    assert [m.added_snapshot_id for m in snapshot_manifests(table.io, s)] == [s.snapshot_id]
    assert s.parent_snapshot_id == before.snapshot_id


def test_a_failed_attempt_leaves_no_files(table):
    """Manifests an attempt wrote before it failed are deleted (here: a file already gone)."""
    a, b = _file(table, "a", 1), _file(table, "b", 1)
    Append([a, b]).commit(table.ops)
    listing = sorted(os.listdir(table.ops.metadata_dir))
    with pytest.raises(CommitConflictError):
        RowDelta(removed_paths={a.file_path, _file(table, "gone", 1).file_path}).commit(table.ops)
    assert sorted(os.listdir(table.ops.metadata_dir)) == listing


def test_spark_appends_commit_no_empty_data_files(catalog, spark):
    """A DataFrame with empty partitions (one row on two tasks) commits only files that
    hold rows, with and without a partition spec and on the Arrow (uuid) path; the empty
    files Spark wrote are gone from disk."""
    import os

    for name, ddl, parts in (("db.e1", "id bigint, s string", None), ("db.e2", "id bigint, s string", ["s"]),
                             ("db.e3", "id bigint, u uuid", None)):
        t = catalog.create_table(name, ddl, partitioned_by=parts)
        row = "cast(id as string) as s" if "s " in ddl else "'0f8fad5b-d9cb-469f-a165-70867728950e' as u"
        t.append(spark.range(0, 1, numPartitions=2).selectExpr("id", row).repartition(2))
        files = t.plan_files()
        assert [f.record_count for f in files] == [1], name
        on_disk = [n for _, _, fs in os.walk(os.path.join(t.location, "data")) for n in fs if n.endswith(".parquet")]
        assert len(on_disk) == 1, (name, on_disk)


def test_summary_totals_continue_the_parents_and_are_left_out_where_it_has_none():
    """A parent snapshot whose summary has no totals (Paimon's Iceberg compatibility writes only the
    operation) gives a child without them, as Iceberg's Java writer does: counting from zero would
    record totals that the live files contradict."""
    from types import SimpleNamespace

    from icefloe.iceberg.snapshot import build_summary

    added = [SimpleNamespace(content=0, record_count=3, is_deletion_vector=False, file_size_in_bytes=100,
                             content_size_in_bytes=None, spec_id=0, partition=())]
    first = build_summary("append", added, [], None)
    assert (first["total-records"], first["total-files-size"], first["total-data-files"]) == ("3", "100", "1")
    second = build_summary("append", added, [], first)
    assert (second["total-records"], second["total-files-size"], second["total-data-files"]) == ("6", "200", "2")
    after_paimon = build_summary("append", added, [], {"operation": "append"})
    assert after_paimon["added-records"] == "3"
    assert not {k for k in after_paimon if k.startswith("total-")}
