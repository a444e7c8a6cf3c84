"""Spark DDL column lists and type strings (``"id bigint not null, name string"``) to
types with fresh field ids, and types back to Spark DDL."""
from __future__ import annotations

import re
from typing import Callable, Optional, overload

from icefloe.core.types.model import (
    DDL_PRIMITIVES,
    CharType,
    MultisetType,
    StringType,
    TimestampType,
    TimestamptzType,
    UUIDType,
    VarCharType,
    PRIMITIVES_BY_NAME,
    DecimalType,
    FixedType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    Schema,
    StructType,
)
from icefloe.errors import SchemaError


# --------------------------------------------------------------------------- DDL
_SPARK_NAMES = {
    "boolean": "boolean", "bool": "boolean",
    "tinyint": "tinyint", "byte": "tinyint", "smallint": "smallint", "short": "smallint",
    "int": "int", "integer": "int",
    "bigint": "long", "long": "long",
    "float": "float", "real": "float", "double": "double",
    "date": "date",
    # Spark's TIMESTAMP is instant semantics (with local time zone): Iceberg timestamptz,
    # as Iceberg's Spark runtime writes a `ts timestamp` column as `"type": "timestamptz"`.
    "timestamp": "timestamptz", "timestamp_ltz": "timestamptz", "timestamptz": "timestamptz",
    "timestamp_ntz": "timestamp",
    "string": "string", "binary": "binary", "uuid": "uuid", "time": "time", "variant": "variant",
}

_TOKEN_RE = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|('(?:[^'\\]|\\.)*')|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(.))")


class _Tokens:
    def __init__(self, text: str):
        self.text = text
        self.toks: list[str] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if not m:  # pragma: no cover - the last alternative matches anything
                raise SchemaError(f"cannot parse schema at position {pos}: {text[pos:]!r}")
            tok = next(g for g in m.groups() if g is not None)
            self.toks.append(tok)
            pos = m.end()
        self.i = 0

    def peek(self, k: int = 0) -> Optional[str]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> str:
        t = self.peek()
        if t is None:
            raise SchemaError(f"unexpected end of schema string {self.text!r}")
        self.i += 1
        return t

    def expect(self, tok: str) -> None:
        t = self.next()
        if t.lower() != tok.lower():
            raise SchemaError(f"expected {tok!r} but found {t!r} in schema {self.text!r}")

    def accept(self, tok: str) -> bool:
        t = self.peek()
        if t is not None and t.lower() == tok.lower():
            self.i += 1
            return True
        return False


class IdAllocator:
    def __init__(self, start: int = 0):
        self.last = start

    def next(self) -> int:
        self.last += 1
        return self.last


def _ident(tok: str) -> str:
    if tok.startswith("`"):
        return tok[1:-1].replace("``", "`")
    return tok


def _parse_type(tk: _Tokens) -> IcebergType:
    name = tk.next().lower()
    if name in ("struct", "row"):
        tk.expect("<")
        fields: list[PendingFieldSpec] = []
        if not tk.accept(">"):
            while True:
                fname = _ident(tk.next())
                tk.accept(":")
                ftype = _parse_type(tk)
                required = False
                if tk.accept("not"):
                    tk.expect("null")
                    required = True
                doc = None
                if tk.accept("comment"):
                    doc = _unquote(tk.next())
                fields.append((fname, ftype, required, doc))
                if tk.accept(">"):
                    break
                tk.expect(",")
        return PendingStruct(fields)
    if name in ("array", "list"):
        tk.expect("<")
        elem = _parse_type(tk)
        tk.expect(">")
        return PendingList(elem)
    if name == "map":
        tk.expect("<")
        k = _parse_type(tk)
        tk.expect(",")
        v = _parse_type(tk)
        tk.expect(">")
        return PendingMap(k, v)
    if name in ("decimal", "dec", "numeric"):
        if tk.accept("("):
            p = int(tk.next())
            s = 0
            if tk.accept(","):
                s = int(tk.next())
            tk.expect(")")
            return DecimalType(p, s)
        return DecimalType(10, 0)
    if name in ("varchar", "char"):
        if tk.accept("("):
            tk.next()
            tk.expect(")")
        return PRIMITIVES_BY_NAME["string"]
    if name == "fixed":
        tk.expect("[") if tk.peek() == "[" else tk.expect("(")
        n = int(tk.next())
        tk.next()
        return FixedType(n)
    if name in _SPARK_NAMES:
        return DDL_PRIMITIVES[_SPARK_NAMES[name]]
    raise SchemaError(f"unknown type {name!r} in schema {tk.text!r}")


def _unquote(tok: str) -> str:
    if tok.startswith("'") and tok.endswith("'"):
        return tok[1:-1].replace("\\'", "'")
    return tok


# (name, type, required, doc) of a struct field whose id is not assigned yet
PendingFieldSpec = tuple[str, IcebergType, bool, Optional[str]]


class PendingStruct(IcebergType):
    is_primitive = False

    def __init__(self, fields: list[PendingFieldSpec]):
        self.fields = fields

    def __str__(self) -> str:
        return "pending-struct"


