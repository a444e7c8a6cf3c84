"""How a table's manifests are compressed: Iceberg's ``write.manifest.compression-codec`` (``gzip``, the
default, ``zstd``, ``snappy`` or ``uncompressed``, any case) and ``write.manifest.compression-level`` (an
integer, for ``gzip`` and ``zstd``), as the Java runtime reads them. Every manifest icefloe writes for a
table (a commit's, a merge's, a rewrite's) takes its Avro codec from them; a value icefloe cannot honour
is an ``IcefloeError`` naming the property, raised before a commit writes anything.

Where the level is not set, ``gzip`` compresses at zlib's default level and ``zstd`` at level 1 (the Java
runtime: 9 and 1). As in the Java runtime, ``snappy`` and ``uncompressed`` take no level: one set beside
them (a table another engine configured) is left unused rather than refused, so such a table stays
writable; an unparseable or out-of-range level is refused whatever the codec.
"""
from __future__ import annotations

import importlib
import zlib
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from icefloe.errors import IcefloeError
from icefloe.iceberg.property_values import codec_level

CODEC_PROPERTY = "write.manifest.compression-codec"
LEVEL_PROPERTY = "write.manifest.compression-level"

# Iceberg's codec names and the Avro container codec each writes
_AVRO = {"gzip": "deflate", "zstd": "zstandard", "snappy": "snappy", "uncompressed": "null"}
# the levels each leveled codec takes
_LEVELS = {"gzip": range(-1, 10), "zstd": range(-131072, 23)}
_ZSTD_DEFAULT_LEVEL = 1


@dataclass(frozen=True)
class ManifestCodec:
    """A manifest codec in Iceberg's name (``gzip``, ``zstd``, ``snappy``, ``uncompressed``) and its
    level (None: the codec's default)."""
    name: str = "gzip"
    level: Optional[int] = None

    @classmethod
    def of(cls, properties: Mapping[str, str]) -> "ManifestCodec":
        """The codec a table's properties ask for; an ``IcefloeError`` naming the property for one
        icefloe cannot honour."""
        raw = properties.get(CODEC_PROPERTY, "gzip")
        name = str(raw).strip().lower()
        if name not in _AVRO:
            raise IcefloeError(f"table property {CODEC_PROPERTY}={raw!r} is not a manifest codec: use one of "
                               f"{', '.join(_AVRO)}")
        level = codec_level(LEVEL_PROPERTY, properties.get(LEVEL_PROPERTY), name, CODEC_PROPERTY, _LEVELS)
        return cls(name, level)

    @property
    def avro(self) -> str:
        """The Avro container codec of the manifests (``avro.codec``)."""
        return _AVRO[self.name]

    @property
    def avro_level(self) -> Optional[int]:
        """The level the Avro writer is given (None: its own default)."""
        if self.name == "zstd":
            return self.level if self.level is not None else _ZSTD_DEFAULT_LEVEL
        return self.level if self.name == "gzip" else None

    def compress(self, raw: bytes) -> bytes:
        """One Avro block's bytes compressed by this codec, as the container holds them."""
        if self.name == "gzip":
            c = zlib.compressobj(self.level if self.level is not None else -1, zlib.DEFLATED, -15)
            return c.compress(raw) + c.flush()
        if self.name == "zstd":
            return _zstd().compress(raw, level=self.avro_level)
        if self.name == "snappy":
            import cramjam

            return bytes(cramjam.snappy.compress_raw(raw)) + zlib.crc32(raw).to_bytes(4, "big")
        return raw


def _zstd() -> Any:
    """The zstd module fastavro writes with: Python's own from 3.14, else its backport."""
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise IcefloeError(f"{CODEC_PROPERTY}=zstd needs the backports.zstd module, which icefloe installs")


DEFAULT = ManifestCodec()

__all__ = ["CODEC_PROPERTY", "LEVEL_PROPERTY", "ManifestCodec", "DEFAULT"]
