"""The Avro encoding of manifests (Iceberg spec, "Manifests" and "Appendix A: Format-specific
Requirements", Avro): writing a manifest file, and decoding one into ``ManifestEntry`` values.

Two decoders give the same entries. ``entries_from_records`` builds them from
fastavro's full decode (``read_manifest_raw``), the reference. ``read_manifest_entries``,
used for planning, decodes with code generated from each manifest's writer schema
and leaves the six metrics maps of every data file undecoded until first read
(``ManifestDataFile``).
"""
from __future__ import annotations

import io
import json
import struct
import uuid
import zlib
from typing import Iterable, Optional

import fastavro
from fastavro.read import LOGICAL_READERS

from icefloe.core.io import FileIO
from icefloe.core.types import Schema, StructType
from icefloe.errors import CorruptMetadataError
from icefloe.iceberg import conversions
from icefloe.iceberg.avro_schemas import avro_name, manifest_entry_schema
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, METRIC_FIELDS, DataFile, ManifestEntry
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.schema import schema_to_json

def _map_to_avro(d: Optional[dict]):
    if d is None:
        return None
    return [{"key": k, "value": v} for k, v in sorted(d.items())]


def _map_from_avro(a) -> Optional[dict]:
    if a is None:
        return None
    return {kv["key"]: kv["value"] for kv in a}


def _partition_to_avro(partition_type: StructType, values: tuple) -> dict:
    out = {}
    for f, v in zip(partition_type.fields, values):
        s = str(f.field_type)
        if v is not None and s == "uuid":
            v = v.bytes
        out[avro_name(f.name)] = v
    return out


def _partition_from_avro(partition_type: StructType, rec: dict) -> tuple:
    out = []
    for f in partition_type.fields:
        v = rec.get(avro_name(f.name), rec.get(f.name))
        if v is not None:
            v = conversions.to_internal(f.field_type, v)
            s = str(f.field_type)
            if s == "uuid" and isinstance(v, (bytes, bytearray)):
                v = uuid.UUID(bytes=bytes(v))
        out.append(v)
    return tuple(out)


def entry_to_avro(e: ManifestEntry, partition_type: StructType, format_version: int = 2) -> dict:
    f = e.data_file
    rec = {
        "status": e.status,
        "snapshot_id": e.snapshot_id,
        "sequence_number": e.sequence_number,
        "file_sequence_number": e.file_sequence_number,
        "data_file": {
            "content": f.content,
            "file_path": f.file_path,
            "file_format": f.file_format,
            "partition": _partition_to_avro(partition_type, f.partition),
            "record_count": f.record_count,
            "file_size_in_bytes": f.file_size_in_bytes,
            "column_sizes": _map_to_avro(f.column_sizes),
            "value_counts": _map_to_avro(f.value_counts),
            "null_value_counts": _map_to_avro(f.null_value_counts),
            "nan_value_counts": _map_to_avro(f.nan_value_counts),
            "lower_bounds": _map_to_avro(f.lower_bounds),
            "upper_bounds": _map_to_avro(f.upper_bounds),
            "key_metadata": f.key_metadata,
            "split_offsets": f.split_offsets,
            "equality_ids": f.equality_ids,
            "sort_order_id": f.sort_order_id,
            "referenced_data_file": f.referenced_data_file,
        },
    }
    if format_version >= 3:
        rec["data_file"].update(first_row_id=f.first_row_id, content_offset=f.content_offset,
                                content_size_in_bytes=f.content_size_in_bytes)
    return rec


