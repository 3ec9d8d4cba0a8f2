"""The library parts of an imported vault: checked record by record, index rebuilt.

A vault's own search index is never used: a crafted one whose chunk lists do
not match its index made every later search fail with ``IndexError``.  The
index is rebuilt from the imported passages instead (BM25 is cheap), and the
vault's vectors only serve as the embedding cache they are, keyed by the
passage's hash and the model: a passage gets a vector only if its text hashes
to that key and the vector has the model's dimension.

>>> sources = {"s": {"name": "a.md", "status": "trained", "added": 1, "language": "en", "category": None}}
>>> text = "Basalt cools fast."
>>> chunks = {"s": [{"chunk_id": "s:0", "n": 0, "text": text, "hash": sha256_hex(text), "location": {}}]}
>>> check_library(sources, chunks)
>>> index = rebuild_index(sources, chunks, {}, None)
>>> [h.id for h in index.search("basalt")]
['s:0']
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import numpy as np

from quire.errors import QuireError
from quire.training import LANGUAGES
from quire.model import chunk_id, sha256_hex
from quire.retrieval.dense import cache_key
from quire.retrieval.index import HybridIndex

STATUSES = ("staged", "trained", "failed")


class LibraryDataError(QuireError):
    """A source or passage record in a vault that Quire could not use; nothing is imported."""


# What Quire's source ids look like (a content hash, "failed-…", "…-again"), with room for
# other spellings of the same kind.  Never ":" (it joins a source id to a passage number),
# "#" (it numbers the pieces of a large original) or anything outside ASCII letters and
# digits: a crafted id such as "a:1" would make another source's passages look like its own.
SOURCE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _source_problem(sid: str, s: Any) -> str | None:
    if not isinstance(sid, str) or not SOURCE_ID.fullmatch(sid):
        return "has an id Quire never makes (letters, digits, - and _ only, at most 64)"
    if not isinstance(s, Mapping):
        return "is not a record"
    if s.get("id", sid) != sid:
        return f"is filed under {sid!r} but says its id is {str(s.get('id'))[:40]!r}"
    if not isinstance(s.get("name"), str) or s.get("status") not in STATUSES:
        return "has no name or no valid status"
    if not isinstance(s.get("added"), (int, float)) or isinstance(s.get("added"), bool):
        return "has no valid date added"
    for field in ("category", "language"):
        if s.get(field) is not None and not isinstance(s.get(field), str):
            return f"has an invalid {field}"
    return None


def _chunks_problem(sid: str, chunks: Any) -> str | None:
    if not isinstance(chunks, list):
        return "are not a list"
    for n, c in enumerate(chunks):
        if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
            return f"#{n} is not a passage"
        if c.get("chunk_id") != chunk_id(sid, n) or c.get("n", n) != n:
            return f"#{n} has the id {c.get('chunk_id')!r}, not {chunk_id(sid, n)!r}"
        if c.get("hash") != sha256_hex(c["text"]):
            return f"#{n} does not match its hash"
        if not isinstance(c.get("location", {}), Mapping):
            return f"#{n} has an invalid location"
    return None


def _short(sid: Any) -> str:
    """A crafted id as it can appear in a message: repr, at most 40 characters of it."""
    text = repr(sid)
    return text if len(text) <= 42 else text[:40] + "…"


def check_library(sources: Mapping[str, Any], chunks: Mapping[str, Any]) -> None:
    """Raise ``LibraryDataError`` for a source or passage list the library could not load.

    Every trained source needs its passages; every passage list needs a source."""
    for sid, s in sorted(sources.items()):
        problem = _source_problem(sid, s)
        if problem:
            raise LibraryDataError(f"source record {_short(sid)} in this vault {problem}")
        if s["status"] == "trained" and sid not in chunks:
            raise LibraryDataError(f"source {s['name']!r} in this vault is marked trained but its passages are missing")
    for sid, cs in sorted(chunks.items()):
        if sid not in sources:
            raise LibraryDataError(f"this vault holds passages of a source it does not list ({_short(sid)})")
        problem = _chunks_problem(sid, cs)
        if problem:
            raise LibraryDataError(f"the passages of {sources[sid]['name']!r} in this vault: {problem}")


def cached_vectors(chunks: list[Mapping], vectors: Mapping[str, Any], model: str) -> dict[str, np.ndarray]:
    """chunk id -> unit vector, from the embedding cache, for the chunks that have one.

    Vectors of another length than the most common one are skipped (they cannot be
    from ``model``), as are empty or non-finite ones."""
    found = {}
    for c in chunks:
        blob = vectors.get(cache_key(c["hash"], model))
        if isinstance(blob, (bytes, bytearray, memoryview)) and len(blob) and len(blob) % 4 == 0:
            v = np.frombuffer(bytes(blob), dtype=np.float32)
            norm = float(np.linalg.norm(v))
            if np.isfinite(norm) and norm > 0:
                found[c["chunk_id"]] = v / norm
    if not found:
        return {}
    sizes = [v.shape[0] for v in found.values()]
    usual = max(set(sizes), key=sizes.count)
    return {cid: v for cid, v in found.items() if v.shape[0] == usual}


def rebuild_index(sources: Mapping[str, Mapping], chunks: Mapping[str, list], vectors: Mapping[str, Any],
                  model: str | None) -> HybridIndex:
    """The search index for these trained sources, in the library's order (added, then name)."""
    index = HybridIndex()
    trained = sorted((s["added"], s["name"], sid) for sid, s in sources.items() if s["status"] == "trained")
    every = []
    for _, _, sid in trained:
        s, cs = sources[sid], chunks.get(sid) or []
        if not cs:
            continue
        language = s.get("language") if s.get("language") in LANGUAGES else None
        index.add_chunks(sid, [c["chunk_id"] for c in cs], [c["text"] for c in cs], category=s.get("category"),
                         language=language)
        every += cs
    if model and every:
        found = cached_vectors(every, vectors, model)
        if found:
            ids = list(found)
            index.add_vectors(ids, np.stack([found[c] for c in ids]), model)
    return index
