"""Table options (Paimon's ``CoreOptions``): the names, defaults and value syntax.

Options live in the schema file as strings. Sizes are Paimon memory sizes
(``8 mb``, ``16MB``, ``1024``), durations are Paimon durations (``1 h``,
``30 min``, ``10 s``, ``100 ms``). Only the options icefloe acts on are listed;
every other option is kept in the schema untouched.
"""
from __future__ import annotations

import re
from typing import Mapping, Optional

from icefloe.errors import SchemaError

BUCKET = "bucket"
BUCKET_KEY = "bucket-key"
FILE_FORMAT = "file.format"
FILE_COMPRESSION = "file.compression"
MANIFEST_COMPRESSION = "manifest.compression"
MANIFEST_TARGET_FILE_SIZE = "manifest.target-file-size"
MANIFEST_MERGE_MIN_COUNT = "manifest.merge-min-count"
MANIFEST_FULL_COMPACTION_SIZE = "manifest.full-compaction-threshold-size"
TARGET_FILE_SIZE = "target-file-size"
SNAPSHOT_NUM_RETAINED_MIN = "snapshot.num-retained.min"
SNAPSHOT_NUM_RETAINED_MAX = "snapshot.num-retained.max"
SNAPSHOT_TIME_RETAINED = "snapshot.time-retained"
COMMIT_MAX_RETRIES = "commit.max-retries"
COMMIT_TIMEOUT = "commit.timeout"
COMMIT_MIN_RETRY_WAIT = "commit.min-retry-wait"
COMMIT_MAX_RETRY_WAIT = "commit.max-retry-wait"
PARTITION_DEFAULT_NAME = "partition.default-name"
PARTITION_LEGACY_NAME = "partition.legacy-name"
DATA_FILE_PREFIX = "data-file.prefix"
STATS_MODE = "metadata.stats-mode"
PRIMARY_KEY = "primary-key"
WRITE_ONLY = "write-only"   # true: commits never expire snapshots (a separate job does)
CHANGELOG_PRODUCER = "changelog-producer"
CHANGELOG_PRODUCERS = ("none", "input", "lookup", "full-compaction")
CHANGELOG_FILE_PREFIX = "changelog-file.prefix"
CHANGELOG_ROW_DEDUPLICATE = "changelog-producer.row-deduplicate"
DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"

DEFAULTS = {
    BUCKET: "-1",
    FILE_FORMAT: "parquet",
    FILE_COMPRESSION: "zstd",
    MANIFEST_COMPRESSION: "zstd",
    MANIFEST_TARGET_FILE_SIZE: "8 mb",
    MANIFEST_MERGE_MIN_COUNT: "30",
    MANIFEST_FULL_COMPACTION_SIZE: "16 mb",
    TARGET_FILE_SIZE: "128 mb",  # append tables
    SNAPSHOT_NUM_RETAINED_MIN: "10",
    SNAPSHOT_NUM_RETAINED_MAX: str(2**31 - 1),
    SNAPSHOT_TIME_RETAINED: "1 h",
    COMMIT_MAX_RETRIES: "10",
    COMMIT_MIN_RETRY_WAIT: "10 ms",
    COMMIT_MAX_RETRY_WAIT: "10 s",
    PARTITION_DEFAULT_NAME: "__DEFAULT_PARTITION__",
    PARTITION_LEGACY_NAME: "true",
    DATA_FILE_PREFIX: "data-",
    STATS_MODE: "truncate(16)",
    WRITE_ONLY: "false",
    CHANGELOG_PRODUCER: "none",
    CHANGELOG_FILE_PREFIX: "changelog-",
    CHANGELOG_ROW_DEDUPLICATE: "false",
    DELETION_VECTORS_ENABLED: "false",
}

# Options Paimon's writers act on that icefloe's do not: a table that sets them would be written
# without what they promise, so creating or altering a table with one is refused (reads of a table
# another engine wrote with them are unaffected). Each maps to why, and what to do instead.
_FALSE_OR_ABSENT = ("false", "")
UNHONOURED = {
    "data-evolution.enabled": ("icefloe's writers do not write data-evolution files (files of some columns "
                               "of rows kept by row id; row-tracking.enabled alone is honoured)",
                               _FALSE_OR_ABSENT),
    "tag.callbacks": ("icefloe runs no Java tag callback classes", ("",)),
    "tag.create-success-file": ("icefloe's automatic tags write no success file", _FALSE_OR_ABSENT),
    "clustering.columns": ("icefloe's writers do not cluster rows by these columns; CALL sys.compact with "
                           "order_strategy sorts a table's files", ("",)),
}
# prefixes of option families icefloe's writers do not produce (any key under them is refused), except
# the keys listed beside them. (``file-index.*`` is checked against the columns by ``file_index.check_options``.)
UNHONOURED_PREFIXES: dict = {}


def check_honoured(options: Mapping[str, str], table: str = "") -> None:
    """Refuse the options in ``UNHONOURED`` / ``UNHONOURED_PREFIXES`` that ask a writer for something
    icefloe's writers do not do, naming the option and why (nothing a user sets is silently ignored)."""
    where = f"table {table}: " if table else ""
    for key, value in options.items():
        k = str(key).strip().lower()
        if k in UNHONOURED:
            why, harmless = UNHONOURED[k]
            if str(value).strip().lower() not in harmless:
                raise SchemaError(f"{where}option {key!r} = {value!r} is not honoured: {why}")
            continue
        for prefix, (why, readers) in UNHONOURED_PREFIXES.items():
            if k.startswith(prefix) and k not in readers:
                raise SchemaError(f"{where}option {key!r} is not honoured: {why}")


