"""``FirstReads`` tells a filtered plan's first read of a manifest (judge entries, keep nothing)
from the next (decode whole, cache), for both formats' planners."""
from concurrent.futures import ThreadPoolExecutor

from icefloe.core.first_reads import FirstReads


def test_first_then_not():
    seen = FirstReads()
    assert seen.first("m1") and seen.first(("m2", 3))
    assert not seen.first("m1") and not seen.first(("m2", 3))
    seen.clear()
    assert seen.first("m1")


def test_forgets_everything_past_its_limit():
    seen = FirstReads(limit=3)
    assert all(seen.first(k) for k in "abc")
    assert not seen.first("a")
    assert seen.first("d")            # the fourth key: the three before are forgotten
    assert seen.first("a") and not seen.first("d")


def test_one_first_per_key_across_threads():
    seen = FirstReads()
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda i: seen.first(i % 50), range(2000)))
    assert sum(got) == 50
