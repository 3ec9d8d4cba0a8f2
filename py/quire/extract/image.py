"""Images (PNG, JPEG): no text of their own, one unit that OCR fills in during Train.

>>> ex = extract_image(b"\\x89PNG\\r\\n\\x1a\\n" + b"0" * 40, "scan.png")
>>> ex.kind, ex.units[0].flags, ex.meta["pages"]
('image', ['needs_ocr'], 1)
"""

from __future__ import annotations

from quire.extract.base import ExtractError
from quire.model import Extraction, Unit

SIGNATURES = {b"\x89PNG\r\n\x1a\n": "PNG", b"\xff\xd8\xff": "JPEG"}


def extract_image(data: bytes, name: str) -> Extraction:
    if not any(data.startswith(sig) for sig in SIGNATURES):
        raise ExtractError(f"{name} is not a PNG or JPEG image (its first bytes say otherwise)")
    return Extraction(kind="image", units=[Unit(text="", location={"page": 1}, flags=["needs_ocr"])],
                      meta={"pages": 1, "needs_ocr": 1, "needs_ocr_pages": [1]})
