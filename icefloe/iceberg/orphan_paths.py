# pyright: strict
"""Which listed files the metadata refers to, when the two spell a location differently.

Iceberg's orphan cleanup (``DeleteOrphanFiles``, spark-procedures ``remove_orphan_files``) joins
the listed files with the metadata's by the *path* of each location alone, then compares the
scheme and the authority: the metadata may name a file ``s3a://bucket/key`` that the listing
calls ``s3://bucket/key``. Schemes and authorities are first mapped through the equivalences
(``s3a`` and ``s3n`` are ``s3`` unless told otherwise; ``equal_schemes``, ``equal_authorities``,
whose keys may list several names separated by commas); an empty or missing scheme or authority
on the metadata's side matches any. A file whose path the metadata names with another scheme or
authority is a *prefix mismatch*: ``ERROR`` (the default) refuses the whole cleanup, naming the
conflicting pairs; ``IGNORE`` keeps the file; ``DELETE`` treats it as an orphan.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional
from urllib.parse import urlsplit

from icefloe.errors import MaintenanceError

EQUAL_SCHEMES_DEFAULT = {"s3n,s3a": "s3"}
PREFIX_MISMATCH_MODES = ("ERROR", "IGNORE", "DELETE")


def _flatten(mapping: Optional[Mapping[Any, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (mapping or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise MaintenanceError(f"scheme and authority equivalences map names to names, got {key!r} -> {value!r}")
        for k in key.split(","):
            out[k.strip()] = value.strip()
    return out


@dataclass(frozen=True)
class PathEquivalence:
    """How listed and referenced locations are compared (see the module's description)."""
    equal_schemes: dict[str, str] = field(default_factory=lambda: _flatten(EQUAL_SCHEMES_DEFAULT))
    equal_authorities: dict[str, str] = field(default_factory=dict[str, str])
    prefix_mismatch_mode: str = "ERROR"

    @staticmethod
    def of(equal_schemes: Optional[Mapping[Any, Any]] = None,
           equal_authorities: Optional[Mapping[Any, Any]] = None,
           prefix_mismatch_mode: Optional[str] = None) -> "PathEquivalence":
        mode = "ERROR" if prefix_mismatch_mode is None else str(prefix_mismatch_mode).strip().upper()
        if mode not in PREFIX_MISMATCH_MODES:
            raise MaintenanceError(f"prefix_mismatch_mode must be one of {', '.join(PREFIX_MISMATCH_MODES)}, "
                                   f"got {prefix_mismatch_mode!r}")
        return PathEquivalence({**_flatten(EQUAL_SCHEMES_DEFAULT), **_flatten(equal_schemes)},
                               _flatten(equal_authorities), mode)

    def parts(self, location: str, listed: bool) -> tuple[Optional[str], Optional[str], str]:
        """(scheme, authority, path) of ``location`` after the equivalences. A listed file without
        a scheme is a file of the local file system (``file``, no authority)."""
        u = urlsplit(location)
        scheme = u.scheme.lower() or None
        path = u.path if scheme is not None else location
        if listed and scheme is None:
            scheme = "file"
        authority = u.netloc or None
        if scheme in (None, "file") and os.path.isabs(path):
            path = os.path.realpath(path)
        scheme = self.equal_schemes.get(scheme, scheme) if scheme is not None else None
        authority = self.equal_authorities.get(authority, authority) if authority is not None else None
        return scheme, authority, path.rstrip("/") or "/"


def _matches(valid: Optional[str], actual: Optional[str]) -> bool:
    return not valid or (actual is not None and valid.lower() == actual.lower())


def find_orphans(candidates: Iterable[str], referenced: set[str], equivalence: PathEquivalence) -> list[str]:
    """The ``candidates`` (listed files, normalised as ``referenced`` is) that no referenced
    location names. Raises ``MaintenanceError`` in ``ERROR`` mode when a listed file's path is
    referenced under another scheme or authority."""
    candidates = list(candidates)
    by_path: dict[str, list[tuple[Optional[str], Optional[str]]]] = {}
    for loc in referenced:
        scheme, authority, path = equivalence.parts(loc, listed=False)
        by_path.setdefault(path, []).append((scheme, authority))
    orphans: list[str] = []
    conflicts: set[tuple[Optional[str], Optional[str]]] = set()
    for loc in candidates:
        if loc in referenced:
            continue
        scheme, authority, path = equivalence.parts(loc, listed=True)
        named = by_path.get(path)
        if not named:
            orphans.append(loc)
            continue
        mismatches = [(s, a) for s, a in named if not (_matches(s, scheme) and _matches(a, authority))]
        if len(mismatches) < len(named):
            continue                               # the metadata names it under an equivalent prefix
        if equivalence.prefix_mismatch_mode == "DELETE":
            orphans.append(loc)
        elif equivalence.prefix_mismatch_mode == "ERROR":
            for s, a in mismatches:
                if not _matches(s, scheme):
                    conflicts.add((s, scheme))
                if not _matches(a, authority):
                    conflicts.add((a, authority))
    if conflicts:
        pairs = ", ".join(f"({a}, {b})" for a, b in sorted(conflicts, key=str))
        raise MaintenanceError(
            "cannot tell whether some files are orphans: the metadata refers to files at the same paths as listed "
            "ones but under another scheme or authority (metadata's, listed): " + pairs + ". Name the ones that are "
            "the same with equal_schemes / equal_authorities, or set prefix_mismatch_mode to IGNORE (keep such "
            "files) or DELETE (delete them: only when the prefixes are truly different stores); nothing was deleted")
    return orphans


__all__ = ["EQUAL_SCHEMES_DEFAULT", "PREFIX_MISMATCH_MODES", "PathEquivalence", "find_orphans"]
