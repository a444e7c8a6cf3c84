"""The Thrift compact codec for Parquet footers and the VARIANT annotation pyarrow cannot write."""
import datetime as dt
import decimal
import io
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.core.parquet_footer import (
    BINARY, BOOL, DOUBLE, I8, I16, I32, I64, LIST, MAP, SET, STRUCT, UUID,
    Field, FooterPatchingSink, List, Map, Struct,
    annotate_variants, check_footer_patch, decode_struct, encode_struct, patch_file_footer, split_tail,
)

VARIANT_LT = Struct([Field(16, STRUCT, Struct([Field(1, I8, 1)]))])   # LogicalType{VARIANT: {1: i8 1}}


def footer_of(data: bytes) -> bytes:
    n = int.from_bytes(data[-8:-4], "little")
    assert data[-4:] == b"PAR1"
    return data[-8 - n:-8]


def write_bytes(table, **options) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **options)
    return buf.getvalue()


def fid(name, typ, nullable=True, field_id=None):
    md = {b"PARQUET:field_id": str(field_id).encode()} if field_id is not None else None
    return pa.field(name, typ, nullable=nullable, metadata=md)


def schema_elements(footer: bytes) -> list:
    return decode_struct(footer)[0].get(2).items


def element(footer: bytes, name: bytes, nth: int = 0) -> Struct:
    return [e for e in schema_elements(footer) if e.get(4) == name][nth]


# ---------------------------------------------------------------------------------------------
# the codec

def many_types_table(n=3000):
    return pa.table({
        "i": pa.array(range(n), pa.int64()),
        "i8": pa.array([i % 100 - 50 for i in range(n)], pa.int8()),
        "u32": pa.array(range(n), pa.uint32()),
        "f": pa.array([float(i) / 3 if i % 7 else float("nan") for i in range(n)], pa.float64()),
        "f32": pa.array([float(-i) for i in range(n)], pa.float32()),
        "b": pa.array([i % 3 == 0 for i in range(n)]),
        "s": pa.array([f"s{i % 10}" if i % 5 else None for i in range(n)]),
        "ls": pa.array([f"x{i}" * 3 for i in range(n)], pa.large_string()),
        "bin": pa.array([bytes([i % 256]) * 20 for i in range(n)], pa.binary()),
        "fsb": pa.array([i.to_bytes(16, "big") for i in range(n)], pa.binary(16)),
        "dec": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(10, 2)),
        "dec38": pa.array([decimal.Decimal(i) for i in range(n)], pa.decimal128(38, 0)),
        "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(n)], pa.date32()),
        "t": pa.array([dt.time(i % 24, 0) for i in range(n)], pa.time64("us")),
        "ts": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(seconds=i) for i in range(n)], pa.timestamp("us")),
        "tstz": pa.array([dt.datetime(2020, 1, 1)] * n, pa.timestamp("ns", tz="UTC")),
        "dict": pa.array([f"k{i % 4}" for i in range(n)]).dictionary_encode(),
        "l": pa.array([[i, None, -i] if i % 4 else None for i in range(n)], pa.list_(pa.int32())),
        "ll": pa.array([[[i], []] for i in range(n)], pa.list_(pa.list_(pa.int16()))),
        "m": pa.array([{"a": i, "b": None} for i in range(n)], pa.map_(pa.string(), pa.int64())),
        "st": pa.array([{"x": i, "y": None, "z": {"q": "w"}} for i in range(n)],
                       pa.struct([("x", pa.int16()), ("y", pa.float64()), ("z", pa.struct([("q", pa.string())]))])),
    })


FOOTER_CASES = {
    "defaults": {},
    "row_groups_page_index_bloom": dict(row_group_size=500, write_page_index=True, bloom_filter_options={"s": True},
                                         write_page_checksum=True),
    "no_stats_no_dict_v2_pages": dict(write_statistics=False, use_dictionary=False, data_page_version="2.0",
                                      compression="zstd"),
    "sorted_small_pages": dict(row_group_size=1000, sorting_columns=[pq.SortingColumn(0)], data_page_size=512,
                               compression="none"),
}


