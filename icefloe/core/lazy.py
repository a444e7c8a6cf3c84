"""An attribute read on first use, then kept in the instance's ``__dict__``.

A manifest lists one entry per data file and a plan of a million files builds a million objects:
``Deferred`` lets such an object hold its encoded source (a decompressed Avro block, a row of
Arrow columns) and make a field's Python value only when something reads it.
"""
from __future__ import annotations

from typing import Any, Callable, Generic, Optional, TypeVar, overload

T = TypeVar("T")

#: ``load(instance_dict, name)``: the value of attribute ``name``; ``KeyError`` when the
#: instance holds neither the value nor a source to make it from.
Loader = Callable[[dict[str, Any], str], T]


class Deferred(Generic[T]):
    """A non-data descriptor for an attribute of value type ``T``: its first read on an instance
    calls ``load`` and keeps the value in the instance's ``__dict__``. An instance value (kept, or
    assigned) wins over a non-data descriptor, so later reads are plain attribute reads and this is
    not consulted again. ``load`` may fill several attributes at once (as the metrics maps of one
    entry, decoded together); it should not replace a value already in the dictionary, which would
    be one assigned since."""

    __slots__ = ("load", "name")

    def __init__(self, load: Loader[T]) -> None:
        self.load = load
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: Optional[type] = None) -> Deferred[T]: ...

    @overload
    def __get__(self, obj: object, owner: Optional[type] = None) -> T: ...

    def __get__(self, obj: Optional[object], owner: Optional[type] = None) -> Deferred[T] | T:
        if obj is None:
            return self
        d: dict[str, Any] = obj.__dict__
        name = self.name
        try:
            value = d[name] = self.load(d, name)
        except KeyError:
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}") from None
        return value


__all__ = ["Deferred", "Loader"]
