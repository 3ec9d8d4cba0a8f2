"""JSON schemas for what each study tool asks a model to return.

They go to Ollama as ``format`` (constrained decoding) and to OpenAI-style
servers as ``response_format``.  They stay flat and small on purpose: small
local models follow a shallow schema far more reliably than a clever one, so
no ``anyOf`` and no recursion (the mind map is three fixed levels).

Citations are the bracketed numbers ``[1]``, ``[2]`` the prompt puts in front
of each passage; ``generate`` maps them back to chunk ids.
"""

from __future__ import annotations

_CITATIONS = {"type": "array", "items": {"type": "integer"}}
_TEXT = {"type": "string"}


def _object(properties: dict, required: list[str] | None = None) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }


QUIZ = _object({
    "items": {
        "type": "array",
        "items": _object({
            "type": {"type": "string", "enum": ["multiple_choice", "true_false"]},
            "question": _TEXT,
            "options": {"type": "array", "items": _TEXT},
            "answer": {"type": "integer"},
            "explanation": _TEXT,
            "citations": _CITATIONS,
        }),
    }
})

FLASHCARDS = _object({
    "cards": {
        "type": "array",
        "items": _object({
            "type": {"type": "string", "enum": ["basic", "cloze"]},
            "front": _TEXT,  # cloze: the sentence with {{c1::...}} deletions
            "back": _TEXT,  # cloze: optional extra shown after the answer
            "citations": _CITATIONS,
        }),
    }
})

WORKSHOP_OUTLINE = _object({
    "title": _TEXT,
    "modules": {
        "type": "array",
        "items": _object({
            "title": _TEXT,
            "summary": _TEXT,
            "lessons": {
                "type": "array",
                "items": _object({"title": _TEXT, "objective": _TEXT, "citations": _CITATIONS}),
            },
        }),
    },
})

WORKSHOP_LESSON = _object({
    "title": _TEXT,
    "introduction": _TEXT,
    "sections": {
        "type": "array",
        "items": _object({"heading": _TEXT, "body": _TEXT, "citations": _CITATIONS}),
    },
    "key_points": {"type": "array", "items": _TEXT},
    "exercises": {
        "type": "array",
        "items": _object({"prompt": _TEXT, "answer": _TEXT}),
    },
})

_LEAF = _object({"label": _TEXT, "citations": _CITATIONS})
_BRANCH = _object({"label": _TEXT, "citations": _CITATIONS, "children": {"type": "array", "items": _LEAF}})
MINDMAP = _object({
    "topic": _TEXT,
    "children": {
        "type": "array",
        "items": _object({"label": _TEXT, "citations": _CITATIONS, "children": {"type": "array", "items": _BRANCH}}),
    },
})

SCHEMAS = {
    "quiz": QUIZ,
    "flashcards": FLASHCARDS,
    "workshop_outline": WORKSHOP_OUTLINE,
    "workshop_lesson": WORKSHOP_LESSON,
    "mindmap": MINDMAP,
}


def schema_for(kind: str) -> dict:
    """The schema for a study tool; an unknown kind lists the known ones.

    >>> schema_for("quiz")["required"]
    ['items']
    """
    try:
        return SCHEMAS[kind]
    except KeyError:
        raise ValueError(f"unknown study kind {kind!r}; choose one of: {', '.join(SCHEMAS)}") from None
