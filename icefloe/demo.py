"""The main job (``make demo``): an Iceberg session replayed on a fresh warehouse.

Creates ``db.tb01 (id bigint not null, name string, ts timestamp not null)``
partitioned by ``year(ts)``, inserts its 100 rows (50 in 2023, 50 in 2022),
appends a second batch, travels back to the first snapshot, and prints the
table's files and snapshots.
"""
from __future__ import annotations

import datetime as dt
import os

from rich.console import Console
from rich.table import Table as RichTable
from rich.tree import Tree

from icefloe.catalog import Catalog
from icefloe.core.io import LOCAL, FileIO
from icefloe.table import IcebergTable, Table

SCHEMA = "id bigint not null, name string, ts timestamp not null"


def seed_rows() -> list[tuple]:
    """The demo's 100 rows: ids 1-50 at 2023-12-31 00:12, ids 51-100 at 2022-12-31 00:12."""
    rows = []
    for i in range(1, 101):
        ts = dt.datetime(2023, 12, 31, 0, 12) if i <= 50 else dt.datetime(2022, 12, 31, 0, 12)
        rows.append((i, f"name{i}", ts))
    return rows


def file_tree(location: str, io: FileIO = LOCAL) -> Tree:
    """The files under a table's directory, directories first, hidden names left out."""
    tree = Tree(f"[bold]{location}[/]")

    def add(node: Tree, path: str) -> None:
        names = [n for n in io.list_dir(path) if not n.startswith(".")]
        dirs = [n for n in names if io.is_dir(f"{path}/{n}")]
        for d in dirs:
            add(node.add(f"[blue]{d}/[/]"), f"{path}/{d}")
        for f in names:
            if f not in dirs:
                node.add(f"{f} [dim]({io.size(f'{path}/{f}')} bytes)[/]")

    add(tree, location.rstrip("/"))
    return tree


def snapshot_table(table: Table) -> RichTable:
    rt = RichTable(title=f"snapshots of {table.name}")
    for col in ("seq", "snapshot id", "parent", "op", "+files", "+rows", "rows", "files", "committed"):
        rt.add_column(col, no_wrap=col in ("snapshot id", "parent", "committed"))
    for s in table.snapshots():
        sm = s.summary
        rt.add_row(str(s.sequence_number), str(s.snapshot_id), str(s.parent_snapshot_id or ""),
                   s.operation, sm.get("added-data-files", "0"), sm.get("added-records", "0"),
                   sm.get("total-records", "0"), sm.get("total-data-files", "0"),
                   dt.datetime.fromtimestamp(s.timestamp_ms / 1000).strftime("%H:%M:%S.%f")[:-3])
    return rt


def run(warehouse: str, fresh: bool = True, console: Console | None = None) -> dict:
    console = console or Console(width=max(120, Console().width))  # room for 19-digit snapshot ids
    seeded = os.path.join(warehouse, "db", "tb01")
    if fresh and LOCAL.exists(seeded):
        LOCAL.delete_tree(seeded)
    cat = Catalog(warehouse)
    spark = cat.spark
    console.rule("[bold]icefloe demo: an Iceberg table on a fresh warehouse")
    console.print(f"warehouse: {cat.warehouse}   Spark {spark.version} ({spark.sparkContext.master})")
    t = cat.create_table("db.tb01", SCHEMA, partitioned_by=["year(ts)"])
    assert isinstance(t, IcebergTable)          # the demo's catalog is an Iceberg one
    console.print("CREATE TABLE db.tb01 (id bigint not null, name string, ts timestamp not null) "
                  "PARTITIONED BY (year(ts))")

    df = spark.createDataFrame(seed_rows(), "id bigint, name string, ts timestamp")
    first = t.append(df)
    console.print(f"INSERT 100 rows -> snapshot {first.snapshot_id}: {first.summary}")

    more = spark.createDataFrame([(101, "name101", dt.datetime(2024, 6, 1, 8, 0)),
                                  (102, "name102", dt.datetime(2023, 1, 1, 0, 0))],
                                 "id bigint, name string, ts timestamp")
    second = t.append(more)
    console.print(f"INSERT 2 rows   -> snapshot {second.snapshot_id}: {second.summary}")

    now_count = t.to_spark().count()
    then_count = t.to_spark(snapshot_id=first.snapshot_id).count()
    console.print(f"rows now: {now_count}; VERSION AS OF {first.snapshot_id}: {then_count}")
    console.print("rows per year at the first snapshot:")
    t.to_spark(snapshot_id=first.snapshot_id).groupBy("ts").count().orderBy("ts").show()

    console.print(file_tree(t.location))
    console.print(snapshot_table(t))
    return {"first": first, "second": second, "rows_now": now_count, "rows_then": then_count}
