"""The bytes of each source as it was added, in the ``originals`` bucket, in pieces when large.

Chromium refuses to store one IndexedDB value over 133,169,152 bytes, so an original
larger than ``PIECE`` is kept as ``PIECE``-sized values under ``"<id>#<n>"`` with a
small JSON manifest under ``"<id>"``; a small one is one ``bytes`` value under
``"<id>"`` as before.  The vault exports the bucket as it is, pieces included.

>>> import asyncio
>>> from quire.store import MemoryStore
>>> s = MemoryStore()
>>> asyncio.run(s.commit(puts("a", b"xyz" * 5, piece=4)))
>>> sorted(s.data["originals"])
['a', 'a#0', 'a#1', 'a#2', 'a#3']
>>> asyncio.run(read(s, "a"))
b'xyzxyzxyzxyzxyz'
>>> deletes("a", 15, piece=4)
[('originals', 'a'), ('originals', 'a#0'), ('originals', 'a#1'), ('originals', 'a#2'), ('originals', 'a#3')]
"""

from __future__ import annotations

BUCKET = "originals"
PIECE = 32 * 1024 * 1024  # well under Chromium's 127 MiB cap per value, and one piece at a time in memory


def _pieces(size: int, piece: int) -> int:
    return -(-size // piece) if size > piece else 0


def puts(source_id: str, data: bytes, piece: int = PIECE) -> list[tuple[str, str, object]]:
    """The store puts that keep ``data`` as the original of ``source_id``."""
    n = _pieces(len(data), piece)
    if not n:
        return [(BUCKET, source_id, bytes(data))]
    view = memoryview(data)
    return [(BUCKET, source_id, {"pieces": n, "size": len(data), "piece": piece})] + [
        (BUCKET, f"{source_id}#{i}", bytes(view[i * piece:(i + 1) * piece])) for i in range(n)]


def deletes(source_id: str, size: int | None, piece: int = PIECE) -> list[tuple[str, str]]:
    """The store deletes that drop the original of ``source_id`` (``size`` from its record)."""
    return [(BUCKET, source_id)] + [(BUCKET, f"{source_id}#{i}") for i in range(_pieces(size or 0, piece))]


async def read(store, source_id: str) -> bytes | None:
    """The original's bytes, or None if it is missing or some piece of it is."""
    head = await store.get(BUCKET, source_id)
    if head is None or isinstance(head, (bytes, bytearray, memoryview)):
        return None if head is None else bytes(head)
    out = bytearray()
    for i in range(int(head.get("pieces", 0))):
        part = await store.get(BUCKET, f"{source_id}#{i}")
        if part is None:
            return None
        out += part
    return bytes(out) if len(out) == head.get("size") else None
