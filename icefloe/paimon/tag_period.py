# pyright: strict
"""The options of Paimon's automatic tags, and the tag periods they describe.

``tag.automatic-creation`` says from what a snapshot's time comes: ``process-time`` (when it was
committed, in ``sink.process-time-zone``, by default the machine's zone), ``watermark`` (its
watermark, in ``sink.watermark-time-zone``, by default UTC; a snapshot without one makes no tag),
``batch`` (one tag per batch write) or ``none``. The period is ``tag.creation-period``
(``daily``, ``hourly``, ``two-hours``) or, when set, ``tag.creation-period-duration``; the tag
of a period is named by its start, formatted as ``tag.period-formatter`` says:

======================= ================ ============== ===========================
period                  with_dashes      without_dashes without_dashes_and_spaces
======================= ================ ============== ===========================
daily                   ``2024-12-04``   ``20241204``   ``20241204``
hourly                  ``2024-12-04 10`` ``20241204 10`` ``2024120410``
two-hours               ``2024-12-04 10`` (always)
creation-period-duration ``202412041030`` (always, to the minute)
======================= ================ ============== ===========================

A tag name is an automatic tag when it parses in the table's format (a daily tag name is judged by
what comes before its first space). Periods are counted from 1970-01-01 00:00 of the local
wall-clock time, as Paimon counts them. Pure functions over the option map: no I/O here.
"""
from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from dataclasses import dataclass
from typing import Callable, Collection, Mapping, Optional

from icefloe.errors import SchemaError
from icefloe.paimon.options import parse_duration_ms
from icefloe.paimon.snapshot import NO_WATERMARK

AUTOMATIC_CREATION = "tag.automatic-creation"
CREATION_PERIOD = "tag.creation-period"
CREATION_DELAY = "tag.creation-delay"
PERIOD_FORMATTER = "tag.period-formatter"
PERIOD_DURATION = "tag.creation-period-duration"
NUM_RETAINED_MAX = "tag.num-retained-max"
DEFAULT_TIME_RETAINED = "tag.default-time-retained"
TIME_EXPIRE_ENABLED = "tag.time-expire-enabled"
AUTOMATIC_COMPLETION = "tag.automatic-completion"
BATCH_CUSTOMIZED_NAME = "tag.batch.customized-name"
PROCESS_TIME_ZONE = "sink.process-time-zone"
WATERMARK_TIME_ZONE = "sink.watermark-time-zone"

MODES = ("none", "process-time", "watermark", "batch")
PERIODS = {"daily": _dt.timedelta(days=1), "hourly": _dt.timedelta(hours=1), "two-hours": _dt.timedelta(hours=2)}
FORMATTERS = ("with_dashes", "without_dashes", "without_dashes_and_spaces")
_EPOCH = _dt.datetime(1970, 1, 1)

# (regex of a name, strftime pattern) per format: each field has a fixed width
_DAY_DASHES = (r"(\d{4})-(\d{2})-(\d{2})", "%Y-%m-%d")
_DAY = (r"(\d{4})(\d{2})(\d{2})", "%Y%m%d")
_HOUR_DASHES = (r"(\d{4})-(\d{2})-(\d{2}) (\d{2})", "%Y-%m-%d %H")
_HOUR_SPACE = (r"(\d{4})(\d{2})(\d{2}) (\d{2})", "%Y%m%d %H")
_HOUR = (r"(\d{4})(\d{2})(\d{2})(\d{2})", "%Y%m%d%H")
_MINUTE = (r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})", "%Y%m%d%H%M")


def _get(options: Mapping[str, str], key: str, default: str) -> str:
    value = options.get(key)
    return default if value is None else str(value).strip()


def _choice(options: Mapping[str, str], key: str, default: str, choices: Collection[str]) -> str:
    value = _get(options, key, default).lower()
    if value not in choices:
        raise SchemaError(f"option {key!r} = {options.get(key)!r} is not one of {', '.join(choices)}")
    return value


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    value = _get(options, key, str(default).lower()).lower()
    if value not in ("true", "false"):
        raise SchemaError(f"option {key!r} = {options.get(key)!r} must be true or false")
    return value == "true"


def _duration(options: Mapping[str, str], key: str) -> Optional[_dt.timedelta]:
    value = options.get(key)
    if value is None or not str(value).strip():
        return None
    try:
        return _dt.timedelta(milliseconds=parse_duration_ms(value))
    except SchemaError as e:
        raise SchemaError(f"option {key!r}: {e}") from None


_OFFSET = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


def zone(name: Optional[str], key: str) -> Optional[_dt.tzinfo]:
    """A zone id as Java reads one (``Asia/Shanghai``, ``UTC``, ``GMT-08:00``); None: the machine's."""
    if name is None or not name.strip():
        return None
    name = name.strip()
    if name.upper() in ("UTC", "GMT", "Z"):
        return _dt.timezone.utc
    m = _OFFSET.match(name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return _dt.timezone(sign * _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0)))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise SchemaError(f"option {key!r} = {name!r} is not a time zone (e.g. 'Asia/Shanghai', "
                          "'GMT-08:00', 'UTC')") from None


def local_time(millis: int, tz: Optional[_dt.tzinfo]) -> _dt.datetime:
    """Epoch milliseconds as a wall-clock time of ``tz`` (None: the machine's zone)."""
    instant = _dt.datetime.fromtimestamp(millis / 1000, tz or _dt.timezone.utc)
    if tz is None:
        instant = instant.astimezone()
    return instant.replace(tzinfo=None)


