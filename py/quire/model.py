"""The records that flow from extraction through chunking into the index.

A *unit* is one addressable piece of a source as the format defines it (a PDF
page, a slide, a block of spreadsheet rows, a Markdown section).  Chunking cuts
units into *chunks*; every chunk keeps the unit's location so that an answer
can cite "page 5" or "slide 3".
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field


def sha256_hex(data: bytes | str) -> str:
    """The hex SHA-256 of bytes, or of a string's UTF-8.

    >>> sha256_hex("a")[:8]
    'ca978112'
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


@dataclass
class Unit:
    """One addressable piece of a source, before chunking.

    ``location`` is a small JSON-able dict, one of:
    ``{"page": 5}``, ``{"slide": 3}``, ``{"sheet": "Sales", "rows": [2, 21]}``,
    ``{"section": ["Setup", "Install"]}``, ``{"chapter": "Intro"}`` or ``{}``.
    ``prefix`` is repeated at the head of every chunk cut from this unit
    (a breadcrumb such as ``[Section: Setup > Install]`` or a CSV header row).
    ``flags`` carries per-unit facts such as ``"needs_ocr"``.
    """

    text: str
    location: dict = field(default_factory=dict)
    prefix: str = ""
    flags: list[str] = field(default_factory=list)


@dataclass
class Extraction:
    """What an extractor returns for one source file."""

    kind: str  # "pdf", "markdown", "html", "text", "csv", "xlsx", "docx", "pptx", "epub"
    units: list[Unit]
    meta: dict = field(default_factory=dict)  # e.g. {"pages": 117, "title": "...", "language": "de"}
    warnings: list[str] = field(default_factory=list)


@dataclass
class Chunk:
    """A searchable passage.  ``start``/``end`` index into its unit's text."""

    source_id: str
    location: dict
    start: int
    end: int
    text: str
    hash: str = ""

    def __post_init__(self) -> None:
        if not self.hash:
            self.hash = sha256_hex(self.text)

    def to_dict(self) -> dict:
        return asdict(self)
