"""Numbers in Excel number formats: digit placeholders, grouping, scaling, %, E+, fractions.

``render_number`` takes a non-negative value and the tokens of one format
section (see ``numfmt.tokenize``); ``numfmt.render`` picks the section and
adds the sign.  Digits fill placeholders from the right and the leftmost
placeholder takes any extra digits, so ``000-00-0000`` and ``(###) ###-####``
work; ``0`` pads with zeros, ``?`` with spaces, ``#`` with nothing.

>>> from quire.extract.numfmt import tokenize
>>> render_number(1234.5, tokenize("#,##0.00")), render_number(0.5, tokenize("#.##"))
('1,234.50', '.5')
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from fractions import Fraction


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


@lru_cache(maxsize=512)
def _layout(tokens: tuple) -> dict:
    """Where the parts of a number go in one section's tokens: computed once per format code."""
    digit_at = [i for i, (k, _) in enumerate(tokens) if k == "digit"]
    exp_at = next((i for i, (k, _) in enumerate(tokens) if k == "exp"), None)
    slash_at = next((i for i, (k, _) in enumerate(tokens) if k == "slash"), None)
    after = tokens[slash_at + 1] if slash_at is not None and slash_at + 1 < len(tokens) else ("", "")
    fraction = slash_at is not None and any(i < slash_at for i in digit_at) and (after[0] == "digit" or after[1].isdigit())
    mantissa_end = exp_at if exp_at is not None else len(tokens)
    dot_at = next((i for i, (k, _) in enumerate(tokens[:mantissa_end]) if k == "dot"), mantissa_end)
    int_pos = [i for i in digit_at if i < dot_at]
    frac_pos = [i for i in digit_at if dot_at < i < mantissa_end]
    grouping, scale_commas, literal_commas = _commas(tokens, int_pos, frac_pos, dot_at, mantissa_end)
    return {"digit_at": digit_at, "exp_at": exp_at, "slash_at": slash_at if fraction else None, "dot_at": dot_at,
            "int_pos": int_pos, "frac_pos": frac_pos, "exp_pos": [i for i in digit_at if exp_at is not None and i > exp_at],
            "grouping": grouping, "literal_commas": set(literal_commas),
            "scale": Decimal(100) ** sum(1 for k, _ in tokens if k == "pct") / Decimal(1000) ** len(scale_commas),
            "int_kinds": [tokens[i][1] for i in int_pos], "frac_kinds": [tokens[i][1] for i in frac_pos]}


def render_number(x: float, tokens) -> str:
    """Render a non-negative number through digit placeholders and literals."""
    tokens = tuple(tokens)
    lay = _layout(tokens)
    if lay["slash_at"] is not None:
        return _fraction(x, tokens, lay["slash_at"])
    exp_at, int_pos, frac_pos, exp_pos = lay["exp_at"], lay["int_pos"], lay["frac_pos"], lay["exp_pos"]
    value = Decimal(repr(x)) * lay["scale"]
    exponent = 0
    if exp_at is not None:
        value, exponent = _scientific(value, tokens, int_pos, len(frac_pos))
    value = _round(value, len(frac_pos))
    int_digits, _, frac_digits = format(value, "f").partition(".")
    int_digits = int_digits.lstrip("0")

    out = {i: "" for i in lay["digit_at"]}
    out.update(_integer_part(int_digits, lay["int_kinds"], int_pos, lay["grouping"]))
    out.update(_fraction_part(frac_digits.ljust(len(frac_pos), "0"), lay["frac_kinds"], frac_pos))
    if exp_at is not None:
        digits = str(abs(exponent)).rjust(sum(1 for i in exp_pos if tokens[i][1] == "0"), "0")
        if exp_pos:
            out[exp_pos[0]] = digits
        sign = "-" if exponent < 0 else ("+" if tokens[exp_at][1] == "+" else "")
        out[exp_at] = "E" + sign
    dot_at, literal_commas = lay["dot_at"], lay["literal_commas"]
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

    >>> from quire.extract.numfmt import tokenize
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
