"""Write-audit-publish: the session settings of Iceberg's Spark runtime (``spark.wap.branch``,
``spark.wap.id``) that decide where a write to a table goes.

``SET spark.wap.branch = audit`` sends INSERT, DELETE, UPDATE, MERGE and TRUNCATE of a table to
branch ``audit`` (created from main's head by the first write) and makes plain reads of the
table read that branch once it exists; ``SET spark.wap.id = <id>`` stages each write: the
snapshot is added with summary ``wap.id`` = ``<id>`` and no branch moves, until
``CALL system.publish_changes`` or ``cherrypick_snapshot`` publishes it. ``RESET`` ends either.

As in Iceberg, the settings apply to tables with ``write.wap.enabled=true``, both together are
an error, and a WAP branch with a branch in the table name (``t.branch_x``) is an error. Where
Iceberg's runtime would ignore a setting (a table without ``write.wap.enabled``), icefloe refuses
the write instead: a write meant for an audit branch never lands on main unnoticed.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from sqlglot import exp

    from icefloe.sql.statement_context import StatementSession
    from icefloe.sql.names import TableRef
    from icefloe.table.base import Table

WAP_BRANCH = "spark.wap.branch"
WAP_ID = "spark.wap.id"
WAP_ENABLED = "write.wap.enabled"


_SET = re.compile(r"\s*SET\s+(spark\.wap\.(?:branch|id))\s*=(.*)", re.IGNORECASE | re.DOTALL)


def check_set(sess: StatementSession, text: str, node: Optional[exp.Expression] = None) -> None:
    """Refuse ``SET spark.wap.branch|id = <value>`` whose value runs over a line break or a space:
    Spark's SET takes everything to the end of the statement, so a missing ``;`` would make the
    next statement part of the branch name (or id) instead of running it."""
    m = _SET.match(text)
    if m and len(m.group(2).split()) > 1:
        raise sess.error(f"SET {m.group(1)}: the value {m.group(2).strip()!r} is more than one word; a branch "
                         f"name or WAP id is one word, and a statement after SET needs a ';' before it", node)


def settings(sess: StatementSession) -> tuple[Optional[str], Optional[str]]:
    """(WAP branch, WAP id) of the session; an empty value is no value."""
    conf = sess.spark.conf
    return (conf.get(WAP_BRANCH, None) or None), (conf.get(WAP_ID, None) or None)


def enabled(t: Table) -> bool:
    return str((t.properties or {}).get(WAP_ENABLED, "false")).strip().lower() == "true"


def write_target(sess: StatementSession, t: Table, ref: Optional[TableRef], statement: str,
                 node: Optional[exp.Expression] = None) -> Table:
    """The table ``statement`` writes: ``t`` itself, or ``t`` writing to the branch its name gives
    (``ref``), to the session's WAP branch, or staged under the session's WAP id."""
    branch = ref.ref if ref is not None and ref.ref else None
    if branch is not None and ref is not None and ref.ref_kind != "branch":   # a branch comes from ref
        raise sess.error(f"{statement} on {ref}: a tag names one snapshot and takes no writes", node)
    if branch is not None and branch not in (t.refs() or {}):
        raise sess.error(f"{statement}: table {t.name} has no branch {branch!r} (ALTER TABLE {t.name} "
                         f"CREATE BRANCH {branch} creates it)", node)
    wap_branch, wap_id = settings(sess)
    if wap_branch is None and wap_id is None:
        return t if branch is None else _writing_to(sess, t, statement, node, branch=branch)
    if not enabled(t):
        key, value = (WAP_BRANCH, wap_branch) if wap_branch is not None else (WAP_ID, wap_id)
        raise sess.error(f"{statement}: {key} is set ({value}) but table {t.name} does not enable "
                         f"write-audit-publish, so the write would not go where {key} says: set "
                         f"TBLPROPERTIES ('{WAP_ENABLED}'='true') on the table, or RESET {key}", node)
    if wap_branch is not None and wap_id is not None:
        raise sess.error(f"Cannot set both WAP ID and branch, but got ID [{wap_id}] and branch [{wap_branch}]",
                         node)
    if wap_branch is not None and branch is not None:
        raise sess.error(f"Cannot write to both branch and WAP branch, but got branch [{branch}] and WAP "
                         f"branch [{wap_branch}]", node)
    return _writing_to(sess, t, statement, node, branch=branch or wap_branch, wap_id=wap_id)


def _writing_to(sess: StatementSession, t: Table, statement: str, node: Optional[exp.Expression],
                branch: Optional[str] = None, wap_id: Optional[str] = None) -> Table:
    with sess.refused_as(statement, node):
        return t.writing_to(branch=branch, wap_id=wap_id)


def read_branch(sess: StatementSession, t: Table) -> Optional[str]:
    """The branch a plain read of ``t`` sees: the session's WAP branch once it exists on a table
    with write-audit-publish enabled (as Iceberg's runtime reads), else None (main)."""
    wap_branch, _wap_id = settings(sess)
    if wap_branch is None or not enabled(t):
        return None
    return wap_branch if wap_branch in (t.refs() or {}) else None