class PendingList(IcebergType):
    is_primitive = False

    def __init__(self, elem: IcebergType, element_required: bool = False):
        self.elem = elem
        self.element_required = element_required

    def __str__(self) -> str:
        return "pending-list"


class PendingMap(IcebergType):
    is_primitive = False

    def __init__(self, k: IcebergType, v: IcebergType, value_required: bool = False):
        self.k, self.v = k, v
        self.value_required = value_required

    def __str__(self) -> str:
        return "pending-map"


@overload
def assign_ids(t: PendingStruct, ids: IdAllocator) -> StructType: ...
@overload
def assign_ids(t: IcebergType, ids: IdAllocator) -> IcebergType: ...
def assign_ids(t: IcebergType, ids: IdAllocator) -> IcebergType:
    """Assign ids the way Iceberg does: a struct's fields first, then their children."""
    if isinstance(t, PendingStruct):
        own = [ids.next() for _ in t.fields]
        fields: list[NestedField] = []
        for fid, (name, ft, req, doc) in zip(own, t.fields):
            fields.append(NestedField(fid, name, assign_ids(ft, ids), req, doc))
        return StructType(fields)
    if isinstance(t, PendingList):
        eid = ids.next()
        return ListType(eid, assign_ids(t.elem, ids), t.element_required)
    if isinstance(t, PendingMap):
        kid, vid = ids.next(), ids.next()
        return MapType(kid, assign_ids(t.k, ids), vid, assign_ids(t.v, ids), t.value_required)
    return t


def parse_schema(ddl: str, start_id: int = 0) -> Schema:
    """Parse a Spark DDL column list into a Schema with fresh field ids.

    ``"id bigint not null, name string comment 'x', ts timestamp not null"``
    """
    if not ddl or not ddl.strip():
        raise SchemaError("empty schema string")
    tk = _Tokens(ddl)
    cols: list[PendingFieldSpec] = []
    names: set[str] = set()
    while tk.peek() is not None:
        name = _ident(tk.next())
        if name.lower() in names:
            raise SchemaError(f"duplicate column {name!r} in schema {ddl!r}")
        names.add(name.lower())
        tk.accept(":")
        ftype = _parse_type(tk)
        required = False
        doc = None
        while tk.peek() is not None and tk.peek() != ",":
            if tk.accept("not"):
                tk.expect("null")
                required = True
            elif tk.accept("null"):
                required = False
            elif tk.accept("comment"):
                doc = _unquote(tk.next())
            else:
                raise SchemaError(f"unexpected {tk.peek()!r} after column {name!r} in schema {ddl!r}")
        cols.append((name, ftype, required, doc))
        if tk.peek() is not None:
            tk.expect(",")
    struct = assign_ids(PendingStruct(cols), IdAllocator(start_id))
    return Schema(struct.fields)


def parse_type(text: str) -> IcebergType:
    """Parse one Spark type string (``bigint``, ``struct<a:int>``) with fresh ids from 1."""
    tk = _Tokens(text)
    t = _parse_type(tk)
    if tk.peek() is not None:
        raise SchemaError(f"unexpected {tk.peek()!r} in type {text!r}")
    return assign_ids(t, IdAllocator(0))


def reassign_ids(t: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    """Return a copy of ``t`` whose nested field ids come from ``next_id()``."""
    if isinstance(t, StructType):
        own = [next_id() for _ in t.fields]
        return StructType([NestedField(i, f.name, reassign_ids(f.field_type, next_id), f.required, f.doc)
                           for i, f in zip(own, t.fields)])
    if isinstance(t, ListType):
        e = next_id()
        return ListType(e, reassign_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MultisetType):
        e = next_id()
        return MultisetType(e, reassign_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MapType):
        k, v = next_id(), next_id()
        return MapType(k, reassign_ids(t.key_type, next_id), v, reassign_ids(t.value_type, next_id),
                       t.value_required, t.key_required)
    return t


def to_spark_ddl_type(t: IcebergType) -> str:
    if isinstance(t, StructType):
        return "struct<" + ",".join(f"`{f.name}`:{to_spark_ddl_type(f.field_type)}" for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"array<{to_spark_ddl_type(t.element_type)}>"
    if isinstance(t, MultisetType):
        return f"map<{to_spark_ddl_type(t.element_type)},int>"
    if isinstance(t, MapType):
        return f"map<{to_spark_ddl_type(t.key_type)},{to_spark_ddl_type(t.value_type)}>"
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, (CharType, VarCharType)):
        return str(t)
    if isinstance(t, (StringType, UUIDType)):
        return "string"
    if isinstance(t, TimestampType):
        return "timestamp_ntz"
    if isinstance(t, TimestamptzType):
        return "timestamp"
    return {
        "boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "int": "int", "long": "bigint",
        "float": "float", "double": "double", "date": "date", "time": "bigint",
    }.get(str(t), "binary")


def schema_to_ddl(schema: Schema) -> str:
    parts: list[str] = []
    for f in schema.fields:
        s = f"`{f.name}` {to_spark_ddl_type(f.field_type)}"
        if f.required:
            s += " NOT NULL"
        parts.append(s)
    return ", ".join(parts)