_UNITS = {
    "": 1, "b": 1, "bytes": 1,
    "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
    "m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20,
    "g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
    "t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40,
}

_DURATION_MS = {
    "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "": 1, "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "min": 60_000, "m": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}

_AMOUNT_RE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")


def parse_memory_size(text: Optional[str]) -> int:
    """``"8 mb"`` -> 8388608 (Paimon's MemorySize syntax, binary units)."""
    m = _AMOUNT_RE.match(str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS:
        raise SchemaError(f"invalid memory size {text!r}; use e.g. '8 mb', '512 kb' or '1024'")
    return int(m.group(1)) * _UNITS[unit]


def parse_duration_ms(text: Optional[str]) -> int:
    """``"1 h"`` -> 3600000 (Paimon's duration syntax; a bare number means milliseconds)."""
    m = _AMOUNT_RE.match(str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _DURATION_MS:
        raise SchemaError(f"invalid duration {text!r}; use e.g. '1 h', '30 min', '10 s' or '100 ms'")
    return int(m.group(1)) * _DURATION_MS[unit]


class CoreOptions:
    """Typed access to a table's option map, falling back to Paimon's defaults."""

    def __init__(self, options: Mapping[str, str]):
        self.options = dict(options)

    def get(self, key: str) -> Optional[str]:
        v = self.options.get(key)
        return v if v is not None else DEFAULTS.get(key)

    def _int(self, key: str) -> int:
        try:
            return int(str(self.get(key)).strip())
        except ValueError:
            raise SchemaError(f"option {key!r} must be an integer, got {self.get(key)!r}") from None

    @property
    def bucket(self) -> int:
        return self._int(BUCKET)

    @property
    def bucket_key(self) -> list[str]:
        v = self.options.get(BUCKET_KEY)
        return [k.strip() for k in v.split(",") if k.strip()] if v else []

    @property
    def file_format(self) -> str:
        return str(self.get(FILE_FORMAT)).lower()

    @property
    def file_compression(self) -> str:
        return str(self.get(FILE_COMPRESSION)).lower()

    @property
    def manifest_compression(self) -> str:
        return str(self.get(MANIFEST_COMPRESSION)).lower()

    @property
    def manifest_target_file_size(self) -> int:
        return parse_memory_size(self.get(MANIFEST_TARGET_FILE_SIZE))

    @property
    def manifest_merge_min_count(self) -> int:
        return self._int(MANIFEST_MERGE_MIN_COUNT)

    @property
    def manifest_full_compaction_size(self) -> int:
        return parse_memory_size(self.get(MANIFEST_FULL_COMPACTION_SIZE))

    @property
    def target_file_size(self) -> int:
        return parse_memory_size(self.get(TARGET_FILE_SIZE))

    @property
    def snapshot_num_retained_min(self) -> int:
        return self._int(SNAPSHOT_NUM_RETAINED_MIN)

    @property
    def snapshot_num_retained_max(self) -> int:
        return self._int(SNAPSHOT_NUM_RETAINED_MAX)

    @property
    def write_only(self) -> bool:
        return str(self.get(WRITE_ONLY)).strip().lower() == "true"

    @property
    def changelog_producer(self) -> str:
        """``none``, ``input``, ``lookup`` or ``full-compaction``."""
        v = str(self.get(CHANGELOG_PRODUCER)).strip().lower()
        if v not in CHANGELOG_PRODUCERS:
            raise SchemaError(f"unknown {CHANGELOG_PRODUCER} {v!r}: one of {', '.join(CHANGELOG_PRODUCERS)}")
        return v

    @property
    def changelog_file_prefix(self) -> str:
        return str(self.get(CHANGELOG_FILE_PREFIX))

    @property
    def changelog_row_deduplicate(self) -> bool:
        return str(self.get(CHANGELOG_ROW_DEDUPLICATE)).strip().lower() == "true"

    @property
    def deletion_vectors_enabled(self) -> bool:
        return str(self.get(DELETION_VECTORS_ENABLED)).strip().lower() == "true"

    @property
    def snapshot_time_retained_ms(self) -> int:
        return parse_duration_ms(self.get(SNAPSHOT_TIME_RETAINED))

    @property
    def commit_max_retries(self) -> int:
        return self._int(COMMIT_MAX_RETRIES)

    @property
    def commit_timeout_ms(self) -> Optional[int]:
        v = self.options.get(COMMIT_TIMEOUT)
        return parse_duration_ms(v) if v else None

    @property
    def commit_min_retry_wait_ms(self) -> int:
        return parse_duration_ms(self.get(COMMIT_MIN_RETRY_WAIT))

    @property
    def commit_max_retry_wait_ms(self) -> int:
        return parse_duration_ms(self.get(COMMIT_MAX_RETRY_WAIT))

    @property
    def partition_default_name(self) -> str:
        return str(self.get(PARTITION_DEFAULT_NAME))

    @property
    def partition_legacy_name(self) -> bool:
        return str(self.get(PARTITION_LEGACY_NAME)).strip().lower() == "true"

    @property
    def data_file_prefix(self) -> str:
        return str(self.get(DATA_FILE_PREFIX))

    @property
    def stats_truncate_length(self) -> Optional[int]:
        """Characters kept of string bounds; None for 'full', 0 for 'counts'/'none'."""
        mode = str(self.get(STATS_MODE)).strip().lower()
        if mode == "full":
            return None
        if mode in ("counts", "none"):
            return 0
        m = re.match(r"^truncate\((\d+)\)$", mode)
        if not m:
            raise SchemaError(f"invalid {STATS_MODE} {mode!r}; use none, counts, full or truncate(N)")
        return int(m.group(1))

    @property
    def stats_mode(self) -> str:
        return str(self.get(STATS_MODE)).strip().lower()