@pytest.mark.parametrize("case", sorted(FOOTER_CASES))
def test_round_trip_is_byte_exact_on_pyarrow_footers(case):
    table = many_types_table().replace_schema_metadata({"icefloe": "x" * 40, "k": ""})
    footer = footer_of(write_bytes(table, **FOOTER_CASES[case]))
    tree, end = decode_struct(footer)
    assert end == len(footer)
    assert encode_struct(tree) == footer
    assert [f.id for f in tree.fields][:4] == [1, 2, 3, 4]                 # version, schema, num_rows, row groups
    assert tree.get(3) == table.num_rows
    kv = {e.get(1): e.get(2) for e in tree.get(5).items}
    assert kv[b"icefloe"] == b"x" * 40 and kv[b"k"] == b""


def test_round_trip_on_a_footer_with_many_row_groups_and_columns():
    table = pa.table({f"c{i}": pa.array(range(2000), pa.int64()) for i in range(40)})
    footer = footer_of(write_bytes(table, row_group_size=20))
    tree, _ = decode_struct(footer)
    assert len(tree.get(4).items) == 100
    assert encode_struct(tree) == footer


def test_every_compact_type_round_trips():
    inner = Struct([Field(1, BOOL, False), Field(2, BINARY, b"")])
    tree = Struct([
        Field(1, BOOL, True), Field(2, BOOL, False),
        Field(3, I8, -128), Field(4, I8, 127), Field(5, I16, -32768), Field(6, I32, 2**31 - 1),
        Field(7, I32, -(2**31)), Field(8, I64, -(2**63)), Field(9, I64, 2**63 - 1), Field(10, DOUBLE, -1.5),
        Field(11, BINARY, "é".encode() * 100),
        Field(40, LIST, List(I32, list(range(-20, 20)))),                  # long-form field id and list size
        Field(41, LIST, List(I64, [])),
        Field(42, SET, List(BINARY, [b"a", b"b"])),
        Field(43, LIST, List(BOOL, [True, False, True])),
        Field(44, LIST, List(LIST, [List(I8, [1, -1]), List(I8, [])])),
        Field(45, MAP, Map(0, 0, [])),
        Field(46, MAP, Map(BINARY, STRUCT, [(b"k", inner), (b"l", Struct([]))])),
        Field(47, LIST, List(STRUCT, [inner] * 16)),
        Field(48, UUID, bytes(range(16))),
        Field(49, LIST, List(DOUBLE, [0.0, -0.0, float("inf")])),
        Field(3, I32, 5),                                                   # a field id smaller than the last
        Field(-1, I16, 7),
    ])
    data = encode_struct(tree)
    back, end = decode_struct(data)
    assert end == len(data) and back == tree and encode_struct(back) == data


def test_known_encodings():
    assert encode_struct(Struct([Field(1, I32, 1)])) == b"\x15\x02\x00"
    assert encode_struct(Struct([Field(1, BOOL, True), Field(2, BOOL, False)])) == b"\x11\x12\x00"
    assert encode_struct(Struct([Field(20, I64, -1)])) == b"\x06\x28\x01\x00"
    assert encode_struct(Struct([Field(1, I32, -25200)])) == b"\x15\xdf\x89\x03\x00"   # zigzag 50399
    assert encode_struct(Struct([Field(1, LIST, List(BINARY, [b"ab"]))])) == b"\x19\x18\x02ab\x00"
    assert decode_struct(b"\x00\x15\x02\x00", 1) == (Struct([Field(1, I32, 1)]), 4)


def test_unknown_fields_are_kept_and_pyarrow_still_reads_the_file():
    data = write_bytes(pa.table({"a": [1, 2], "b": ["x", None]}))
    before, footer = split_tail(data)
    tree, _ = decode_struct(footer)
    tree.fields.append(Field(99, STRUCT, Struct([Field(1, BINARY, b"future"), Field(2, LIST, List(I32, [1]))])))
    element_a = tree.get(2).items[1]
    element_a.fields.append(Field(77, I64, 123))
    footer2 = encode_struct(tree)
    data2 = before + footer2 + len(footer2).to_bytes(4, "little") + b"PAR1"
    assert pq.read_table(io.BytesIO(data2)).to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
    again, _ = decode_struct(footer2)
    assert again == tree and encode_struct(again) == footer2
    patched = annotate_variants(footer2, [])
    assert patched == footer2


