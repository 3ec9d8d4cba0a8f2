"""Property: for generated Markdown, no passage holds Markdown syntax and no visible word is lost.

Documents are built from the constructs people write (headings, emphasis,
links, images, reference links, footnotes, code, quotes, lists, pipe and grid
tables, front matter, escapes, entities, inline HTML).  Every word placed
where a reader would see it must reach a passage; no passage may show the
syntax around it.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from quire.extract import extract

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöüß", min_size=2, max_size=8)

# Syntax that must never reach a passage.
FORBIDDEN = [
    ("link or image", re.compile(r"\]\(|!\[")),
    ("reference link", re.compile(r"\]\[|\]:")),
    ("footnote", re.compile(r"\[\^")),
    ("strong or strikethrough", re.compile(r"\*\*|~~|__")),
    ("emphasis", re.compile(r"(?<!\w)[*_]\w|\w[*_](?!\w)")),
    ("code span or fence", re.compile(r"`")),
    ("backslash escape", re.compile(r"\\")),
    ("heading marker", re.compile(r"^#{1,6}(?:\s|$)", re.M)),
    ("setext underline or rule", re.compile(r"^ *(?:={2,}|-{3,}|\*{3,}) *$", re.M)),
    ("table separator row", re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$|^\+[-=+:]+\+$", re.M)),
    ("grid table border", re.compile(r"^\s*\|.*\|\s*$", re.M)),
    ("block quote", re.compile(r"^\s*>", re.M)),
    ("bullet", re.compile(r"^\s*[-+*]\s", re.M)),
    ("HTML tag", re.compile(r"</?[a-z]+[ >/]")),
    ("entity", re.compile(r"&[a-z]+;")),
    ("title block", re.compile(r"^%|^---$|^title:", re.M)),
]


@st.composite
def inline(draw, seen: list[str]) -> str:
    """A line of inline Markdown; visible words are appended to ``seen``."""
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        a, b = draw(WORDS), draw(WORDS)
        kind = draw(st.sampled_from(
            ["plain", "em", "strong", "under", "strike", "code", "link", "image", "reflink", "escape", "entity", "html",
             "autolink", "note"]))
        seen += [a, b]
        parts.append({
            "plain": f"{a} {b}",
            "em": f"*{a} {b}*",
            "strong": f"**{a}** {b}",
            "under": f"_{a}_ __{b}__",
            "strike": f"~~{a} {b}~~",
            "code": f"`{a} {b}`",
            "link": f'[{a} *{b}*](https://example.org/{a} "{b}")',
            "image": f"![{a} {b}](pics/{a}.png)",
            "reflink": f"[{a} {b}][ref]",
            "escape": f"\\[{a}\\] \\#{b} 1\\. x\\_y",
            "entity": f"{a} &amp; {b}",
            "html": f"<span class=\"x\">{a}</span> <b>{b}</b>",
            "autolink": f"{a} <https://example.org/{b}>",
            "note": f"{a}[^n{len(seen)}] {b}",
        }[kind])
    return " ".join(parts)


@st.composite
def documents(draw) -> tuple[str, list[str]]:
    seen: list[str] = []
    notes: list[str] = []
    blocks = []
    if draw(st.booleans()):
        title, author = draw(WORDS), draw(WORDS)
        seen += [title, author]
        blocks.append(draw(st.sampled_from([f"---\ntitle: {title}\nauthor: [{author}]\nlang: de\n---",
                                            f"% {title}\n% {author}\n% 2024"])))
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["para", "atx", "setext", "fence", "indented", "quote", "bullets", "ordered",
                                     "pipe", "grid", "rule", "html"]))
        a, b, c = draw(WORDS), draw(WORDS), draw(WORDS)
        if kind == "para":
            blocks.append(draw(inline(seen)) + "\n" + draw(inline(seen)))
        elif kind == "atx":
            blocks.append("#" * draw(st.integers(1, 6)) + " " + draw(inline(seen)) + draw(st.sampled_from(["", " ##"])))
        elif kind == "setext":
            blocks.append(draw(inline(seen)) + "\n" + draw(st.sampled_from(["====", "----"])))
        elif kind == "fence":
            seen += [a, b]
            blocks.append(f"```python\n{a} = {b}\n```")
        elif kind == "indented":
            seen += [a, b]
            blocks.append(f"    {a}({b})")
        elif kind == "quote":
            blocks.append("> " + draw(inline(seen)) + "\n> " + draw(inline(seen)))
        elif kind == "bullets":
            blocks.append("\n".join(f"{m} " + draw(inline(seen)) for m in "-*+"[: draw(st.integers(1, 3))]))
        elif kind == "ordered":
            blocks.append("1. " + draw(inline(seen)) + "\n2. " + draw(inline(seen)) + "\n   - " + draw(inline(seen)))
        elif kind == "pipe":
            seen += [a, b, c]
            blocks.append(f"| {a} | {b} |\n|:---|---:|\n| `{c}` | **{a}** |")
        elif kind == "grid":
            seen += [a, b, c]
            blocks.append(f"+----------+----------+\n| {a:<8} | {b:<8} |\n+==========+==========+\n| {c:<8} | {a:<8} |\n+----------+----------+")
        elif kind == "rule":
            blocks.append(draw(st.sampled_from(["---", "***", "* * *"])))
        else:
            seen += [a]
            blocks.append(f"<div class=\"box\">\n<p>{a}</p>\n</div>")
    for k in range(len(seen) + 1):
        if any(f"[^n{k}]" in block for block in blocks):
            word = draw(WORDS)
            notes.append(f"[^n{k}]: {word} *{word}*")
            seen.append(word)
    blocks.append("[ref]: https://example.org/ref 'Title'")
    return "\n\n".join(blocks + notes) + "\n", seen


# No example database and no explain phase: nothing is written into the working tree.
@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate, Phase.shrink])
@given(documents())
def test_passages_hold_rendered_text_only(doc):
    markdown, seen = doc
    ex = extract("generated.md", markdown.encode())
    for unit in ex.units:
        for crumb in unit.location["section"]:
            assert not any(p.search(crumb) for _, p in FORBIDDEN), crumb
        for what, pattern in FORBIDDEN:
            assert not pattern.search(unit.text), f"{what} left in {unit.text!r}\n--- from ---\n{markdown}"
    visible = " ".join(u.prefix + u.text for u in ex.units)
    missing = [w for w in seen if w not in visible]
    assert not missing, f"{missing} lost from\n{markdown}\n--- got ---\n{visible}"
