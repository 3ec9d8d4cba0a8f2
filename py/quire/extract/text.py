"""Plain text: one unit per file, the encoding guessed from the bytes.

>>> extract_text(b"Hello", "a.txt").units[0].text
'Hello'
"""

from __future__ import annotations

from quire.extract.base import decode_text, tidy
from quire.model import Extraction, Unit


def extract_text(data: bytes, name: str) -> Extraction:
    text = tidy(decode_text(data, name))
    # Chunking finds paragraph and sentence breaks itself; one unit keeps
    # the whole file addressable without inventing locations.
    return Extraction(kind="text", units=[Unit(text=text)] if text else [], meta={"chars": len(text)})
