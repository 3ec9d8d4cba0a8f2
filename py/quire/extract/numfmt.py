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
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from quire.extract import numfmt_dates

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


def is_date_format(code: str) -> bool:
    """Does the first section show a date or time?  ``'0.00%'`` no, ``'[h]:mm'`` yes."""
    return any(kind in ("date", "elapsed", "ampm") for kind, _ in tokenize(split_sections(code)[0]))


# ---------------------------------------------------------------- rendering


def render(value, code: str, date1904: bool = False) -> str:
    """Text Excel shows for ``value`` (float, or str for text cells) under ``code``."""
    sections = split_sections(code or "General")
    if isinstance(value, str):
        if len(sections) >= 4:
            return _text(tokenize(sections[3]), value)
        tokens = tokenize(sections[0])
        kinds = {kind for kind, _ in tokens}
        if len(sections) == 1 and ("at" in kinds or not kinds & {"digit", "date", "elapsed", "general"}):
            return _text(tokens, value)
        return value
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    section, sign = _choose(sections, x)
    if section is None:
        return general(x)
    tokens = tokenize(section)
    kinds = {kind for kind, _ in tokens}
    if kinds & {"date", "elapsed", "ampm"}:
        return numfmt_dates.render_date(x, tokens, date1904, general)
    if not kinds & {"digit", "general"} and not tokens:
        return ""
    if "general" in kinds:
        body = "".join(general(abs(x)) if k == "general" else v for k, v in tokens if k in ("general", "lit"))
        return ("-" if sign and x < 0 else "") + body
    if not kinds & {"digit"}:
        return ("-" if sign and x < 0 else "") + "".join(v for k, v in tokens if k in ("lit", "dot", "comma", "pct", "slash"))
    text = _number(abs(x), tokens)
    return ("-" if sign and x < 0 and text.strip("0.,% ") else "") + text


def _choose(sections: list[str], x: float):
    """(section, show minus sign) for a number; section None means General."""
    numeric = sections[:3]
    conds = [_condition(s) for s in numeric]
    if any(conds):
        for section, cond in zip(numeric, conds):
            if cond is None:
                return section, True
            if _holds(cond, x):
                return section, True
        return None, True
    if len(numeric) == 1 or x > 0 or (x == 0 and len(numeric) == 2):
        return numeric[0], True
    if x < 0:
        return numeric[1], False
    return numeric[2], True


def _text(tokens, text: str) -> str:
    return "".join(text if kind == "at" else value for kind, value in tokens if kind in ("at", "lit", "dot", "comma", "slash"))