@pytest.mark.parametrize("bad", [b"", b"\x15", b"\x18\x05ab", b"\x19\xf5", b"\x1e\x00", b"\x19\x19" * 100])
def test_truncated_unknown_or_too_deep_data_raises_value_error(bad):
    with pytest.raises(ValueError):
        decode_struct(bad)


# ---------------------------------------------------------------------------------------------
# the VARIANT annotation and the sink

VARIANT = pa.struct([pa.field("metadata", pa.binary(), nullable=False), pa.field("value", pa.binary(), nullable=False)])
PATHS = [("v",), ("st", "v"), ("l", "list", "element")]

# parse_json('{"a":1,"b":[true,null,"x"]}') and parse_json('[1,2]') as Spark 4 encodes them
MD1, VAL1 = b"\x01\x02\x00\x01\x02ab", b"\x02\x02\x00\x01\x00\x02\x0c\x0c\x01\x03\x03\x00\x01\x02\x04\x04\x00\x05x"
MD2, VAL2 = b"\x01\x00\x00", b"\x03\x02\x00\x02\x04\x0c\x01\x0c\x02"


def variant_schema():
    return pa.schema([
        fid("id", pa.int64(), False, 1),
        fid("v", VARIANT, True, 2),
        fid("st", pa.struct([fid("x", pa.int32(), True, 4), fid("v", VARIANT, True, 5)]), True, 3),
        fid("l", pa.list_(fid("element", VARIANT, True, 7)), True, 6),
    ])


def variant_table(values):
    rows = [{"id": i, "v": v, "st": {"x": i, "v": v}, "l": [v, None]} for i, v in enumerate(values)]
    return pa.Table.from_pylist(rows, schema=variant_schema())


def default_table():
    v1, v2 = {"metadata": MD1, "value": VAL1}, {"metadata": MD2, "value": VAL2}
    return variant_table([v1, None, v2] * 700)


def write_patched(raw, table, paths=PATHS, row_group_size=None, **options):
    sink = FooterPatchingSink(raw, lambda footer: annotate_variants(footer, paths))
    writer = pq.ParquetWriter(sink, table.schema, **options)
    writer.write_table(table, row_group_size=row_group_size)
    sink.hold()
    writer.close()
    return sink, sink.finish()


def test_annotated_file_reads_back_with_variant_groups(tmp_path):
    table = default_table()
    options = dict(write_page_index=True, row_group_size=1000, bloom_filter_options={"id": True})
    path = tmp_path / "v.parquet"
    with open(path, "wb") as raw:
        sink, size = write_patched(raw, table, **options)
    assert size == sink.size == os.path.getsize(path) == sink.tell()
    pf = pq.ParquetFile(path)
    text = str(pf.schema)
    assert "optional group field_id=2 v (Variant(1))" in text
    assert "optional group field_id=5 v (Variant(1))" in text
    assert "optional group field_id=7 element (Variant(1))" in text
    assert "field_id=1 id;" in text and "field_id=4 x;" in text and "group field_id=6 l (List)" in text
    assert pq.read_table(path).equals(table)

    plain = write_bytes(table, **options)
    got = path.read_bytes()
    before, footer = split_tail(got)
    plain_before, plain_footer = split_tail(plain)
    assert before == plain_before                              # data, page indexes, bloom filters untouched
    plain_md, got_md = pq.ParquetFile(io.BytesIO(plain)).metadata, pf.metadata
    assert got_md.num_row_groups == plain_md.num_row_groups == 3
    for rg in range(got_md.num_row_groups):
        assert got_md.row_group(rg).to_dict() == plain_md.row_group(rg).to_dict()   # stats, offsets, sizes
    # only the schema list changed: the rest of the footer is kept byte for byte
    got_tree, plain_tree = decode_struct(footer)[0], decode_struct(plain_footer)[0]
    assert [f for f in got_tree.fields if f.id != 2] == [f for f in plain_tree.fields if f.id != 2]
    for name, nth in ((b"v", 0), (b"v", 1), (b"element", 0)):
        assert element(footer, name, nth).get(10) == VARIANT_LT
        assert element(plain_footer, name, nth).get(10) is None
    assert len(footer) == len(plain_footer) + 3 * 7             # 7 bytes per annotation


