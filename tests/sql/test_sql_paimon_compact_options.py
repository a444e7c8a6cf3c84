"""The arguments of Paimon's compaction procedures, as Paimon's Spark docs (procedures) give them:
``CALL sys.compact`` with ``order_strategy``/``order_by`` (sort compaction), ``partitions``,
``where``, ``options``, ``partition_idle_time`` and ``compact_strategy``; ``compact_database``
with ``options``; ``compact_manifest`` with ``dry_run`` and manifest sort. Each checks the effect
on snapshots, files and rows, and that a refused call leaves the table as it was."""
import time

import pyarrow as pa
import pytest

from icefloe.core import hilbert, zorder
from icefloe.paimon.arrow_read import read_data_file
from icefloe.sql.errors import NotSupportedYetError, SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _table_rows(t):
    """The table's rows, read without Spark."""
    return sorted(tuple(r.values()) for r in t.refresh().to_arrow().to_pylist())


def _files(t):
    """{path: partition values} of the table's live files."""
    return {e.file.file_path: t.store.partition_values(e.partition) for e in t.refresh().plan()}


def _scattered(pcat, name="default.s", partitioned=True, batches=4, extra=""):
    """An append table of several small files per partition (written without Spark), rows in no
    order of a or b."""
    cols = "p int, a int, b string" if partitioned else "a int, b string"
    part = " PARTITIONED BY (p)" if partitioned else ""
    pcat.sql(f"CREATE TABLE {name} ({cols}){part}{extra}")
    t = pcat.load_table(name)
    for k in range(batches):
        rows = [{"p": i % 3, "a": (i * 7 + k * 5) % 16, "b": f"s{(i * 11 + k * 3) % 13:02d}"} for i in range(12)]
        batch = pa.Table.from_pylist(rows, pa.schema([("p", pa.int32()), ("a", pa.int32()), ("b", pa.string())]))
        t.append(batch if partitioned else batch.drop_columns(["p"]))
    return t.refresh()


def _file_rows(t, path):
    return read_data_file(path, t.io)


def test_zorder_sort_compaction_rewrites_the_partitions_chosen_in_z_order(pcat):
    t = _scattered(pcat)
    before = _table_rows(t)
    old = _files(t)
    snaps = len(t.snapshots())
    out = pcat.sql("CALL sys.compact(table => 'default.s', partitions => 'p=0;p=1', order_strategy => 'zorder', "
                   "order_by => 'a,b')")
    assert _rows(out) == [(True,)]
    snap = t.refresh().current_snapshot()
    assert len(t.snapshots()) == snaps + 1 and snap.commit_kind == "OVERWRITE"
    new = _files(t)
    # partition 2 untouched; 0 and 1 rewritten into fewer files
    assert {p for p, v in old.items() if v == (2,)} == {p for p, v in new.items() if v == (2,)}
    for part in ((0,), (1,)):
        gone = {p for p, v in old.items() if v == part}
        made = {p for p, v in new.items() if v == part}
        assert not gone & made and 0 < len(made) < len(gone)
        for path in made:
            rows = _file_rows(t, path)
            z = zorder.z_values([rows.column("a").combine_chunks(), rows.column("b").combine_chunks()],
                                [zorder.WHOLE, zorder.STRING]).to_pylist()
            assert z == sorted(z) and len(rows) > 1
    assert _table_rows(t) == before


def test_hilbert_sort_compaction_of_an_unpartitioned_table(pcat):
    t = _scattered(pcat, "default.h", partitioned=False)
    before = _table_rows(t)
    pcat.sql("CALL sys.compact(table => 'default.h', order_strategy => 'hilbert', order_by => 'a,b')")
    assert t.refresh().current_snapshot().commit_kind == "OVERWRITE"
    files = list(_files(t))
    assert len(files) == 1
    rows = _file_rows(t, files[0])
    values = hilbert.hilbert_values([rows.column("a").combine_chunks(), rows.column("b").combine_chunks()],
                                    [hilbert.WHOLE, hilbert.BYTES]).to_pylist()
    assert values == sorted(values)
    assert [r["a"] for r in rows.to_pylist()] != sorted(r["a"] for r in rows.to_pylist())   # not a plain sort
    assert _table_rows(t) == before


def test_order_sort_compaction_with_where_and_target_file_size_option(pcat):
    t = _scattered(pcat, "default.o")
    before = _table_rows(t)
    old = _files(t)
    pcat.sql("CALL sys.compact(table => 'default.o', where => 'p = 1', order_strategy => 'order', order_by => 'a', "
             "options => 'target-file-size=1kb')")
    new = _files(t)
    assert {p for p, v in old.items() if v != (1,)} == {p for p, v in new.items() if v != (1,)}
    made = [p for p, v in new.items() if v == (1,) and p not in old]
    assert len(made) > 1                      # a small target size: several files, each a range of a
    ranges = sorted((min(r), max(r), r) for r in ([x["a"] for x in _file_rows(t, p).to_pylist()] for p in made))
    for (_lo, hi, rows), (lo2, _hi2, _r) in zip(ranges, ranges[1:]):
        assert rows == sorted(rows) and hi <= lo2
    assert _table_rows(t) == before


