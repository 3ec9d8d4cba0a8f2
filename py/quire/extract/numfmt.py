"""Excel number formats: show a cell the way Excel shows it.

A cell stores 45730 and a format code such as ``dd.mm.yyyy``; the reader
sees 14.03.2025.  ``render(value, code)`` applies one format code:

>>> render(45730, "yyyy-mm-dd"), render(0.25, "0%"), render(1234.5, '#,##0.00 [$€-407]')
('2025-03-14', '25%', '1,234.50 €')

Covered: sections ``pos;neg;zero;text`` and ``[>100]`` conditions, digit
placeholders ``0 # ?``, thousands separators and ``,`` scaling, ``%``,
scientific ``E+``, quoted and ``\\``-escaped text, ``_x`` spacing, ``*x``
fills (dropped), ``[$€-407]`` currency, colours (skipped), ``@`` text,
simple fractions, and dates/times (in ``numfmt_dates``).  Built-in ids
0-49 follow Excel in the en-US locale (id 14 is ``m/d/yyyy``).  Rounding
is half away from zero on the shortest decimal form of the float, as Excel
rounds 1.005 to 1.01.

Not covered: locale-dependent decimal commas (a German Excel shows 1.234,50
where Quire shows 1,234.50), the Asian built-ins 23-36 and 50-81 (shown
as General, or as a date when they are date formats), and Excel's
fraction edge cases (``#\\:#/#`` style mixed literals).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from quire.extract import numfmt_dates
from quire.extract.numfmt_numbers import general, render_number

BUILTIN = {
    0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00",
    5: '"$"#,##0_);("$"#,##0)', 6: '"$"#,##0_);[Red]("$"#,##0)',
    7: '"$"#,##0.00_);("$"#,##0.00)', 8: '"$"#,##0.00_);[Red]("$"#,##0.00)',
    9: "0%", 10: "0.00%", 11: "0.00E+00", 12: "# ?/?", 13: "# ??/??",
    14: "m/d/yyyy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy", 18: "h:mm AM/PM", 19: "h:mm:ss AM/PM",
    20: "h:mm", 21: "h:mm:ss", 22: "m/d/yyyy h:mm",
    37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)", 40: "#,##0.00;[Red](#,##0.00)",
    41: '_(* #,##0_);_(* \\(#,##0\\);_(* "-"_);_(@_)', 42: '_("$"* #,##0_);_("$"* \\(#,##0\\);_("$"* "-"_);_(@_)',
    43: '_(* #,##0.00_);_(* \\(#,##0.00\\);_(* "-"??_);_(@_)',
    44: '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)',
    45: "mm:ss", 46: "[h]:mm:ss", 47: "mmss.0", 48: "##0.0E+0", 49: "@",
}
# East-Asian built-ins whose code depends on the locale; those that are dates show as id 14.
_ASIAN_DATES = set(range(27, 37)) | set(range(50, 59))


def builtin_code(num_fmt_id: int) -> str:
    """Format code of a built-in id.

    >>> builtin_code(10), builtin_code(30)
    ('0.00%', 'm/d/yyyy')
    """
    if num_fmt_id in _ASIAN_DATES:
        return BUILTIN[14]
    return BUILTIN.get(num_fmt_id, "General")


# ---------------------------------------------------------------- tokenizing

_COND = re.compile(r"\[\s*(<=|>=|<>|<|>|=)\s*(-?[\d.]+(?:[eE][-+]?\d+)?)\s*\]")
_ELAPSED = re.compile(r"\[(h+|m+|s+)\]", re.I)
_DATE_RUN = re.compile(r"y+|m+|d+|h+|s+|e+", re.I)


def tokenize(section: str) -> list[tuple[str, str]]:
    """Tokens of one section: ``('lit', text)``, ``('digit', '0')``, ``('date', 'mm')`` ...

    >>> tokenize('"$"#,##0_)')
    [('lit', '$'), ('digit', '#'), ('comma', ','), ('digit', '#'), ('digit', '#'), ('digit', '0'), ('lit', ' ')]
    """
    out: list[tuple[str, str]] = []
    i, n = 0, len(section)
    while i < n:
        ch = section[i]
        if ch == '"':
            end = section.find('"', i + 1)
            end = n if end < 0 else end
            out.append(("lit", section[i + 1 : end]))
            i = end + 1
        elif ch == "\\" and i + 1 < n:
            out.append(("lit", section[i + 1]))
            i += 2
        elif ch == "_" and i + 1 < n:
            out.append(("lit", " "))  # space as wide as the next character
            i += 2
        elif ch == "*" and i + 1 < n:
            i += 2  # repeat-to-fill: meaningless without a column width
        elif ch == "[":
            end = section.find("]", i)
            end = n - 1 if end < 0 else end
            inner = section[i + 1 : end]
            if _ELAPSED.fullmatch(section[i : end + 1]):
                out.append(("elapsed", inner.lower()))
            elif inner.startswith("$"):
                symbol = inner[1:].split("-")[0]
                if symbol:
                    out.append(("lit", symbol))
            # colours, conditions (read by _condition) and calendars show nothing
            i = end + 1
        elif ch in "0#?":
            out.append(("digit", ch))
            i += 1
        elif ch == ".":
            # after seconds a dot starts fractions of a second: "ss.000"
            m = re.match(r"\.(0+)", section[i:])
            if m and any(k in ("date", "elapsed") and v[0] in "s" for k, v in out[-1:]):
                out.append(("subsec", m.group(1)))
                i += len(m.group(0))
            else:
                out.append(("dot", "."))
                i += 1
        elif ch == ",":
            out.append(("comma", ","))
            i += 1
        elif ch == "%":
            out.append(("pct", "%"))
            i += 1
        elif ch == "@":
            out.append(("at", "@"))
            i += 1
        elif ch in "eE" and i + 1 < n and section[i + 1] in "+-":
            out.append(("exp", section[i + 1]))
            i += 2
        elif section[i : i + 5].upper() == "AM/PM":
            out.append(("ampm", "AM/PM"))
            i += 5
        elif section[i : i + 3].upper() == "A/P":
            out.append(("ampm", section[i : i + 3]))
            i += 3
        elif section[i : i + 7].lower() == "general":
            out.append(("general", ""))
            i += 7
        elif ch.lower() in "ymdhs" or (ch in "eE" and any(k == "date" for k, _ in out)):
            run = _DATE_RUN.match(section, i).group(0)
            out.append(("date", run.lower()))
            i += len(run)
        elif ch == "/":
            out.append(("slash", "/"))
            i += 1
        else:
            out.append(("lit", ch))
            i += 1
    return out


def split_sections(code: str) -> list[str]:
    """Split on ``;`` outside quotes, brackets and escapes.

    >>> split_sections('0.0;"minus "0.0;"nil"')
    ['0.0', '"minus "0.0', '"nil"']
    """
    parts, start, i, quoted, depth = [], 0, 0, False, 0
    while i < len(code):
        ch = code[i]
        if ch == "\\" and not quoted:
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "[":
            depth += 1
        elif not quoted and ch == "]":
            depth = max(0, depth - 1)
        elif ch == ";" and not quoted and not depth:
            parts.append(code[start:i])
            start = i + 1
        i += 1
    parts.append(code[start:])
    return parts


def _condition(section: str):
    m = _COND.search(section)
    return (m.group(1), float(m.group(2))) if m else None


def _holds(cond, x: float) -> bool:
    op, limit = cond
    return {"<": x < limit, ">": x > limit, "<=": x <= limit, ">=": x >= limit, "=": x == limit, "<>": x != limit}[op]


# ---------------------------------------------------------------- rendering


@lru_cache(maxsize=512)
def _parsed(code: str) -> tuple[tuple[tuple, frozenset, object], ...]:
    """Per section: (tokens, token kinds, condition); a workbook has few codes and many cells."""
    out = []
    for section in split_sections(code):
        tokens = tuple(tokenize(section))
        out.append((tokens, frozenset(kind for kind, _ in tokens), _condition(section)))
    return tuple(out)


def render(value, code: str, date1904: bool = False) -> str:
    """Text Excel shows for ``value`` (float, or str for text cells) under ``code``."""
    sections = _parsed(code or "General")
    if isinstance(value, str):
        if len(sections) >= 4:
            return _text(sections[3][0], value)
        tokens, kinds, _ = sections[0]
        if len(sections) == 1 and ("at" in kinds or not kinds & {"digit", "date", "elapsed", "general"}):
            return _text(tokens, value)
        return value
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    section, sign = _choose(sections, x)
    if section is None:
        return general(x)
    tokens, kinds, _ = section
    if kinds & {"date", "elapsed", "ampm"}:
        return numfmt_dates.render_date(x, tokens, date1904, general)
    if not tokens:
        return ""
    if "general" in kinds:
        body = "".join(general(abs(x)) if k == "general" else v for k, v in tokens if k in ("general", "lit"))
        return ("-" if sign and x < 0 else "") + body
    if "digit" not in kinds:
        return ("-" if sign and x < 0 else "") + "".join(v for k, v in tokens if k in ("lit", "dot", "comma", "pct", "slash"))
    text = render_number(abs(x), tokens)
    return ("-" if sign and x < 0 and text.strip("0.,% ") else "") + text


def _choose(sections, x: float):
    """(section, show minus sign) for a number; section None means General."""
    numeric = sections[:3]
    if any(cond for _, _, cond in numeric):
        for section in numeric:
            if section[2] is None or _holds(section[2], x):
                return section, True
        return None, True
    if len(numeric) == 1 or x > 0 or (x == 0 and len(numeric) == 2):
        return numeric[0], True
    if x < 0:
        return numeric[1], False
    return numeric[2], True


def _text(tokens, text: str) -> str:
    return "".join(text if kind == "at" else value for kind, value in tokens if kind in ("at", "lit", "dot", "comma", "slash"))
