"""The study hub behind ``window.quire``: make, keep, play and export study sets.

A *set* is one record in the ``study`` bucket::

    {"id", "kind": "quiz" | "flashcards" | "workshop" | "mindmap", "title", "created",
     "scope", "scope_label", "sources": [source ids], "made_without_ai", "report",
     "items": [...]            # quiz questions or cards, each with "chunk_ids"
     "session": {...}          # quiz: quire.study.quiz state (resume, attempt history)
     "schedules": {id: card}   # flashcards: fsrs card per item
     "outline", "lessons", "done"  # workshop: lessons are generated when first opened
     "map": {...}}             # mind map tree

Items cite library chunk ids (``<source id>:<n>``), so the page can open the
passage with ``QuirePassage.open``.  With a chat model set, material comes from
the model (``quire.study.generate``); otherwise, or when the server cannot be
reached, from the no-LLM generators, labelled "made without an AI model".

Python use (CPython or Pyodide)::

    ctx = Context()
    deck = await METHODS["studyGenerate"](engine, ctx, "flashcards", {"scope": {"sources": [sid]}, "count": 10})
    queue = await METHODS["review"](engine, ctx, deck["id"])
    await METHODS["rate"](engine, ctx, deck["id"], queue["cards"][0]["id"], "good")

Layout: ``common`` (constants, the progress event, store and scope helpers), ``generation``
(making sets, with or without a model), ``sets`` (listing and the page's view), ``quizzes``,
``deck`` (flashcard review), ``workshop`` (lessons), ``files`` (export/import), ``templates``
(prompt overrides).  Handlers raise ``quire.study.validate.StudyError`` when a set cannot be made
or used.
"""

from __future__ import annotations

from .deck import _rate, _resolve_card, _review
from .files import _export, _import
from .generation import _generate
from .quizzes import _quiz_answer, _quiz_restart, _quiz_submit
from .sets import _delete, _open, _sets
from .templates import _reset_override, _save_override, _template, _templates
from .workshop import _lesson, _lesson_done


METHODS = {
    "studyGenerate": _generate,
    "studySets": _sets,
    "studyOpen": _open,
    "studyDelete": _delete,
    "quizAnswer": _quiz_answer,
    "quizSubmit": _quiz_submit,
    "quizRestart": _quiz_restart,
    "review": _review,
    "rate": _rate,
    "resolveCard": _resolve_card,
    "openLesson": _lesson,
    "lessonDone": _lesson_done,
    "studyExport": _export,
    "studyImport": _import,
    "promptTemplates": _templates,
    "promptTemplate": _template,
    "savePromptOverride": _save_override,
    "resetPromptOverride": _reset_override,
}
