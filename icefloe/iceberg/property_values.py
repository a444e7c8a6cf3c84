"""Table property values read as numbers, one way for every property that takes one: an integer, and
a compression level checked against its codec's range. A value that is neither is an ``IcefloeError``
naming the property."""
from __future__ import annotations

from typing import Mapping, Optional

from icefloe.errors import IcefloeError


def integer(prop: str, raw: object) -> int:
    """``raw``, the value of table property ``prop``, as an integer."""
    try:
        return int(str(raw).strip())
    except ValueError:
        raise IcefloeError(f"table property {prop}={raw!r} is not an integer") from None


def codec_level(prop: str, raw: object, codec: str, codec_property: str, levels: Mapping[str, range]) -> Optional[int]:
    """The level ``raw`` (table property ``prop``) gives codec ``codec`` (set by ``codec_property``);
    None where it is not set, or where the codec takes no level (``levels`` has no range for it: a
    level beside it is left unused, as the Java runtime leaves it)."""
    if raw is None:
        return None
    level = integer(prop, raw)
    allowed = levels.get(codec)
    if allowed is None:
        return None
    if level not in allowed:
        raise IcefloeError(f"table property {prop}={level} is out of range for the {codec} codec of "
                           f"{codec_property} ({allowed.start} to {allowed.stop - 1})")
    return level


__all__ = ["integer", "codec_level"]
