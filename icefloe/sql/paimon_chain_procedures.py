"""``CALL sys.compact_chain_table(table, partition[, overwrite])``: Paimon's compaction of a chain
table (``icefloe.paimon.chain``), with Paimon's argument names and result row.

The partition, as a chain read of the snapshot and delta branches gives it (main left out), is
written to the snapshot branch: appended where the snapshot branch lacks it; where it has it, the
call does nothing and returns false unless ``overwrite`` is true, and then the partition is merged
again from the earlier anchor and the deltas and replaces the snapshot branch's (the partitions
written, as a dynamic overwrite). A partition the branches hold nothing of: false, nothing written.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from icefloe.paimon import chain
from icefloe.paimon import chain_options
from icefloe.spark.paimon_chain_read import read_chain
from icefloe.sql.call_args import partition_specs
from icefloe.sql.errors import SqlError
from icefloe.table.paimon import PaimonTable

if TYPE_CHECKING:
    from icefloe.sql.call_args import Args, Rows

_EXAMPLE = 'dt="20250810",hour="22"'


def _unquoted(value: str) -> str:
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def _flag(value: object, name: str) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if str(value).strip().lower() in ("true", "false"):
        return str(value).strip().lower() == "true"
    raise SqlError(f"compact_chain_table: argument {name!r} must be true or false, got {value!r}")


def compact_chain_table(t: PaimonTable, args: Args) -> Rows:
    text = args.get("partition")
    if not isinstance(text, str) or not text.strip():
        raise SqlError("compact_chain_table: Partition string cannot be empty (partition => "
                       f"'{_EXAMPLE}')")
    if len(text.split(";")) != 1:
        raise SqlError("compact_chain_table only supports a single partition, but multiple partitions were "
                       f"provided: {text}")
    spec = {k: _unquoted(v) for k, v in partition_specs(text, "compact_chain_table", _EXAMPLE)[0].items()}
    overwrite = _flag(args.get("overwrite"), "overwrite")
    options = t.refresh().table_schema.options
    if not chain.active(t):
        raise SqlError(f"compact_chain_table only supports chain table: {t.name} is not read as one "
                       f"({chain_options.ENABLED} with {chain_options.SNAPSHOT_BRANCH} and "
                       f"{chain_options.DELTA_BRANCH}, called on the table, not a branch)")
    snapshot = t.branch_table(options[chain_options.SNAPSHOT_BRANCH])
    assert isinstance(snapshot, PaimonTable)        # a PaimonTable's branches are PaimonTables
    match = snapshot.static_partition_match(spec)   # a key that is not a partition key is an error
    present = {snapshot.store.partition_values(e.partition) for e in snapshot.plan()}
    existing = [p for p in present if match(p)]
    if existing and not overwrite:
        return [(False,)]
    units = [u for u in chain.plan(t, with_main=False, not_in_snapshot=existing) if match(u.partition)]
    if not units:
        return [(False,)]
    messages = snapshot.write(read_chain(t.spark, t, units))
    if existing:
        snapshot.commit_overwrite(messages, dynamic=True)
    else:
        snapshot.commit(messages)
    return [(True,)]


__all__ = ["compact_chain_table"]
