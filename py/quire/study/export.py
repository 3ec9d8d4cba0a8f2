"""Study material as files: Quizlet text, Markdown, OPML (and Anki via ``anki``).

Quizlet's "Import" box takes pasted text with a separator between term and
definition (Tab by default, or Comma) and a new line between cards; it has no
quoting, so tabs and line breaks inside a field become spaces.

>>> quizlet_text([{"type": "basic", "front": "BM25", "back": "A ranking\\nfunction"}])
'BM25\\tA ranking function\\n'
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from quire.errors import InvalidInput
from quire.study.anki import read_apkg, write_apkg  # noqa: F401  (one place to import exporters from)
from quire.study.validate import CLOZE

SEPARATORS = {"tab": "\t", "comma": ","}


def _flat(text: str, sep: str) -> str:
    text = " ".join(text.split())
    return text.replace(sep, ";") if sep == "," else text


def cloze_question(text: str) -> str:
    """Deletions shown as blanks (a hint after ``::`` is kept).

    >>> cloze_question("{{c1::BM25}} ranks {{c2::documents::what?}}")
    '[...] ranks [what?]'
    """
    return CLOZE.sub(lambda m: f"[{m.group(3) or '...'}]", text)


def cloze_answer(text: str) -> str:
    """The cloze sentence with every deletion filled in.

    >>> cloze_answer("{{c1::BM25}} ranks {{c2::documents}}")
    'BM25 ranks documents'
    """
    return CLOZE.sub(lambda m: m.group(2), text)


def term_definition(card: dict) -> tuple[str, str]:
    if card["type"] == "cloze":
        answers = "; ".join(m.group(2) for m in CLOZE.finditer(card["text"]))
        return cloze_question(card["text"]), answers
    return card["front"], card["back"]


def quizlet_text(cards: list[dict], separator: str = "tab") -> str:
    """Cards as Quizlet import text; ``separator`` is "tab" or "comma"."""
    if separator not in SEPARATORS:
        raise InvalidInput(f"unknown separator {separator!r}; choose one of: {', '.join(SEPARATORS)}")
    sep = SEPARATORS[separator]
    return "".join(f"{_flat(t, sep)}{sep}{_flat(d, sep)}\n" for t, d in map(term_definition, cards))


def read_quizlet(text: str) -> list[dict]:
    """Basic cards from Quizlet export text (tab-separated if any line has a tab, else comma).

    >>> read_quizlet("BM25,A ranking function\\n\\nTF,term frequency")
    [{'type': 'basic', 'front': 'BM25', 'back': 'A ranking function'}, {'type': 'basic', 'front': 'TF', 'back': 'term frequency'}]
    """
    lines = [line for line in text.splitlines() if line.strip()]
    sep = "\t" if any("\t" in line for line in lines) else ","
    cards = []
    for line in lines:
        if sep not in line:
            continue
        term, definition = line.split(sep, 1)
        if term.strip() and definition.strip():
            cards.append({"type": "basic", "front": term.strip(), "back": definition.strip()})
    return cards


def deck_markdown(cards: list[dict], title: str = "Flashcards") -> str:
    out = [f"# {title}", ""]
    for n, card in enumerate(cards, 1):
        question, answer = (cloze_question(card["text"]), cloze_answer(card["text"])) if card["type"] == "cloze" \
            else (card["front"], card["back"])
        out += [f"{n}. **{question}**", f"   {answer}", ""]
    return "\n".join(out)


def quiz_markdown(items: list[dict], title: str = "Quiz", answers: bool = True) -> str:
    """Questions with lettered options; an answer key at the end if ``answers``."""
    out, key = [f"# {title}", ""], []
    for n, item in enumerate(items, 1):
        out.append(f"{n}. {item['question']}")
        out += [f"   {chr(65 + i)}. {opt}" for i, opt in enumerate(item["options"])]
        out.append("")
        key.append(f"{n}. {chr(65 + item['answer'])} \u2014 {item.get('explanation', '')}".rstrip(" \u2014"))
    if answers:
        out += ["## Answers", ""] + key + [""]
    return "\n".join(out)


def outline_markdown(outline: dict) -> str:
    out = [f"# {outline['title']}", ""]
    for m, module in enumerate(outline["modules"], 1):
        out.append(f"## {m}. {module['title']}")
        if module.get("summary"):
            out.append(module["summary"])
        out.append("")
        for l, lesson in enumerate(module["lessons"], 1):
            objective = f": {lesson['objective']}" if lesson.get("objective") else ""
            out.append(f"- **{m}.{l} {lesson['title']}**{objective}")
        out.append("")
    return "\n".join(out)


def lesson_markdown(lesson: dict) -> str:
    out = [f"# {lesson['title']}", ""]
    if lesson.get("introduction"):
        out += [lesson["introduction"], ""]
    for section in lesson["sections"]:
        out += [f"## {section['heading']}", "", section["body"], ""]
    if lesson.get("key_points"):
        out += ["## Key points", ""] + [f"- {p}" for p in lesson["key_points"]] + [""]
    if lesson.get("exercises"):
        out += ["## Exercises", ""]
        for n, ex in enumerate(lesson["exercises"], 1):
            out.append(f"{n}. {ex['prompt']}")
            if ex.get("answer"):
                out.append(f"   *Answer:* {ex['answer']}")
        out.append("")
    return "\n".join(out)


def mindmap_markdown(mindmap: dict) -> str:
    """A nested list under the topic, as mind-map tools (Markmap, XMind) import.

    >>> print(mindmap_markdown({"topic": "IR", "children": [{"label": "BM25", "children": [{"label": "TF", "children": []}]}]}))
    # IR
    - BM25
      - TF
    """
    lines = [f"# {mindmap['topic']}"]

    def walk(nodes, depth):
        for node in nodes:
            lines.append(f"{'  ' * depth}- {node['label']}")
            walk(node.get("children", []), depth + 1)

    walk(mindmap["children"], 0)
    return "\n".join(lines)


def mindmap_opml(mindmap: dict) -> str:
    """OPML 2.0: the outline format mind-map and outliner apps import."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<opml version="2.0">',
             f"  <head><title>{escape(mindmap['topic'])}</title></head>", "  <body>",
             f"    <outline text={quoteattr(mindmap['topic'])}>"]

    def walk(nodes, depth):
        for node in nodes:
            pad = "  " * depth
            if node.get("children"):
                lines.append(f"{pad}<outline text={quoteattr(node['label'])}>")
                walk(node["children"], depth + 1)
                lines.append(f"{pad}</outline>")
            else:
                lines.append(f"{pad}<outline text={quoteattr(node['label'])}/>")

    walk(mindmap["children"], 3)
    lines += ["    </outline>", "  </body>", "</opml>", ""]
    return "\n".join(lines)
