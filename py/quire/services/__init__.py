"""Services behind the engine's public methods: the LLM connection, chat, study, progress.

Each service module defines a ``METHODS`` table, ``{"publicName": handler}``, where a
handler is ``async def handler(engine, ctx, *args)``.  ``quire.browser`` merges these
tables, so a feature adds a ``window.quire`` method without touching the dispatcher.
``ctx`` carries ``emit(event)`` for progress and ``cancelled()`` for a Stop button.
"""


class Context:
    """What a running call can do besides returning: report events, notice a cancel."""

    def __init__(self, emit=None, cancelled=None, payload: bytes | None = None):
        self.emit = emit or (lambda event: None)
        self.cancelled = cancelled or (lambda: False)
        self.payload = payload