REFUSED = [
    ("order_strategy => 'zorder', order_by => 'p,a'", SqlError, "should not contain partition columns"),
    ("order_strategy => 'zorder', order_by => 'nope'", SqlError, "not a column"),
    ("order_strategy => 'zorder'", SqlError, "needs order_by"),
    ("order_strategy => 'none', order_by => 'a'", SqlError, "'none' cannot work with order_by"),
    ("order_strategy => 'spiral', order_by => 'a'", SqlError, "order_strategy 'spiral'"),
    ("order_strategy => 'order', order_by => 'a', partition_idle_time => '1 h'", SqlError, "partition_idle_time"),
    ("order_strategy => 'order', order_by => 'a', compact_strategy => 'full'", SqlError, "compact_strategy"),
    ("compact_strategy => 'major'", SqlError, "only supports 'full' or 'minor'"),
    ("partitions => 'p=0', where => 'p = 1'", SqlError, "cannot be used together"),
    ("partitions => 'p'", SqlError, "is not k=v"),
    ("where => 'a > 3'", SqlError, "a is not a partition key"),
    ("where => 'p >'", SqlError, "is not a condition"),
    ("options => 'write-buffer-size=1mb'", NotSupportedYetError, "write-buffer-size"),
    ("options => 'target-file-size=big'", SqlError, "target-file-size"),
    ("partition_idle_time => 'soon'", SqlError, "partition_idle_time"),
    ("buckets => '0'", NotSupportedYetError, "buckets"),
]


def test_compact_refusals_leave_the_table_as_it_was(pcat):
    t = _scattered(pcat, "default.r", batches=2)
    snaps, files = len(t.snapshots()), _files(t)
    for args, error, match in REFUSED:
        with pytest.raises(error, match=match):
            pcat.sql(f"CALL sys.compact(table => 'default.r', {args})")
    assert len(t.refresh().snapshots()) == snaps and _files(t) == files


