"""Check a model's study output field by field; keep what is sound.

A model's answer is first parsed (``parse_json``: code fences and <think>
blocks stripped; prose -> ``StudyError``), then each item is checked on its
own.  A bad item is dropped with a reason, never "repaired" into something the
model did not say; the only coercions are harmless ones (an answer given as
the option's text instead of its index, True/False option labels).

>>> items, dropped = validate("quiz", {"items": [
...     {"type": "true_false", "question": "BM25 is a ranking function.",
...      "options": ["True", "False"], "answer": 0, "explanation": "[1] says so.",
...      "citations": [1]},
...     {"type": "multiple_choice", "question": "Pick", "options": ["a", "b", "c"],
...      "answer": 7, "explanation": "", "citations": [1]}]}, n_passages=1)
>>> len(items), dropped
(1, [{'index': 1, 'reason': 'answer 7 is not an option index (0-2)'}])
"""

from __future__ import annotations

import json
import re

from quire.errors import InvalidInput, QuireError

# {{c1::answer}} or {{c1::answer::hint}}; neither part may contain "}}".
CLOZE = re.compile(r"\{\{c(\d+)::((?:(?!\}\}|::).)*)(?:::((?:(?!\}\}).)*))?\}\}", re.DOTALL)
MAX_TEXT = 2000  # longer than any sane card or question: a sign of a runaway model


class StudyError(QuireError, ValueError):
    """Study material could not be made; the message is for the person."""


class Invalid(ValueError):
    """One item failed a check; the message is the reason."""


def parse_json(text: str):
    """The JSON value in a model's reply.

    >>> parse_json('<think>hm</think>```json\\n{"a": 1}\\n```')
    {'a': 1}
    """
    cleaned = re.sub(r"<think>.*?</think>", "", text or "", flags=re.DOTALL).strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", cleaned, flags=re.DOTALL)
    if fenced:
        cleaned = fenced.group(1).strip()
    try:
        return json.loads(cleaned)
    except ValueError:
        pass
    start = min((i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0), default=-1)
    end = max(cleaned.rfind("}"), cleaned.rfind("]"))
    if start >= 0 and end > start:
        try:
            return json.loads(cleaned[start : end + 1])
        except ValueError:
            pass
    preview = " ".join(cleaned.split())[:80]
    raise StudyError(f"The model did not answer in JSON, so nothing could be read from it (it began: {preview!r}).")


_CLOSE = {"{": "}", "[": "]"}
MAX_SALVAGE_TRIES = 200


def salvage_json(text: str):
    """The complete part of a JSON answer cut off mid-way (the server hit the token limit):
    cut back to the last closed object or array and close what is still open.  Items after
    the cut are lost; the ones before it go on to be validated one by one.

    >>> salvage_json('{"items": [{"q": "a", "c": [1]}, {"q": "b", "c": [')
    {'items': [{'q': 'a', 'c': [1]}]}
    >>> salvage_json('{"items": [{"q": "a"}]}')
    {'items': [{'q': 'a'}]}
    """
    try:
        return parse_json(text)
    except StudyError:
        pass
    cleaned = re.sub(r"<think>.*?</think>", "", text or "", flags=re.DOTALL)
    stack: list[str] = []
    ends: list[tuple[int, str]] = []  # (position after a closing bracket, the closers still needed)
    in_string = escaped = False
    for i, ch in enumerate(cleaned):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in _CLOSE:
            stack.append(_CLOSE[ch])
        elif ch in "}]" and stack:
            stack.pop()
            ends.append((i + 1, "".join(reversed(stack))))
    for end, closers in reversed(ends[-MAX_SALVAGE_TRIES:]):
        head = cleaned[:end].rstrip()
        start = min((j for j in (head.find("{"), head.find("[")) if j >= 0), default=0)
        try:
            return json.loads(head[start:] + closers)
        except ValueError:
            continue
    preview = " ".join(cleaned.split())[:80]
    raise StudyError("The model's answer was cut at the token limit before one complete item "
                     f"(it began: {preview!r}).")