def test_sink_passes_data_through_and_holds_only_the_end():
    class Raw(io.RawIOBase):                                   # records each write; no seek, no tell
        def __init__(self):
            self.chunks = []

        def writable(self):
            return True

        def write(self, b):
            self.chunks.append(bytes(b))
            return len(b)

    table = default_table()
    raw = Raw()
    sink = FooterPatchingSink(raw, lambda footer: annotate_variants(footer, PATHS))
    writer = pq.ParquetWriter(sink, table.schema, write_page_index=True)
    writer.write_table(table)
    written = sum(map(len, raw.chunks))
    assert written == sink.tell() > 1000                       # the row group went straight through
    sink.hold()
    writer.close()
    assert sum(map(len, raw.chunks)) == written               # the end is held
    assert sink.tell() > written
    size = sink.finish()
    data = b"".join(raw.chunks)
    assert size == len(data) and sink.finish() == size
    assert pq.read_table(io.BytesIO(data)).equals(table)
    with pytest.raises(ValueError):
        sink.write(b"x")


def test_patch_file_footer_matches_the_sink():
    table = default_table()
    raw = io.BytesIO()
    write_patched(raw, table)
    whole = patch_file_footer(write_bytes(table), lambda footer: annotate_variants(footer, PATHS))
    assert whole == raw.getvalue()
    assert patch_file_footer(whole, lambda footer: annotate_variants(footer, PATHS)) == whole   # idempotent


def test_a_variant_inside_a_map_value():
    schema = pa.schema([fid("m", pa.map_(pa.string(), VARIANT), True, 1)])
    table = pa.Table.from_pylist([{"m": [("k", {"metadata": MD2, "value": VAL2})]}], schema=schema)
    data = patch_file_footer(write_bytes(table), lambda f: annotate_variants(f, [("m", "key_value", "value")]))
    assert "group field_id=-1 value (Variant(1))" in str(pq.ParquetFile(io.BytesIO(data)).schema)
    assert pq.read_table(io.BytesIO(data)).equals(table)


@pytest.mark.parametrize("path, message", [
    (("nope",), "no field 'nope'"),
    (("id",), "primitive"),
    (("st",), "not metadata and value"),
    (("st", "v", "value"), "primitive"),
    (("v", "metadata"), "primitive"),
    (("l",), "not metadata and value"),
    (("l", "element"), "no field 'element'"),
    ((), "empty"),
    ("v", "string"),
])
def test_wrong_paths_raise_value_error(path, message):
    footer = footer_of(write_bytes(default_table()))
    with pytest.raises(ValueError, match=message):
        annotate_variants(footer, [("v",), path])


@pytest.mark.parametrize("fields", [
    [("metadata", pa.binary(), False), ("value", pa.binary(), True)],                # value optional
    [("metadata", pa.string(), False), ("value", pa.binary(), False)],               # metadata annotated UTF8
    [("metadata", pa.binary(), False), ("value", pa.binary(), False), ("typed_value", pa.int64(), True)],
    [("metadata", pa.int64(), False), ("value", pa.binary(), False)],
])
def test_groups_that_are_no_unshredded_variant_are_refused(fields):
    typ = pa.struct([pa.field(n, t, nullable=nl) for n, t, nl in fields])
    footer = footer_of(write_bytes(pa.table({"v": pa.array([], typ)})))
    with pytest.raises(ValueError, match="variant path 'v'"):
        annotate_variants(footer, [("v",)])


def test_a_wrong_path_fails_before_anything_is_written_or_leaves_no_footer():
    table = default_table()
    bad = [("v",), ("st", "x")]

    raw = io.BytesIO()
    with pytest.raises(ValueError, match="'st.x'"):
        check_footer_patch(table.schema, lambda footer: annotate_variants(footer, bad), write_page_index=True)
    assert raw.getvalue() == b""                               # checked before the writer is opened
    check_footer_patch(table.schema, lambda footer: annotate_variants(footer, PATHS), write_page_index=True)

    # without the check, finish() raises and writes none of the file's end: no footer, no PAR1
    with pytest.raises(ValueError, match="'st.x'"):
        write_patched(raw, table, paths=bad)
    data = raw.getvalue()
    assert data[:4] == b"PAR1" and data[-4:] != b"PAR1"
    assert data == split_tail(write_bytes(table))[0][:len(data)]
    with pytest.raises(pa.ArrowInvalid):
        pq.ParquetFile(io.BytesIO(data))


