# pyright: strict
"""Consumers (Paimon's ``ConsumerManager``): ``<table>/consumer/consumer-<id>`` JSON files.

A consumer records the next snapshot a reader with that ``consumer-id`` will read
(``{"nextSnapshot" : 5}``). Snapshot expiry keeps every snapshot from the smallest such id on;
``consumer.expiration-time`` drops consumers whose file was not rewritten for that long (checked
at each commit). A branch keeps its consumers under its own directory.
"""
from __future__ import annotations

import json
import re
import time
from typing import Optional

from icefloe.core.io import FileIO
from icefloe.errors import CorruptMetadataError

CONSUMER_DIR = "consumer"
CONSUMER_PREFIX = "consumer-"


def consumer_dir(meta_path: str) -> str:
    return f"{meta_path.rstrip('/')}/{CONSUMER_DIR}"


def consumer_path(meta_path: str, consumer_id: str) -> str:
    return f"{consumer_dir(meta_path)}/{CONSUMER_PREFIX}{consumer_id}"


def _ids(io: FileIO, meta_path: str) -> list[str]:
    return sorted(n[len(CONSUMER_PREFIX):] for n in io.list_dir(consumer_dir(meta_path))
                  if n.startswith(CONSUMER_PREFIX) and len(n) > len(CONSUMER_PREFIX))


def consumer(io: FileIO, meta_path: str, consumer_id: str) -> Optional[int]:
    """The next snapshot of consumer ``consumer_id``; None when it does not exist."""
    path = consumer_path(meta_path, consumer_id)
    try:
        data = io.read_bytes(path)
    except FileNotFoundError:
        return None
    try:
        return int(json.loads(data.decode("utf-8"))["nextSnapshot"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise CorruptMetadataError(path, f"not a Paimon consumer file ({e})") from None


def consumers(io: FileIO, meta_path: str) -> dict[str, int]:
    """{consumer id: next snapshot id} of every consumer."""
    out: dict[str, int] = {}
    for cid in _ids(io, meta_path):
        nxt = consumer(io, meta_path, cid)
        if nxt is not None:
            out[cid] = nxt
    return out


def reset_consumer(io: FileIO, meta_path: str, consumer_id: str, next_snapshot: int) -> None:
    """Write (or overwrite) the consumer's next snapshot, as Paimon's JSON."""
    if not consumer_id or "/" in consumer_id:
        raise ValueError(f"consumer id {consumer_id!r} must be a non-empty name without '/'")
    text = json.dumps({"nextSnapshot": int(next_snapshot)}, indent=2, separators=(",", " : "))
    io.write_bytes(consumer_path(meta_path, consumer_id), text.encode("utf-8"), overwrite=True)


def delete_consumer(io: FileIO, meta_path: str, consumer_id: str) -> None:
    path = consumer_path(meta_path, consumer_id)
    if io.exists(path):
        io.delete(path)


def clear_consumers(io: FileIO, meta_path: str, including: Optional[str] = None,
                    excluding: Optional[str] = None) -> list[str]:
    """Delete the consumers whose id fully matches the regular expression ``including`` (all by
    default) and not ``excluding``; returns their ids."""
    inc = re.compile(including) if including and including.strip() else re.compile(".*")
    exc = re.compile(excluding) if excluding and excluding.strip() else None
    gone = [cid for cid in _ids(io, meta_path) if inc.fullmatch(cid) and not (exc and exc.fullmatch(cid))]
    for cid in gone:
        delete_consumer(io, meta_path, cid)
    return gone


def min_next_snapshot(io: FileIO, meta_path: str) -> Optional[int]:
    """The smallest next snapshot of the consumers: expiry keeps it and every later snapshot."""
    values = consumers(io, meta_path).values()
    return min(values) if values else None


def expire_consumers(io: FileIO, meta_path: str, expiration_ms: int, now_ms: Optional[int] = None) -> list[str]:
    """Delete the consumers whose file is older than ``expiration_ms``; returns their ids."""
    before = (now_ms if now_ms is not None else int(time.time() * 1000)) - expiration_ms
    gone = [cid for cid in _ids(io, meta_path) if io.mtime_ms(consumer_path(meta_path, cid)) < before]
    for cid in gone:
        delete_consumer(io, meta_path, cid)
    return gone


__all__ = ["consumers", "consumer", "reset_consumer", "delete_consumer", "clear_consumers", "min_next_snapshot",
           "expire_consumers", "consumer_path"]
