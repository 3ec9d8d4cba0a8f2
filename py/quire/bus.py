"""One engine's event bus: services say what the person did, subscribers (progress) listen.

Each ``Quire`` owns one bus (``engine.events``), so two engines in one process
(tests, a notebook) never see each other's actions, and progress subscribes when
the engine opens, so the very first question is counted.  An event is a small dict
``{"kind", "scoped", "sources", ...}`` (see ``quire.progress.events``); the bus
stamps ``"t"`` (epoch ms) if it is missing.

Besides the person's actions, two kinds are the engine's own news:

- ``LIBRARY_SAVED``: a library write saved something (the tab's bridge, ``quire.browser``,
  says so after each one); progress then checks the badges that count what is stored
  (sources trained, decks imported), which no action announces.
- ``BADGES_EARNED``: progress stored new badges, ``{"badges": [{"code", "name", "icon", ...}]}``;
  in the tab the bridge passes it to the page, which shows each one once.

A subscriber may return a coroutine: the bus runs it as a task and ``drain()``
waits for all of them.  A failing subscriber is logged and never breaks the
action that emitted.

>>> bus, seen = EventBus(clock=lambda: 5), []
>>> _ = bus.subscribe(seen.append)
>>> _ = bus.subscribe(lambda e: 1 / 0)       # logged, not raised
>>> bus.emit({"kind": "chat"})
>>> seen
[{'t': 5, 'kind': 'chat'}]
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from typing import Any, Callable

log = logging.getLogger("quire.bus")

LIBRARY_SAVED = "library_saved"
BADGES_EARNED = "badges_earned"


def now_ms() -> int:
    return int(time.time() * 1000)


class EventBus:
    """Subscribe with ``subscribe(fn)`` (returns an unsubscribe function); ``emit(event)``."""

    def __init__(self, clock: Callable[[], int] = now_ms):
        self.clock = clock  # tests replace it to study on chosen days
        self._subscribers: list[Callable[[dict], Any]] = []
        self._pending: dict[asyncio.Task, Callable] = {}  # running subscriber tasks -> their subscriber

    def subscribe(self, fn: Callable[[dict], Any]) -> Callable[[], None]:
        if fn not in self._subscribers:
            self._subscribers.append(fn)
        return lambda: self._subscribers.remove(fn) if fn in self._subscribers else None

    def emit(self, event: dict) -> None:
        event = {"t": self.clock(), **event}
        for fn in list(self._subscribers):
            try:
                result = fn(dict(event))
                if inspect.isawaitable(result):
                    self._schedule(result, event, fn)
            except Exception:  # an action must never fail because someone listening did
                log.exception("event subscriber failed on %s", event.get("kind"))

    def _schedule(self, awaitable, event: dict, fn: Callable) -> None:
        try:
            task = asyncio.get_running_loop().create_task(awaitable)
        except RuntimeError:
            getattr(awaitable, "close", lambda: None)()
            log.warning("event %s not delivered: no event loop is running", event.get("kind"))
            return
        self._pending[task] = fn
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task) -> None:
        self._pending.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("event subscriber failed", exc_info=task.exception())

    async def drain(self) -> None:
        """Wait until every subscriber task started so far has finished."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