def _text(value, field: str, *, required: bool = True) -> str:
    if not isinstance(value, str):
        raise Invalid(f"{field} is not text")
    value = value.strip()
    if required and not value:
        raise Invalid(f"{field} is empty")
    if len(value) > MAX_TEXT:
        raise Invalid(f"{field} is too long ({len(value)} characters)")
    return value


def _citations(value, n_passages: int) -> list[int]:
    """Passage numbers that exist; an item citing none of them is dropped."""
    if not isinstance(value, list):
        raise Invalid("citations is not a list")
    good = sorted({c for c in value if isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= n_passages})
    if not good:
        raise Invalid(f"cites no passage between 1 and {n_passages}")
    return good


def check_quiz_item(raw: dict, n_passages: int) -> dict:
    kind = raw.get("type")
    if kind not in ("multiple_choice", "true_false"):
        raise Invalid(f"type {kind!r} is not multiple_choice or true_false")
    question = _text(raw.get("question"), "question")
    options = raw.get("options")
    if kind == "true_false":
        options = ["True", "False"]  # the labels are fixed; only the answer matters
    elif not isinstance(options, list) or not 3 <= len(options) <= 6:
        raise Invalid("a multiple-choice question needs 3 to 6 options")
    else:
        options = [_text(o, "an option") for o in options]
        if len({o.lower() for o in options}) != len(options):
            raise Invalid("options repeat")
    answer = raw.get("answer")
    if isinstance(answer, bool) and kind == "true_false":
        answer = 0 if answer else 1
    if isinstance(answer, str):
        lowered = [o.lower() for o in options]
        if answer.strip().lower() not in lowered:
            raise Invalid(f"answer {answer!r} is not one of the options")
        answer = lowered.index(answer.strip().lower())
    if not isinstance(answer, int) or not 0 <= answer < len(options):
        raise Invalid(f"answer {answer!r} is not an option index (0-{len(options) - 1})")
    return {
        "type": kind,
        "question": question,
        "options": options,
        "answer": answer,
        "explanation": _text(raw.get("explanation", ""), "explanation", required=False),
        "citations": _citations(raw.get("citations"), n_passages),
    }


def check_card(raw: dict, n_passages: int) -> dict:
    kind = raw.get("type")
    front = _text(raw.get("front"), "front")
    back = _text(raw.get("back", ""), "back", required=kind != "cloze")
    citations = _citations(raw.get("citations"), n_passages)
    if kind == "basic":
        if front.lower() == back.lower():
            raise Invalid("front and back are the same")
        return {"type": "basic", "front": front, "back": back, "citations": citations}
    if kind == "cloze":
        deletions = CLOZE.findall(front)
        if not deletions and back and "{{" not in front:
            # A small model often writes the sentence and puts the hidden term in "back" instead
            # of marking it: the term, where the sentence holds it as a word, becomes the deletion.
            at = re.search(r"(?<!\w)" + re.escape(back.strip().rstrip(".")) + r"(?!\w)", front, re.IGNORECASE)
            if at and at.group(0).strip() and 2 * len(at.group(0)) <= len(front):  # a term, not the sentence
                front = f"{front[:at.start()]}{{{{c1::{at.group(0)}}}}}{front[at.end():]}"
                back, deletions = "", CLOZE.findall(front)
        if not deletions:
            raise Invalid("a cloze card has no {{c1::...}} deletion")
        if any(not answer.strip() for _, answer, _ in deletions):
            raise Invalid("a cloze deletion is empty")
        if "{{" in CLOZE.sub("", front) or "}}" in CLOZE.sub("", front):
            raise Invalid("unbalanced cloze braces")
        return {"type": "cloze", "text": front, "extra": back, "citations": citations}
    raise Invalid(f"type {kind!r} is not basic or cloze")


def _nodes(raw, field: str, check, report: list, path: str) -> list:
    """Check a list of sub-items, dropping bad ones into ``report``."""
    if not isinstance(raw, list):
        raise Invalid(f"{field} is not a list")
    kept = []
    for i, node in enumerate(raw):
        try:
            if not isinstance(node, dict):
                raise Invalid("is not an object")
            kept.append(check(node))
        except Invalid as err:
            report.append({"index": f"{path}{field}[{i}]", "reason": str(err)})
    return kept


