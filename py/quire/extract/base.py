"""Shared pieces for the extractors: the error type, limits, safe zip reading,
text decoding and the section breadcrumb used by Markdown, HTML, DOCX and EPUB.

>>> section_unit(["Setup", "Install"], "pip install quire").prefix
'[Section: Setup > Install]\\n'
"""

from __future__ import annotations

import codecs
import io
import re
import zipfile
import zlib
from dataclasses import dataclass
from xml.etree import ElementTree as ET
from xml.parsers import expat

from quire.errors import QuireError
from quire.extract.causes import CUT_OFF, SAVE_AGAIN, looks_like, xml_reason, zip_reason
from quire.model import Unit


class ExtractError(QuireError):
    """A problem with the user's file, worded so it can be shown as is.

    ``detail`` holds the traceback when the cause was an exception nobody expected
    (a reader bug on odd input): the Train result row carries it for "Copy details"."""

    def __init__(self, message: str, detail: str | None = None):
        super().__init__(message)
        self.detail = detail


class ExtractCancelled(Exception):
    """The person cancelled while a file was being read; nothing of it is kept."""


@dataclass(frozen=True)
class Limits:
    """Caps that keep a hostile or huge file from exhausting the tab's memory."""

    max_zip_entries: int = 20_000  # real DOCX/PPTX/EPUB have hundreds, not tens of thousands
    # Whole archive as declared, and bytes actually read.  Parsing XML with ElementTree takes
    # ~0.7 s and ~3.5 MB of Pyodide heap per MB (10 MB on 64-bit CPython; tests/bench/xml_memory.py),
    # so 64 MB of XML is under a minute and ~250 MB; 500 MB took 115 s and 4 GB in a tab.
    max_unzipped_bytes: int = 64 * 1024 * 1024
    max_pdf_pages: int = 5_000  # beyond this a "document" is an archive, not study material
    max_seconds: float = 300.0  # reading one file stops here; the tab is one thread and must stay usable


MB = 1024 * 1024


# ---------------------------------------------------------------- zip archives


class SafeZip:
    """A zip opened from bytes that refuses zip bombs.

    The declared sizes in the central directory are checked up front, and the
    bytes really inflated are counted while reading, because a crafted archive
    can lie about its sizes.
    """

    def __init__(self, data: bytes, what: str, limits: Limits):
        self.what = what
        try:
            self.zf = zipfile.ZipFile(io.BytesIO(data))
            infos = self.zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
            if not data:
                raise ExtractError(f"this {what} file is damaged or incomplete (it is empty: 0 bytes)") from e
            if not data.startswith(b"PK"):
                raise ExtractError(f"this {what} file is not a zip archive, as every {what} file is: it holds "
                                   f"{looks_like(data)}; is it another kind of file renamed?") from e
            reason = CUT_OFF if "file is not a zip file" in str(e).lower() else zip_reason(e)  # it starts as one
            raise ExtractError(f"this {what} file is damaged or incomplete ({reason}); {SAVE_AGAIN}") from e
        if len(infos) > limits.max_zip_entries:
            raise ExtractError(f"this {what} file has too many parts ({len(infos)}); it looks like a zip bomb")
        declared = sum(i.file_size for i in infos)
        if declared > limits.max_unzipped_bytes:
            raise ExtractError(
                f"this {what} file would unpack to {declared // MB} MB (limit {limits.max_unzipped_bytes // MB} MB);"
                " it looks like a zip bomb"
            )
        self.budget = limits.max_unzipped_bytes
        # Lookups are case-insensitive: some writers vary the case of part names.
        self.names = {i.filename.lower(): i for i in infos}

    def has(self, name: str) -> bool:
        return name.lstrip("/").lower() in self.names

    def read(self, name: str) -> bytes | None:
        """Bytes of one part, or None if it is missing."""
        info = self.names.get(name.lstrip("/").lower())
        if info is None:
            return None
        out = bytearray()
        try:
            with self.zf.open(info) as f:
                while block := f.read(1 << 16):
                    out += block
                    self.budget -= len(block)
                    if self.budget < 0:
                        raise ExtractError(f"this {self.what} file unpacks to more data than allowed; it looks like a zip bomb")
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error) as e:
            raise ExtractError(f"this {self.what} file is damaged or incomplete ({name} cannot be unpacked: "
                               f"{zip_reason(e)}); {SAVE_AGAIN}") from e
        return bytes(out)

    def xml(self, name: str) -> ET.Element | None:
        data = self.read(name)
        return None if data is None else parse_xml(data, self.what, name)


class _DoctypeFound(Exception):
    pass


class _NoDTD(ET.TreeBuilder):
    """ElementTree's builder that stops at a document type declaration."""

    def doctype(self, name, pubid, system):
        raise _DoctypeFound(name)


