# pyright: strict
"""Apache Paimon tables (append-only and primary-key) in Paimon's filesystem-catalog layout.

Spec sections, pure encoding over plain data:

* ``types``, ``schema``, ``options`` -- data types, ``schema/schema-N`` files, table options
* ``binary_row``, ``murmur``, ``bucket`` -- the BinaryRow layout, its hash, the bucket function
* ``partition`` -- ``<k>=<v>/bucket-<N>`` directory names
* ``data_file``, ``stats`` -- ``DataFileMeta`` and its ``SimpleStats``
* ``manifest`` -- manifest files, manifest lists, the ADD/DELETE merge rules
* ``snapshot`` -- snapshot files and the EARLIEST/LATEST hints (the spec's "Snapshot")
* ``predicate`` -- Spark SQL filters as a small tree, for pruning

Operations, with I/O at the edge (``file_store``):

* ``commit`` -- the commit, manifest compaction included; ``expire`` -- retention
* ``scan`` -- planning with pruning; ``writer`` -- Arrow data to data files and commit messages
* ``catalog``, ``table`` -- the filesystem catalog and ``FileStoreTable`` (the user-facing table,
  with Spark, is ``icefloe.table.PaimonTable``)
"""
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:       # what the lazily loaded names below stand for, to type checkers
    from icefloe.paimon.catalog import PaimonCatalog as PaimonCatalog
    from icefloe.paimon.commit import CommitMessage as CommitMessage
    from icefloe.paimon.table import FileStoreTable as FileStoreTable
    from icefloe.paimon.writer import write_arrow_files as write_arrow_files

_LAZY = {"PaimonCatalog": "icefloe.paimon.catalog", "CommitMessage": "icefloe.paimon.commit",
         "FileStoreTable": "icefloe.paimon.table", "write_arrow_files": "icefloe.paimon.writer"}


def __getattr__(name: str) -> Any:
    # loaded on first use: a module of the package imported on its own (as a Spark task's code
    # is) does not bring in the catalog and the table
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'icefloe.paimon' has no attribute {name!r}")


__all__ = ["PaimonCatalog", "FileStoreTable", "CommitMessage", "write_arrow_files"]