def write_manifest(io_: FileIO, path: str, schema: Schema, spec: PartitionSpec,
                   entries: Iterable[ManifestEntry], content: int = DATA, format_version: int = 2) -> int:
    """Write a manifest file; returns its length in bytes."""
    ptype = spec.partition_type(schema)
    avro_schema = manifest_entry_schema(ptype, format_version)
    metadata = {
        "schema": json.dumps(schema_to_json(schema), separators=(",", ":")),
        "schema-id": str(schema.schema_id),
        "partition-spec": json.dumps(spec.fields_json(), separators=(",", ":")),
        "partition-spec-id": str(spec.spec_id),
        "format-version": str(max(format_version, 2)),
        "content": "data" if content == DATA else "deletes",
    }
    buf = io.BytesIO()
    records = [entry_to_avro(e, ptype, format_version) for e in entries]
    fastavro.writer(buf, fastavro.parse_schema(avro_schema), records, codec="deflate", metadata=metadata)
    data = buf.getvalue()
    io_.write_bytes(path, data, overwrite=False)
    return len(data)


def read_manifest_raw(io_: FileIO, path: str) -> tuple[dict, list[dict]]:
    """Read a manifest's key/value metadata and raw records; errors name the file."""
    try:
        data = io_.read_bytes(path)
    except FileNotFoundError as e:
        raise CorruptMetadataError(path, "manifest file is missing") from e
    except (IsADirectoryError, ValueError) as e:   # e.g. a path with a NUL byte
        raise CorruptMetadataError(path, f"manifest file cannot be read ({type(e).__name__}: {e})") from e
    try:
        reader = fastavro.reader(io.BytesIO(data))
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in reader.metadata.items()}
        records = list(reader)
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest ({type(e).__name__}: {e})") from e
    return meta, records


def entries_from_records(records: list[dict], partition_type: StructType, spec_id: int,
                         inherited_snapshot_id: int, inherited_sequence_number: int) -> list[ManifestEntry]:
    out = []
    for r in records:
        df = r["data_file"]
        status = r["status"]
        snap = r.get("snapshot_id")
        seq = r.get("sequence_number")
        fseq = r.get("file_sequence_number")
        if snap is None:
            snap = inherited_snapshot_id
        # Inheritance applies to ADDED entries only (spec: "Sequence Number Inheritance").
        # v1 manifests carry no sequence numbers: every entry then has the list's (0).
        if seq is None and (status == ADDED or inherited_sequence_number == 0):
            seq = inherited_sequence_number
        if fseq is None and (status == ADDED or inherited_sequence_number == 0):
            fseq = inherited_sequence_number
        f = DataFile(
            file_path=df["file_path"], file_format=df["file_format"],
            partition=_partition_from_avro(partition_type, df["partition"] or {}),
            record_count=df["record_count"], file_size_in_bytes=df["file_size_in_bytes"],
            content=df.get("content", 0) or 0,
            column_sizes=_map_from_avro(df.get("column_sizes")),
            value_counts=_map_from_avro(df.get("value_counts")),
            null_value_counts=_map_from_avro(df.get("null_value_counts")),
            nan_value_counts=_map_from_avro(df.get("nan_value_counts")),
            lower_bounds=_map_from_avro(df.get("lower_bounds")),
            upper_bounds=_map_from_avro(df.get("upper_bounds")),
            key_metadata=df.get("key_metadata"), split_offsets=df.get("split_offsets"),
            equality_ids=df.get("equality_ids"), sort_order_id=df.get("sort_order_id"),
            spec_id=spec_id, referenced_data_file=df.get("referenced_data_file"),
            first_row_id=df.get("first_row_id"), content_offset=df.get("content_offset"),
            content_size_in_bytes=df.get("content_size_in_bytes"),
        )
        out.append(ManifestEntry(status, snap, seq, fseq, f))
    return out


# --------------------------------------------------------------------------- fast manifest decoding
# Scan planning reads every entry of every surviving manifest, but only needs the six metrics maps
# (column sizes, counts, bounds) of files that survive partition pruning, and often only one or two
# of them. fastavro builds a dict per key/value pair of every map of every entry, which dominated
# planning time. The decoder below is generated from each manifest's writer schema: it decodes the
# entry's scalar fields and partition, *skips* the metrics maps while remembering where each one
# starts, and ``ManifestDataFile`` decodes a map from those bytes the first time it is read.
# Manifests it cannot handle (an unknown codec or schema construct) fall back to the full
# fastavro decode.

