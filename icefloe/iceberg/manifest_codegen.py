# pyright: strict
"""Decoders generated from a manifest's Avro writer schema (see ``manifest_avro.read_manifest_entries``).

Scan planning reads every entry of every surviving manifest, but only needs the six metrics maps
(column sizes, counts, bounds) of files that survive partition pruning, and often only one or two
of them. fastavro builds a dict per key/value pair of every map of every entry, which dominated
planning time. The decoder here is generated from each manifest's writer schema: it decodes the
entry's scalar fields and partition, *skips* the metrics maps while remembering where each one
starts, and ``ManifestDataFile`` decodes a map from those bytes the first time it is read.
Manifests it cannot handle (an unknown codec or schema construct) fall back to the full
fastavro decode.
"""
from __future__ import annotations

import json
import struct
from typing import Any, Callable, Optional, TypeGuard, cast

import fastavro.read

from icefloe.iceberg.manifest import METRIC_FIELDS

_METRIC_SET = frozenset(METRIC_FIELDS)

# fastavro's readers of logical types by "<type>-<logicalType>"; its module leaves the dict untyped
_LOGICAL_READERS = cast("dict[str, Callable[..., Any]]",
                        fastavro.read.LOGICAL_READERS)  # pyright: ignore[reportUnknownMemberType]

# The generated functions (their source is built below; ``b`` is the manifest's bytes, ``p`` an offset):
# read_entry(b, p) -> (entry record, next offset); skim_entry(b, p) -> (status, content, record count,
# partition, metrics offsets, next offset); read_metrics(b, offsets) -> {metric name: map or None};
# find(b, p, field id) -> that column's value in one metrics map, or None
ReadEntry = Callable[[bytes, int], "tuple[dict[str, Any], int]"]
SkimEntry = Callable[[bytes, int], "tuple[Any, ...]"]
ReadMetrics = Callable[[bytes, "tuple[Optional[int], ...]"], "dict[str, Any]"]
Finder = Callable[[bytes, int, int], Any]


class _Unsupported(Exception):
    pass


def _is_record(s: Any) -> TypeGuard[dict[str, Any]]:
    """Whether the (resolved) Avro schema ``s`` is a record's JSON object."""
    return isinstance(s, dict) and cast("dict[str, Any]", s).get("type") == "record"


def _varint_rest(b: bytes, p: int, x: int) -> tuple[int, int]:
    """Continue a multi-byte varint whose first byte ``x`` (with its 0x80 bit) was read already."""
    x &= 0x7F
    shift = 7
    while True:
        c = b[p]
        p += 1
        x |= (c & 0x7F) << shift
        if not c & 0x80:
            return x, p
        shift += 7


