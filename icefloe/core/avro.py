"""Records of an Avro file, as both formats' metadata files hold them (manifests, manifest lists,
index manifests): each datum a record, decoded to a dict. No I/O of its own."""
from __future__ import annotations

import io
from typing import Any, Iterable

import fastavro


def as_records(data: Iterable[object]) -> list[dict[str, Any]]:
    """The data of an Avro file as records; ``ValueError`` when a datum is not a record (a file of
    another shape than the metadata file the caller expected)."""
    out: list[dict[str, Any]] = []
    for d in data:
        if not isinstance(d, dict):
            raise ValueError(f"a datum of type {type(d).__name__} where a record was expected")
        out.append(d)
    return out


def read_records(data: bytes) -> list[dict[str, Any]]:
    """Every record of the Avro file ``data``; fastavro's errors on a damaged file, or ``ValueError``."""
    return as_records(fastavro.reader(io.BytesIO(data)))