_METRIC_SET = frozenset(METRIC_FIELDS)


class _Unsupported(Exception):
    pass


def _varint_rest(b, p, x):
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

    def __init__(self):
        self.lines: list[str] = []
        self.n = 0
        self.consts: dict = {"_unpack_from": struct.unpack_from}
        self.names: dict = {}

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def const(self, value) -> str:
        self.n += 1
        name = f"C{self.n}"
        self.consts[name] = value
        return name

    def emit(self, ind: int, line: str):
        self.lines.append("    " * ind + line)

    def resolve(self, s, ns: str = ""):
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
            return s
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

    def varint(self, ind: int, out: str):
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

    def logical(self, s_d, t: str, out: str, ind: int):
        """Apply fastavro's reader for a logical type, as a fastavro decode would."""
        if not isinstance(s_d, dict) or not s_d.get("logicalType"):
            return
        fn = LOGICAL_READERS.get(f"{t}-{s_d['logicalType']}")
        if fn is None:
            return
        w = {k: v for k, v in s_d.items() if k != "__ns"}
        fc, sc = self.const(fn), self.const(w)
        self.emit(ind, f"{out} = {fc}({out}, {sc}, {sc})")

    def read(self, s, out: str, ind: int, ns: str = "", as_map: bool = False, skip: bool = False,
             find: Optional[str] = None):
        """Emit code that decodes a value of schema ``s`` at ``p`` into ``out`` (or skips it).
        ``find`` (with ``as_map``): the name of a key; the code returns that key's value from the
        map as soon as it reads it, decoding no other value."""
        s = self.resolve(s, ns)
        if isinstance(s, str):
            t, s_d = s, {}
        elif isinstance(s, list):
            t, s_d = "union", None
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
                if not (isinstance(items, dict) and items.get("type") == "record"
                        and [f["name"] for f in items["fields"]] == ["key", "value"]):
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
            branches = s
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

    def compile(self, name: str):
        src = "\n".join(self.lines)
        code = compile(src, f"<manifest decoder {name}>", "exec")
        ns = dict(self.consts)
        exec(code, ns)
        return ns[name]


class _EntryDecoder:
    """Decoders generated for one manifest writer schema (cached by its JSON text)."""

    def __init__(self, schema_json: str):
        schema = json.loads(schema_json)
        gen = _CodeGen()
        top = gen.resolve(schema)
        if not (isinstance(top, dict) and top.get("type") == "record"):
            raise _Unsupported("manifest entry is not a record")
        gen.emit(0, "def read_entry(b, p):")
        ns = top.get("__ns", "")
        out_fields = []
        self.partition_schema = None
        metric_types = {}
        for f in top["fields"]:
            v = gen.var()
            ft = gen.resolve(f["type"], ns)
            if f["name"] == "data_file" and isinstance(ft, dict) and ft.get("type") == "record":
                dns = ft.get("__ns", ns)
                gen.emit(1, f"{v} = {{}}")
                for df in ft["fields"]:
                    dv = gen.var()
                    if df["name"] in _METRIC_SET:
                        gen.emit(1, f"o_{df['name']} = p")
                        gen.read(df["type"], dv, 1, dns, skip=True)
                        metric_types[df["name"]] = (df["type"], dns)
                        continue
                    if df["name"] == "partition":
                        self.partition_schema = gen.resolve(df["type"], dns)
                        self._emit_partition(gen, self.partition_schema, dv, 1, dns)
                    else:
                        gen.read(df["type"], dv, 1, dns)
                    gen.emit(1, f"{v}[{df['name']!r}] = {dv}")
                offs = ", ".join(f"o_{n}" if n in metric_types else "None" for n in METRIC_FIELDS)
                gen.emit(1, f"{v}['@'] = ({offs})")
            else:
                gen.read(f["type"], v, 1, ns)
            out_fields.append((f["name"], v))
        gen.emit(1, "return {" + ", ".join(f"{n!r}: {v}" for n, v in out_fields) + "}, p")
        self.read_entry = gen.compile("read_entry")
        # the metrics decoders are compiled when first used (a filtered plan may need two finders,
        # a partition-pruned one none): compiling them all took as long as decoding 500 entries
        self._names, self._metric_types = gen.names, metric_types
        self._read_metrics = None
        self.find_metric = _Finders(self)

    @property
    def read_metrics(self):
        """One lazy decoder for all six metrics maps (each from its own offset), sharing the named
        types of the entry's schema; an absent map is None."""
        if self._read_metrics is None:
            mg = _CodeGen()
            mg.names = self._names
            mg.emit(0, "def read_metrics(b, offs):")
            outs = []
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
            self._read_metrics = mg.compile("read_metrics")
        return self._read_metrics

    def compile_finder(self, k: int):
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

    def _emit_partition(self, gen: _CodeGen, ps, out: str, ind: int, ns: str):
        if not (isinstance(ps, dict) and ps.get("type") == "record"):
            raise _Unsupported("partition is not a record")
        gen.read(ps, out, ind, ns)


