"""Calls into the table API for row-level and lifecycle work, when the table has it.

The SQL layer and the command line reach the table API's newer methods
(row-level changes, schema and partition evolution, refs, maintenance) only
through these functions: each looks the method up at call time and raises
:class:`NotSupportedYetError` naming the capability when it is not there, so a
statement never silently does less than it says.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Optional

from icefloe.sql.errors import NotSupportedYetError


def method(obj, name: str, capability: str):
    fn = getattr(obj, name, None)
    if fn is None:
        raise NotSupportedYetError(capability)
    return fn


def call_with(fn, **kwargs):
    """Call ``fn`` with the keyword arguments it accepts (None values are left out)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(**{k: v for k, v in kwargs.items() if v is not None})
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return fn(**{k: v for k, v in kwargs.items() if v is not None})
    return fn(**{k: v for k, v in kwargs.items() if v is not None and k in params})


def call_strict(fn, capability: str, **kwargs):
    """Call ``fn`` with every given (non-None) keyword; one it does not take is not supported yet."""
    given = {k: v for k, v in kwargs.items() if v is not None}
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(**given)
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        missing = [k for k in given if k not in params]
        if missing:
            raise NotSupportedYetError(f"{capability} with {', '.join(missing)}")
    return fn(**given)


@contextlib.contextmanager
def schema_update(table, capability: str):
    cm = method(table, "update_schema", capability)()
    with cm as update:
        yield update


@contextlib.contextmanager
def spec_update(table, capability: str):
    cm = method(table, "update_spec", capability)()
    with cm as update:
        yield update


def update_properties(table, updates: dict, removals: list):
    fn = method(table, "update_properties", "changing table properties")
    params = list(inspect.signature(fn).parameters.values())
    named = {p.name for p in params}
    if {"updates", "removals"} <= named:
        return fn(updates=updates, removals=removals)
    if {"set", "remove"} <= named:
        return fn(set=updates, remove=removals)
    if any(p.kind == p.VAR_KEYWORD for p in params) and not removals:
        return fn(**updates)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2:
        return fn(updates, removals)
    if len(positional) == 1 and not removals:
        return fn(updates)
    raise NotSupportedYetError("removing table properties")


def snapshot_arg(snapshot_id: Optional[int]) -> dict:
    return {} if snapshot_id is None else {"snapshot_id": snapshot_id}
