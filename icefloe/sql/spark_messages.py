"""Spark's errors about names, said about the catalogs the session has.

Spark only sees its own session catalog (``spark_catalog``) and the temporary views icefloe makes, so
a name it cannot find makes it speak of ``spark_catalog`` and single-part namespaces: the user named
an icefloe table or namespace, or thought so. These messages say what was looked up where, in the
user's names: the icefloe catalogs of the session (by the names that qualify their tables), the
namespace of ``USE``, and Spark's own tables and views.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Lookup:
    """Where the session looks names up."""
    catalog_name: str               # the session's own catalog
    warehouse: str
    namespace: Optional[str]        # of USE, if any
    catalogs: tuple                 # the names of the session's other catalogs
    is_table: Callable[[list], bool]    # whether a name (its parts) is an icefloe table of the session
    paimon: bool = False            # whether the session's own catalog is Paimon's (which has a database sys)
    # the icefloe table a name would mean but for the case of its letters (db.T for t), if any
    case_twin: Callable[[list], Optional[str]] = lambda parts: None


ROW_TRACKING_COLUMNS = ("_row_id", "_sequence_number")
SYS_TABLES = ("Paimon's global system tables of database sys (sys.tables, sys.partitions, sys.all_table_options, "
              "sys.catalog_options) are read with SELECT (USE sys; SHOW TABLES lists them); this statement does not "
              "run on them")


def _name(param: str) -> str:
    """``a`.`b`` (Spark's quoting) as a.b."""
    return ".".join(p.strip("`") for p in param.split("`.`")).strip("`")


def _where(at: Lookup) -> str:
    cats = ", ".join([at.catalog_name, *at.catalogs])
    under = f" (one-part names are looked up in namespace {at.namespace} of USE)" if at.namespace else ""
    return (f"icefloe's catalogs here are {cats} (the one of {at.warehouse} is {at.catalog_name}){under}; "
            "other names are Spark's own tables and views")


def _kind(statement: str) -> str:
    """The words a statement starts with, up to its first name (``MSCK REPAIR TABLE``)."""
    words = []
    for w in re.sub(r"/\*.*?\*/|--[^\n]*", " ", statement, flags=re.S).split():
        if not re.fullmatch(r"[A-Za-z]+", w) or (words and w.upper() not in _KEYWORDS):
            break
        words.append(w.upper())
    return " ".join(words) or "this statement"


_KEYWORDS = {"TABLE", "REPAIR", "VIEW", "INTO", "OVERWRITE", "FROM", "CACHE", "LAZY", "UNCACHE", "IF", "EXISTS",
             "NOT", "OR", "REPLACE", "TEMPORARY", "GLOBAL", "DATABASE", "SCHEMA", "NAMESPACE", "COLUMNS", "EXTENDED",
             "PARTITIONS", "TBLPROPERTIES", "CREATE", "LOAD", "DATA", "LOCAL", "INPATH", "COMPUTE", "STATISTICS"}


def in_our_words(e: Exception, at: Lookup, statement: str = "") -> Optional[str]:
    """A message for Spark's ``e`` about a name it could not resolve, or None when ``e`` is not one."""
    try:
        condition = e.getCondition() if hasattr(e, "getCondition") else e.getErrorClass()  # type: ignore[attr-defined]
        params = e.getMessageParameters() or {}  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - not a Spark error with a condition
        return None
    if condition == "TABLE_OR_VIEW_NOT_FOUND":
        name = _name(params.get("relationName", ""))
        if at.paimon and name.split(".")[-2:-1] == ["sys"]:
            return f"{name}: {SYS_TABLES}"
        if at.is_table(name.split(".")):
            return (f"{_kind(statement)} is not supported yet on icefloe table {name}: icefloe does not run this "
                    "statement on its tables, and Spark alone sees none of them")
        twin = at.case_twin(name.split("."))
        if twin is not None:
            return (f"unknown table or view {name}: table names are case-sensitive in icefloe's catalogs (as in "
                    f"Paimon's filesystem catalog, which keeps a name as it was created); the table is {twin}")
        return f"unknown table or view {name}: no icefloe table and no Spark table or view has that name; {_where(at)}"
    if condition == "SCHEMA_NOT_FOUND":
        name = _name(params.get("schemaName", ""))
        parts = name.split(".")
        if len(parts) == 2 and parts[0] == "spark_catalog":
            name = parts[1]
        if at.paimon and name == "sys":
            return f"database sys: {SYS_TABLES}"
        return f"unknown namespace {name}: no icefloe namespace and no Spark database has that name; {_where(at)}"
    if str(condition).startswith("UNRESOLVED_COLUMN") and \
            _name(params.get("objectName", "")).split(".")[-1].lower() in ROW_TRACKING_COLUMNS:
        name = _name(params.get("objectName", "")).split(".")[-1]
        return (f"column {name} does not exist here: Paimon gives rows _ROW_ID and _SEQUENCE_NUMBER only in "
                "tables created with 'row-tracking.enabled' = 'true', and no table this query reads tracks rows")
    if condition == "REQUIRES_SINGLE_PART_NAMESPACE":
        name = _name(params.get("namespace", ""))
        return (f"unknown table or namespace {name}: names are [catalog.]namespace.table, and {name} is none "
                f"of icefloe's; {_where(at)}")
    return None
