# pyright: strict
"""A data file's metadata read from a manifest's columns on first use (``ColumnarFileMeta``).

A plan of every file of a table of a million files returns a million ``DataFileMeta``; built in
full, each held its statistics as objects (two ``BinaryRow`` of bounds, their bytes, a tuple of
null counts, the key statistics alike) and its path as a string of its own: ~3 KB a file, most of a
3 GB plan. A ``ColumnarFileMeta`` holds only where its values are (the manifest's
``ManifestColumns`` and its row) and, once planned, its directory (a string shared by the files of
one bucket): ~140 bytes. Each field is made from the columns when first read and then kept, and
``file_path`` is its directory and name joined when read. It equals the plain ``DataFileMeta`` of the same values;
copies and pickles (a Spark task's) are plain ``DataFileMeta``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Protocol

from icefloe.core.io import strip_scheme
from icefloe.paimon.data_file import FIELD_NAMES, DataFileMeta


class FieldSource(Protocol):
    """Where a ``ColumnarFileMeta``'s values are: the value of field ``name`` at ``row``."""

    def file_field(self, name: str, row: int) -> Any: ...


class _FromColumns:
    """A data descriptor for one of ``DataFileMeta``'s fields: a value set (or read before) is kept
    in the instance's ``values``; a field not yet there is made from its source on first read. The
    instance's own ``__dict__`` stays empty: its class's shared keys never grow, so each new instance
    stays small however many fields earlier ones read."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Optional["ColumnarFileMeta"], owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        try:
            values = obj.values
        except AttributeError:
            values = obj.values = {}
        try:
            return values[self.name]
        except KeyError:
            value = values[self.name] = obj.source.file_field(self.name, obj.row)
            return value

    def __set__(self, obj: "ColumnarFileMeta", value: Any) -> None:
        try:
            obj.values[self.name] = value
        except AttributeError:
            obj.values = {self.name: value}


class _Path(_FromColumns):
    """``file_path``: the value set, else once placed its external path (without a scheme) or
    ``<directory>/<file_name>`` (not kept: a plan of every file holds no path string per file),
    else None."""

    __slots__ = ()

    def __get__(self, obj: Optional["ColumnarFileMeta"], owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.values["file_path"]
        except (AttributeError, KeyError):
            pass
        try:
            directory = obj.directory
        except AttributeError:      # not placed yet
            return None
        external = obj.external_path
        return strip_scheme(external) if external else directory + "/" + obj.file_name


class ColumnarFileMeta(DataFileMeta):
    """A ``DataFileMeta`` of row ``row`` of a manifest's columns (``source``), its fields made on
    first read. Built afresh by each plan, so a plan may place it (``in_directory``) in place."""

    __slots__ = ("source", "row", "directory", "values")

    if TYPE_CHECKING:
        source: FieldSource
        row: int
        directory: str      # unset until placed
        values: dict[str, Any]      # unset until a field is read or set

    @staticmethod
    def of(source: FieldSource, rows: Iterable[int]) -> list["ColumnarFileMeta"]:
        """The files at ``rows`` of ``source``, no field read yet (``dataclasses.replace`` and the
        like build one through ``DataFileMeta``'s constructor, every field given)."""
        new, cls = object.__new__, ColumnarFileMeta
        out: list[ColumnarFileMeta] = []
        for row in rows:
            f = new(cls)
            f.source = source
            f.row = row
            out.append(f)
        return out

    def in_directory(self, directory: str) -> DataFileMeta:
        self.directory = directory      # file_path: the external path, else directory and name
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DataFileMeta):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _COMPARED)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  (as DataFileMeta's: mutable, compared by value)

    def __reduce__(self) -> tuple[Callable[..., DataFileMeta], tuple[Any, ...]]:
        return DataFileMeta, tuple(getattr(self, n) for n in FIELD_NAMES)


_COMPARED = tuple(n for n in FIELD_NAMES if n != "file_path")     # as DataFileMeta's equality
for _name in FIELD_NAMES:
    setattr(ColumnarFileMeta, _name, (_Path if _name == "file_path" else _FromColumns)(_name))

__all__ = ["ColumnarFileMeta", "FieldSource"]
