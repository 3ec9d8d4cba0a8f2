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

A file staged in the tab stays in the page's memory (``Held``): the engine reads its head and its
sha256 a few MB at a time, and its pieces go to the store as views of it, so a 300 MB lecture video
never enters the engine's heap, which WebAssembly can only grow.

>>> held = Bytes(b"xyz" * 5)
>>> sha256(held) == sha256(b"xyz" * 5), held[:4], len(held)
(True, b'xyzx', 15)
>>> [(k, bytes(v)) for _, k, v in puts("a", held, piece=8)[1:]]
[('a#0', b'xyzxyzxy'), ('a#1', b'zxyzxyz')]
"""

from __future__ import annotations

import hashlib

BUCKET = "originals"
PIECE = 32 * 1024 * 1024  # well under Chromium's 127 MiB cap per value, and one piece at a time in memory
HASH_STEP = 4 * 1024 * 1024  # what of a held file is in the engine's heap at once while it is hashed


class Held:
    """A file's bytes kept outside the engine: ``len``, ``held[a:b]`` (a copy of that stretch, as
    bytes) and ``part(a, b)`` (the stretch, still outside).  The store puts a ``Held`` as the
    bytes it holds (py/quire/browser/idb.py); quire.browser holds the page's Uint8Array in one."""

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, where: slice) -> bytes:
        raise NotImplementedError

    def part(self, start: int, stop: int) -> "Held":
        raise NotImplementedError


class Bytes(Held):
    """``Held`` over bytes in this process: what the tests and CPython use to take the same path."""

    def __init__(self, data: bytes, start: int = 0, stop: int | None = None):
        self.data, self.start, self.stop = data, start, len(data) if stop is None else stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, where: slice) -> bytes:
        a, b, _ = where.indices(len(self))
        return bytes(self.data[self.start + a:self.start + max(a, b)])

    def __bytes__(self) -> bytes:
        return self[:]

    def part(self, start: int, stop: int) -> "Bytes":
        return Bytes(self.data, self.start + start, self.start + min(stop, len(self)))


def sha256(data) -> str:
    """The hex sha256 of bytes or of a ``Held``, read ``HASH_STEP`` at a time."""
    if not isinstance(data, Held):
        return hashlib.sha256(data).hexdigest()
    h = hashlib.sha256()
    for at in range(0, len(data), HASH_STEP):
        h.update(data[at:at + HASH_STEP])
    return h.hexdigest()


def _pieces(size: int, piece: int) -> int:
    return -(-size // piece) if size > piece else 0


def puts(source_id: str, data: bytes, piece: int = PIECE) -> list[tuple[str, str, object]]:
    """The store puts that keep ``data`` as the original of ``source_id``."""
    n = _pieces(len(data), piece)
    held = isinstance(data, Held)
    if not n:
        return [(BUCKET, source_id, data if held else bytes(data))]
    view = data if held else memoryview(data)
    cut = view.part if held else (lambda a, b: bytes(view[a:b]))
    return [(BUCKET, source_id, {"pieces": n, "size": len(data), "piece": piece})] + [
        (BUCKET, f"{source_id}#{i}", cut(i * piece, (i + 1) * piece)) for i in range(n)]


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
