"""Timing shared by the side-by-side sections (h) and (k): the same rules on both sides of a comparison.

Before each timed statement both sides collect garbage (Python's and the JVM's) and flush dirty pages
(a JVM's first statement after a full collection runs slower, so only one side doing it skews the
figures against it). A write is timed once per run; a read changes nothing, so it is repeated (at least
``read_min`` times, up to ``read_runs`` until it has run ``read_seconds``) and its best kept, every
repeat's time beside it under ``<name>:repeats``.

``JVM_PRELUDE`` is that code for the Java runtimes' worker (``tools/jvm_runtime.py``): a section's
``JVM_RUN`` is the prelude followed by its own statements, with ``READ_MIN``, ``READ_SECONDS`` and
``READ_RUNS`` among its parameters. ``Timer`` is the same for icefloe's side.
"""
from __future__ import annotations

import time

JVM_PRELUDE = """
import gc, os, time
t = {}
def quiesce():
    gc.collect(); spark._jvm.java.lang.System.gc(); os.sync()
def timed(name, fn):
    quiesce(); s = time.perf_counter(); out = fn(); t[name] = time.perf_counter() - s; return out
def read_timed(name, fn):
    best, spent, k = None, 0.0, 0
    t[name + ':repeats'] = []
    while k < READ_MIN or (spent < READ_SECONDS and k < READ_RUNS):
        quiesce(); s = time.perf_counter(); out = fn(); d = time.perf_counter() - s
        best, spent, k = d if best is None else min(best, d), spent + d, k + 1
        t[name + ':repeats'].append(d)
    t[name] = best; return out
"""


class Timer:
    """icefloe's side of ``JVM_PRELUDE``: the figures in ``t``, ``quiesce`` run before each timing."""

    def __init__(self, quiesce, read_min: int, read_seconds: float, read_runs: int):
        self.t: dict = {}
        self.quiesce = quiesce
        self.read_min, self.read_seconds, self.read_runs = read_min, read_seconds, read_runs

    def timed(self, name: str, fn):
        self.quiesce()
        start = time.perf_counter()
        out = fn()
        self.t[name] = time.perf_counter() - start
        return out

    def read_timed(self, name: str, fn):
        best, spent, k = None, 0.0, 0
        repeats = self.t[name + ":repeats"] = []
        while k < self.read_min or (spent < self.read_seconds and k < self.read_runs):
            self.quiesce()
            start = time.perf_counter()
            out = fn()
            took = time.perf_counter() - start
            best, spent, k = took if best is None else min(best, took), spent + took, k + 1
            repeats.append(took)
        self.t[name] = best
        return out

    def read_once(self, name: str, fn) -> None:
        """One more read of ``name``, the best so far kept."""
        self.quiesce()
        start = time.perf_counter()
        fn()
        took = time.perf_counter() - start
        self.t[name] = min(self.t.get(name, took), took)