class _CodeGen:
    _PRIMS = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0
        self.consts: dict[str, Any] = {"_unpack_from": struct.unpack_from}
        self.names: dict[str, Any] = {}   # named Avro types (JSON objects) by full and short name

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def const(self, value: object) -> str:
        self.n += 1
        name = f"C{self.n}"
        self.consts[name] = value
        return name

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("    " * ind + line)

    def resolve(self, s: Any, ns: str = "") -> Any:   # an Avro schema in JSON: a name, a union's list or an object
        if isinstance(s, str):
            if s in self._PRIMS:
                return s
            full = s if "." in s or not ns else f"{ns}.{s}"
            if full in self.names:
                return self.names[full]
            if s in self.names:
                return self.names[s]
            raise _Unsupported(f"unknown type {s}")
        if isinstance(s, list):
            return cast("list[Any]", s)
        t = s.get("type")
        if t in ("record", "enum", "fixed", "error"):
            name = s["name"]
            sns = s.get("namespace", ns) if "." not in name else name.rsplit(".", 1)[0]
            full = name if "." in name or not sns else f"{sns}.{name}"
            self.names[full] = s
            self.names[name.rsplit(".", 1)[-1]] = s
            s = dict(s)
            s["__ns"] = sns
            return s
        if isinstance(t, (dict, list)) or (isinstance(t, str) and t not in
                                           ("array", "map") and t not in self._PRIMS):
            return self.resolve(t, ns)
        return s

    def varint(self, ind: int, out: str) -> None:
        # the continuation inline: a call per multi-byte varint (snapshot ids, sizes) costs more
        c, sh = self.var(), self.var()
        self.emit(ind, f"{out} = b[p]; p += 1")
        self.emit(ind, f"if {out} & 128:")
        self.emit(ind + 1, f"{out} &= 127; {sh} = 7")
        self.emit(ind + 1, "while True:")
        self.emit(ind + 2, f"{c} = b[p]; p += 1; {out} |= ({c} & 127) << {sh}")
        self.emit(ind + 2, f"if {c} < 128: break")
        self.emit(ind + 2, f"{sh} += 7")
        self.emit(ind, f"{out} = ({out} >> 1) ^ -({out} & 1)")

    def logical(self, s_d: dict[str, Any], t: str, out: str, ind: int) -> None:
        """Apply fastavro's reader for a logical type, as a fastavro decode would."""
        if not s_d.get("logicalType"):
            return
        fn = _LOGICAL_READERS.get(f"{t}-{s_d['logicalType']}")
        if fn is None:
            return
        w = {k: v for k, v in s_d.items() if k != "__ns"}
        fc, sc = self.const(fn), self.const(w)
        self.emit(ind, f"{out} = {fc}({out}, {sc}, {sc})")

    def read(self, s: Any, out: str, ind: int, ns: str = "", as_map: bool = False, skip: bool = False,
             find: Optional[str] = None) -> None:
        """Emit code that decodes a value of schema ``s`` at ``p`` into ``out`` (or skips it).
        ``find`` (with ``as_map``): the name of a key; the code returns that key's value from the
        map as soon as it reads it, decoding no other value."""
        s = self.resolve(s, ns)
        s_d: dict[str, Any]
        if isinstance(s, str):
            t, s_d = s, {}
        elif isinstance(s, list):
            t, s_d = "union", {}      # the branches are ``s`` itself
        else:
            t, s_d = s["type"], s
        if t == "null":
            if not skip:
                self.emit(ind, f"{out} = None")
        elif t == "boolean":
            self.emit(ind, "p += 1" if skip else f"{out} = b[p] != 0; p += 1")
        elif t in ("int", "long"):
            if skip:
                self.emit(ind, "while b[p] & 128: p += 1")
                self.emit(ind, "p += 1")
            else:
                self.varint(ind, out)
                self.logical(s_d, t, out, ind)
        elif t in ("float", "double"):
            size, fmt = (4, "<f") if t == "float" else (8, "<d")
            if skip:
                self.emit(ind, f"p += {size}")
            else:
                self.emit(ind, f"{out} = _unpack_from('{fmt}', b, p)[0]; p += {size}")
        elif t in ("bytes", "string"):
            n = self.var()
            self.varint(ind, n)
            if skip:
                self.emit(ind, f"p += {n}")
            elif t == "bytes":
                self.emit(ind, f"{out} = b[p:p + {n}]; p += {n}")
            else:
                self.emit(ind, f"{out} = b[p:p + {n}].decode(); p += {n}")
            if not skip:
                self.logical(s_d, t, out, ind)
        elif t == "fixed":
            size = int(s_d["size"])
            if skip:
                self.emit(ind, f"p += {size}")
            else:
                self.emit(ind, f"{out} = b[p:p + {size}]; p += {size}")
                self.logical(s_d, t, out, ind)
        elif t == "enum":
            i = self.var()
            self.varint(ind, i)
            if not skip:
                self.emit(ind, f"{out} = {self.const(tuple(s_d['symbols']))}[{i}]")
        elif t in ("array", "map"):
            n, item, key = self.var(), self.var(), self.var()
            kv = False
            if t == "array" and as_map:
                items = self.resolve(s_d["items"], ns)
                if not (_is_record(items) and [f["name"] for f in items["fields"]] == ["key", "value"]):
                    raise _Unsupported("map-like array")
                kv = True
            if not skip and not (kv and find):
                self.emit(ind, f"{out} = {{}}" if (kv or t == "map") else f"{out} = []")
            self.emit(ind, "while True:")
            self.varint(ind + 1, n)
            self.emit(ind + 1, f"if not {n}: break")
            self.emit(ind + 1, f"if {n} < 0:")
            self.emit(ind + 2, f"{n} = -{n}")
            sz = self.var()
            self.varint(ind + 2, sz)
            if skip:
                self.emit(ind + 2, f"p += {sz}")
                self.emit(ind + 2, "continue")
            self.emit(ind + 1, f"for _ in range({n}):")
            if kv and find and not skip:
                items = self.resolve(s_d["items"], ns)
                ins = items["__ns"]
                self.read(items["fields"][0]["type"], key, ind + 2, ins)
                self.emit(ind + 2, f"if {key} == {find}:")
                self.read(items["fields"][1]["type"], item, ind + 3, ins)
                self.emit(ind + 3, f"return {item}")
                self.read(items["fields"][1]["type"], item, ind + 2, ins, skip=True)
            elif kv:
                items = self.resolve(s_d["items"], ns)
                ins = items["__ns"]
                self.read(items["fields"][0]["type"], key, ind + 2, ins, skip=skip)
                self.read(items["fields"][1]["type"], item, ind + 2, ins, skip=skip)
                if not skip:
                    self.emit(ind + 2, f"{out}[{key}] = {item}")
            elif t == "map":
                self.read("string", key, ind + 2, ns, skip=skip)
                self.read(s_d["values"], item, ind + 2, ns, skip=skip)
                if not skip:
                    self.emit(ind + 2, f"{out}[{key}] = {item}")
            else:
                self.read(s_d["items"], item, ind + 2, ns, skip=skip)
                if not skip:
                    self.emit(ind + 2, f"{out}.append({item})")
        elif t in ("record", "error"):
            rns = s_d.get("__ns", ns)
            if not skip:
                self.emit(ind, f"{out} = {{}}")
            for f in s_d["fields"]:
                v = self.var()
                self.read(f["type"], v, ind, rns, skip=skip)
                if not skip:
                    self.emit(ind, f"{out}[{f['name']!r}] = {v}")
        elif t == "union":
            branches = cast("list[Any]", s)
            if len(branches) > 63:
                raise _Unsupported("union too wide")
            i = self.var()
            # a branch index below 64 is one zigzag byte: compare the raw byte (2 * index)
            self.emit(ind, f"{i} = b[p]; p += 1")
            for k, br in enumerate(branches):
                self.emit(ind, f"{'if' if k == 0 else 'elif'} {i} == {2 * k}:")
                before = len(self.lines)
                self.read(br, out, ind + 1, ns, as_map=as_map, skip=skip, find=find)
                if len(self.lines) == before:
                    self.emit(ind + 1, "pass")
            self.emit(ind, "else:")
            self.emit(ind + 1, f"raise ValueError('bad union branch byte %d' % {i})")
        else:
            raise _Unsupported(f"type {t}")

    def compile(self, name: str) -> Any:
        src = "\n".join(self.lines)
        code = compile(src, f"<manifest decoder {name}>", "exec")
        ns: dict[str, Any] = dict(self.consts)
        exec(code, ns)
        return ns[name]


