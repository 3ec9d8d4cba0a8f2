"""Each trained source's passages (its chunk records), read from the store once and kept.

A search reads only the sources it hit; the tab reads the rest in the background
(``load``), after which the set is ``complete`` and stays so: Train and removals keep it.

A passage record keys its id ``"chunk_id"``, as every hit, citation and study item does.
Libraries and vaults written before vault format 3 (December 2026) keyed it ``"id"``;
``upgraded`` is the one place that knows, and every read of stored passages goes through it
(``read`` here, the vault's format 2 -> 3 migration, the vault export and import), so only
the new key is ever written.

>>> import asyncio
>>> from quire.store import MemoryStore
>>> store = MemoryStore(); store.data["chunks"]["s1"] = [{"id": "s1:0", "text": "Glaciers"}]  # an old record
>>> held = Passages(store)
>>> held.get("s1") is None, [c["text"] for c in asyncio.run(held.of("s1"))], held.get("s1")[0]["chunk_id"]
(True, ['Glaciers'], 's1:0')
"""

from __future__ import annotations

OLD_KEY = "id"  # where passage records written before vault format 3 kept their id
KEY = "chunk_id"


def upgraded(records):
    """A source's passage records with each id under ``"chunk_id"``: records keyed ``"id"``
    (the old form) are copied with the key renamed; a list with none is returned as it is.
    Anything that is not a list of records is returned untouched, for the caller to judge
    (a vault's checks refuse it).

    >>> upgraded([{"id": "s1:0", "n": 0}, {"chunk_id": "s1:1", "n": 1}])
    [{'chunk_id': 's1:0', 'n': 0}, {'chunk_id': 's1:1', 'n': 1}]
    """
    if not isinstance(records, list) or not any(isinstance(r, dict) and OLD_KEY in r for r in records):
        return records
    return [_upgraded(r) if isinstance(r, dict) and OLD_KEY in r else r for r in records]


def _upgraded(record: dict) -> dict:
    out = {KEY: record[OLD_KEY]}
    out.update((k, v) for k, v in record.items() if k != OLD_KEY)
    return out


async def read(store, source_id: str) -> list[dict]:
    """A source's stored passages in the current form (``[]`` for a source with none stored)."""
    return upgraded(await store.get("chunks", source_id) or [])


class Passages:
    def __init__(self, store):
        self.store = store
        self._held: dict[str, list[dict]] = {}
        self.complete = False  # every trained source's passages are held (``load`` ran and nothing dropped them)

    async def of(self, source_id: str) -> list[dict]:
        """A source's passages, read once (``[]`` for a source with none stored)."""
        if source_id not in self._held:
            self._held[source_id] = await read(self.store, source_id)
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
