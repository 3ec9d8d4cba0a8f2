"""Dates and times in Excel number formats: serial numbers to ``dd.mm.yyyy hh:mm``.

Excel stores a date as days since an epoch.  In the 1900 system (the
default) day 1 is 1900-01-01 and day 60 is 1900-02-29, a day that never
existed: Lotus 1-2-3 thought 1900 a leap year and Excel kept the bug, so
real dates from 1900-03-01 on are offset by it.  Workbooks saved with
``<workbookPr date1904="1"/>`` (old Mac Excel) count from 1904-01-01 = 0.

>>> serial_to_date(45730, False), serial_to_date(60, False), serial_to_date(0, True)
((2025, 3, 14), (1900, 2, 29), (1904, 1, 1))

``m`` and ``mm`` mean minutes right after an hour or before seconds, and
months everywhere else; ``[h]``, ``[m]``, ``[s]`` count elapsed time.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
MAX_SERIAL = 2958465  # 9999-12-31, Excel's last date


def serial_to_date(days: int, date1904: bool) -> tuple[int, int, int]:
    """(year, month, day) of a whole serial number."""
    if date1904:
        d = date(1904, 1, 1) + timedelta(days=days)
    elif days == 60:
        return (1900, 2, 29)
    elif days == 0:
        return (1900, 1, 0)  # Excel shows 1900-01-00 for zero
    else:
        d = date(1899, 12, 31) + timedelta(days=days if days < 60 else days - 1)
    return d.year, d.month, d.day


def weekday(days: int, date1904: bool) -> int:
    """0 = Sunday.  In the 1900 system day 1 is a Sunday (as Excel believes)."""
    return (days + 5) % 7 if date1904 else (days - 1) % 7 if days >= 1 else 6


def _minute_tokens(tokens) -> set[int]:
    """Indexes of m/mm tokens that mean minutes."""
    timed = [(i, v) for i, (k, v) in enumerate(tokens) if k in ("date", "elapsed")]
    minutes = set()
    for n, (i, v) in enumerate(timed):
        if v not in ("m", "mm"):
            continue
        prev = timed[n - 1][1].strip("[]") if n else ""
        nxt = timed[n + 1][1].strip("[]") if n + 1 < len(timed) else ""
        if prev[:1] in ("h", "s") or nxt[:1] == "s":
            minutes.add(i)
    return minutes


@lru_cache(maxsize=512)
def _plan(tokens: tuple) -> tuple:
    """What a format needs, worked out once per code: (elapsed?, sub-second places, 12-hour?,
    minute token indexes, elapsed units, needs a calendar date?)."""
    elapsed = any(k == "elapsed" for k, _ in tokens)
    places = max((len(v) for k, v in tokens if k == "subsec"), default=0)
    twelve = any(k == "ampm" for k, _ in tokens)
    # With [h] present a plain h counts elapsed hours too (likewise [s] and ss), as Excel does.
    totals = frozenset(v[0] for k, v in tokens if k == "elapsed")
    calendar = not elapsed or any(k == "date" and v[0] in "ymd" for k, v in tokens)
    return elapsed, places, twelve, frozenset(_minute_tokens(tokens)), totals, calendar


def render_date(x: float, tokens, date1904: bool, fallback) -> str:
    """Render ``x`` (days) through date/time tokens; out-of-range dates fall back to General."""
    elapsed, places, twelve, minutes, totals, calendar = _plan(tuple(tokens))
    if (x < 0 and not elapsed) or x > MAX_SERIAL + 1:
        return fallback(x)
    negative = x < 0
    x = abs(x)
    # Whole units of 10**-places seconds, rounded half up as Excel does.
    units = int((Decimal(repr(x)) * 86400 * 10**places).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    per_second = 10**places
    total_seconds, sub = divmod(units, per_second)
    days, secs = divmod(total_seconds, 86400)
    year, month, day = serial_to_date(days, date1904) if calendar else (1900, 1, 0)
    hour, minute, second = secs // 3600, secs % 3600 // 60, secs % 60
    out = []
    for i, (kind, v) in enumerate(tokens):
        if kind == "elapsed":
            unit = {"h": 3600, "m": 60, "s": 1}[v[0]]
            out.append(str(total_seconds // unit).rjust(len(v), "0"))
        elif kind == "date" and v[0] in totals and v[0] != "m" and not twelve:
            out.append(str(total_seconds // {"h": 3600, "s": 1}[v[0]]).rjust(len(v), "0"))
        elif kind == "date":
            out.append(_date_token(v, i in minutes, year, month, day, days, date1904,
                                   (hour % 12 or 12) if twelve else hour, minute, second))
        elif kind == "subsec":
            out.append("." + str(sub).rjust(places, "0")[: len(v)])
        elif kind == "ampm":
            pm = hour >= 12
            if v.upper() == "AM/PM":
                out.append("PM" if pm else "AM")
            else:
                letter = v[2] if pm else v[0]
                out.append(letter)
        elif kind in ("lit", "dot", "comma", "pct", "slash", "digit"):
            out.append(v if kind != "digit" else "")
    return ("-" if negative else "") + "".join(out)


def _date_token(v: str, is_minute: bool, year, month, day, days, date1904, hour, minute, second) -> str:
    head, n = v[0], len(v)
    if head in "ye":
        return str(year).rjust(4, "0") if n > 2 or head == "e" else f"{year % 100:02d}"
    if head == "m":
        if is_minute:
            return f"{minute:02d}" if n == 2 else str(minute)
        if n >= 5:
            return MONTHS[month - 1][0]
        if n >= 3:
            return MONTHS[month - 1] if n == 4 else MONTHS[month - 1][:3]
        return f"{month:02d}" if n == 2 else str(month)
    if head == "d":
        if n >= 3:
            name = DAYS[weekday(days, date1904)]
            return name if n >= 4 else name[:3]
        return f"{day:02d}" if n == 2 else str(day)
    if head == "h":
        return f"{hour:02d}" if n >= 2 else str(hour)
    if head == "s":
        return f"{second:02d}" if n >= 2 else str(second)
    return v
