"""Structured Streaming through the ``icefloe`` data source: a sink and a source, both formats.

The sink (``df.writeStream.format("icefloe")``) writes each micro-batch's files in
the Spark tasks, exactly as a batch write does, and commits them on the driver as at
most one snapshot. The query's id, which Spark keeps in the checkpoint (its
``metadata`` file) and reuses after a restart, is the Iceberg snapshot summary's
query id and the Paimon snapshot's ``commitUser``; the micro-batch id is the epoch
id / ``commitIdentifier``. A batch replayed after a crash between the table commit
and Spark's own record of it is recognised in the commit and not committed twice
(its files are deleted).

The source (``spark.readStream.format("icefloe")``) streams what each snapshot adds.
An offset is a snapshot and how many of that snapshot's files were consumed
(``{"snapshot": id, "files": n}``); the stream starts with the whole table as of a
starting snapshot (``full``) or with what follows it, and each micro-batch reads the
files between two offsets, one file per Spark task, rate-limited by files or rows.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Sequence

from pyspark.sql import DataFrame
from pyspark.sql.datasource import DataSourceStreamArrowWriter, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from icefloe.core.io import LOCAL, strip_scheme
from icefloe.errors import GatewayRequiredError, NoSuchSnapshotError, StreamingSetupError
from icefloe.spark import connect
from icefloe.spark.datasource import ROWKIND

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.streaming.datasource import ReadLimit
    from pyspark.sql.types import StructType

    from icefloe.core.io import FileIO
    from icefloe.spark.datasource import FilesMessage
    from icefloe.spark.stream_formats import StreamFormat


def stream_format(location: str, io: Optional[FileIO], fmt: Optional[str] = None) -> StreamFormat:
    """The table format's streaming side (``icefloe.spark.stream_formats``), imported when a
    commit or a read needs it: a Spark worker unpickling the sink to write a task's files does not."""
    from icefloe.spark.stream_formats import stream_format as of_table

    return of_table(location, io, fmt)

_KINDS = ("+I", "-U", "+U", "-D")
DONE = -1    # an offset's file count when the whole snapshot was consumed


def _opt(options: Mapping[str, str], key: str, default: Optional[str] = None) -> Optional[str]:
    for k, v in options.items():
        if k.lower() == key.lower():
            return v
    return default


def stream_query_id(options: Mapping[str, str]) -> str:
    """The streaming query's id: an explicit ``commit-user`` option, else the id Spark keeps in
    the checkpoint's ``metadata`` file (the same after every restart of the query)."""
    explicit = _opt(options, "commit-user") or _opt(options, "commitUser")
    if explicit:
        return str(explicit)
    cp = _opt(options, "checkpointLocation")
    if not cp:
        raise StreamingSetupError(
            "a streaming write to an icefloe table needs .option('checkpointLocation', <dir>): the query's id "
            "kept there is how a batch replayed after a restart is recognised and not committed twice")
    path = os.path.join(os.path.abspath(strip_scheme(cp)), "metadata")
    try:
        return str(json.loads(LOCAL.read_bytes(path).decode("utf-8"))["id"])
    except (OSError, ValueError, KeyError) as e:
        raise StreamingSetupError(f"cannot read the streaming query's id from {path}: {e}") from None


# --------------------------------------------------------------------------- the sink
class IcefloeStreamWriter(DataSourceStreamArrowWriter):
    """Each micro-batch: files written by the tasks, one idempotent commit on the driver.
    ``overwrite`` (output mode ``complete``) replaces the whole table each batch."""

    def __init__(self, options: dict, schema: StructType, overwrite: bool):
        from icefloe.spark.datasource import IcefloeWriter

        self.batch_writer = IcefloeWriter(options, schema, overwrite)
        self.options = options
        self.overwrite = overwrite

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesMessage:
        return self.batch_writer.write(iterator)

    def commit(self, messages: Sequence[Optional[FilesMessage]], batchId: int) -> None:
        w = self.batch_writer
        files = [f for m in messages if m is not None for f in m.files]
        commit_batch(w.location, w.format, files, stream_query_id(self.options), int(batchId), self.overwrite,
                     io=w.io)

    def abort(self, messages: Sequence[Optional[FilesMessage]], batchId: int) -> None:
        self.batch_writer.abort(messages)


def commit_batch(location: str, fmt: str, files: list, query_id: str, batch_id: int, overwrite: bool = False,
                 io: Optional[FileIO] = None) -> bool:
    """Commit one micro-batch's files as one snapshot unless the query committed this batch
    already (then the files are deleted). Returns whether a snapshot was committed. ``io``:
    the FileIO of the table (tests inject faults through it)."""
    return stream_format(location, io, fmt).commit_batch(files, query_id, batch_id, overwrite)


