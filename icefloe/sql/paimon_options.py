"""Paimon's dynamic options in Spark SQL: ``SET spark.paimon.<key> = v`` for every Paimon table,
``SET spark.paimon.<catalog>.<db>.<table>.<key> = v`` for one (each of the three parts may be
``*``), the table's form winning over the global one -- as Paimon's Spark connector reads its
session's ``spark.paimon.`` settings (Spark docs, "Auxiliary Statements: Set / Reset").

icefloe honours the options of a batch read's starting point (:data:`SCAN_KEYS`), the write options
of :data:`WRITE_KEYS` (its file options: the statements writing a table write its files with them, as
Paimon's connector copies the table with them; the schema is not changed) and takes the
options Paimon's audit (``icefloe.paimon.options.AUDIT``) finds nothing to do for; any other key
under ``spark.paimon.`` is an error naming it and why, when it is set and when a read would use it,
never a setting silently ignored.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, Optional

from icefloe.errors import SchemaError
from icefloe.paimon.options import ACCEPTED, REFUSED, audit, parse_memory_size
from icefloe.sql.errors import SqlError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: the tables a table-scoped option names: (catalog, db, table), each may be ``*``
Scope = tuple[str, str, str]

PREFIX = "spark.paimon."
SCAN_KEYS = ("scan.snapshot-id", "scan.tag-name", "scan.timestamp-millis", "scan.timestamp", "scan.version",
             "scan.watermark")
# Paimon's Spark write option: INSERT ... BY NAME adds the query's new columns to the table first
MERGE_SCHEMA = "write.merge-schema"
# the table options a write takes from the session: its files' format, codec, row group or stripe and file sizes
FILE_KEYS = ("file.format", "file.compression", "file.block-size", "parquet.block.size", "orc.stripe.size",
             "target-file-size")
WRITE_KEYS = (MERGE_SCHEMA, *FILE_KEYS)
_SET = re.compile(r"^\s*SET\s+(.+?)\s*=\s*(.*?)\s*$", re.IGNORECASE | re.DOTALL)
_RESET = re.compile(r"^\s*RESET\s+(\S+)\s*$", re.IGNORECASE)


def _taken(key: str) -> bool:
    """Whether a session may set Paimon option ``key``: a read's starting point (honoured), or an option
    with nothing for icefloe to do (accepted, as in a table's options)."""
    found = audit(key)
    return key in SCAN_KEYS or key in WRITE_KEYS or (found is not None and found[0] == ACCEPTED)


def split_key(conf_key: str) -> tuple[Optional[Scope], str]:
    """``spark.paimon.[<catalog>.<db>.<table>.]<key>`` -> (scope or None, key); an option icefloe
    does not honour is a :class:`SqlError` naming it and why (the audit of Paimon's options)."""
    rest = conf_key[len(PREFIX):]
    if _taken(rest):
        return None, rest
    parts = rest.split(".", 3)
    if len(parts) == 4 and all(parts[:3]) and _taken(parts[3]):
        return (parts[0], parts[1], parts[2]), parts[3]
    key = parts[3] if len(parts) == 4 and audit(rest) is None and \
        (audit(parts[3]) is not None or parts[3].startswith("scan.")) else rest
    found = audit(key)
    if found is not None and found[0] == REFUSED:
        why = found[1]
    elif found is not None:
        why = ("icefloe takes it as a table option (ALTER TABLE ... SET TBLPROPERTIES), not as a session's "
               "dynamic option")
    elif key == MERGE_SCHEMA + ".explicit-cast":
        why = (f"icefloe's {MERGE_SCHEMA} adds the query's new columns; it changes no column's type, so casts "
               "that narrow or convert a column are not made")
    else:
        why = "it is not one of Paimon's table options"
    raise SqlError(f"Paimon option {key!r} (set as {conf_key}) is not honoured by icefloe's reads and writes: {why}; "
                   f"the dynamic options icefloe acts on are {', '.join(SCAN_KEYS + WRITE_KEYS)} (as spark.paimon.<key> or "
                   "spark.paimon.<catalog>.<db>.<table>.<key>, each part may be *)")


def set_or_reset(spark: SparkSession, text: str) -> Optional[DataFrame]:
    """``SET spark.paimon.<key> = v`` and ``RESET spark.paimon.<key>`` (Spark's own SET refuses the
    ``*`` of Paimon's table patterns): a key icefloe would not honour is refused; the DataFrame
    Spark's SET returns, or None for any other SET/RESET (Spark runs those)."""
    m = _SET.match(text)
    if m and m.group(1).strip("`").lower().startswith(PREFIX):
        key, value = m.group(1).strip("`"), m.group(2).strip("`")
        _check_value(split_key(key)[1], value, key)
        spark.conf.set(key, value)
        return spark.createDataFrame([(key, value)], "key string, value string")
    m = _RESET.match(text)
    if m and m.group(1).strip("`").lower().startswith(PREFIX):
        spark.conf.unset(m.group(1).strip("`"))
        return spark.createDataFrame([], "key string, value string")
    return None


def _check_value(key: str, value: str, conf_key: str) -> None:
    """A file option's value that no table's files could take is an error at SET (the rest, such as a
    codec the table's format lacks, at the statement writing the table)."""
    try:
        if key == "file.format" and value.strip().lower() not in ("parquet", "orc", "avro"):
            raise SchemaError(f"file.format {value!r} is not supported; icefloe writes parquet, orc or avro")
        if key in FILE_KEYS and key.endswith("size") and parse_memory_size(value) <= 0:
            raise SchemaError(f"{key} must be a positive size, got {value!r}")
    except SchemaError as e:
        raise SqlError(f"SET {conf_key}: {e}") from None


def file_options(confs: Mapping[str, str], catalog: str, name: str) -> dict[str, str]:
    """The file options (:data:`FILE_KEYS`) the session sets for writes of table ``name`` of ``catalog``."""
    return {k: v for k, v in table_options(confs, catalog, name).items() if k in FILE_KEYS}


def _matches(scope: Scope, catalog: str, db: str, table: str) -> bool:
    return all(p == "*" or p.lower() == want.lower() for p, want in zip(scope, (catalog, db, table)))


def table_options(confs: Mapping[str, str], catalog: str, name: str) -> dict[str, str]:
    """The dynamic options of table ``name`` (``db.table``) of ``catalog``: global ones, overridden by
    those naming the table."""
    db, _, table = name.rpartition(".")
    out: dict[str, str] = {}
    own: dict[str, str] = {}
    for conf_key, value in confs.items():
        if not conf_key.lower().startswith(PREFIX):
            continue
        scope, key = split_key(conf_key)
        if scope is None:
            out[key] = value
        elif _matches(scope, catalog, db, table):
            own[key] = value
    out.update(own)
    return out


def read_kwargs(options: Mapping[str, str], table_name: str) -> dict[str, Any]:
    """The ``to_spark`` arguments of a read's starting point from its scan options."""
    given = {k: v for k, v in options.items() if k in SCAN_KEYS and v not in (None, "")}
    if not given:
        return {}
    if len(given) > 1:
        raise SqlError(f"dynamic options {', '.join(sorted(given))} of {table_name} each set where a read of it "
                       "starts; set only one")
    key, value = next(iter(given.items()))
    value = str(value).strip()
    try:
        if key == "scan.snapshot-id":
            return {"snapshot_id": int(value)}
        if key == "scan.timestamp-millis":
            return {"as_of": int(value)}
        if key == "scan.watermark":
            return {"watermark": int(value)}
    except ValueError:
        raise SqlError(f"dynamic option {key} of {table_name} must be a number, got {value!r}") from None
    if key == "scan.tag-name":
        return {"ref": value}
    if key == "scan.timestamp":
        return {"as_of": value}
    return {"version": value}                 # scan.version: a tag name, a snapshot id or watermark-<ms>


def merge_schema(confs: Mapping[str, str], catalog: str, name: str) -> bool:
    """Whether ``SET spark.paimon.[<catalog>.<db>.<table>.]write.merge-schema = true`` holds for table
    ``name`` of ``catalog``."""
    value = table_options(confs, catalog, name).get(MERGE_SCHEMA)
    if value is None:
        return False
    v = str(value).strip().lower()
    if v not in ("true", "false"):
        raise SqlError(f"dynamic option {MERGE_SCHEMA} of {name} must be true or false, got {value!r}")
    return v == "true"