def test_finish_validates_the_held_bytes():
    sink = FooterPatchingSink(io.BytesIO(), lambda footer: footer)
    with pytest.raises(ValueError, match="without hold"):
        sink.finish()
    sink.hold()
    sink.write(b"footer" + (100).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(ValueError, match="length 100"):
        sink.finish()
    sink = FooterPatchingSink(io.BytesIO(), lambda footer: footer)
    sink.hold()
    sink.write(b"footer" + (6).to_bytes(4, "little") + b"PARE")
    with pytest.raises(ValueError, match="PAR1"):
        sink.finish()
    raw = io.BytesIO()
    sink = FooterPatchingSink(raw, lambda footer: footer.upper())
    sink.write(b"PAR1data")
    sink.hold()
    sink.write(b"foot")
    sink.write((4).to_bytes(4, "little") + b"PAR1")
    assert sink.finish() == 20 and raw.getvalue() == b"PAR1dataFOOT\x04\x00\x00\x00PAR1"


# ---------------------------------------------------------------------------------------------
# Spark: the reader the annotation is for, and a writer of it

def test_spark_reads_the_annotated_file_as_variant(spark, tmp_path):
    from pyspark.sql.types import StructType, VariantType

    row = spark.sql("""select parse_json('{"a":1,"b":[true,null,"x"]}') as v1, parse_json('[1,2]') as v2""").collect()[0]
    v1 = {"metadata": bytes(row.v1.metadata), "value": bytes(row.v1.value)}
    v2 = {"metadata": bytes(row.v2.metadata), "value": bytes(row.v2.value)}
    assert (v1["metadata"], v1["value"], v2["metadata"], v2["value"]) == (MD1, VAL1, MD2, VAL2)
    table = variant_table([v1, None, v2])

    patched, plain = tmp_path / "patched.parquet", tmp_path / "plain.parquet"
    with open(patched, "wb") as raw:
        write_patched(raw, table, write_page_index=True)
    pq.write_table(table, plain)

    df = spark.read.parquet(str(patched))
    assert isinstance(df.schema["v"].dataType, VariantType)
    assert isinstance(df.schema["st"].dataType["v"].dataType, VariantType)
    assert isinstance(df.schema["l"].dataType.elementType, VariantType)
    rows = df.orderBy("id").selectExpr("id", "to_json(v) j", "to_json(st.v) sj", "to_json(l[0]) lj").collect()
    expected = ['{"a":1,"b":[true,null,"x"]}', None, "[1,2]"]
    assert [r.id for r in rows] == [0, 1, 2]
    assert [r.j for r in rows] == [r.sj for r in rows] == [r.lj for r in rows] == expected
    assert isinstance(spark.read.parquet(str(plain)).schema["v"].dataType, StructType)   # without the annotation


def test_spark_writes_the_same_annotation(spark, tmp_path):
    out = tmp_path / "spark"
    spark.sql("""select 1 as id, parse_json('{"a":1}') as v, named_struct('x', 2, 'v', parse_json('[1]')) as st""") \
        .coalesce(1).write.parquet(str(out))
    (path,) = [p for p in out.iterdir() if p.suffix == ".parquet"]
    footer = footer_of(path.read_bytes())
    tree, _ = decode_struct(footer)
    assert encode_struct(tree) == footer                       # parquet-java's footer round-trips too
    assert b"parquet-mr" in tree.get(6)
    groups = [e for e in tree.get(2).items if e.get(4) == b"v"]
    assert len(groups) == 2
    for g in groups:
        assert g.get(10) == VARIANT_LT                         # LogicalType member 16, specification_version 1
    assert annotate_variants(footer, [("v",), ("st", "v")]) == footer
