"""The privacy panel: what Quire keeps in this browser, how big it is, and where.

Everything stays in this browser's IndexedDB (databases named ``quire.*``);
nothing is sent anywhere except the questions and passages given to the
language-model server the person chose.  ``inventory`` turns per-bucket stats
into the panel's rows.

>>> rows = inventory({"originals": {"count": 3, "bytes": 2_500_000}})
>>> rows[0]["what"], rows[0]["size"], rows[0]["where"]
('Original files', '2.4 MB', 'quire.library / originals, sources')
>>> rows[-1]["size"]
'0 B'
"""

from __future__ import annotations

from typing import Mapping

from quire.errors import InvalidInput

# panel row -> (what it is, IndexedDB database / object stores, what it holds in a few words).
# The stores are ``quire.store.BUCKETS``; prompt overrides are keys in ``settings``.
BUCKETS: dict[str, tuple[str, str, str]] = {
    "originals": ("Original files", "quire.library / originals, sources", "the documents you added, byte for byte"),
    "chunks": ("Text passages", "quire.library / chunks, index, ocr", "the text cut from your documents (and read from scans), and its search index"),
    "vectors": ("Search vectors", "quire.library / vectors", "numbers that let Quire find passages by meaning"),
    "chats": ("Conversations", "quire.library / chats", "your questions and the answers you got"),
    "study_items": ("Study material", "quire.library / study", "quizzes, flashcards, workshops and mind maps"),
    "progress": ("Progress", "quire.library / progress", "what you studied and when, and your badges"),
    "settings": ("Settings", "quire.library / settings", "your preferences and model server address"),
    "prompt_overrides": ("Prompt overrides", "quire.library / settings", "prompt templates you edited"),
}


def human_size(n: int) -> str:
    """Bytes in binary units, as file managers show them.

    >>> [human_size(n) for n in (0, 999, 1024, 1536, 5 * 1024 ** 3)]
    ['0 B', '999 B', '1.0 KB', '1.5 KB', '5.0 GB']
    """
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def inventory(stats: Mapping[str, Mapping[str, int]]) -> list[dict]:
    """One row per bucket, in panel order: ``{"bucket", "what", "holds", "count", "bytes", "size", "where"}``.

    ``stats`` maps bucket -> ``{"count", "bytes"}``; missing buckets show as empty,
    an unknown bucket name fails listing the known ones.
    """
    unknown = sorted(set(stats) - set(BUCKETS))
    if unknown:
        raise InvalidInput(f"unknown bucket {unknown[0]!r}; choose one of: {', '.join(BUCKETS)}")
    rows = []
    for bucket, (what, where, holds) in BUCKETS.items():
        s = stats.get(bucket, {})
        count, size = int(s.get("count", 0)), int(s.get("bytes", 0))
        if count < 0 or size < 0:
            raise InvalidInput(f"bucket {bucket!r}: count and bytes cannot be negative")
        rows.append({"bucket": bucket, "what": what, "holds": holds, "count": count, "bytes": size,
                     "size": human_size(size), "where": where})
    return rows


def total(rows: list[dict]) -> dict:
    """The panel's last line: everything Quire keeps here."""
    size = sum(r["bytes"] for r in rows)
    return {"count": sum(r["count"] for r in rows), "bytes": size, "size": human_size(size)}
