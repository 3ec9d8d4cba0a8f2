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
(prompt overrides).  Every name the old single module had is importable from here.
"""

from __future__ import annotations

from quire.study.generate import DIFFICULTIES, TEMPLATE_VARIABLES
from quire.study.validate import StudyError

from .common import (BUCKET, KINDS, MAX_OFFLINE_CHUNKS, NO_AI, OVERRIDES_KEY, STUDY_TEMPLATES,
                     TEMPERATURE, _action, _iso, _load, _now, _overrides, _save, _scope_chunks,
                     _scope_sources, _use_model, log)
from .deck import _card_view, _rate, _resolve_card, _review
from .files import _export, _import, _slug
from .generation import _NeedReply, _ask, _generate, _generate_with_model, _new_record, _offline
from .quizzes import _public_session, _quiz_answer, _quiz_restart, _quiz_submit
from .sets import _current_hashes, _delete, _flags, _open, _sets, _summary, _view
from .templates import _check_template_name, _reset_override, _save_override, _template, _templates
from .workshop import _lesson, _lesson_at, _lesson_done, _offline_lesson


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