@dataclass(frozen=True)
class PeriodHandler:
    """One period length and the format of its tags' names (Paimon's ``TagPeriodHandler``)."""
    period: _dt.timedelta
    regex: str
    pattern: str
    daily: bool = False

    def tag_to_time(self, name: str) -> Optional[_dt.datetime]:
        """The start of the period tag ``name`` names, or None if it is no automatic tag."""
        text = name.split(" ")[0] if self.daily else name
        m = re.fullmatch(self.regex, text)
        if m is None:
            return None
        try:
            parts = [int(g) for g in m.groups()] + [0, 0]
            return _dt.datetime(parts[0], parts[1], parts[2], parts[3], parts[4])
        except ValueError:
            return None

    def is_auto_tag(self, name: str) -> bool:
        return self.tag_to_time(name) is not None

    def time_to_tag(self, time: _dt.datetime) -> str:
        return time.strftime(self.pattern)

    def next_time(self, time: _dt.datetime) -> _dt.datetime:
        return time + self.period

    def previous_tag_time(self, time: _dt.datetime) -> _dt.datetime:
        """The start of the period before the one ``time`` falls in (the tag a time closes)."""
        elapsed = (time - _EPOCH) // _dt.timedelta(milliseconds=1)
        step = self.period // _dt.timedelta(milliseconds=1)
        return _EPOCH + _dt.timedelta(milliseconds=(elapsed // step) * step) - self.period


@dataclass(frozen=True)
class AutoTagOptions:
    """A table's automatic-tag options, parsed and checked."""
    mode: str
    handler: PeriodHandler
    delay: _dt.timedelta
    num_retained_max: Optional[int]
    default_time_retained: Optional[_dt.timedelta]
    time_expire_enabled: bool
    automatic_completion: bool
    batch_name: Optional[str]
    process_zone: Optional[_dt.tzinfo]
    watermark_zone: Optional[_dt.tzinfo]

    def snapshot_time(self) -> Optional[Callable[[int, Optional[int]], Optional[_dt.datetime]]]:
        """``(time_millis, watermark) -> wall-clock time or None`` for the time-driven modes."""
        if self.mode == "process-time":
            return lambda millis, _wm: local_time(millis, self.process_zone)
        if self.mode == "watermark":
            return lambda _millis, wm: None if wm is None or wm == NO_WATERMARK else \
                local_time(wm, self.watermark_zone)
        return None


def period_handler(options: Mapping[str, str]) -> PeriodHandler:
    duration = _duration(options, PERIOD_DURATION)
    if duration is not None:
        if duration <= _dt.timedelta(0):
            raise SchemaError(f"option {PERIOD_DURATION!r} must be a positive duration")
        return PeriodHandler(duration, *_MINUTE)
    period = _choice(options, CREATION_PERIOD, "daily", tuple(PERIODS))
    formatter = _choice(options, PERIOD_FORMATTER, "with_dashes", FORMATTERS)
    if period == "daily":
        return PeriodHandler(PERIODS[period], *(_DAY_DASHES if formatter == "with_dashes" else _DAY), daily=True)
    if period == "two-hours":
        return PeriodHandler(PERIODS[period], *_HOUR_DASHES)
    fmt = {"with_dashes": _HOUR_DASHES, "without_dashes": _HOUR_SPACE, "without_dashes_and_spaces": _HOUR}
    return PeriodHandler(PERIODS[period], *fmt[formatter])


def auto_tag_options(options: Mapping[str, str]) -> AutoTagOptions:
    """The automatic-tag options of ``options``; a value Paimon would not accept is a ``SchemaError``
    naming the option."""
    mode = _choice(options, AUTOMATIC_CREATION, "none", MODES)
    handler = period_handler(options)
    delay = _duration(options, CREATION_DELAY) or _dt.timedelta(0)
    if mode in ("process-time", "watermark") and not handler.period > delay:
        raise SchemaError(f"option {CREATION_DELAY!r} ({options.get(CREATION_DELAY)}) must be shorter than the tag "
                          f"period ({handler.period})")
    retained_max = options.get(NUM_RETAINED_MAX)
    if retained_max is not None and str(retained_max).strip():
        try:
            retained_max = int(str(retained_max).strip())
        except ValueError:
            raise SchemaError(f"option {NUM_RETAINED_MAX!r} = {retained_max!r} must be an integer") from None
    else:
        retained_max = None
    retained = _duration(options, DEFAULT_TIME_RETAINED)
    if retained is not None and retained <= _dt.timedelta(0):
        raise SchemaError(f"option {DEFAULT_TIME_RETAINED!r} must be a positive duration")
    name = options.get(BATCH_CUSTOMIZED_NAME)
    return AutoTagOptions(mode, handler, delay, retained_max, retained,
                          _bool(options, TIME_EXPIRE_ENABLED, True), _bool(options, AUTOMATIC_COMPLETION, False),
                          str(name) if name is not None and str(name).strip() else None,
                          zone(options.get(PROCESS_TIME_ZONE), PROCESS_TIME_ZONE),
                          zone(_get(options, WATERMARK_TIME_ZONE, "UTC"), WATERMARK_TIME_ZONE))


__all__ = ["AutoTagOptions", "PeriodHandler", "auto_tag_options", "period_handler", "local_time", "zone", "MODES"]