def _declares_anything(data: bytes) -> bool:
    """Does the DOCTYPE carry an internal subset, where entities are declared?

    Asked of expat itself (any encoding, wherever the DOCTYPE sits); parsing
    stops at the DOCTYPE, before any entity could be expanded."""
    parser = expat.ParserCreate()
    seen: list[bool] = []

    def start(name, system, public, has_internal_subset):
        seen.append(bool(has_internal_subset))
        raise _DoctypeFound(name)

    parser.StartDoctypeDeclHandler = start
    try:
        parser.Parse(data, True)
    except _DoctypeFound:
        pass
    except expat.ExpatError:
        return True  # unreadable up to its DOCTYPE: treat as the worst case
    return not seen or seen[0]


def _parse(data: bytes, target: ET.TreeBuilder) -> ET.Element:
    parser = ET.XMLParser(target=target)
    # Fed in blocks: the C parser only notices a handler's exception at the end of a feed.
    for start in range(0, len(data), 1 << 16):
        parser.feed(data[start : start + (1 << 16)])
    return parser.close()


def parse_xml(data: bytes, what: str, part: str | None = None) -> ET.Element:
    """Parse one XML part.  A DTD that declares anything is refused in the parser
    itself: entity declarations can only live there, so this closes the door on
    entity-expansion bombs and external entities.  A bare ``<!DOCTYPE ncx PUBLIC ...>``
    (EPUB 2 tables of contents have one) declares nothing and is read.

    >>> parse_xml(b"<a><b>hi</b></a>", "Word").find("b").text
    'hi'
    """
    try:
        try:
            return _parse(data, _NoDTD())
        except _DoctypeFound:
            if _declares_anything(data):
                raise
            return _parse(data, ET.TreeBuilder())
    except _DoctypeFound as e:
        raise ExtractError(
            f"this {what} file contains a DTD (a document type declaration with its own declarations), which "
            "Office and EPUB files never need and which can hide an entity bomb; Quire refuses it for safety. "
            "Save the file again from its program and add the new copy"
        ) from e
    except ET.ParseError as e:
        raise ExtractError(f"this {what} file is damaged: {xml_reason(e, part)}; {SAVE_AGAIN}") from e


def join_path(base: str, target: str) -> str:
    """Resolve a relationship target against the folder of the part that names it.

    >>> join_path("ppt/slides/slide1.xml", "../notesSlides/notesSlide1.xml")
    'ppt/notesSlides/notesSlide1.xml'
    """
    if target.startswith("/"):
        return target.lstrip("/")
    parts = base.split("/")[:-1]
    for piece in target.split("#")[0].split("/"):
        if piece == "..":
            if parts:
                parts.pop()
        elif piece not in ("", "."):
            parts.append(piece)
    return "/".join(parts)


def local(tag: str) -> str:
    """'{namespace}p' -> 'p'; namespaces differ between strict and transitional OOXML."""
    return tag.rpartition("}")[2]


def attr(el: ET.Element, name: str) -> str | None:
    """Attribute by local name, whatever its namespace prefix."""
    for key, value in el.attrib.items():
        if local(key) == name:
            return value
    return None


def rel_id(el: ET.Element) -> str:
    """The r:id of an element; a bare ``id`` (as on <p:sldId>) is something else."""
    return next((v for k, v in el.attrib.items() if k.startswith("{") and local(k) == "id"), "")


def relationships(z: SafeZip, part: str) -> dict[str, tuple[str, str]]:
    """{rId: (type, resolved target path)} for one OOXML part."""
    folder, _, file = part.rpartition("/")
    root = z.xml(f"{folder}/_rels/{file}.rels" if folder else f"_rels/{file}.rels")
    rels = {}
    if root is not None:
        for rel in root:
            if rel.get("TargetMode") == "External":
                continue
            rels[rel.get("Id", "")] = (rel.get("Type", ""), join_path(part, rel.get("Target", "")))
    return rels


# ---------------------------------------------------------------- text