class _Finders:
    """An entry decoder's finders by metrics map index, each compiled when first asked for."""

    _UNSET = object()

    def __init__(self, dec: _EntryDecoder):
        self._dec = dec
        self._made = [self._UNSET] * len(METRIC_FIELDS)

    def __getitem__(self, k: int):
        f = self._made[k]
        if f is self._UNSET:
            f = self._made[k] = self._dec.compile_finder(k)
        return f


# generated decoders by writer schema (JSON text); None for a schema only fastavro can read
_DECODERS: dict = {}


def clear_decoders() -> None:
    """Forget the generated decoders (benchmarks time a cold start with them)."""
    _DECODERS.clear()


def _entry_decoder(schema_json: str) -> Optional[_EntryDecoder]:
    d = _DECODERS.get(schema_json, False)
    if d is False:
        try:
            d = _EntryDecoder(schema_json)
        except _Unsupported:
            d = None
        if len(_DECODERS) > 256:
            _DECODERS.clear()
        _DECODERS[schema_json] = d
    return d


def _read_long(b, p):
    x = b[p]
    p += 1
    if x & 128:
        x, p = _varint_rest(b, p, x)
    return (x >> 1) ^ -(x & 1), p


def _container_blocks(data: bytes):
    """(metadata, [(decompressed block, record count)]) of an Avro object container file,
    or None for a codec handled only by fastavro."""
    if data[:4] != b"Obj\x01":
        raise ValueError("not an Avro object container file")
    p = 4
    meta = {}
    while True:
        n, p = _read_long(data, p)
        if n == 0:
            break
        if n < 0:
            n = -n
            _, p = _read_long(data, p)
        for _ in range(n):
            kl, p = _read_long(data, p)
            k = data[p:p + kl].decode()
            p += kl
            vl, p = _read_long(data, p)
            meta[k] = data[p:p + vl]
            p += vl
    sync = data[p:p + 16]
    p += 16
    codec = meta.get("avro.codec", b"null").decode() or "null"
    if codec not in ("null", "deflate"):
        return None
    blocks = []
    end = len(data)
    while p < end:
        count, p = _read_long(data, p)
        size, p = _read_long(data, p)
        raw = data[p:p + size]
        p += size
        if data[p:p + 16] != sync:
            raise ValueError("sync marker mismatch")
        p += 16
        if codec == "deflate":
            raw = zlib.decompress(raw, -15)
        blocks.append((raw, count))
    return meta, blocks



