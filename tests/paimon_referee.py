"""The plain-Python model and both sides of the Paimon referee tests, shared by the referees
(Paimon's Spark runtime, Paimon 0.9, in ``tests/paimon/test_paimon_java_referee.py``; Paimon's Java
engine without Spark, Paimon 1.4, in ``tests/paimon/test_paimon_bundle_referee.py``; the rounds both
play in ``tests/paimon/test_paimon_referee_rounds.py``): the table kinds' schemas, each merge engine's
commits and rows worked out by hand, ``merge_model`` (the merge engines in plain Python), what icefloe
reads of a table (rows, snapshots, files, changes), and what Paimon Java does and reads through either
engine (``SparkRuntimeSide``, ``BundleSide``: one set of operations), all sorted for comparison."""
from __future__ import annotations

import os

import pyarrow as pa


def arrow(schema: dict, rows: list[tuple]) -> pa.Table:
    names = list(schema)
    return pa.table({n: pa.array([r[i] for r in rows], schema[n]) for i, n in enumerate(names)})


def ice_rows(table, cols: list[str] | None = None, **at) -> list[tuple]:
    data = table.refresh().to_arrow(**at)
    cols = cols or data.column_names
    return sorted((tuple(r[c] for c in cols) for r in data.to_pylist()), key=repr)


def ice_snapshots(table) -> list[tuple]:
    return [(s.id, s.commit_kind) for s in table.refresh().snapshots()]


def ice_files(table) -> set[str]:
    return {os.path.basename(f.file_path) for f in table.refresh().plan_files()}


def ice_changes(table, start: int) -> list[tuple]:
    return sorted((tuple(r) for r in table.refresh().changes(start).collect()), key=repr)


APPEND = {"id": pa.int64(), "v": pa.string(), "dt": pa.string()}


PK = {"id": pa.int64(), "a": pa.string(), "n": pa.int64(), "s": pa.int64()}
PK_DDL = "id bigint not null, a string, n bigint, s bigint"

# Each engine: options, commits, the rows expected after the last one (by hand, from Paimon's docs).
ENGINES = {
    "dedup_seq": ({"sequence.field": "s"},
                  [[(1, "a", 1, 5), (2, "b", 1, 5)], [(1, "old", 9, 4), (2, "new", 2, 6)], [(3, "c", 3, 1)]],
                  [(1, "a", 1, 5), (2, "new", 2, 6), (3, "c", 3, 1)]),
    "partial_seq_group": ({"merge-engine": "partial-update", "fields.s.sequence-group": "a"},
                          [[(1, "a", 1, 5), (2, "b", None, 5)], [(1, "stale", 7, 4), (2, None, 8, 9)],
                           [(1, None, None, 6)]],
                          [(1, None, 7, 6), (2, None, 8, 9)]),
    "aggregation": ({"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
                     "fields.s.aggregate-function": "max", "fields.a.aggregate-function": "last_non_null_value"},
                    [[(1, "a", 1, 5), (2, "b", 2, 1)], [(1, None, 10, 3), (2, "B", 5, 7)], [(1, "z", 100, 2)]],
                    [(1, "z", 111, 5), (2, "B", 7, 7)]),
    "first_row": ({"merge-engine": "first-row"},
                  [[(1, "a", 1, 1)], [(1, "later", 2, 2), (2, "b", 3, 3)], [(2, "later", 4, 4), (3, "c", 5, 5)]],
                  [(1, "a", 1, 1), (2, "b", 3, 3), (3, "c", 5, 5)]),
}


def merge_model(engine: str, state: dict, rows: list[tuple]) -> dict:
    """Each merge engine in plain Python, from Paimon's docs: rows (id, a, n, s) merged into
    ``state`` (id -> row) in commit order."""
    state = dict(state)
    for r in rows:
        old = state.get(r[0])
        if old is None and engine != "partial_seq_group":
            state[r[0]] = r
        elif engine == "dedup_seq":                     # the larger sequence.field wins
            state[r[0]] = r if r[3] >= old[3] else old
        elif engine == "partial_seq_group":             # n: non-null overwrites; (a, s): the group s guards
            old = old or (r[0], None, None, None)
            a, s = old[1], old[3]
            if r[3] is not None and (s is None or r[3] >= s):
                a, s = r[1], r[3]
            state[r[0]] = (r[0], a, r[2] if r[2] is not None else old[2], s)
        elif engine == "aggregation":                   # a last_non_null_value, n sum, s max
            state[r[0]] = (r[0], r[1] if r[1] is not None else old[1],
                           None if old[2] is None and r[2] is None else (old[2] or 0) + (r[2] or 0),
                           max(x for x in (old[3], r[3]) if x is not None))
        elif engine == "first_row":
            pass
    return state


