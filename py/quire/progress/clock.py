"""Instants as epoch milliseconds, and the person's calendar days.

Events store ``t`` as an int of milliseconds since 1970-01-01 UTC (what JS
``Date.now()`` gives).  A *day* is a date in the person's time zone, which is
either a fixed UTC offset in minutes east of UTC (``120`` for UTC+2; in JS that
is ``-new Date().getTimezoneOffset()``) or an IANA name such as
``"Europe/Berlin"`` (resolved by ``zoneinfo``, so daylight saving is right).

>>> local_date(to_ms("2025-03-01T23:30:00Z"), 60).isoformat()
'2025-03-02'
>>> local_date(to_ms("2025-03-01T23:30:00Z"), "America/New_York").isoformat()
'2025-03-01'
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache

from quire.errors import InvalidInput

MINUTE_MS = 60_000
DAY_MS = 86_400_000

Instant = int | float | str | datetime
Zone = int | str | tzinfo | None


def to_ms(value: Instant) -> int:
    """Epoch milliseconds from an int/float (already ms), an aware datetime or an ISO-8601 string.

    >>> to_ms("1970-01-01T00:00:01+00:00"), to_ms(1500)
    (1000, 1500)
    """
    if isinstance(value, bool):
        raise TypeError("a time cannot be a bool")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value.isoformat()}: give a time zone (UTC for stored times)")
        return int(value.timestamp() * 1000)
    raise TypeError(f"cannot read a time from {type(value).__name__}")


def to_datetime(ms: int) -> datetime:
    """The UTC datetime of epoch milliseconds."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


@lru_cache(maxsize=64)
def _zone_by_name(name: str) -> tzinfo:
    if name.upper() in ("UTC", "Z", "ETC/UTC"):
        return timezone.utc
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except Exception as exc:  # ZoneInfoNotFoundError, or no tz database (Pyodide without ``tzdata``)
        raise InvalidInput(f"unknown time zone {name!r} ({exc}); give an IANA name such as 'Europe/Berlin' "
                           "or the UTC offset in minutes") from None


def zone(tz: Zone) -> tzinfo:
    """A ``tzinfo`` from minutes east of UTC, an IANA name, a ``tzinfo`` or ``None`` (UTC).

    >>> zone(-300)
    datetime.timezone(datetime.timedelta(days=-1, seconds=68400))
    """
    if tz is None:
        return timezone.utc
    if isinstance(tz, tzinfo):
        return tz
    if isinstance(tz, bool):
        raise TypeError("a time zone cannot be a bool")
    if isinstance(tz, (int, float)):
        if not -16 * 60 <= tz <= 16 * 60:
            raise InvalidInput(f"UTC offset {tz} minutes is out of range (-960..960)")
        return timezone(timedelta(minutes=tz))
    if isinstance(tz, str):
        return _zone_by_name(tz)
    raise TypeError(f"cannot read a time zone from {type(tz).__name__}")


def local_date(ms: int, tz: Zone) -> date:
    """The person's calendar date at epoch milliseconds ``ms``."""
    return to_datetime(ms).astimezone(zone(tz)).date()


def day_start_ms(day: date, tz: Zone) -> int:
    """Epoch ms of local midnight starting ``day`` (a DST gap moves it to the first valid instant)."""
    return to_ms(datetime.combine(day, time(0), tzinfo=zone(tz)))


def day_end_ms(day: date, tz: Zone) -> int:
    """Epoch ms of the local midnight ending ``day`` (exclusive bound)."""
    return day_start_ms(day + timedelta(days=1), tz)


def week_start(day: date, first_weekday: int = 0) -> date:
    """The first day of ``day``'s week; ``first_weekday`` 0 is Monday, 6 is Sunday.

    >>> week_start(date(2025, 3, 5)).isoformat(), week_start(date(2025, 3, 5), 6).isoformat()
    ('2025-03-03', '2025-03-02')
    """
    return day - timedelta(days=(day.weekday() - first_weekday) % 7)