def check_outline(raw: dict, n_passages: int, report: list) -> dict:
    def lesson(node):
        return {"title": _text(node.get("title"), "lesson title"),
                "objective": _text(node.get("objective", ""), "objective", required=False),
                "citations": _citations(node.get("citations"), n_passages)}

    def module(node):
        lessons = _nodes(node.get("lessons"), "lessons", lesson, report, "module.")
        if not lessons:
            raise Invalid("module has no valid lessons")
        return {"title": _text(node.get("title"), "module title"),
                "summary": _text(node.get("summary", ""), "summary", required=False), "lessons": lessons}

    modules = _nodes(raw.get("modules"), "modules", module, report, "")
    if not modules:
        raise Invalid("the outline has no valid modules")
    return {"title": _text(raw.get("title"), "title"), "modules": modules}


def check_lesson(raw: dict, n_passages: int, report: list) -> dict:
    def section(node):
        return {"heading": _text(node.get("heading"), "heading"), "body": _text(node.get("body"), "body"),
                "citations": _citations(node.get("citations"), n_passages)}

    def exercise(node):
        return {"prompt": _text(node.get("prompt"), "prompt"), "answer": _text(node.get("answer", ""), "answer", required=False)}

    sections = _nodes(raw.get("sections"), "sections", section, report, "")
    if not sections:
        raise Invalid("the lesson has no valid sections")
    points = [p.strip() for p in raw.get("key_points", []) if isinstance(p, str) and p.strip()]
    return {"title": _text(raw.get("title"), "title"),
            "introduction": _text(raw.get("introduction", ""), "introduction", required=False),
            "sections": sections, "key_points": points,
            "exercises": _nodes(raw.get("exercises", []), "exercises", exercise, report, "")}


def check_mindmap(raw: dict, n_passages: int, report: list) -> dict:
    def node(depth: int):
        def check(item):
            out = {"label": _text(item.get("label"), "label")}
            cited = item.get("citations")
            out["citations"] = _citations(cited, n_passages) if cited else []
            if depth < 3:
                out["children"] = _nodes(item.get("children", []), "children", node(depth + 1), report, f"level{depth}.")
            else:
                out["children"] = []
            return out
        return check

    children = _nodes(raw.get("children"), "children", node(1), report, "")
    if not children:
        raise Invalid("the mind map has no valid branches")
    return {"topic": _text(raw.get("topic"), "topic"), "children": children}


_LISTS = {"quiz": ("items", check_quiz_item), "flashcards": ("cards", check_card)}
_DOCUMENTS = {"workshop_outline": check_outline, "workshop_lesson": check_lesson, "mindmap": check_mindmap}


def validate(kind: str, data, n_passages: int) -> tuple[list[dict], list[dict]]:
    """``(kept items, dropped [{index, reason}])`` for one parsed model answer.

    Quizzes and decks give one item per question or card; outlines, lessons
    and mind maps give a single item (the document) whose bad parts were cut.
    """
    dropped: list[dict] = []
    if kind in _LISTS:
        key, check = _LISTS[kind]
        if isinstance(data, dict):
            data = data.get(key)
        if not isinstance(data, list):
            raise StudyError(f"The model's answer has no list of {key}.")
        kept, seen = [], set()
        for i, raw in enumerate(data):
            try:
                if not isinstance(raw, dict):
                    raise Invalid("is not an object")
                item = check(raw, n_passages)
                sig = (item.get("question") or item.get("front") or item.get("text")).lower()
                if sig in seen:
                    raise Invalid("repeats an earlier item")
                seen.add(sig)
                kept.append(item)
            except Invalid as err:
                dropped.append({"index": i, "reason": str(err)})
        return kept, dropped
    if kind in _DOCUMENTS:
        if not isinstance(data, dict):
            raise StudyError("The model's answer is not a JSON object.")
        try:
            return [_DOCUMENTS[kind](data, n_passages, dropped)], dropped
        except Invalid as err:
            dropped.append({"index": "document", "reason": str(err)})
            return [], dropped
    raise InvalidInput(f"unknown study kind {kind!r}; choose one of: {', '.join([*_LISTS, *_DOCUMENTS])}")
