"""JSON schemas for what each study tool asks a model to return, bounded in every direction.

They go to Ollama as ``format`` and to OpenAI-style servers as ``response_format``, where
they become a grammar: the model can only write what the schema allows.  An unbounded
array or string lets a small model go on until the token limit cuts the JSON in half, so
every array has ``minItems``/``maxItems`` (the count asked), every string a ``maxLength``,
and values with a known set are enums (citations: the passage numbers that exist).  They
stay flat and small: no ``anyOf``, no recursion (the mind map is three fixed levels).

Citations are the bracketed numbers ``[1]``, ``[2]`` the prompt puts in front of each
passage; ``generate`` maps them back to chunk ids.

>>> s = schema_for("quiz", count=3, n_passages=2)
>>> s["properties"]["items"]["minItems"], s["properties"]["items"]["maxItems"]
(3, 3)
>>> s["properties"]["items"]["items"]["properties"]["citations"]["items"]["enum"]
[1, 2]
"""

from __future__ import annotations

from quire.errors import InvalidInput

MAX_CITATIONS = 3  # passage numbers per item or node
MAX_PASSAGES = 15  # citation enum when the number of passages is not given (quire.study.select.MAX_CHUNKS)
# Characters per string field: room for a good question or card, no room for a runaway.
LENGTHS = {"question": 240, "option": 100, "explanation": 320, "front": 240, "back": 320, "title": 90,
           "summary": 240, "objective": 160, "label": 60, "topic": 80, "heading": 90, "body": 1200,
           "introduction": 400, "point": 160, "prompt": 240, "answer": 320}
# Documents' shapes at full size; a retry after a cut asks for about half (``shrink``).
OUTLINE = {"modules": (2, 5), "lessons": (1, 4)}
LESSON = {"sections": (2, 5), "key_points": (2, 5), "exercises": (1, 3)}
MINDMAP = {"branches": (3, 6), "twigs": (0, 4), "leaves": (0, 3)}


def _text(field: str) -> dict:
    return {"type": "string", "minLength": 1, "maxLength": LENGTHS[field]}


def _citations(n_passages: int | None) -> dict:
    numbers = list(range(1, (n_passages or MAX_PASSAGES) + 1))
    return {"type": "array", "items": {"type": "integer", "enum": numbers}, "minItems": 1,
            "maxItems": min(MAX_CITATIONS, len(numbers))}


def _array(items: dict, low: int, high: int) -> dict:
    return {"type": "array", "items": items, "minItems": low, "maxItems": max(low, high)}


def _object(properties: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required, "additionalProperties": False}


def _half(bounds: tuple[int, int], shrink: int) -> tuple[int, int]:
    low, high = bounds
    for _ in range(shrink):
        high = max(low, 1, (high + 1) // 2)
        low = min(low, 1) if low else 0
    return low, high


def quiz(count: int, n_passages: int | None = None) -> dict:
    return _object({"items": _array(_object({
        "type": {"type": "string", "enum": ["multiple_choice", "true_false"]},
        "question": _text("question"),
        "options": _array(_text("option"), 3, 4),  # a true/false item's options are replaced by True/False
        "answer": {"type": "integer", "enum": [0, 1, 2, 3]},
        "explanation": _text("explanation"),
        "citations": _citations(n_passages),
    }), count, count)})


def flashcards(count: int, n_passages: int | None = None) -> dict:
    return _object({"cards": _array(_object({
        "type": {"type": "string", "enum": ["basic", "cloze"]},
        "front": _text("front"),  # cloze: the sentence with {{c1::...}} deletions
        "back": _text("back"),  # cloze: optional extra shown after the answer
        "citations": _citations(n_passages),
    }), count, count)})


def workshop_outline(n_passages: int | None = None, shrink: int = 0) -> dict:
    lesson = _object({"title": _text("title"), "objective": _text("objective"), "citations": _citations(n_passages)})
    module = _object({"title": _text("title"), "summary": _text("summary"),
                      "lessons": _array(lesson, *_half(OUTLINE["lessons"], shrink))})
    return _object({"title": _text("title"), "modules": _array(module, *_half(OUTLINE["modules"], shrink))})


def workshop_lesson(n_passages: int | None = None, shrink: int = 0) -> dict:
    section = _object({"heading": _text("heading"), "body": _text("body"), "citations": _citations(n_passages)})
    exercise = _object({"prompt": _text("prompt"), "answer": _text("answer")})
    return _object({
        "title": _text("title"),
        "introduction": _text("introduction"),
        "sections": _array(section, *_half(LESSON["sections"], shrink)),
        "key_points": _array(_text("point"), *_half(LESSON["key_points"], shrink)),
        "exercises": _array(exercise, *_half(LESSON["exercises"], shrink)),
    })


def mindmap(n_passages: int | None = None, shrink: int = 0) -> dict:
    cites = _citations(n_passages)
    leaf = _object({"label": _text("label"), "citations": cites})
    twig = _object({"label": _text("label"), "citations": cites,
                    "children": _array(leaf, *_half(MINDMAP["leaves"], shrink))})
    branch = _object({"label": _text("label"), "citations": cites,
                      "children": _array(twig, *_half(MINDMAP["twigs"], shrink))})
    return _object({"topic": _text("topic"), "children": _array(branch, *_half(MINDMAP["branches"], shrink))})


KINDS = ("quiz", "flashcards", "workshop_outline", "workshop_lesson", "mindmap")


def schema_for(kind: str, count: int = 10, n_passages: int | None = None, shrink: int = 0) -> dict:
    """The bounded schema for a study tool: ``count`` items for lists; documents get smaller
    with each ``shrink`` (the retry after a cut answer).  An unknown kind lists the known ones.

    >>> schema_for("quiz")["required"]
    ['items']
    >>> schema_for("mindmap", shrink=1)["properties"]["children"]["maxItems"]
    3
    """
    if kind == "quiz":
        return quiz(count, n_passages)
    if kind == "flashcards":
        return flashcards(count, n_passages)
    builders = {"workshop_outline": workshop_outline, "workshop_lesson": workshop_lesson, "mindmap": mindmap}
    if kind not in builders:
        raise InvalidInput(f"unknown study kind {kind!r}; choose one of: {', '.join(KINDS)}")
    return builders[kind](n_passages, shrink)


def max_chars(schema: dict) -> int:
    """The longest JSON text the schema allows (compact separators plus a space each), which
    bounds how many tokens an answer can need.

    >>> max_chars({"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 2})
    20
    """
    kind = schema.get("type")
    if "enum" in schema:
        return max(len(str(v)) + 2 for v in schema["enum"])
    if kind == "string":
        return schema.get("maxLength", 2000) + 2
    if kind in ("integer", "number"):
        return 8
    if kind == "boolean":
        return 5
    if kind == "array":
        return 2 + schema.get("maxItems", 50) * (max_chars(schema.get("items", {})) + 2)
    if kind == "object":
        props = schema.get("properties", {})
        return 2 + sum(len(k) + 5 + max_chars(v) for k, v in props.items())
    return 16


def token_budget(schema: dict) -> int:
    """``num_predict`` for a structured answer: enough for the fullest answer the schema
    allows (a cautious 2.5 characters per token, as JSON punctuation is dense), plus slack.

    >>> token_budget(schema_for("quiz", count=1)) < token_budget(schema_for("quiz", count=5))
    True
    """
    return max_chars(schema) * 2 // 5 + 64
