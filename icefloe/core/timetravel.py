"""Points in time for time travel, as both formats accept them."""
from __future__ import annotations

import datetime as _dt
from typing import Union

#: a point in time as the time-travel arguments (``as_of=``) take it
AsOf = Union[_dt.datetime, _dt.date, str, int, float]


def to_epoch_ms(as_of: AsOf) -> int:
    """A datetime (naive = local time, as Spark's TIMESTAMP AS OF), date, ISO string or epoch ms."""
    if isinstance(as_of, _dt.datetime):
        if as_of.tzinfo is None:
            as_of = as_of.astimezone()
        return int(as_of.timestamp() * 1000)
    if isinstance(as_of, _dt.date):
        return int(_dt.datetime(as_of.year, as_of.month, as_of.day).astimezone().timestamp() * 1000)
    if isinstance(as_of, str):
        return to_epoch_ms(_dt.datetime.fromisoformat(as_of))
    return int(as_of)
