"""Types are told apart by the type model, never by their printed form: a field *named* like a type
(``t_ns``) does not make its struct a nanosecond type."""
from icefloe.core.types import (
    DoubleType, FloatType, ListType, LongType, MapType, NestedField, Schema, StringType, StructType, TimestampType,
    TimestamptzType, contains_nanos, is_floating, is_nanos,
)
from icefloe.iceberg.schema import nanos_as_long


def test_is_nanos_by_precision_not_text():
    assert is_nanos(TimestampType(9)) and is_nanos(TimestamptzType(9))
    assert not is_nanos(TimestampType()) and not is_nanos(TimestamptzType(3))
    assert not is_nanos(LongType())


def test_contains_nanos_ignores_field_names():
    named_like = StructType([NestedField(2, "t_ns", LongType())])
    assert "_ns" in str(named_like)                 # what the old text test looked at
    assert not contains_nanos(named_like)
    assert contains_nanos(ListType(3, TimestamptzType(9)))
    assert contains_nanos(MapType(4, StringType(), 5, StructType([NestedField(6, "x", TimestampType(9))])))


def test_is_floating():
    assert is_floating(FloatType()) and is_floating(DoubleType())
    assert not is_floating(LongType())


def test_nanos_as_long_keeps_defaults_of_a_struct_whose_field_is_named_ns():
    schema = Schema([
        NestedField(1, "ts", TimestamptzType(9), initial_default=0, write_default=0),
        NestedField(2, "s", StructType([NestedField(3, "t_ns", LongType())]),
                    initial_default={}, write_default={}),
    ])
    out = nanos_as_long(schema)
    ts, s = out.fields
    assert ts.field_type == LongType() and ts.initial_default is None and ts.write_default is None
    assert s.field_type == schema.fields[1].field_type
    assert s.initial_default == {} and s.write_default == {}


def test_a_row_level_change_leaves_a_struct_whose_field_is_named_ns_alone():
    from icefloe.spark.iceberg_nanos import _ns_restored

    named_like = StructType([NestedField(2, "t_ns", LongType())])
    assert _ns_restored("`s`", "`raw`", named_like) == "`s`"
    assert _ns_restored("`s`", "`raw`", StructType([NestedField(3, "t", TimestampType(9))])) != "`s`"