class _DeferredMetrics:
    """A metrics-map attribute of ``ManifestDataFile`` decoded on first read.

    A non-data descriptor: once the maps are decoded into the instance's ``__dict__``
    (or one is assigned), the instance value wins and this is not consulted again.
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        d = obj.__dict__
        lazy = d.pop("_lazy", None)
        if lazy is not None:
            buf, offsets, dec = lazy
            for k, v in dec.read_metrics(buf, offsets).items():
                d.setdefault(k, v)   # keep a value assigned since
        try:
            return d[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {self.name!r}") from None


_FIELD_NAMES = tuple(DataFile.__dataclass_fields__)


class ManifestDataFile(DataFile):
    """A ``DataFile`` read by ``read_manifest_entries``: its metrics maps stay encoded (in
    ``_lazy``: the decompressed block, each map's offset and the decoder) until first read.
    Equal to the plain ``DataFile`` with the same values; copies and pickles are plain."""

    column_sizes = _DeferredMetrics("column_sizes")
    value_counts = _DeferredMetrics("value_counts")
    null_value_counts = _DeferredMetrics("null_value_counts")
    nan_value_counts = _DeferredMetrics("nan_value_counts")
    lower_bounds = _DeferredMetrics("lower_bounds")
    upper_bounds = _DeferredMetrics("upper_bounds")

    def metrics_of(self, field_id: int) -> tuple:
        """``DataFile.metrics_of``, found in the encoded maps while they are not decoded: a
        filter's evaluation reads the columns it names, not all six maps of every column."""
        d = self.__dict__
        lazy = d.get("_lazy")
        if lazy is None:
            return DataFile.metrics_of(self, field_id)
        found = d.get("_found")             # a cached manifest's files are planned again: kept
        if found is None or any(n in d for n in METRIC_FIELDS):     # (not past a map assigned since)
            found = d["_found"] = {}
        elif field_id in found:
            return found[field_id]
        buf, offsets, dec = lazy
        found[field_id] = out = _find_metrics(buf, offsets, dec, field_id, d)
        return out

    def __eq__(self, other):
        if not isinstance(other, DataFile):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELD_NAMES)

    __hash__ = None   # as DataFile's: mutable, compared by value

    def __reduce__(self):
        return DataFile, tuple(getattr(self, n) for n in _FIELD_NAMES)


def _find_metrics(buf, offsets, dec, field_id: int, assigned: dict) -> tuple:
    """``DataFile.metrics_of`` from the encoded maps of an entry (those in ``assigned`` from there)."""
    out = []
    for k in range(1, len(METRIC_FIELDS)):
        name = METRIC_FIELDS[k]
        if name in assigned:                                # assigned since it was read
            out.append((assigned[name] or {}).get(field_id))
        else:
            find, at = dec.find_metric[k], offsets[k]
            out.append(None if find is None or at is None else find(buf, at, field_id))
    return tuple(out)


class EncodedFile:
    """What a plan's filter reads of an entry's file before the entry is built (``content``,
    ``partition``, ``record_count``, ``metrics_of``): one object, moved from entry to entry."""

    __slots__ = ("content", "partition", "record_count", "_buf", "_offsets", "_dec")

    _NONE: dict = {}

    def metrics_of(self, field_id: int) -> tuple:
        return _find_metrics(self._buf, self._offsets, self._dec, field_id, self._NONE)


# partition types whose raw Avro value (as fastavro decodes it) is already the internal value
_IDENTITY_PARTITION_TYPES = frozenset({"int", "long", "string", "boolean"})


def read_manifest_entries(io_: FileIO, path: str, partition_type: StructType, spec_id: int,
                          inherited_snapshot_id: int, inherited_sequence_number: int) -> list[ManifestEntry]:
    """The entries of a manifest, like ``entries_from_records(read_manifest_raw(...)[1], ...)``, but
    each data file is a ``ManifestDataFile`` whose six metrics maps are decoded on first read."""
    return read_kept_entries(io_, path, partition_type, spec_id, inherited_snapshot_id,
                             inherited_sequence_number)[0]