KV = {"id": pa.int64(), "v": pa.string()}


PK_COLUMNS = [("id", "BIGINT NOT NULL"), ("a", "STRING"), ("n", "BIGINT"), ("s", "BIGINT")]
KV_COLUMNS = [("id", "BIGINT NOT NULL"), ("v", "STRING")]
APPEND_COLUMNS = [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING")]


def _sorted(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=repr)


def sql_values(rows: list[tuple]) -> str:
    def lit(v):
        if v is None:
            return "NULL"
        if isinstance(v, str):
            return "'" + v.replace("'", "''") + "'"
        return str(v)
    return ", ".join("(" + ", ".join(lit(v) for v in r) + ")" for r in rows)


class SparkRuntimeSide:
    """Paimon Java through its Spark runtime (``tools/jvm_runtime.py``): Spark SQL, ``sys.*`` procedures,
    several statements in one request where a round has many. Table names are those of database ``db``."""

    def __init__(self, runtime):
        self.pj = runtime
        self.warehouse = str(runtime.warehouse)

    def create(self, name: str, columns: list, keys: tuple = (), partitions: tuple = (), options=None) -> None:
        props = {**({"primary-key": ",".join(keys)} if keys else {}), **(options or {})}
        cols = ", ".join(f"{c} {kind}" for c, kind in columns)
        by = f" PARTITIONED BY ({', '.join(partitions)})" if partitions else ""
        tblprops = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
        self.pj.sql(f"CREATE TABLE db.{name} ({cols}){by} TBLPROPERTIES ({tblprops})")

    def write(self, name: str, rows: list[tuple]) -> None:
        self.pj.sql(f"INSERT INTO db.{name} VALUES {sql_values(rows)}")

    def write_many(self, writes: dict) -> None:
        self.batch([f"INSERT INTO db.{name} VALUES {sql_values(rows)}" for name, rows in writes.items()])

    def delete(self, name: str, row: tuple) -> None:
        """Deletes the row of ``row``'s key (its first column, ``id``)."""
        self.pj.sql(f"DELETE FROM db.{name} WHERE id = {row[0]}")

    def batch(self, queries: list[str]) -> list[list[tuple]]:
        """Several statements in one request, each answer's rows sorted."""
        return [_sorted(rs) for rs in self.pj.run("result = [rows(spark.sql(q)) for q in queries]", queries=queries)]

    def rows(self, name: str, at=None) -> list[tuple]:
        """Every row of ``db.<name>``; ``at``: a snapshot id or a tag name to travel to."""
        return self.rows_at(name, [at])[0]

    def rows_at(self, name: str, versions: list) -> list[list[tuple]]:
        return self.batch([f"SELECT * FROM db.{name}" + (f" VERSION AS OF {v!r}" if v is not None else "")
                           for v in versions])

    def read_many(self, names: list[str]) -> list[list[tuple]]:
        return self.batch([f"SELECT * FROM db.{name}" for name in names])

    def snapshots(self, name: str) -> list[tuple]:
        return [tuple(r) for r in self.pj.sql(f"SELECT snapshot_id, commit_kind FROM db.`{name}$snapshots` "
                                              "ORDER BY snapshot_id")]

    def files(self, name: str) -> set[str]:
        return {os.path.basename(r[0]) for r in self.pj.sql(f"SELECT file_path FROM db.`{name}$files`")}

    def buckets(self, name: str) -> list[tuple]:
        """(bucket, record count) of every data file."""
        return _sorted(self.pj.sql(f"SELECT bucket, record_count FROM db.`{name}$files`"))

    def audit(self, name: str) -> list[tuple]:
        return _sorted(self.pj.sql(f"SELECT * FROM db.`{name}$audit_log`"))

    def schema_ids(self, name: str) -> list[int]:
        return [r[0] for r in self.pj.sql(f"SELECT schema_id FROM db.`{name}$schemas` ORDER BY schema_id")]

    def changes(self, name: str, last: int) -> list[tuple]:
        """The changelog of snapshots 1..``last``, read snapshot by snapshot (``incremental-between`` in
        changelog mode, one snapshot at a time: over a longer range Paimon merges each key's records)."""
        code = ("result = [r for i in range(start, end) for r in rows(spark.read.format('paimon')"
                ".option('incremental-between', f'{i},{i + 1}').option('incremental-between-scan-mode', 'changelog')"
                ".table(table))]")
        return _sorted(self.pj.run(code, start=0, end=last, table=f"db.`{name}$audit_log`"))

    def streamed(self, name: str) -> list[tuple]:
        """The changes Paimon Java's streaming source (Spark Structured Streaming) reads from the first
        snapshot, each led by its row kind."""
        code = ("q = (spark.readStream.format('paimon').option('read.changelog', 'true')"
                ".option('scan.mode', 'from-snapshot').option('scan.snapshot-id', '1').load(location)"
                ".writeStream.format('memory').queryName(query).start())\n"
                "q.processAllAvailable(); q.stop()\n"
                "result = rows(spark.sql('SELECT * FROM ' + query))")
        return _sorted(self.pj.run(code, location=os.path.join(self.warehouse, "db.db", name), query=f"streamed_{name}"))

    def compact(self, name: str, full: bool = True) -> None:
        """``sys.compact`` (Paimon 0.9's procedure compacts fully; ``full`` is what the bundle is asked)."""
        self.pj.sql(f"CALL sys.compact(table => 'db.{name}')")

    def compact_many(self, names: list[str], full: bool = True) -> None:
        self.batch([f"CALL sys.compact(table => 'db.{name}')" for name in names])

    def add_and_rename_column(self, name: str, add: tuple, rename: tuple) -> None:
        self.pj.sql(f"ALTER TABLE db.{name} ADD COLUMNS ({add[0]} {add[1]})")
        self.pj.sql(f"ALTER TABLE db.{name} RENAME COLUMN {rename[0]} TO {rename[1]}")


class BundleSide:
    """Paimon Java without Spark (``paimon-bundle``'s table API, ``tools/paimon_java.py``): the same
    operations as ``SparkRuntimeSide``, each one request."""

    def __init__(self, bundle):
        self.pj = bundle
        self.warehouse = str(bundle.warehouse)

    def create(self, name: str, columns: list, keys: tuple = (), partitions: tuple = (), options=None) -> None:
        self.pj.create_table(f"db.{name}", columns, primary_keys=keys, partition_keys=partitions, options=options)

    def write(self, name: str, rows: list[tuple]) -> None:
        self.pj.write(f"db.{name}", rows)

    def write_many(self, writes: dict) -> None:
        for name, rows in writes.items():
            self.write(name, rows)

    def delete(self, name: str, row: tuple) -> None:
        """Deletes the row of ``row``'s key: ``row`` written as a ``-D`` record."""
        self.pj.write(f"db.{name}", [row], kinds=["-D"])

    def rows(self, name: str, at=None) -> list[tuple]:
        """Every row of ``db.<name>``; ``at``: a snapshot id or a tag name to travel to."""
        opts = {}
        if isinstance(at, int):
            opts["scan.snapshot-id"] = str(at)
        elif at is not None:
            opts["scan.tag-name"] = at
        return _sorted(self.pj.rows(f"db.{name}", opts))

    def rows_at(self, name: str, versions: list) -> list[list[tuple]]:
        return [self.rows(name, v) for v in versions]

    def read_many(self, names: list[str]) -> list[list[tuple]]:
        return [self.rows(name) for name in names]

    def snapshots(self, name: str) -> list[tuple]:
        return sorted(self.pj.rows(f"db.{name}$snapshots", columns=("snapshot_id", "commit_kind")))

    def files(self, name: str) -> set[str]:
        return {os.path.basename(r[0]) for r in self.pj.rows(f"db.{name}$files", columns=("file_path",))}

    def buckets(self, name: str) -> list[tuple]:
        """(bucket, record count) of every data file."""
        return sorted(self.pj.rows(f"db.{name}$files", columns=("bucket", "record_count")))

    def audit(self, name: str) -> list[tuple]:
        return _sorted(self.pj.rows(f"db.{name}$audit_log"))

    def schema_ids(self, name: str) -> list[int]:
        return sorted(r[0] for r in self.pj.rows(f"db.{name}$schemas", columns=("schema_id",)))

    def changes(self, name: str, last: int) -> list[tuple]:
        """The changelog of every snapshot, streamed from the first by ``StreamTableScan`` (it reads up
        to the latest, which ``last`` is)."""
        return self.streamed(name)

    def streamed(self, name: str) -> list[tuple]:
        """The changes a streaming scan (``StreamTableScan``) reads from the first snapshot."""
        plans = self.pj.stream(f"db.{name}", {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
        return _sorted(r for plan in plans for r in plan)

    def compact(self, name: str, full: bool = True) -> None:
        self.pj.compact(f"db.{name}", full=full)

    def compact_many(self, names: list[str], full: bool = True) -> None:
        for name in names:
            self.compact(name, full)

    def add_and_rename_column(self, name: str, add: tuple, rename: tuple) -> None:
        self.pj.alter(f"db.{name}", ("add_column", *add), ("rename_column", *rename))
