"""``Deferred``: an attribute made on first read and kept in the instance's ``__dict__``."""
from __future__ import annotations

from typing import Any

import pytest

from icefloe.core.lazy import Deferred

calls: list[str] = []


def _both(d: dict[str, Any], name: str) -> int:
    """Fills both attributes from the source at once (a value already there is kept)."""
    calls.append(name)
    base = d["_source"]
    d.setdefault("a", base + 1)
    d.setdefault("b", base + 2)
    return d[name]


class Holder:
    a = Deferred(_both)
    b = Deferred(_both)

    def __init__(self, source: int) -> None:
        self._source = source


def test_first_read_loads_and_keeps() -> None:
    calls.clear()
    h = Holder(10)
    assert "a" not in h.__dict__
    assert h.a == 11
    assert h.__dict__["a"] == 11 and h.__dict__["b"] == 12
    assert h.a == 11 and h.b == 12
    assert calls == ["a"]                     # b was filled with a: neither is loaded again


def test_assigned_value_wins() -> None:
    calls.clear()
    h = Holder(10)
    h.b = 99
    assert h.a == 11                          # loading a keeps the b assigned before
    assert h.b == 99
    h.a = 5
    assert h.a == 5
    assert calls == ["a"]


def test_class_access_gives_the_descriptor() -> None:
    assert isinstance(Holder.a, Deferred)
    assert Holder.a.name == "a" and Holder.b.name == "b"


def test_no_source_is_an_attribute_error() -> None:
    h = object.__new__(Holder)
    with pytest.raises(AttributeError, match="'Holder' object has no attribute 'a'"):
        _ = h.a
    assert getattr(h, "b", None) is None