def last_committed_batch(location: str, fmt: str, query_id: str, io: Optional[FileIO] = None) -> Optional[int]:
    """The highest batch id the query committed to the table (None: none)."""
    return stream_format(location, io, fmt).last_committed_batch(query_id)


def foreach_batch_writer(table: Any, overwrite: bool = False,      # table: the layer above's Table
                         named: Optional[str] = None) -> Callable[[DataFrame, int], None]:
    """``foreachBatch`` function writing each micro-batch to ``table`` once (see
    ``Table.foreach_batch``). The query id is ``named``, else the one Spark sets on the streaming
    thread (a classic session's; a Spark Connect session's function cannot see it)."""

    sink = stream_format(table.location, table.io)
    if named is not None and (not isinstance(named, str) or not named.strip()):
        raise StreamingSetupError(f"Table.foreach_batch(query_id=...) takes a non-empty name, not {named!r}")

    def write(df: DataFrame, batch_id: int) -> None:
        if named is not None:
            query_id = named
        elif connect.is_connect(df.sparkSession):
            raise GatewayRequiredError("Table.foreach_batch() over Spark Connect cannot see the streaming query's "
                                       "id; name the query: table.foreach_batch(query_id='<a name kept across "
                                       "restarts>'), or write with df.writeStream.format('icefloe')")
        else:
            query_id = df.sparkSession.sparkContext.getLocalProperty("sql.streaming.queryId")
        if not query_id:
            raise StreamingSetupError("Table.foreach_batch() is for df.writeStream.foreachBatch(...): no streaming "
                                      "query is running on this thread")
        last = sink.last_committed_batch(query_id)
        if last is not None and batch_id <= last:
            # a replay of a batch the table has: nothing to write, but the batch still runs,
            # since Spark expects its stateful operators to commit their state for it
            df.write.format("noop").mode("overwrite").save()
            return
        sink.commit_batch(table.write_files(df), query_id, int(batch_id), overwrite)

    return write


# --------------------------------------------------------------------------- the source
@dataclass
class StreamPartition(InputPartition):
    path: str
    deletes: list = field(default_factory=list)
    kind: str = "file"            # "file": a data file; "delta": a Paimon key-value file's records


class IcefloeStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets ``{"snapshot": id, "files": n, "full": bool}``: ``n`` files of the snapshot's
    units consumed. A snapshot's units are the whole table as of it (``full``) or the files
    it added. ``snapshot`` -1 is the empty table before the first snapshot."""

    def __init__(self, options: dict, schema: StructType):
        from icefloe.spark.datasource import location_of, detect_format, io_for

        self.options = options
        self.schema = schema
        self.location = location_of(options, schema)
        self.io = io_for(options, self.location)
        self.stream = stream_format(self.location, self.io, detect_format(self.location, self.io))
        self._units: dict = {}
        self._cap: Optional[int] = None      # Trigger.AvailableNow: the last snapshot to read
        self.max_files = _int_opt(options, "streaming-max-files-per-micro-batch", "maxFilesPerTrigger")
        self.max_rows = _int_opt(options, "streaming-max-rows-per-micro-batch", "maxRowsPerTrigger")
        self.consumer_id = _consumer_id(options)
        if self.consumer_id is not None:
            self.stream.consumer(self.consumer_id)        # an Iceberg table has no consumers: refused now

    # ------------------------------------------------------------------ snapshots
    def prepareForTriggerAvailableNow(self) -> None:
        self._cap = self.stream.latest_id()

    def _following(self, sid: int) -> list:
        """Snapshot ids committed after ``sid`` (-1: all), oldest first, up to the latest (or
        the one ``Trigger.AvailableNow`` saw at the start)."""
        ids = self.stream.following(sid)
        if self._cap is not None:
            ids = ids[:ids.index(self._cap) + 1] if self._cap in ids else ([] if self._cap <= sid else ids)
        return ids

    def _start_id(self) -> tuple[int, bool]:
        """The starting snapshot and whether the stream starts with the whole table as of it: a
        consumer's next snapshot when the query has a consumer-id that exists (Paimon's consumer
        progress wins over the startup options, unless consumer.ignore-progress)."""
        o = self.options
        from icefloe.spark.stream_formats import flag

        if self.consumer_id is not None and not flag(o, "consumer.ignore-progress"):
            nxt = self.stream.consumer(self.consumer_id)
            if nxt is not None:
                return (nxt - 1 if nxt > 1 else -1, False)
        mode = (_opt(o, "scan.mode") or "").strip().lower()
        sid = _opt(o, "scan.snapshot-id") or _opt(o, "start-snapshot-id")
        ts = _opt(o, "scan.timestamp-millis") or _opt(o, "stream-from-timestamp")
        if sid not in (None, ""):
            sid = int(sid)
            full = mode == "from-snapshot-full"
            # from-snapshot: that snapshot's own changes and what follows
            return (sid if full else self.stream.before(sid), full)
        if ts not in (None, ""):
            return (self.stream.last_before_time(int(ts)), False)
        if mode in ("latest",):
            return (self.stream.latest_id(), False)
        if mode in ("", "default", "latest-full", "full"):
            return (self.stream.latest_id(), True)
        raise StreamingSetupError(f"option scan.mode={mode!r}: expected latest-full, latest, from-snapshot, "
                                  "from-snapshot-full or from-timestamp")

    def _units_of(self, sid: int, full: bool) -> list:
        key = (sid, full)
        if key not in self._units:
            try:
                self._units[key] = self.stream.units(sid, full, self.options) if sid >= 0 else []
            except (NoSuchSnapshotError, KeyError, ValueError) as e:
                if isinstance(e, StreamingSetupError):
                    raise
                raise NoSuchSnapshotError(
                    f"the stream needs snapshot {sid} of {self.location}, which has expired or is gone ({e}); "
                    "restart the query from a new checkpoint or keep snapshots longer") from None
        return self._units[key]

    # ------------------------------------------------------------------ offsets
    def initialOffset(self) -> dict:
        sid, full = self._start_id()
        # "files" -1: everything of that snapshot consumed (the stream starts after it)
        return {"snapshot": sid, "files": 0 if full else DONE, "full": full}

    def getDefaultReadLimit(self) -> ReadLimit:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        try:
            from pyspark.sql.streaming.datasource import ReadMaxFiles
        except ImportError:  # pragma: no cover
            ReadMaxFiles = None
        if self.max_files and ReadMaxFiles is not None:
            return ReadMaxFiles(self.max_files)
        if self.max_rows:
            return ReadMaxRows(self.max_rows)
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_files, max_rows = _limits(limit)
        sid, n, full = int(start["snapshot"]), int(start["files"]), bool(start.get("full", False))
        taken_files = taken_rows = 0
        pos = {"snapshot": sid, "files": n, "full": full}
        queue = None
        while True:
            units = self._units_of(sid, full) if n != DONE else []
            while 0 <= n < len(units):
                if taken_files and ((max_files is not None and taken_files >= max_files)
                                    or (max_rows is not None and taken_rows >= max_rows)):
                    return pos
                taken_files += 1
                taken_rows += units[n].rows
                n += 1
                # a snapshot read to its end is DONE: a restart never needs its files again
                pos = {"snapshot": sid, "files": n if n < len(units) else DONE, "full": full}
            if queue is None:
                queue = self._following(sid)
            if not queue:
                return pos
            sid, n, full = queue.pop(0), 0, False
            pos = {"snapshot": sid, "files": DONE, "full": False} if not self._units_of(sid, False) else pos

    def partitions(self, start: dict, end: dict) -> list[StreamPartition]:
        out = []
        for sid, full, lo, hi in self._ranges(start, end):
            for u in self._units_of(sid, full)[lo:hi]:
                out.append(StreamPartition(u.path, u.deletes, u.kind))
        return out

    def _ranges(self, start: dict, end: dict):
        """(snapshot, full, first unit, end unit) for every snapshot between two offsets."""
        sid, n, full = int(start["snapshot"]), int(start["files"]), bool(start.get("full", False))
        end_sid, end_n, end_full = int(end["snapshot"]), int(end["files"]), bool(end.get("full", False))
        if end_n == DONE:
            end_n = len(self._units_of(end_sid, end_full))
        if sid == end_sid:
            if n != DONE and end_n > n:
                yield (sid, full, n, end_n)
            return
        if n != DONE:
            yield (sid, full, n, len(self._units_of(sid, full)))
        for nxt in self._following(sid):
            if nxt == end_sid:
                yield (nxt, end_full, 0, end_n)
                return
            yield (nxt, False, 0, len(self._units_of(nxt, False)))
        raise NoSuchSnapshotError(f"the stream's end offset names snapshot {end_sid}, which {self.location} "
                                  "no longer has in its history")

    def read(self, partition: StreamPartition) -> Iterator[pa.RecordBatch]:
        yield from read_stream_partition(self.location, self.stream.changelog_rows, self.schema, partition,
                                         self.options)

    def commit(self, end: dict) -> None:
        """Spark committed the micro-batches up to ``end``: drop what they needed and, with a
        consumer-id, record the consumer's next snapshot, as Paimon's Spark source does: past a
        snapshot only once all its files are read (a snapshot read partway is read again from its
        start after a restart), and no consumer for an initial full scan not yet read to its end."""
        keep = int(end["snapshot"])
        if self.consumer_id is not None and keep >= 0:
            done = int(end["files"]) == DONE
            if done or not end.get("full", False):
                self.stream.record_consumer(self.consumer_id, keep + 1 if done else keep)
        self._units = {k: v for k, v in self._units.items() if k[0] == keep or k[0] > keep}


_CONSUMER_MODES = ("exactly-once", "at-least-once")


def _consumer_id(options: Mapping[str, str]) -> Optional[str]:
    """The stream's ``consumer-id`` (None without one); ``consumer.mode`` must be one of Paimon's
    (both record progress the same way in a Spark query, as in Paimon's Spark source)."""
    cid = _opt(options, "consumer-id")
    mode = _opt(options, "consumer.mode")
    if mode is not None and str(mode).strip().lower() not in _CONSUMER_MODES:
        raise StreamingSetupError(f"option consumer.mode={mode!r}: expected {' or '.join(_CONSUMER_MODES)}")
    if cid is None:
        if mode is not None or _opt(options, "consumer.ignore-progress") is not None:
            raise StreamingSetupError("options consumer.mode and consumer.ignore-progress need a consumer-id")
        return None
    cid = str(cid).strip()
    if not cid or "/" in cid:
        raise StreamingSetupError(f"option consumer-id={cid!r}: expected a non-empty name without '/'")
    return cid


def _int_opt(options: Mapping[str, str], *keys: str) -> Optional[int]:
    for k in keys:
        v = _opt(options, k)
        if v not in (None, ""):
            n = int(v)
            if n <= 0:
                raise StreamingSetupError(f"option {k} must be a positive number, got {v}")
            return n
    return None


def _limits(limit: ReadLimit) -> tuple[Optional[int], Optional[int]]:
    """(max files, max rows) of a Spark read limit."""
    files = getattr(limit, "max_files", None)
    rows = getattr(limit, "max_rows", None)
    if files is None and rows is None:
        for name in ("maxFiles", "files"):
            files = getattr(limit, name, None) or files
        for name in ("maxRows", "rows"):
            rows = getattr(limit, name, None) or rows
    return files, rows


def read_stream_partition(location: str, changelog_rows: bool, schema: StructType, partition: StreamPartition,
                          options: Optional[Mapping[str, str]] = None) -> Iterator[pa.RecordBatch]:
    """Arrow batches of one stream partition in Spark's read schema (``options``: the stream's,
    for an object store's settings); ``changelog_rows``: the table's stream may carry each row's
    kind (a first column ``ROWKIND``) and change records (units of kind "delta")."""
    from icefloe.spark.datasource import FilePartition, IcefloeReader, io_for

    options = dict(options or {})

    names = [f.name for f in schema.fields]
    with_kind = bool(names) and names[0] == ROWKIND and changelog_rows
    if partition.kind == "delta":
        yield from _read_delta(location, schema, partition.path, with_kind, io_for(options, location))
        return
    import pyarrow as pa
    from pyspark.sql import types as T

    inner = T.StructType(schema.fields[1:]) if with_kind else schema
    reader = IcefloeReader({**options, "path": location}, inner)
    part = FilePartition(partition.path)
    part.deletes = list(partition.deletes)
    from icefloe.spark.datasource import arrow_target

    target = arrow_target(schema)
    for batch in reader.read(part):
        if with_kind:
            kinds = pa.array(["+I"] * batch.num_rows, pa.string())
            batch = pa.RecordBatch.from_arrays([kinds, *batch.columns], schema=target)
        yield batch


def _read_delta(location: str, schema: StructType, spec: str, with_kind: bool, io: FileIO = LOCAL):
    """A primary-key table's key-value file as rows: the value columns and, with
    ``read.changelog``, each record's kind; without it, only the records that insert or
    update (``+I``, ``+U``): the table's upserts."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import types as T

    from icefloe.spark.datasource import arrow_target
    from icefloe.spark.paimon_read import paimon_read_file

    value_schema = T.StructType([f for f in schema.fields if f.name != ROWKIND]) if with_kind else schema
    target = arrow_target(value_schema)
    from icefloe.paimon.arrow_read import read_data_file

    path = spec.split("#schema=")[0]
    kinds = read_data_file(path, io, columns=["_VALUE_KIND"]).column(0).combine_chunks()   # any data file format
    offset = 0
    for batch in paimon_read_file(location, spec, target, io):
        k = kinds.slice(offset, batch.num_rows)
        offset += batch.num_rows
        if with_kind:
            labels = pc.take(pa.array(_KINDS, pa.string()), k.cast(pa.int32()))
            yield pa.RecordBatch.from_arrays([labels, *batch.columns], schema=arrow_target(schema))
        else:
            keep = pc.or_(pc.equal(k, 0), pc.equal(k, 2))
            yield batch.filter(keep)
