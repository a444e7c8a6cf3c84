"""pypaimon's side of the Paimon benchmark and of the tests' writes, run in pypaimon's own
environment (``.venv-paimon``).

The benchmark (``bench/paimon.py``, ``bench/paimon_pk.py``) reaches these functions through
``tools.pypaimon_env.remote_module("tools.pypaimon_side")`` and times them with
``tools.pypaimon_env.timed``: the seconds are measured in the worker, so pypaimon is not charged for
the pipe. Arguments and results are data (paths, names, filter tuples, Arrow tables, lists of names,
counts); catalogs and tables, when a caller keeps one between runs, come back as proxies and may be
passed back in.

Imports only the standard library, pypaimon, pyarrow and numpy: this runs where icefloe is not
installed.
"""
from __future__ import annotations

import gc


def catalog(warehouse: str):
    """A new filesystem catalog over ``warehouse``."""
    from pypaimon import CatalogFactory

    return CatalogFactory.create({"warehouse": warehouse})


def _catalog(warehouse_or_catalog):
    return catalog(warehouse_or_catalog) if isinstance(warehouse_or_catalog, str) else warehouse_or_catalog


def load_table(warehouse_or_catalog, name: str):
    """Table ``name`` (``"db.t"``), loaded anew, from a new catalog when given a warehouse path."""
    return _catalog(warehouse_or_catalog).get_table(name)


def plan_file_names(table, flt: tuple | None = None) -> list:
    """The data file names ``table``'s scan plans, with ``flt = (column, value)`` as ``column = value``."""
    rb = table.new_read_builder()
    if flt is not None:
        rb = rb.with_filter(rb.new_predicate_builder().equal(flt[0], flt[1]))
    return [f.file_name for s in rb.new_scan().plan().splits() for f in s.files]


def plan_file_names_cold(warehouse: str, name: str, flt: tuple | None = None) -> list:
    """:func:`plan_file_names` with a new catalog and table object (a cold planning run)."""
    return plan_file_names(load_table(warehouse, name), flt)


def append_arrow(warehouse_or_catalog, name: str, data) -> None:
    """``data`` (an Arrow table) written to table ``name``, loaded anew, by one batch write and commit
    (for a primary-key table, an upsert)."""
    wb = load_table(warehouse_or_catalog, name).new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    try:
        w.write_arrow(data)
        c.commit(w.prepare_commit())
    finally:
        w.close()
        c.close()


def merged_row_count(warehouse_or_catalog, name: str) -> int:
    """Rows of table ``name``, loaded anew, read in full to Arrow (merged by key for a primary-key table)."""
    rb = load_table(warehouse_or_catalog, name).new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows


def collect_garbage() -> int:
    """The worker's part of the benchmark's quiesce between timed runs."""
    return gc.collect()