def _round(x: Decimal, places: int) -> Decimal:
    return x.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def general(x: float) -> str:
    """Excel's General format: at most 11 characters, else scientific.

    >>> general(12.343999999999999), general(112345900000.0), general(1e-10)
    ('12.344', '1.12346E+11', '1E-10')
    """
    if x == 0:
        return "0"
    a = abs(x)
    sign = "-" if x < 0 else ""
    if 1e-9 <= a < 1e11:
        digits = len(str(int(a))) if a >= 1 else 1
        text = format(_round(Decimal(repr(a)), max(0, 10 - digits if a >= 1 else 9)), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if text != "0":
            return sign + text
    mantissa, exponent = f"{a:.5E}".split("E")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{sign}{mantissa}E{exponent[0]}{int(exponent[1:]):02d}"


def _number(x: float, tokens: list[tuple[str, str]]) -> str:
    """Render a non-negative number through digit placeholders and literals."""
    digit_at = [i for i, (k, _) in enumerate(tokens) if k == "digit"]
    exp_at = next((i for i, (k, _) in enumerate(tokens) if k == "exp"), None)
    slash_at = next((i for i, (k, _) in enumerate(tokens) if k == "slash"), None)
    after = tokens[slash_at + 1] if slash_at is not None and slash_at + 1 < len(tokens) else ("", "")
    if slash_at is not None and any(i < slash_at for i in digit_at) and (after[0] == "digit" or after[1].isdigit()):
        return _fraction(x, tokens, slash_at)
    mantissa_end = exp_at if exp_at is not None else len(tokens)
    dot_at = next((i for i, (k, _) in enumerate(tokens[:mantissa_end]) if k == "dot"), mantissa_end)
    int_pos = [i for i in digit_at if i < dot_at]
    frac_pos = [i for i in digit_at if dot_at < i < mantissa_end]
    exp_pos = [i for i in digit_at if exp_at is not None and i > exp_at]

    value = Decimal(repr(x))
    value *= Decimal(100) ** sum(1 for k, _ in tokens if k == "pct")
    grouping, scale_commas, literal_commas = _commas(tokens, int_pos, frac_pos, dot_at, mantissa_end)
    value /= Decimal(1000) ** len(scale_commas)

    exponent = 0
    if exp_at is not None:
        value, exponent = _scientific(value, tokens, int_pos, len(frac_pos))
    value = _round(value, len(frac_pos))
    int_digits, _, frac_digits = format(value, "f").partition(".")
    int_digits = int_digits.lstrip("0")

    out = {i: "" for i in digit_at}
    out.update(_integer_part(int_digits, [tokens[i][1] for i in int_pos], int_pos, grouping))
    out.update(_fraction_part(frac_digits.ljust(len(frac_pos), "0"), [tokens[i][1] for i in frac_pos], frac_pos))
    if exp_at is not None:
        digits = str(abs(exponent)).rjust(sum(1 for i in exp_pos if tokens[i][1] == "0"), "0")
        out.update({i: "" for i in exp_pos})
        if exp_pos:
            out[exp_pos[0]] = digits
        sign = "-" if exponent < 0 else ("+" if tokens[exp_at][1] == "+" else "")
        out[exp_at] = "E" + sign
    pieces = []
    for i, (kind, text) in enumerate(tokens):
        if i in out:
            pieces.append(out[i])
        elif kind in ("lit", "pct", "slash") or (kind == "dot" and i == dot_at) or i in literal_commas:
            pieces.append(text)
        elif kind == "dot":
            pieces.append(".")
    return "".join(pieces)


def _commas(tokens, int_pos, frac_pos, dot_at, end):
    """(thousands grouping?, scaling comma indexes, literal comma indexes)."""
    grouping, scale, literal = False, [], []
    placeholders = int_pos + frac_pos
    for i, (kind, _) in enumerate(tokens[:end]):
        if kind != "comma":
            continue
        before = any(p < i for p in placeholders)
        after_int = any(i < p for p in int_pos)
        if before and after_int and i < dot_at:
            grouping = True
        elif before and not any(i < p < (dot_at if i < dot_at else end) for p in placeholders):
            scale.append(i)
        else:
            literal.append(i)
    return grouping, scale, literal


def _integer_part(digits: str, kinds: list[str], positions: list[int], grouping: bool) -> dict[int, str]:
    """Assign integer digits to placeholders from the right; the leftmost takes any overflow."""
    if not positions:
        return {}
    chars = []  # one entry per placeholder, right to left
    for k in range(max(len(kinds), len(digits))):
        if k < len(digits):
            chars.append(digits[-1 - k])
        else:
            kind = kinds[-1 - k]
            chars.append("0" if kind == "0" else " " if kind == "?" else "")
    if grouping:
        text, count = "", 0
        for ch in chars:
            if ch:  # a "?" pad keeps the width of the separator it replaces
                if count and count % 3 == 0:
                    text = ("," if ch != " " else " ") + text
                count += 1
            text = ch + text
        return {positions[0]: text, **{p: "" for p in positions[1:]}}
    out = {}
    for k, pos in enumerate(reversed(positions)):
        out[pos] = chars[k]
    out[positions[0]] = "".join(reversed(chars[len(positions) - 1 :]))
    return out


def _fraction_part(digits: str, kinds: list[str], positions: list[int]) -> dict[int, str]:
    chars = list(digits[: len(positions)])
    for k in range(len(chars) - 1, -1, -1):  # trailing zeros vanish under # and become spaces under ?
        if chars[k] != "0" or kinds[k] == "0":
            break
        chars[k] = " " if kinds[k] == "?" else ""
    return dict(zip(positions, chars))


def _scientific(value: Decimal, tokens, int_pos, frac_places: int) -> tuple[Decimal, int]:
    if value == 0:
        return value, 0
    exponent = value.adjusted()
    width = len(int_pos)
    if width > 1 and tokens[int_pos[0]][1] == "#":
        exponent -= exponent % width  # engineering notation: ##0.0E+0 steps by 3
    else:
        exponent -= max(0, sum(1 for i in int_pos if tokens[i][1] == "0") - 1)
    mantissa = value.scaleb(-exponent)
    if _round(mantissa, frac_places) >= Decimal(10) ** max(1, width if width > 1 and tokens[int_pos[0]][1] == "#" else 1):
        exponent += width if width > 1 and tokens[int_pos[0]][1] == "#" else 1
        mantissa = value.scaleb(-exponent)
    return mantissa, exponent


def _fraction(x: float, tokens, slash_at: int) -> str:
    """``# ?/?``, ``# ??/??`` and ``# ?/8``: an optional whole part, then a fraction.

    >>> _fraction(23.75, tokenize("# ?/?"), 3), _fraction(1 / 3, tokenize("# ?/8"), 3)
    ('23 3/4', ' 3/8')
    """
    j, numer = slash_at - 1, []
    while j >= 0 and tokens[j][0] == "digit":
        numer.insert(0, j)
        j -= 1
    whole_pos = [i for i in range(j + 1) if tokens[i][0] == "digit"]
    k, den_pos, fixed = slash_at + 1, [], ""
    while k < len(tokens) and (tokens[k][0] == "digit" or (tokens[k][0] == "lit" and tokens[k][1].isdigit())):
        if tokens[k][0] == "digit":
            den_pos.append(k)
        else:
            fixed += tokens[k][1]
        k += 1
    whole = int(x) if whole_pos else 0
    rest = Fraction(repr(x)) - whole
    if fixed and not den_pos:
        den = int(fixed)
        num = int(_round(Decimal(rest.numerator * den) / Decimal(rest.denominator), 0))
    else:
        approx = rest.limit_denominator(10 ** max(1, len(den_pos)) - 1)
        num, den = approx.numerator, approx.denominator
    if whole_pos and num == den:
        whole, num = whole + 1, 0
    show_fraction = num != 0 or not whole_pos
    out = {i: "" for i, (kind, _) in enumerate(tokens) if kind == "digit"}
    if whole_pos:
        out[whole_pos[0]] = str(whole) if whole or not show_fraction else ""
    if numer:
        out[numer[0]] = str(num).rjust(len(numer)) if show_fraction else ""
    if den_pos:
        out[den_pos[0]] = str(den).ljust(len(den_pos)) if show_fraction else ""
    pieces = []
    for i, (kind, text) in enumerate(tokens):
        if i in out:
            pieces.append(out[i])
        elif kind == "slash" or (slash_at < i < k):
            pieces.append(text if show_fraction else "")
        elif kind in ("lit", "pct", "dot", "comma"):
            pieces.append(text)
    return "".join(pieces) if show_fraction else "".join(pieces).rstrip()
