"""The plan of Paimon's ``reassign_row_id`` (``icefloe.paimon.row_id_reassign``): a partition's logical
ranges, which partitions are fragmented (runs of more rows than the skip count left out), and where a
file's rows go. The procedure itself: tests/sql/test_sql_paimon_row_ids.py."""
import pytest

from icefloe.errors import SchemaError
from icefloe.paimon import row_id_reassign as rr


def test_logical_ranges_merge_overlapping_files_only():
    # a column file over the same range as its base file; adjacent ranges stay apart
    assert rr.logical_ranges([(5, 9), (0, 4), (5, 9), (12, 12)]) == [(0, 4), (5, 9), (12, 12)]


def test_fragmented_partitions_and_the_skip_count():
    assert rr.fragmented([(0, 4), (5, 9)], 0) == []                          # contiguous: nothing to do
    assert rr.fragmented([(0, 4), (7, 9)], 0) == [(0, 4), (7, 9)]
    # a run of more rows than the skip count keeps its ids; what is left must still be fragmented
    assert rr.fragmented([(0, 4), (7, 9)], 4) == []
    assert rr.fragmented([(0, 4), (7, 7), (9, 9)], 4) == [(7, 7), (9, 9)]
    assert rr.skip_contiguous({}) == rr.DEFAULT_SKIP_CONTIGUOUS
    assert rr.skip_contiguous({rr.SKIP_CONTIGUOUS: "0"}) == 0
    with pytest.raises(SchemaError, match=rr.SKIP_CONTIGUOUS):
        rr.skip_contiguous({rr.SKIP_CONTIGUOUS: "-1"})


def test_a_file_keeps_its_place_in_its_range():
    moves = [(0, 4, 20), (7, 9, 25)]
    assert rr.new_first_row_id(moves, 0, 4) == 20
    assert rr.new_first_row_id(moves, 2, 3) == 22
    assert rr.new_first_row_id(moves, 8, 9) == 26
    assert rr.new_first_row_id(moves, 5, 6) is None                          # not renumbered
