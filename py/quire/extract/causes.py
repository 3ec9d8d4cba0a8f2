"""Why a file could not be read, in words for the person: the cause named from the
exception (a zip cut off, an XML error with its place, a PDF cut off) and what to do.

>>> zip_reason(zipfile.BadZipFile("Bad CRC-32 for file 'word/document.xml'"))
'a part of the zip fails its checksum'
"""

from __future__ import annotations

import re
import zipfile
import zlib
from xml.etree import ElementTree as ET
from xml.parsers import expat

# What to do about a damaged file: the program that wrote it often still opens it and
# writes a clean copy.
SAVE_AGAIN = "if it opens in the program that made it, save a new copy there and add that"
CUT_OFF = "it is cut off: the end of the zip (its central directory) is missing"


_ZIP_REASONS = [  # zipfile's wording -> what it means for the person
    ("file is not a zip file", "it is not a zip archive, or its end (the central directory) is cut off"),
    ("truncated central directory", "the zip's central directory is cut off"),
    ("bad magic number for central directory", "the zip's central directory is damaged"),
    ("truncated file header", "a part of the zip is cut off"),
    ("bad magic number for file header", "a part of the zip is damaged"),
    ("bad crc-32", "a part of the zip fails its checksum"),
    ("compression method", "a part uses a compression method Quire cannot read"),
    ("encrypted", "the zip is password-protected"),
    ("error -3", "a compressed part is corrupt"),
    ("error -5", "a compressed part is cut off"),
]


def looks_like(data: bytes) -> str:
    """What a file that should have been a zip holds, by its first bytes.

    >>> looks_like(b"%PDF-1.7 ...")
    'a PDF'
    >>> looks_like(b"Dear diary")
    'plain text'
    """
    head = data[:512]
    for magic, what in ((b"%PDF-", "a PDF"), (b"\xd0\xcf\x11\xe0", "an old Office file (97-2003, .doc/.xls/.ppt)"),
                        (b"{\\rtf", "an RTF document"), (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
                        (b"Rar!", "a RAR archive"), (b"7z\xbc\xaf", "a 7-Zip archive"), (b"\x1f\x8b", "a gzip archive")):
        if head.startswith(magic):
            return what
    if head.lstrip().startswith(b"<"):
        return "HTML or XML"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:
            return "binary data of an unknown kind"
    return "plain text"


def cause(exc: BaseException) -> str:
    """What went wrong while reading a file, named from the exception itself.

    >>> cause(ET.ParseError("not well-formed (invalid token): line 3, column 7"))
    'XML error at line 3, column 7 (not well-formed (invalid token))'
    >>> cause(KeyError("rId7"))
    "KeyError: 'rId7'"
    """
    if isinstance(exc, (zipfile.BadZipFile, zipfile.LargeZipFile)):
        return zip_reason(exc)
    if isinstance(exc, (ET.ParseError, expat.ExpatError)):
        return xml_reason(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"its text is not valid {exc.encoding} (byte {exc.object[exc.start]:#04x} at position {exc.start})"
    if isinstance(exc, zlib.error):
        return "a compressed part is corrupt"
    if isinstance(exc, EOFError):
        return "the file ends too early (it is cut off)"
    text = str(exc)
    for marker, reason in _PDF_REASONS:  # pypdf's wording (its classes are not imported here)
        if type(exc).__module__.startswith("pypdf") and marker in text.lower():
            return f"{reason} ({type(exc).__name__}: {text[:160]})"
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


_PDF_REASONS = [  # pypdf's wording -> what it means for the person
    ("stream has ended unexpectedly", "the file is cut off"),
    ("eof marker not found", "the file is cut off (its end marker is missing)"),
    ("startxref", "its table of contents (the cross-reference table) is missing or broken"),
    ("xref", "its table of contents (the cross-reference table) is broken"),
    ("file has not been decrypted", "the PDF is encrypted"),
    ("cryptography", "the PDF is encrypted in a way Quire cannot open"),
]


def xml_reason(exc: BaseException, part: str | None = None) -> str:
    """Where an XML parser stopped, and why.

    >>> xml_reason(ET.ParseError("unclosed token: line 1, column 18"), "xl/workbook.xml")
    'XML error in xl/workbook.xml at line 1, column 18 (unclosed token)'
    """
    line, column = getattr(exc, "position", None) or (getattr(exc, "lineno", None), getattr(exc, "offset", None))
    if line is None:  # an ET.ParseError built by hand: the position is only in its text
        m = re.search(r"line (\d+), column (\d+)", str(exc))
        line, column = (int(m[1]), int(m[2])) if m else ("?", "?")
    message = re.sub(r":? ?line \d+, column \d+$", "", str(exc)).strip() or type(exc).__name__
    where = f" in {part}" if part else ""
    return f"XML error{where} at line {line}, column {column} ({message})"


def zip_reason(exc: BaseException) -> str:
    """zipfile's complaint in plain words.

    >>> zip_reason(zipfile.BadZipFile("Truncated central directory"))
    "the zip's central directory is cut off"
    """
    text = str(exc).lower()
    for marker, reason in _ZIP_REASONS:
        if marker in text:
            return reason
    return f"it is not a valid zip archive: {exc}" if str(exc) else "it is not a valid zip archive"
