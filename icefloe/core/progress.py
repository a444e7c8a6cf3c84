"""Progress of long work (maintenance, checks), reported to whoever is listening.

Library code marks its long loops with :func:`track` and stays silent unless a
caller installed a reporter with :func:`reporting` (the command line draws them
as progress bars). Without a reporter :func:`track` is a plain iteration: one
context-variable lookup per loop, nothing per item.

A reporter is any object with ``start(description, total) -> handle``,
``advance(handle, n)`` and ``finish(handle)``; ``total`` may be ``None`` when the
amount of work is not known in advance.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any, Callable, Generator, Iterable, Iterator, Optional, Protocol, TypeVar

T = TypeVar("T")


class Reporter(Protocol):
    def start(self, description: str, total: Optional[int]) -> Any: ...   # a handle of the reporter's choice

    def advance(self, handle: Any, n: int = 1) -> None: ...

    def finish(self, handle: Any) -> None: ...


_reporter: ContextVar[Optional[Reporter]] = ContextVar("icefloe_progress", default=None)


@contextlib.contextmanager
def reporting(reporter: Optional[Reporter]) -> Generator[Optional[Reporter], None, None]:
    """Send the progress of work done inside the ``with`` block to ``reporter``."""
    token = _reporter.set(reporter)
    try:
        yield reporter
    finally:
        _reporter.reset(token)


def active() -> bool:
    return _reporter.get() is not None


def track(items: Iterable[T], description: str, total: Optional[int] = None) -> Iterator[T]:
    """Iterate ``items``, reporting one step per item to the installed reporter, if any."""
    reporter = _reporter.get()
    if reporter is None:
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    handle = reporter.start(description, total)
    try:
        for item in items:
            yield item
            reporter.advance(handle, 1)
    finally:
        reporter.finish(handle)


def _no_progress(n: int = 1) -> None:
    pass


@contextlib.contextmanager
def step(description: str, total: Optional[int] = None) -> Generator[Callable[..., None], None, None]:
    """A unit of work reported by hand: ``with step("x", 10) as advance: advance(3)``."""
    reporter = _reporter.get()
    if reporter is None:
        yield _no_progress
        return
    handle = reporter.start(description, total)

    def advance(n: int = 1) -> None:
        reporter.advance(handle, n)

    try:
        yield advance
    finally:
        reporter.finish(handle)


class Recorder:
    """A reporter that remembers every event (for tests and ``--json`` runs)."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []    # ("start", handle, description, total),
        # ("advance", handle, n) or ("finish", handle)
        self._next = 0

    def start(self, description: str, total: Optional[int]) -> int:
        self._next += 1
        self.events.append(("start", self._next, description, total))
        return self._next

    def advance(self, handle: Any, n: int = 1) -> None:
        self.events.append(("advance", handle, n))

    def finish(self, handle: Any) -> None:
        self.events.append(("finish", handle))

    def steps(self, description: str) -> int:
        """How many steps were reported under ``description``."""
        handles = {e[1] for e in self.events if e[0] == "start" and e[2] == description}
        return sum(e[2] for e in self.events if e[0] == "advance" and e[1] in handles)
