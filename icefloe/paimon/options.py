# pyright: strict
"""Table options (Paimon's ``CoreOptions``): the names, defaults and value syntax.

Options live in the schema file as strings. Sizes are Paimon memory sizes
(``8 mb``, ``16MB``, ``1024``), durations are Paimon durations (``1 h``,
``30 min``, ``10 s``, ``100 ms``). ``AUDIT`` classifies every option of Paimon's
CoreOptions: honoured, accepted (kept, with nothing for icefloe to do) or refused
by name; a key that is not one of Paimon's options is kept in the schema untouched.
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
FILE_BLOCK_SIZE = "file.block-size"
# the format's own key for the same size, as Paimon hands ``<format>.*`` options to its format writers
# (``file.block-size`` wins where both are set, as in Paimon's ParquetFileFormat and OrcFileFormat)
FORMAT_BLOCK_SIZE = {"parquet": "parquet.block.size", "orc": "orc.stripe.size"}

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

# Every option of Paimon's CoreOptions (release 1.4.2), as icefloe treats it in a table's options and in
# ``SET spark.paimon.<key>``: HONOURED (icefloe's reads and writes do what it says), ACCEPTED (kept in the
# schema for the engines that act on it, with nothing for icefloe to do: the reason says why the files and
# rows are the same either way) or REFUSED (icefloe's writers would not do what it promises: creating or
# altering a table with it is an error naming it, unless its value is one of the harmless ones listed).
HONOURED, ACCEPTED, REFUSED = "honoured", "accepted", "refused"
_OFF = ("false", "")


# (kind, why, harmless values) of one option
Audit = tuple[str, str, tuple[str, ...]]


def _group(kind: str, why: str, keys: str, harmless: tuple[str, ...] = ()) -> dict[str, Audit]:
    return {k: (kind, why, harmless) for k in keys.split()}


AUDIT: dict[str, Audit] = {
    **_group(HONOURED, "icefloe's reads and writes act on it", """
        add-column-before-partition aggregation.remove-record-on-delete alter-column-null-to-not-null.disabled
        branch bucket bucket-key changelog-file.prefix changelog-producer changelog-producer.row-deduplicate
        changelog.num-retained.max changelog.num-retained.min changelog.time-retained commit.max-retries
        commit.max-retry-wait commit.min-retry-wait commit.timeout compaction.max-size-amplification-percent
        compaction.size-ratio consumer-id consumer.expiration-time consumer.ignore-progress consumer.mode
        data-file.prefix deletion-vectors.enabled dynamic-bucket.max-buckets dynamic-bucket.target-row-num
        file.compression force-lookup full-compaction.delta-commits ignore-delete manifest.compression
        manifest.full-compaction-threshold-size manifest.merge-min-count manifest.target-file-size merge-engine
        metadata.stats-mode num-levels num-sorted-run.compaction-trigger num-sorted-run.stop-trigger
        partial-update.remove-record-on-delete partial-update.remove-record-on-sequence-group partition
        partition.default-name partition.expiration-max-num partition.legacy-name path primary-key rowkind.field
        scan.fallback-branch scan.mode scan.snapshot-id scan.tag-name scan.timestamp scan.timestamp-millis
        scan.version sequence.field snapshot.expire.limit snapshot.num-retained.max snapshot.num-retained.min
        snapshot.time-retained streaming-read-overwrite target-file-size write-only"""),
    **_group(HONOURED, "icefloe writes parquet, ORC or Avro data files, key-value and changelog files included "
             "(other formats are refused when the table is created)", "file.format"),
    **_group(HONOURED, "icefloe writes changelog files in the table's file.format (another format is refused "
             "when the table is created)", "changelog-file.format"),
    **_group(HONOURED, "icefloe's writers cut Parquet row groups (Spark's parquet.block.size; Arrow's by the "
             "rows' in-memory size) and ORC stripes (Arrow's stripe_size) at this size (refused on Avro tables, "
             "whose files have neither)", "file.block-size"),
    **_group(HONOURED, "icefloe writes the _SUCCESS file of a partition marked done; other actions are refused "
             "when a partition is marked", "partition.mark-done-action"),
    **_group(REFUSED, "icefloe's tables are Paimon data tables (type 'table'), not format or object tables", "type",
             ("table", "")),
    **_group(ACCEPTED, "it tunes the memory, buffers, threads or parallelism of Paimon's Java writers and readers; "
             "icefloe's Spark tasks size their own, and the files and rows are the same", """
        async-file-write cache-page-size cross-partition-upsert.bootstrap-parallelism deletion-vector.index-file.target-size
        dynamic-bucket.assigner-parallelism dynamic-bucket.initial-buckets file-operation.thread-num
        file-reader-async-threshold local-merge-buffer-size local-sort.max-num-file-handles lookup.cache-file-retention
        lookup.cache-max-disk-size lookup.cache-max-memory-size lookup.cache-spill-compression
        lookup.cache.bloom.filter.enabled lookup.cache.bloom.filter.fpp lookup.cache.high-priority-pool-ratio
        lookup.hash-load-factor lookup.merge-buffer-size lookup.merge-records-threshold page-size read.batch-size
        scan.manifest.parallelism scan.max-splits-per-task scan.plan-sort-partition sort-engine sort-spill-buffer-size
        sort-spill-threshold source.split.open-file-cost source.split.target-size spill-compression
        spill-compression.zstd-level write-buffer-for-append write-buffer-size write-buffer-spill.max-disk-size
        write-buffer-spillable write-max-writers-to-spill write.batch-memory write.batch-size
        global-index.build.max-parallelism global-index.build.max-shard global-index.thread-num
        snapshot.expire.execution-mode
        postpone.batch-write-fixed-bucket.max-parallelism"""),
    **_group(ACCEPTED, "it chooses when Paimon's writers compact; icefloe compacts by its own plan (num-sorted-run "
             "triggers, CALL sys.compact) and the rows read are the same", """
        commit.force-compact compaction.delete-ratio-threshold compaction.file-num-limit
        compaction.force-rewrite-all-files compaction.force-up-level-0 compaction.incremental-size-threshold
        compaction.min.file-num compaction.offpeak-ratio compaction.offpeak.end.hour compaction.offpeak.start.hour
        compaction.optimization-interval compaction.total-size-threshold lookup-compact lookup-compact.max-interval
        lookup-wait sort-compaction.local-sample.magnification sort-compaction.range-strategy
        zorder.var-length-contribution bucket-append-ordered overwrite-upgrade"""),
    **_group(ACCEPTED, "it configures Flink jobs (sinks, streaming sources, materialized tables, watermarks, "
             "table creation); icefloe runs none", """
        auto-create continuous.discovery-interval materialized-table.definition-query
        materialized-table.interval-freshness materialized-table.interval-freshness.time-unit
        materialized-table.logical-refresh-mode materialized-table.refresh-handler-bytes
        materialized-table.refresh-handler-description materialized-table.refresh-mode
        materialized-table.refresh-status partition.sink-strategy
        snapshot.watermark-idle-timeout streaming.read.snapshot.delay visibility-callback.check-interval
        visibility-callback.enabled visibility-callback.timeout partition.idle-time-to-report-statistic
        dynamic-partition-overwrite"""),
    **_group(ACCEPTED, "it chooses how statistics sit in manifests (all columns or the non-null ones) or "
             "whether expiry removes empty directories; Paimon's readers read either way and the rows are the same",
             "metadata.stats-dense-store snapshot.clean-empty-directories"),
    **_group(ACCEPTED, "it syncs a Hive metastore; icefloe's filesystem catalog has none", """
        metastore.partitioned-table metastore.tag-to-partition metastore.tag-to-partition.preview
        format-table.commit-hive-sync-url"""),
    **_group(ACCEPTED, "it only acts together with an option icefloe refuses (clustering.columns, "
             "partition.expiration-time, format or postpone-bucket tables, "
             "a global index of a data-evolution table (global-index.column-update-action acts on its MERGE "
             "INTO; icefloe builds global indexes on other tables only), remote lookup files, "
             "BLOB, vector or shredded variant columns), so it has nothing to act on", """
        clustering.history-partition.idle-to-full-sort clustering.history-partition.limit clustering.incremental
        clustering.incremental.mode clustering.incremental.optimize-write clustering.strategy
        partition.expiration-batch-size partition.expiration-check-interval partition.expiration-strategy
        partition.timestamp-format.strict
        partition.mark-done-action.custom.class partition.mark-done-action.http.params
        partition.mark-done-action.http.url
        format-table.file.compression format-table.implementation
        format-table.partition-path-only-value postpone.batch-write-fixed-bucket postpone.default-bucket-num
        global-index.column-update-action
        lookup.remote-file.level-threshold variant.shredding.maxInferBufferRow variant.shredding.maxSchemaDepth
        variant.shredding.maxSchemaWidth variant.shredding.minFieldCardinalityRatio blob.split-by-file-size
        blob.target-file-size vector.target-file-size"""),
    **_group(REFUSED, "icefloe's writers do not cluster rows by these columns; CALL sys.compact with "
             "order_strategy sorts a table's files", "clustering.columns", ("",)),
    **_group(REFUSED, "icefloe's writers write no BLOB, vector or variant-shredded columns", """
        blob-as-descriptor blob-descriptor-field blob-external-storage-field blob-external-storage-path blob-field
          vector-field vector.file.format
        variant.inferShreddingSchema
          variant.shreddingSchema""",
             ("", "false")),
    **_group(REFUSED, "icefloe's writers place every data file under the table's bucket directories, named by "
             "data-file.prefix and the format alone", """
        data-file.external-paths data-file.external-paths.specific-fs data-file.external-paths.strategy
        data-file.external-paths.weights data-file.path-directory index-file-in-data-file-dir
        file.suffix.include.compression""", ("", "none", "false")),
    **_group(REFUSED, "icefloe's writers use one compression, format and statistics layout for every "
             "level, not these", """
        file.compression.per.level file.format.per.level file.compression.zstd-level
        changelog-file.compression changelog-file.stats-mode metadata.stats-mode.per.level
        metadata.stats-keep-first-n-columns parquet.enable.dictionary
        manifest.delete-file-drop-stats data-file.thin-mode deletion-vectors.bitmap64""", ("", "false")),
    **_group(REFUSED, "icefloe's commits do not do it", """
        commit.callback.#.param commit.callbacks commit.discard-duplicate-files commit.force-create-snapshot
        commit.strict-mode.last-safe-snapshot commit.user-prefix
         end-input.check-partition-expire partition.end-input-to-done
        partition.expiration-time delete.force-produce-changelog
         deletion-vectors.modifiable query-auth.enabled""", ("", "false")),
    **_group(REFUSED, "icefloe's merges and reads do not apply it", """
        changelog-producer.row-deduplicate-ignore-fields cross-partition-upsert.index-ttl ignore-update-before
        key-value.sequence_number.enabled table-read.sequence-number.enabled sequence.field.sort-order
        record-level.expire-time record-level.time-field upsert-key pk-clustering-override bucket-function.type
        disable-explicit-type-casting lookup.remote-file.enabled
        scan.primary-branch consumer.changelog-only streaming-read-append-overwrite""",
             ("", "false", "default", "ascending")),
    **_group(REFUSED, "as a table option it would change where every read starts or what it skips; icefloe "
             "takes these per read (paimon_incremental_query, VERSION AS OF, SET spark.paimon.scan.*)", """
        batch-scan-mode stream-scan-mode incremental-between incremental-between-scan-mode
        incremental-between-tag-to-snapshot incremental-between-timestamp incremental-to-auto-tag
        scan.bounded.watermark scan.creation-time-millis scan.file-creation-time-millis scan.watermark
        scan.ignore-corrupt-files scan.ignore-lost-files""", ("", "none", "false")),
    **_group(REFUSED, "icefloe writes and reads Avro manifests only", "manifest.format", ("avro", "")),
    **_group(REFUSED, "icefloe's commits decide by their own rule whether a commit without files makes a "
             "snapshot", "snapshot.ignore-empty-commit", ("",)),
    **_group(HONOURED, "a chain table's reads merge its snapshot and delta branches by them, its delta "
             "overwrites truncate the snapshot branch, and its partition times step from an anchor to the partition "
             "read, as Paimon's (icefloe.paimon.chain)", """
        chain-table.enabled chain-table.chain-partition-keys scan.fallback-delta-branch scan.fallback-snapshot-branch
        partition.timestamp-formatter partition.timestamp-pattern"""),
    **_group(HONOURED, "icefloe's rows carry row ids (_ROW_ID, _SEQUENCE_NUMBER) given at commit", "row-tracking.enabled"),
    **_group(HONOURED, "CALL sys.create_global_index cuts row ids into shards of this many rows, and reads skip "
             "files by the table's global indexes unless global-index.enabled is false (global_index)",
             "global-index.enabled global-index.row-count-per-shard"),
    **_group(REFUSED, "icefloe writes global index files under the table's index directory", "global-index.external-path",
             ("",)),
    **_group(HONOURED, "icefloe's commits create and expire automatic tags by it (tag_auto)", """
        tag.automatic-creation tag.automatic-completion tag.batch.customized-name tag.creation-delay
        tag.creation-period tag.creation-period-duration tag.num-retained-max tag.period-formatter
        tag.time-expire-enabled tag.default-time-retained sink.process-time-zone sink.watermark-time-zone"""),
    **_group(HONOURED, "icefloe's writers build the bloom-filter and bsi file indexes it asks for and its reads "
             "skip files by them (file_index checks each file-index.<type>.columns key)",
             "file-index.in-manifest-threshold file-index.read.enabled"),
    **_group(HONOURED, "icefloe's reads merge a row-id range's files column by column, and its UPDATE and MERGE "
             "write files of the updated columns only (data_evolution)", "data-evolution.enabled"),
    **_group(REFUSED, "icefloe's automatic tags write no success file", "tag.create-success-file", _OFF),
    **_group(REFUSED, "icefloe runs no Java tag callback classes", "tag.callbacks tag.callback.#.param", ("",)),
}
AUDIT_BY_KEY = {k.lower(): v for k, v in AUDIT.items()}

# prefixes of option families icefloe's writers do not produce (any key under them is refused), except
# the read-side switches listed beside them, which only turn a reader's use of the indexes on or off


def audit(key: str) -> Optional[Audit]:
    """(kind, why, harmless values) of a Paimon option (``HONOURED``, ``ACCEPTED`` or ``REFUSED``);
    None for a key that is not one of Paimon's CoreOptions."""
    k = str(key).strip().lower()
    found = AUDIT_BY_KEY.get(k)
    return found


