"""Identity and provenance of study items.

Every item (card, question, lesson, map node) is a JSON-able dict that records
the chunks it came from: ``chunk_ids`` plus ``chunk_hashes`` (id -> content
hash at the time it was made), so a later re-index can tell which items went
stale.  A chunk's id (``model.chunk_id``: ``<source id>:<n>``) says where it
sits, not what it says; its hash changes with its text.

>>> from quire.model import Chunk
>>> provenance([Chunk("3f9a0c", {"section": ["Intro"]}, 120, 480, "Some text", n=2)])["chunk_ids"]
['3f9a0c:2']
"""

from __future__ import annotations

import hashlib
import json

from quire.model import Chunk


def provenance(chunks: list[Chunk]) -> dict:
    """The ``chunk_ids`` / ``chunk_hashes`` pair an item stores."""
    return {
        "chunk_ids": [c.id for c in chunks],
        "chunk_hashes": {c.id: c.hash for c in chunks},
    }


def item_id(item: dict) -> str:
    """A short id from the item's content (not its provenance), stable across runs.

    >>> item_id({"type": "basic", "front": "Q", "back": "A"})
    '499c173435892634'
    """
    content = {k: v for k, v in item.items() if k not in ("id", "chunk_ids", "chunk_hashes", "made_without_ai")}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def stamp(item: dict, chunks: list[Chunk], *, made_without_ai: bool) -> dict:
    """Add id, provenance and origin to a freshly made item."""
    item = dict(item)
    item.update(provenance(chunks))
    item["made_without_ai"] = made_without_ai
    item["id"] = item_id(item)
    return item