_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
]
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def guess_encoding(data: bytes) -> tuple[str, int]:
    """(encoding, bytes of BOM to skip).

    >>> guess_encoding("hé".encode("utf-16-le"))
    ('utf-16-le', 0)
    """
    for bom, enc in _BOMS:  # UTF-32 LE first: its BOM starts with UTF-16 LE's
        if data.startswith(bom):
            return enc, len(bom)
    sample = data[:4096]
    if len(sample) >= 4:
        # UTF-16 without BOM: mostly-ASCII text leaves every other byte zero.
        even, odd = sample[0::2], sample[1::2]
        if odd.count(0) > 0.3 * len(odd) and even.count(0) < 0.05 * len(even):
            return "utf-16-le", 0
        if even.count(0) > 0.3 * len(even) and odd.count(0) < 0.05 * len(odd):
            return "utf-16-be", 0
    try:
        # final=False tolerates a character cut off at the very end of the file.
        decoder = codecs.getincrementaldecoder("utf-8")()
        head = decoder.decode(data, final=False)
        if not decoder.getstate()[0] or not head.isascii():
            return "utf-8", 0
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    good = sum(1 for ch in text if ch > "\x7f") - bad
    # Valid multi-byte sequences are rare by accident in cp1252 text, so a few
    # broken ones among many good ones (a cut-off file, one stray byte) is UTF-8.
    if good >= 4 * bad:
        return "utf-8", 0
    return "cp1252", 0


def decode_text(data: bytes, name: str, encoding: str | None = None) -> str:
    """Bytes -> str, never failing on bad bytes; refuses binary data.

    >>> decode_text(b"caf\\xe9", "a.txt")
    'café'
    """
    skip = 0
    if encoding is None:
        encoding, skip = guess_encoding(data)
    if not encoding.startswith(("utf-16", "utf-32")) and b"\x00" in data[:8192]:
        raise ExtractError(f"{name} does not look like text (it contains binary data); is it another kind of file renamed?")
    try:
        text = data[skip:].decode(encoding, "replace")
    except LookupError:
        text = data.decode("utf-8", "replace")
    sample = text[:8192]
    junk = len(_CONTROL.findall(sample)) + sample.count("\ufffd")
    if junk > max(2, 0.05 * len(sample)):
        raise ExtractError(f"{name} does not look like text (it contains binary data); is it another kind of file renamed?")
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------- sections


MAX_TITLE = 120  # characters of one heading kept in a breadcrumb
MAX_DEPTH = 8  # heading levels kept: the first two and the last six
MAX_BREADCRUMB = 300  # characters of the whole breadcrumb; it is repeated in every passage


def short_path(path: list[str]) -> list[str]:
    """A heading path cut to a size worth repeating in every passage.

    >>> short_path([str(n) for n in range(20)])
    ['0', '1', '…', '14', '15', '16', '17', '18', '19']
    """
    if len(path) > MAX_DEPTH:
        path = path[:2] + ["…"] + path[-(MAX_DEPTH - 2):]
    return [t if len(t) <= MAX_TITLE else t[: MAX_TITLE - 1] + "…" for t in path]


def breadcrumb(label: str, path: list[str]) -> str:
    if not path:
        return ""
    text = f"[{label}: {' > '.join(short_path(path))}]\n"
    return text if len(text) <= MAX_BREADCRUMB else text[: MAX_BREADCRUMB - 3] + "…]\n"


def section_unit(path: list[str], text: str) -> Unit:
    return Unit(text=text, location={"section": short_path(path)}, prefix=breadcrumb("Section", path))


class Outline:
    """Heading stack turned into units: feed headings and text in document order.

    >>> o = Outline(); o.heading(1, "A"); o.text("x"); o.heading(2, "B"); o.text("y")
    >>> [(u.location["section"], u.text) for u in o.units()]
    [(['A'], 'x'), (['A', 'B'], 'y')]

    A heading too long for the breadcrumb is also the first line of its section's text, so no
    word of it is lost to search (one with nothing under it still makes a passage):

    >>> o = Outline(); o.heading(1, "word " * 30); [u.text[-9:] for u in o.units()]
    ['word word']
    """

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []
        self.parts: list[str] = []
        self.done: list[Unit] = []

    def path(self) -> list[str]:
        if len(self.stack) > MAX_DEPTH:  # only these survive short_path; a 5,000-deep stack stays cheap
            return [t for _, t in self.stack[:2]] + ["…"] + [t for _, t in self.stack[-(MAX_DEPTH - 2):]]
        return [title for _, title in self.stack]

    def heading(self, level: int, title: str) -> None:
        title = " ".join(title[: MAX_TITLE * 8].split())
        if not title:
            return
        self.flush()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, title))
        if title not in breadcrumb("Section", self.path()):  # cut there: its words stay searchable in the text
            self.parts.append(title)

    def text(self, text: str) -> None:
        self.parts.append(text)

    def flush(self) -> None:
        body = tidy("\n".join(self.parts))
        self.parts = []
        if body:
            self.done.append(section_unit(self.path(), body))

    def units(self) -> list[Unit]:
        self.flush()
        return self.done


_BLANKS = re.compile(r"\n[ \t\u00a0]*(?:\n[ \t\u00a0]*)+")


def tidy(text: str) -> str:
    """Trim line ends and squeeze runs of blank lines to one."""
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANKS.sub("\n\n", text).strip()
