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

from . import deck, files, generation, quizzes, sets, templates, workshop

METHODS = {**generation.METHODS, **sets.METHODS, **quizzes.METHODS, **deck.METHODS, **workshop.METHODS,
           **files.METHODS, **templates.METHODS}
