# pyright: strict
"""The options of a Paimon chain table (``chain-table.enabled``) and Paimon's rules for them.

A chain table is a partitioned primary-key table with two branches besides main: a snapshot branch
holding full partitions (``scan.fallback-snapshot-branch``) and a delta branch holding each
partition's changes (``scan.fallback-delta-branch``). The rules below are the ones Paimon's schema
validation applies whenever such a table's schema is created or changed (``SchemaValidation
.validateChainTable``, release 1.4.2), with Paimon's messages; the reads and writes are in
``icefloe.paimon.chain``.
"""
from __future__ import annotations

import re
from typing import Mapping, Optional, Sequence

from icefloe.errors import SchemaError

ENABLED = "chain-table.enabled"
CHAIN_PARTITION_KEYS = "chain-table.chain-partition-keys"
SNAPSHOT_BRANCH = "scan.fallback-snapshot-branch"
DELTA_BRANCH = "scan.fallback-delta-branch"
TIMESTAMP_PATTERN = "partition.timestamp-pattern"
TIMESTAMP_FORMATTER = "partition.timestamp-formatter"


def enabled(options: Mapping[str, str]) -> bool:
    return str(options.get(ENABLED, "false")).strip().lower() == "true"


def chain_partition_keys(options: Mapping[str, str]) -> Optional[list[str]]:
    """``chain-table.chain-partition-keys`` as Paimon reads it: None when unset or blank (every
    partition key is a chain key), else the comma-separated names, trimmed (as Java's
    ``String.split``, trailing empty pieces dropped)."""
    raw = options.get(CHAIN_PARTITION_KEYS)
    if raw is None or not raw.strip():
        return None
    pieces = raw.split(",")
    while pieces and pieces[-1] == "":
        pieces.pop()
    return [p.strip() for p in pieces]


def chain_keys(options: Mapping[str, str], partition_keys: Sequence[str]) -> list[str]:
    """The partition keys that form the chain (a suffix of the partition keys); the keys before
    them are the group keys, each group of values a chain of its own."""
    keys = chain_partition_keys(options)
    return list(partition_keys) if keys is None else keys


def branches(options: Mapping[str, str], branch: Optional[str]) -> Optional[tuple[str, str]]:
    """(snapshot branch, delta branch) when a read of ``branch`` (None: main) is a chain read, as
    Paimon makes it: the table is a chain table, both fallback branches are named, and ``branch`` is
    neither of them (a read of the snapshot or delta branch itself is a plain read)."""
    if not enabled(options):
        return None
    snapshot, delta = options.get(SNAPSHOT_BRANCH), options.get(DELTA_BRANCH)
    if snapshot is None or delta is None:
        return None
    if branch is not None and branch.lower() in (snapshot.lower(), delta.lower()):
        return None
    return snapshot, delta


def is_branch(options: Mapping[str, str], branch: Optional[str], key: str) -> bool:
    """Whether ``branch`` is the chain table's branch named by option ``key`` (``SNAPSHOT_BRANCH``
    or ``DELTA_BRANCH``), by the branch's own options."""
    named = options.get(key)
    return enabled(options) and branch is not None and named is not None and named.lower() == branch.lower()


_JAVA_FIELDS = {"yyyy": "%Y", "uuuu": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}


def python_time_format(formatter: str) -> str:
    """A Java ``DateTimeFormatter`` pattern (``yyyyMMdd``, ``yyyy-MM-dd HH:mm:ss``, quoted
    literals) as a ``strftime``/``strptime`` format. Fields other than year, month, day, hour,
    minute and second are refused."""
    out: list[str] = []
    i = 0
    while i < len(formatter):
        c = formatter[i]
        if c == "'":
            j = formatter.find("'", i + 1)
            if j < 0:
                raise SchemaError(f"{TIMESTAMP_FORMATTER} {formatter!r} has an unclosed quote")
            out.append((formatter[i + 1:j] or "'").replace("%", "%%"))
            i = j + 1
        elif c.isalpha():
            token = re.match(f"{re.escape(c)}+", formatter[i:])
            assert token is not None
            if token.group(0) not in _JAVA_FIELDS:
                raise SchemaError(f"{TIMESTAMP_FORMATTER} {formatter!r}: icefloe's chain reads take the fields "
                                  f"yyyy, MM, dd, HH, mm and ss, not {token.group(0)!r}")
            out.append(_JAVA_FIELDS[token.group(0)])
            i += len(token.group(0))
        else:
            out.append(c.replace("%", "%%"))
            i += 1
    return "".join(out)


def check_options(options: Mapping[str, str], primary_keys: Sequence[str], partition_keys: Sequence[str],
                  table: str = "") -> None:
    """Paimon's rules for a chain table (nothing to check unless ``chain-table.enabled``)."""
    if not enabled(options):
        return
    where = f"table {table}: " if table else ""

    def require(ok: bool, message: str) -> None:
        if not ok:
            raise SchemaError(where + message)

    require(str(options.get("type", "table")).strip().lower() == "table", "Chain table must be table type.")
    require(bool(primary_keys), "Primary key is required for chain table.")
    require(bool(partition_keys), "Chain table must be partition table.")
    try:
        bucket = int(str(options.get("bucket", "-1")).strip())
    except ValueError:
        bucket = -1
    require(bucket > 0, "Bucket number must be greater than 0 for chain table.")
    require(bool(options.get("sequence.field")), "Sequence field is required for chain table.")
    producer = str(options.get("changelog-producer", "none")).strip().lower()
    require(producer in ("none", "input"), "Changelog producer must be none or input for chain table.")
    require(str(options.get("deletion-vectors.enabled", "false")).strip().lower() != "true",
            "Chain table do not support enable deletion vector")
    require(options.get(TIMESTAMP_PATTERN) is not None, "Partition timestamp pattern is required for chain table.")
    formatter = options.get(TIMESTAMP_FORMATTER)
    require(formatter is not None, "Partition timestamp formatter is required for chain table.")
    keys = chain_partition_keys(options)
    if keys is not None:
        require(bool(keys), f"{CHAIN_PARTITION_KEYS} must not be empty.")
        start = len(partition_keys) - len(keys)
        require(start >= 0 and list(partition_keys[start:]) == keys,
                f"{CHAIN_PARTITION_KEYS} must be a contiguous suffix of the table's partition keys. "
                f"Partition keys: {list(partition_keys)}, chain partition keys: {keys}.")
    assert formatter is not None
    try:
        python_time_format(formatter)
    except SchemaError as e:
        raise SchemaError(where + str(e)) from None


__all__ = ["ENABLED", "CHAIN_PARTITION_KEYS", "SNAPSHOT_BRANCH", "DELTA_BRANCH", "enabled", "chain_keys",
           "chain_partition_keys", "branches", "is_branch", "check_options", "python_time_format"]