def refusal(key: str, value: object) -> Optional[str]:
    """Why option ``key`` = ``value`` is refused, or None when it is not."""
    found = audit(key)
    if found is None or found[0] != REFUSED or str(value).strip().lower() in found[2]:
        return None
    return found[1]


def check_honoured(options: Mapping[str, str], table: str = "") -> None:
    """Refuse the options of ``AUDIT`` that ask a writer for something icefloe's writers do not do,
    naming the option and why (nothing a user sets is silently ignored)."""
    where = f"table {table}: " if table else ""
    for key, value in options.items():
        why = refusal(key, value)
        if why is not None:
            raise SchemaError(f"{where}option {key!r} = {value!r} is not honoured: {why}")


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

    def block_size(self, file_format: Optional[str] = None) -> Optional[int]:
        """Bytes per Parquet row group or ORC stripe of ``file_format`` (default: the table's):
        ``file.block-size``, else the format's own key (``parquet.block.size``, ``orc.stripe.size``);
        None when neither is set (the writer's default)."""
        fmt = (file_format or self.file_format).lower()
        for key in (FILE_BLOCK_SIZE, FORMAT_BLOCK_SIZE.get(fmt)):
            v = self.options.get(key) if key else None
            if v is not None and str(v).strip():
                size = parse_memory_size(v)
                if size <= 0:
                    raise SchemaError(f"option {key!r} must be a positive size, got {v!r}")
                return size
        return None

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