def read_kept_entries(io_: FileIO, path: str, partition_type: StructType, spec_id: int,
                      inherited_snapshot_id: int, inherited_sequence_number: int,
                      keep=None) -> tuple[list[ManifestEntry], int]:
    """``read_manifest_entries`` and the number of entries the manifest holds. With ``keep`` (a
    predicate on an :class:`EncodedFile`), only the live entries whose file it keeps are built:
    a scan's filter judges each file from the encoded entry, and the rest cost no objects."""
    try:
        data = io_.read_bytes(path)
    except FileNotFoundError as e:
        raise CorruptMetadataError(path, "manifest file is missing") from e
    except (IsADirectoryError, ValueError) as e:   # e.g. a path with a NUL byte
        raise CorruptMetadataError(path, f"manifest file cannot be read ({type(e).__name__}: {e})") from e
    try:
        parsed = _container_blocks(data)
        dec = None
        if parsed is not None:
            meta, blocks = parsed
            dec = _entry_decoder(meta["avro.schema"].decode())
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest ({type(e).__name__}: {e})") from e
    if dec is None:
        _m, records = read_manifest_raw(io_, path)
        out = entries_from_records(records, partition_type, spec_id, inherited_snapshot_id,
                                   inherited_sequence_number)
        return out, len(out)
    # partition conversion: identity for the common case (the raw value is already internal)
    pfields = partition_type.fields
    wnames = set()
    ps = dec.partition_schema
    if isinstance(ps, dict):
        wnames = {f["name"] for f in ps.get("fields", [])}
    simple = all(str(f.field_type) in _IDENTITY_PARTITION_TYPES for f in pfields)
    keys = tuple(avro_name(f.name) if avro_name(f.name) in wnames else f.name for f in pfields)
    read_entry = dec.read_entry
    inherit_all = inherited_sequence_number == 0
    out = []
    append = out.append
    new = object.__new__
    n = 0
    view = EncodedFile()
    view._dec = dec
    try:
        for buf, count in blocks:
            p = 0
            view._buf = buf
            n += count
            for _ in range(count):
                r, p = read_entry(buf, p)
                df = r["data_file"]
                status = r["status"]
                if keep is not None:
                    if status == DELETED:
                        continue
                    prec = df.get("partition") or {}
                    view.partition = tuple([prec.get(k) for k in keys]) if simple else \
                        _partition_from_avro(partition_type, prec)
                    view.content, view.record_count, view._offsets = df.get("content", 0) or 0, \
                        df["record_count"], df["@"]
                    if not keep(view):
                        continue
                snap = r.get("snapshot_id")
                seq = r.get("sequence_number")
                fseq = r.get("file_sequence_number")
                if snap is None:
                    snap = inherited_snapshot_id
                if seq is None and (status == ADDED or inherit_all):
                    seq = inherited_sequence_number
                if fseq is None and (status == ADDED or inherit_all):
                    fseq = inherited_sequence_number
                prec = df.get("partition") or {}
                if simple:
                    part = tuple([prec.get(k) for k in keys])
                else:
                    part = _partition_from_avro(partition_type, prec)
                f = new(ManifestDataFile)
                f.__dict__ = {
                    "file_path": df["file_path"], "file_format": df["file_format"], "partition": part,
                    "record_count": df["record_count"], "file_size_in_bytes": df["file_size_in_bytes"],
                    "content": df.get("content", 0) or 0,
                    "key_metadata": df.get("key_metadata"), "split_offsets": df.get("split_offsets"),
                    "equality_ids": df.get("equality_ids"), "sort_order_id": df.get("sort_order_id"),
                    "spec_id": spec_id, "referenced_data_file": df.get("referenced_data_file"),
                    "first_row_id": df.get("first_row_id"), "content_offset": df.get("content_offset"),
                    "content_size_in_bytes": df.get("content_size_in_bytes"),
                    "_lazy": (buf, df["@"], dec),
                }
                append(ManifestEntry(status, snap, seq, fseq, f))
            if p != len(buf):
                raise ValueError("block length does not match its records")
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest ({type(e).__name__}: {e})") from e
    return out, n


