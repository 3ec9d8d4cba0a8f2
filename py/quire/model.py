"""The records that flow from extraction through chunking into the index.

A *unit* is one addressable piece of a source as the format defines it (a PDF
page, a slide, a block of spreadsheet rows, a Markdown section).  Chunking cuts
units into *chunks*; every chunk keeps the unit's location so that an answer
can cite "page 5" or "slide 3".

A chunk's id is ``"<source id>:<n>"`` (``chunk_id``), read back with ``parse_chunk_id``
(which splits on the last colon; the page's ``QuirePassage.parseId`` does the same).  Every
dict keys it ``"chunk_id"`` (``"chunk_ids"`` for lists): a passage's own stored record, a
search hit, a citation, a tool result, a study item (records stored before keyed it ``"id"``;
``quire.passages.upgraded`` reads those).  ``"location"`` is always the location dict; the
words for it are ``"location_label"`` (``location_label``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


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
    ``{"section": ["Setup", "Install"]}``, ``{"chapter": "Intro"}``, ``{"time": [750.0, 790.0]}``
    (seconds into a recording) or ``{}``.
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


def chunk_id(source_id: str, n: int) -> str:
    """The id of a source's ``n``-th chunk, the one scheme everything uses: the index,
    stored chunks, study items, chats and the page's ``data-chunk``.

    >>> chunk_id("3f9a0c", 12)
    '3f9a0c:12'
    """
    return f"{source_id}:{n}"


def parse_chunk_id(cid: str) -> tuple[str, int | None]:
    """``chunk_id`` backwards; ``n`` is None when the id does not end in ``:<number>``.

    >>> parse_chunk_id("3f9a0c:12"), parse_chunk_id("notes")
    (('3f9a0c', 12), ('notes', None))
    """
    source_id, sep, tail = str(cid).rpartition(":")
    if not sep:
        return tail, None
    return source_id, int(tail) if tail.isdigit() else None


def location_label(location: dict | None) -> str:
    """Short words for where a passage sits (citations, search hits, prompts, cards).

    >>> [location_label(x) for x in ({"page": 5}, {"slide": 3}, {"sheet": "Sheet1", "rows": [2, 21]},
    ...                              {"section": ["Setup", "Install"]}, {"chapter": "Loomings"}, {},
    ...                              {"time": [750.0, 790.2]}, {"time": [3599.6, 3725]})]
    ['p. 5', 'slide 3', 'Sheet1 rows 2–21', 'Setup › Install', 'Loomings', '', '12:30–13:10', '59:59–1:02:05']
    """
    location = location or {}
    if location.get("time"):
        start, end = location["time"]
        return f"{clock(start)}–{clock(end)}"
    if location.get("section"):
        return " › ".join(str(s) for s in location["section"])
    if "page" in location:
        return f"p. {location['page']}"
    if "slide" in location:
        return f"slide {location['slide']}"
    if "chapter" in location:
        return str(location["chapter"])
    if "sheet" in location or "rows" in location:
        rows = location.get("rows")
        where = str(location.get("sheet") or "")
        if rows:
            first, last = rows[0], rows[-1]
            where += f" rows {first}–{last}" if first != last else f" row {first}"
        return where.strip()
    return ""


def clock(seconds: float) -> str:
    """A moment in a recording as a clock reads it, rounded down.

    >>> clock(5), clock(750.9), clock(3725)
    ('0:05', '12:30', '1:02:05')
    """
    s = max(0, int(seconds))
    hours, minutes, secs = s // 3600, s // 60 % 60, s % 60
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _copied(value):
    """A copy of a location: dicts and lists copied all the way down, the rest shared (immutable)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


@dataclass
class Chunk:
    """A searchable passage.  ``start``/``end`` index into its unit's text; ``n`` is its
    number within its source, so ``id`` is ``chunk_id(source_id, n)``.  ``source`` is
    the name a person knows the source by (what prompts and cards show); it defaults to
    ``source_id`` and is not stored with the chunk (the source record holds the name).

    >>> c = Chunk("3f9a0c", {"page": 2}, 0, 5, "Hello", n=4, source="Biology.pdf")
    >>> c.id, c.source, sorted(c.to_dict())
    ('3f9a0c:4', 'Biology.pdf', ['chunk_id', 'end', 'hash', 'location', 'n', 'source_id', 'start', 'text'])
    """

    source_id: str
    location: dict
    start: int
    end: int
    text: str
    hash: str = ""
    n: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        if not self.hash:
            self.hash = sha256_hex(self.text)
        if not self.source:
            self.source = self.source_id

    @property
    def id(self) -> str:
        return chunk_id(self.source_id, self.n)

    def to_dict(self) -> dict:
        """The stored form, id under ``"chunk_id"``: a copy, built field by field (``asdict``'s
        generic deep copy was a tenth of a Train of 5,000 notes)."""
        return {"chunk_id": self.id, "source_id": self.source_id, "location": _copied(self.location),
                "start": self.start, "end": self.end, "text": self.text, "hash": self.hash, "n": self.n}

    @classmethod
    def from_dict(cls, d: dict, source: str = "") -> "Chunk":
        """A stored chunk (``to_dict``) or a search hit as a Chunk; its ``"chunk_id"``, when
        there is one, says which source and number it is.

        >>> Chunk.from_dict({"chunk_id": "bio:3", "location": {"page": 2}, "text": "Cells."}).id
        'bio:3'
        """
        source_id, n = parse_chunk_id(d.get("chunk_id") or "")
        if n is None:
            source_id, n = d.get("source_id") or source_id, d.get("n") or 0
        text = d.get("text") or ""
        start = d.get("start") or 0
        return cls(source_id, d.get("location") or {}, start, d.get("end", start + len(text)), text,
                   d.get("hash") or "", n, source)
