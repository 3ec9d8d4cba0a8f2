"""Services behind the engine's public methods: the library, the LLM connection, embeddings,
chat, study, progress, the vault.

Each service module defines a ``METHODS`` table, ``{"publicName": handler}``, where a
handler is ``async def handler(engine, ctx, *args)`` (or a plain function).  ``Methods``
is the one place that merges them: the tab's dispatcher (``quire.browser``) and
``Quire.call`` on CPython both look names up in one, so a feature adds a ``window.quire``
method without touching either.  ``ctx`` carries ``emit(event)`` for progress and
``cancelled()`` for a Stop button.
"""

from __future__ import annotations

from importlib import import_module

# In the order they load: the first three are on the tab's boot path (the library and search
# answer before the rest is imported); the others load on the first call that needs them.
SERVICES = ("library", "llm", "embeddings", "chat", "study", "progress", "vault")
BOOT_SERVICES = 3


class Methods:
    """The engine's methods by the page's name: the services' ``METHODS`` tables, imported in
    order as needed, plus ``own`` methods of the caller (the tab's storage watch, reload)."""

    def __init__(self, own: dict | None = None):
        self.own = dict(own or {})
        self._table: dict = {}
        self._loaded = 0

    def load(self, upto: int = len(SERVICES)) -> int:
        """Import the first ``upto`` services (all by default); how many methods are known."""
        while self._loaded < upto:
            self._table.update(import_module(f"quire.services.{SERVICES[self._loaded]}").METHODS)
            self._loaded += 1
        return len(self.names())

    def load_next(self) -> bool:
        """Import the next service (the tab's after-ready work, one import per step, so that a
        page call waits for one module at most); whether any remain."""
        self.load(min(self._loaded + 1, len(SERVICES)))
        return self._loaded < len(SERVICES)

    def get(self, name: str):
        """The handler for ``name``, importing the remaining services if it is not known yet."""
        handler = self.own.get(name) or self._table.get(name)
        if handler is None and self._loaded < len(SERVICES):
            self.load()
            handler = self._table.get(name)
        return handler

    def names(self) -> list[str]:
        return sorted({*self._table, *self.own})


class Context:
    """What a running call can do besides returning: report events, notice a cancel."""

    def __init__(self, emit=None, cancelled=None, payload: bytes | None = None):
        self.emit = emit or (lambda event: None)
        self.cancelled = cancelled or (lambda: False)
        self.payload = payload
