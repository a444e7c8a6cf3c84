"""Spark's ``CACHE [LAZY] TABLE t [OPTIONS ('storageLevel' 'LEVEL')]`` and ``UNCACHE TABLE [IF
EXISTS] t`` on icefloe tables.

Spark caches a table's rows so that later queries of it read them from memory (or disk) instead
of the files; it drops the cache when the table changes. icefloe's tables are read through a
data source of their own, so the cache is kept here: ``CACHE TABLE`` persists the table's rows as
of its current snapshot and schema (at once, or at the first read with ``LAZY``), plain reads of
the table (no ``VERSION AS OF``, branch or metadata table) use it while the table is still at that
snapshot and schema, and a change to the table makes reads go back to the files. ``UNCACHE``
frees it. ``CACHE TABLE name AS SELECT ...`` and Spark's own tables are Spark's as before.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol

from sqlglot import exp

from icefloe.sql.statement_context import StatementSession

if TYPE_CHECKING:
    from pyspark import StorageLevel
    from pyspark.sql import DataFrame

    from icefloe.sql.names import TableRef
    from icefloe.table.base import Table

STORAGE_LEVELS = ("NONE", "DISK_ONLY", "DISK_ONLY_2", "DISK_ONLY_3", "MEMORY_ONLY", "MEMORY_ONLY_2",
                  "MEMORY_AND_DISK", "MEMORY_AND_DISK_2", "OFF_HEAP", "MEMORY_AND_DISK_DESER")


@dataclass
class CachedTable:
    state: str          # the table's current snapshot and schema when it was cached
    df: DataFrame       # the persisted DataFrame


class CachingSession(StatementSession, Protocol):
    """A session with the tables ``CACHE TABLE`` cached, by ``str(ref)``."""

    cached_tables: dict[str, CachedTable]


def table_state(t: Table) -> str:
    """What a cached read depends on: the snapshot reads see and the schema they read with."""
    return repr((t.current_snapshot(), t.schema))


def _storage_level(sess: StatementSession, options: Optional[list[exp.Expression]], node: exp.Expression) -> StorageLevel:
    from pyspark import StorageLevel

    pairs = list(options or [])
    given: dict[str, str] = {}
    for k, v in zip(pairs[::2], pairs[1::2]):
        given[str(k.name)] = str(v.name)
    unknown = sorted(k for k in given if k.lower() != "storagelevel")
    if unknown:
        raise sess.error(f"CACHE TABLE: unknown option(s) {', '.join(unknown)} (the one option is 'storageLevel')",
                         node)
    level = next((v for k, v in given.items() if k.lower() == "storagelevel"), "MEMORY_AND_DISK").upper()
    if level not in STORAGE_LEVELS:
        raise sess.error(f"CACHE TABLE: storageLevel {level!r} is not one of {', '.join(STORAGE_LEVELS)}", node)
    return getattr(StorageLevel, level)


def statement(sess: CachingSession, tree: exp.Expression) -> Optional[DataFrame]:
    """The result of ``CACHE``/``UNCACHE TABLE`` naming an icefloe table; None for other statements
    (Spark's own tables, ``CACHE TABLE v AS SELECT``)."""
    if isinstance(tree, exp.Cache) and tree.expression is None and isinstance(tree.this, exp.Table):
        ref, ours = sess.resolve(tree.this)
        if ref is None and ours:
            raise sess.error(f"CACHE TABLE: unknown table {tree.this.sql('spark')}", tree.this)
        if ref is None:
            return None
        if ref.metadata or ref.ref:
            raise sess.not_supported(f"CACHE TABLE of {ref} (a metadata table, branch or tag; CACHE TABLE name "
                                     f"AS SELECT * FROM {ref} caches its rows under a name)", tree.this)
        level = _storage_level(sess, tree.args.get("options"), tree)
        old = sess.cached_tables.pop(str(ref), None)      # cached again: the table as it is now
        if old is not None:
            old.df.unpersist()
        t = sess.load(ref)
        state = table_state(t)
        df = sess.table_df(ref, None, tree.this).persist(level)
        sess.cached_tables[str(ref)] = CachedTable(state, df)
        if not tree.args.get("lazy"):
            df.count()                  # Spark's CACHE TABLE fills the cache at once
        return sess.empty()
    if isinstance(tree, exp.Uncache) and isinstance(tree.this, exp.Table):
        ref, ours = sess.resolve(tree.this)
        if ref is None and ours and not tree.args.get("exists"):
            raise sess.error(f"UNCACHE TABLE: unknown table {tree.this.sql('spark')}", tree.this)
        if ref is None:
            return sess.empty() if ours else None
        old = sess.cached_tables.pop(str(ref), None)
        if old is not None:
            old.df.unpersist()
        return sess.empty()
    return None


def cached_read(sess: CachingSession, ref: TableRef, t: Table) -> Optional[DataFrame]:
    """The cached rows of a plain read of ``ref`` (table ``t``), or None when it is not cached or
    the table changed since (then the stale cache is freed)."""
    entry = sess.cached_tables.get(str(ref))
    if entry is None:
        return None
    if entry.state != table_state(t):
        sess.cached_tables.pop(str(ref), None)
        entry.df.unpersist()
        return None
    return entry.df


__all__ = ["STORAGE_LEVELS", "CachedTable", "statement", "cached_read", "table_state"]
