"""Study tools built from a person's own documents.

Everything here is pure Python (plus numpy / scikit-learn, imported lazily)
and runs the same on CPython and in Pyodide:

- ``select``: pick a small, diverse set of chunks that covers a scope.
- ``schemas`` / ``validate`` / ``generate``: ask an LLM for quizzes, cards,
  workshops and mind maps, and keep only the items that check out.
- ``offline_*``: the same kinds of material made without any model.
- ``fsrs_sched``, ``quiz``: spaced repetition and quiz play as plain data.
- ``anki``, ``export``: files other tools can open.

Items are plain JSON-able dicts; every item carries ``chunk_ids`` (where it
came from) and ``made_without_ai``.
"""
