"""Each trained source's passages (its chunk records), read from the store once and kept.

A search reads only the sources it hit; the tab reads the rest in the background
(``load``), after which the set is ``complete`` and stays so: Train and removals keep it.

>>> import asyncio
>>> from quire.store import MemoryStore
>>> store = MemoryStore(); store.data["chunks"]["s1"] = [{"id": "s1:0", "text": "Glaciers"}]
>>> held = Passages(store)
>>> held.get("s1") is None, [c["text"] for c in asyncio.run(held.of("s1"))], held.get("s1")[0]["id"]
(True, ['Glaciers'], 's1:0')
"""

from __future__ import annotations


class Passages:
    def __init__(self, store):
        self.store = store
        self._held: dict[str, list[dict]] = {}
        self.complete = False  # every trained source's passages are held (``load`` ran and nothing dropped them)

    async def of(self, source_id: str) -> list[dict]:
        """A source's passages, read once (``[]`` for a source with none stored)."""
        if source_id not in self._held:
            self._held[source_id] = await self.store.get("chunks", source_id) or []
        return self._held[source_id]

    def get(self, source_id: str) -> list[dict] | None:
        """The passages held for a source, without reading: ``None`` if not read yet."""
        return self._held.get(source_id)

    async def load(self, source_ids) -> None:
        """Read every one of ``source_ids`` not held yet; then the set counts as complete."""
        if self.complete:
            return
        for source_id in source_ids:
            await self.of(source_id)
        self.complete = True

    def keep(self, source_id: str, chunks: list[dict]) -> None:
        self._held[source_id] = chunks

    def drop(self, source_id: str) -> None:
        self._held.pop(source_id, None)

    def clear(self) -> None:
        self._held, self.complete = {}, False