def test_sort_compaction_is_for_bucket_unaware_append_tables(pcat):
    pcat.sql("CREATE TABLE default.pk (id int, a int) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    pcat.sql("CREATE TABLE default.fb (id int, a int) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')")
    for name in ("pk", "fb"):
        pcat.load_table(f"default.{name}").append(pa.Table.from_pylist(
            [{"id": 1, "a": 2}, {"id": 2, "a": 1}], pa.schema([("id", pa.int32()), ("a", pa.int32())])))
        snaps = len(pcat.load_table(f"default.{name}").snapshots())
        with pytest.raises(NotSupportedYetError, match="bucket-unaware append tables"):
            pcat.sql(f"CALL sys.compact(table => 'default.{name}', order_strategy => 'zorder', order_by => 'a')")
        assert len(pcat.load_table(f"default.{name}").snapshots()) == snaps


def test_partition_idle_time_compacts_only_partitions_not_written_since(pcat):
    t = _scattered(pcat, "default.idle", batches=2)
    time.sleep(2.2)
    t.append(pa.Table.from_pylist([{"p": 1, "a": 99, "b": "x"}],                 # partition 1 written just now
                                  pa.schema([("p", pa.int32()), ("a", pa.int32()), ("b", pa.string())])))
    old = _files(t)
    pcat.sql("CALL sys.compact(table => 'default.idle', partition_idle_time => '2s')")
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    new = _files(t)
    assert {p for p, v in old.items() if v == (1,)} == {p for p, v in new.items() if v == (1,)}
    for part in ((0,), (2,)):
        assert len([p for p, v in new.items() if v == part]) == 1 < len([p for p, v in old.items() if v == part])
    snaps = len(t.snapshots())
    pcat.sql("CALL sys.compact(table => 'default.idle', partition_idle_time => '1 h')")    # none idle that long
    assert len(t.refresh().snapshots()) == snaps


def test_compact_strategy_minor_and_full_on_a_primary_key_table(pcat):
    pcat.sql("CREATE TABLE default.k (id int, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
             "'write-only' = 'true')")
    t = pcat.load_table("default.k")
    kv = pa.schema([("id", pa.int32()), ("v", pa.string())])
    for i in range(3):
        t.append(pa.Table.from_pylist([{"id": i, "v": f"a{i}"}, {"id": i + 1, "v": f"b{i}"}], kv))
    snaps = len(t.snapshots())
    # three sorted runs: fewer than num-sorted-run.compaction-trigger (5), so minor picks nothing
    assert _rows(pcat.sql("CALL sys.compact(table => 'default.k', compact_strategy => 'minor')")) == [(True,)]
    assert len(t.refresh().snapshots()) == snaps
    pcat.sql("CALL sys.compact(table => 'default.k', compact_strategy => 'full')")
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    entries = t.plan()
    assert len(entries) == 1 and entries[0].file.level == 5
    for i in range(3, 8):
        t.append(pa.Table.from_pylist([{"id": i + 10, "v": f"c{i}"}], kv))
    pcat.sql("CALL sys.compact(table => 'default.k', compact_strategy => 'minor')")    # 6 runs: it triggers
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    assert len(t.plan()) < 6
    assert len(_table_rows(t)) == 9


def test_compact_strategy_minor_on_a_fixed_bucket_append_table(pcat):
    pcat.sql("CREATE TABLE default.fa (id int, v string) TBLPROPERTIES ('bucket' = '1', 'bucket-key' = 'id', "
             "'compaction.min.file-num' = '3')")
    t = pcat.load_table("default.fa")
    kv = pa.schema([("id", pa.int32()), ("v", pa.string())])
    for i in range(2):
        t.append(pa.Table.from_pylist([{"id": i, "v": f"v{i}"}], kv))
    snaps = len(t.snapshots())
    pcat.sql("CALL sys.compact(table => 'default.fa', compact_strategy => 'minor')")   # 2 files < min 3
    assert len(t.refresh().snapshots()) == snaps
    t.append(pa.Table.from_pylist([{"id": 2, "v": "v2"}], kv))
    pcat.sql("CALL sys.compact(table => 'default.fa', compact_strategy => 'minor')")
    assert t.refresh().current_snapshot().commit_kind == "COMPACT" and len(t.plan()) == 1
    assert _table_rows(t) == [(0, "v0"), (1, "v1"), (2, "v2")]


def test_compact_database_takes_target_file_size_and_refuses_other_options(pcat):
    t = _scattered(pcat, "default.cd", batches=2)
    snaps = len(t.snapshots())
    with pytest.raises(NotSupportedYetError, match="write-buffer-size"):
        pcat.sql("CALL sys.compact_database(options => 'target-file-size=128m,write-buffer-size=1mb')")
    assert len(t.refresh().snapshots()) == snaps
    # every file is at least one byte: none is small for that target, nothing to compact
    assert _rows(pcat.sql("CALL sys.compact_database(including_databases => 'default', "
                          "options => 'target-file-size=1b')")) == [("Compact database finished. Success: 1, "
                                                                      "Failed: 0",)]
    assert len(t.refresh().snapshots()) == snaps
    pcat.sql("CALL sys.compact_database(including_databases => 'default', options => 'target-file-size=128m')")
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    assert len(t.plan()) == 3


def _base_manifests(t):
    snap = t.refresh().current_snapshot()
    return t.store.read_manifest_list(snap.base_manifest_list)


def test_compact_manifest_dry_run_and_manifest_sort(pcat):
    pcat.sql("CREATE TABLE default.m (id int, dt string, h int) PARTITIONED BY (dt, h) "
             "TBLPROPERTIES ('manifest.target-file-size' = '4kb')")
    t = pcat.load_table("default.m")
    schema = pa.schema([("id", pa.int32()), ("dt", pa.string()), ("h", pa.int32())])
    for k in range(6):
        t.append(pa.Table.from_pylist([{"id": k * 10 + i, "dt": f"d{(k + i) % 3}", "h": (i * 5 + k) % 7}
                                       for i in range(6)], schema))
    snaps = len(t.snapshots())
    before = _table_rows(t)
    assert _rows(pcat.sql("CALL sys.compact_manifest(`table` => 'default.m', dry_run => true)")) == [(True,)]
    assert len(t.refresh().snapshots()) == snaps
    for call, error, match in (
            ("manifest_sort_enabled => true, manifest_sort_partition_field => 'id'", SqlError, "not a partition field"),
            ("manifest_sort_partition_field => 'h'", SqlError, "manifest_sort_enabled"),
            ("options => 'manifest.merge-min-count=2'", NotSupportedYetError, "manifest.merge-min-count")):
        with pytest.raises(error, match=match):
            pcat.sql(f"CALL sys.compact_manifest(`table` => 'default.m', {call})")
    assert len(t.refresh().snapshots()) == snaps
    pcat.sql("CALL sys.compact_manifest(`table` => 'default.m', manifest_sort_enabled => true, "
             "manifest_sort_partition_field => 'h', manifest_sort_max_rewrite_size => '1 gb')")
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    types = t.store.partition_types
    ranges = []
    for m in _base_manifests(t):
        mins, maxs, _ = m.partition_stats.decode(types)
        assert m.num_deleted_files == 0
        ranges.append((mins[1], maxs[1]))
    assert len(ranges) > 1
    assert all(hi <= lo for (_, hi), (lo, _) in zip(ranges, ranges[1:]))     # each manifest a range of h
    assert _table_rows(t) == before
    # over the rewrite cap: merged, not sorted
    t.append(pa.Table.from_pylist([{"id": 99, "dt": "d0", "h": 0}], schema))
    pcat.sql("CALL sys.compact_manifest(`table` => 'default.m', options => 'manifest-sort.enabled=true,"
             "manifest-sort.max-rewrite-size=1b')")
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    assert all(m.num_deleted_files == 0 for m in _base_manifests(t))
    assert _table_rows(t) == sorted(before + [(99, "d0", 0)])