class _EntryDecoder:
    """Decoders generated for one manifest writer schema (cached by its JSON text)."""

    def __init__(self, schema_json: str):
        schema = json.loads(schema_json)
        gen = _CodeGen()
        top = gen.resolve(schema)
        if not _is_record(top):
            raise _Unsupported("manifest entry is not a record")
        ns: str = top.get("__ns", "")
        self.partition_schema: Any = None
        self._metric_types: dict[str, tuple[Any, str]] = {}   # metrics map name -> (Avro type, namespace)
        gen.emit(0, "def read_entry(b, p):")
        top_vars, file_var, file_vars = self._walk_entry(gen, top, ns)
        if file_var is not None:
            gen.emit(1, f"{file_var} = {{" + "".join(f"{n!r}: {v}, " for n, v in file_vars.items())
                     + f"'@': {self._offsets()}}}")
        gen.emit(1, "return {" + ", ".join(f"{n!r}: {v}" for n, v in top_vars.items()) + "}, p")
        self.read_entry: ReadEntry = gen.compile("read_entry")
        self.skim_entry: Optional[SkimEntry] = self._skimmer(top, ns, gen.names)
        # the metrics decoders are compiled when first used (a filtered plan may need two finders,
        # a partition-pruned one none): compiling them all took as long as decoding 500 entries
        self._names = gen.names
        self._read_metrics: Optional[ReadMetrics] = None
        self.find_metric = _Finders(self)

    def _walk_entry(self, gen: _CodeGen, top: dict[str, Any], ns: str, decoded: Optional[set[str]] = None
                    ) -> tuple[dict[str, str], Optional[str], dict[str, str]]:
        """Emit the walk over one entry: each field decoded into a variable (with ``decoded``, only
        the fields it names and the data file's partition; the rest skipped), the data file's
        metrics maps skipped with their offsets kept in ``o_<name>``. Returns the top-level fields'
        variables, the data file record's variable (None where it is not a record) and its
        fields' variables; notes the metrics maps' types and the partition schema on the way."""
        top_vars: dict[str, str] = {}
        file_var: Optional[str] = None
        file_vars: dict[str, str] = {}
        for f in top["fields"]:
            v = gen.var()
            ft = gen.resolve(f["type"], ns)
            if f["name"] == "data_file" and _is_record(ft):
                dns: str = ft.get("__ns", ns)
                file_var = top_vars[f["name"]] = v
                for df in ft["fields"]:
                    dv, name = gen.var(), cast(str, df["name"])
                    if name in _METRIC_SET:
                        gen.emit(1, f"o_{name} = p")
                        gen.read(df["type"], dv, 1, dns, skip=True)
                        self._metric_types[name] = (df["type"], dns)
                    elif name == "partition":
                        self.partition_schema = gen.resolve(df["type"], dns)
                        self._emit_partition(gen, self.partition_schema, dv, 1, dns)
                        file_vars[name] = dv
                    elif decoded is None or name in decoded:
                        gen.read(df["type"], dv, 1, dns)
                        file_vars[name] = dv
                    else:
                        gen.read(df["type"], dv, 1, dns, skip=True)
            elif decoded is None or f["name"] in decoded:
                gen.read(f["type"], v, 1, ns)
                top_vars[f["name"]] = v
            else:
                gen.read(f["type"], v, 1, ns, skip=True)
        return top_vars, file_var, file_vars

    def _offsets(self) -> str:
        """The tuple of the metrics maps' offset variables, in ``METRIC_FIELDS`` order (None for a
        map the schema lacks), as generated code."""
        return "(" + ", ".join(f"o_{n}" if n in self._metric_types else "None" for n in METRIC_FIELDS) + ")"

    def _skimmer(self, top: dict[str, Any], ns: str, names: dict[str, Any]) -> Optional[SkimEntry]:
        """``skim_entry(b, p)`` (None for a schema without a status and a data file record): what
        a filtered plan judges an entry by -- (status, content, record count, partition record,
        the metrics maps' offsets, the next entry's offset) -- with every other field skipped, not
        decoded (no strings, no dicts): most entries of such a plan are dropped, and only the kept
        ones are read again whole."""
        sg = _CodeGen()
        sg.names = names
        sg.emit(0, "def skim_entry(b, p):")
        top_vars, file_var, file_vars = self._walk_entry(sg, top, ns, {"status", "content", "record_count"})
        if "status" not in top_vars or file_var is None:
            return None
        got = [file_vars.get(n, "None") for n in ("content", "record_count", "partition")]
        sg.emit(1, f"return {top_vars['status']}, {', '.join(got)}, {self._offsets()}, p")
        return sg.compile("skim_entry")

    @property
    def read_metrics(self) -> ReadMetrics:
        """One lazy decoder for all six metrics maps (each from its own offset), sharing the named
        types of the entry's schema; an absent map is None."""
        if self._read_metrics is None:
            mg = _CodeGen()
            mg.names = self._names
            mg.emit(0, "def read_metrics(b, offs):")
            outs: list[str] = []
            for k, name in enumerate(METRIC_FIELDS):
                out = f"m{k}"
                outs.append(out)
                if name not in self._metric_types:
                    mg.emit(1, f"{out} = None")
                    continue
                ftype, dns = self._metric_types[name]
                mg.emit(1, f"p = offs[{k}]")
                mg.read(ftype, out, 1, dns, as_map=True)
            mg.emit(1, "return {" + ", ".join(f"{n!r}: {o}" for n, o in zip(METRIC_FIELDS, outs)) + "}")
            made: ReadMetrics = mg.compile("read_metrics")
            self._read_metrics = made
        return self._read_metrics

    def compile_finder(self, k: int) -> Optional[Finder]:
        """The finder of metrics map ``k`` (of ``METRIC_FIELDS``): one column's value, scanned for
        from the map's offset; None where the schema has no such map."""
        name = METRIC_FIELDS[k]
        if name not in self._metric_types:
            return None
        fg = _CodeGen()
        fg.names = self._names
        fg.emit(0, "def find(b, p, want):")
        ftype, dns = self._metric_types[name]
        fg.read(ftype, "m", 1, dns, as_map=True, find="want")
        fg.emit(1, "return None")
        return fg.compile("find")

    def _emit_partition(self, gen: _CodeGen, ps: Any, out: str, ind: int, ns: str) -> None:
        if not _is_record(ps):
            raise _Unsupported("partition is not a record")
        gen.read(ps, out, ind, ns)


