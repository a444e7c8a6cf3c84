"""Which metadata files a filtered plan has read once.

Paimon's planner reads a manifest the first time a filtered plan needs it judging each entry from
its encoded record and building only the entries the filter keeps, caching nothing: a one-off plan
(a DELETE's, a MERGE's) pays for nothing it drops. The second time, the manifest is decoded whole
and cached for every later plan. ``FirstReads`` is the bounded, thread-safe set that tells the two
apart. (Iceberg's planner decodes a manifest its cache will hold whole on the first read, and
judges it as columns: ``iceberg/manifest_reader.py``.)
"""
from __future__ import annotations

import threading
from typing import Hashable


class FirstReads:
    """Keys seen once; forgotten all together past ``limit`` (a plan then reads a manifest once
    more without keeping it: slower, never wrong)."""

    def __init__(self, limit: int = 4096):
        self._seen: set[Hashable] = set()
        self._limit = limit
        self._lock = threading.Lock()

    def first(self, key: Hashable) -> bool:
        """True the first time ``key`` is given (and remembers it), False after."""
        with self._lock:
            if key in self._seen:
                return False
            if len(self._seen) >= self._limit:
                self._seen.clear()
            self._seen.add(key)
            return True

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


__all__ = ["FirstReads"]