class _Finders:
    """An entry decoder's finders by metrics map index, each compiled when first asked for."""

    _UNSET = object()

    def __init__(self, dec: _EntryDecoder) -> None:
        self._dec = dec
        self._made: list[object] = [self._UNSET] * len(METRIC_FIELDS)

    def __getitem__(self, k: int) -> Optional[Finder]:
        f = self._made[k]
        if f is self._UNSET:
            f = self._made[k] = self._dec.compile_finder(k)
        return cast(Optional[Finder], f)


# the decoders of one writer schema, as other modules name them in annotations
EntryDecoder = _EntryDecoder

# generated decoders by writer schema (JSON text); None for a schema only fastavro can read
_DECODERS: dict[str, Optional[_EntryDecoder]] = {}


def clear_decoders() -> None:
    """Forget the generated decoders (benchmarks time a cold start with them)."""
    _DECODERS.clear()


def entry_decoder(schema_json: str) -> Optional[_EntryDecoder]:
    """The generated decoders of a manifest writer schema (JSON text), kept; None where only fastavro can read it."""
    d: Optional[_EntryDecoder] | bool = _DECODERS.get(schema_json, False)
    if d is False:
        try:
            d = _EntryDecoder(schema_json)
        except _Unsupported:
            d = None
        if len(_DECODERS) > 256:
            _DECODERS.clear()
        _DECODERS[schema_json] = d
    return cast(Optional[_EntryDecoder], d)


def read_long(b: bytes, p: int) -> tuple[int, int]:
    """The zigzag varint at ``p`` and the offset after it."""
    x = b[p]
    p += 1
    if x & 128:
        x, p = _varint_rest(b, p, x)
    return (x >> 1) ^ -(x & 1), p
