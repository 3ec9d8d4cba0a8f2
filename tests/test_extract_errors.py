"""Bad input: each case must fail with a message a user can act on."""

import io
import zipfile
from pathlib import Path

import pytest

from quire.extract import SUPPORTED, ExtractError, Limits, extract, kind_of
from fixtures_docs import W, docx, epub, lying_zip, pptx, xlsx, zip_bomb

UNSUPPORTED = (
    "unsupported type .xyz; Quire reads PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), "
    "CSV, Markdown, HTML, EPUB, plain text, PNG or JPEG images (read by OCR), and recordings "
    "(MP3, M4A/AAC, Ogg/Opus, WAV, FLAC, WebM, MP4; English or German speech)"
)


def test_unsupported_type_message_is_exact():
    with pytest.raises(ExtractError) as e:
        extract("data.xyz", b"whatever")
    assert str(e.value) == UNSUPPORTED


def test_legacy_office_gets_a_hint():
    with pytest.raises(ExtractError, match=r"unsupported type \.doc; .*save it as \.docx first"):
        extract("old.doc", b"\xd0\xcf\x11\xe0 legacy")


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("empty.txt", b"", "empty.txt is empty"),
        ("blank.md", b"  \n\t\n", "blank.md is empty"),
        ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "photo.txt does not look like text"),
        ("noise.csv", bytes(range(1, 32)) * 20, "noise.csv does not look like text"),
        ("broken.docx", b"PK\x03\x04 not really a zip", "damaged or incomplete"),
        ("half.xlsx", xlsx({"S": [["a"]]})[:200], "damaged or incomplete"),
        ("half.pptx", pptx([("T", ["b"], "")])[:-30], "damaged or incomplete"),
        ("half.epub", epub([("c.xhtml", "C", "<p>x</p>")])[:300], "damaged or incomplete"),
        ("notzip.epub", b"just some text", "not a zip archive, as every EPUB file is: it holds plain text"),
        ("fake.pdf", b"GIF89a" + b"\x00" * 100, "not a valid PDF"),
    ],
)
def test_bad_files(name, data, message):
    with pytest.raises(ExtractError, match=message):
        extract(name, data)


def test_size_limit():
    with pytest.raises(ExtractError, match=r"big.txt is too large \(2 MB; the limit is 1 MB\)"):
        extract("big.txt", b"a" * (2 * 1024 * 1024), max_bytes=1024 * 1024)


@pytest.mark.parametrize("name", ["bomb.docx", "bomb.xlsx", "bomb.pptx", "bomb.epub"])
def test_zip_bomb_by_declared_size(name):
    inner = {"bomb.docx": "word/document.xml", "bomb.xlsx": "xl/workbook.xml", "bomb.pptx": "ppt/presentation.xml", "bomb.epub": "META-INF/container.xml"}[name]
    data = zip_bomb(inner, 32 * 1024 * 1024)
    assert len(data) < 200_000  # a tiny file that would inflate 32 MB
    with pytest.raises(ExtractError, match="zip bomb"):
        extract(name, data, limits=Limits(max_unzipped_bytes=8 * 1024 * 1024))


def test_zip_bomb_that_lies_about_sizes_is_caught_while_reading():
    body = "<w:p><w:r><w:t>" + "x" * 100_000 + "</w:t></w:r></w:p>"
    data = lying_zip({"word/document.xml": f"<w:document {W}><w:body>{body}</w:body></w:document>"}, declared=10)
    with pytest.raises(ExtractError) as e:
        extract("liar.docx", data, limits=Limits(max_unzipped_bytes=50_000))
    # The declared sizes pass the up-front check.  zipfile then stops at the
    # declared size and fails the CRC, so the lie reads as damage; the running
    # byte budget that backs this up is tested just below.
    assert "zip bomb" in str(e.value) or "damaged" in str(e.value)


def test_read_budget_is_enforced_even_when_sizes_are_honest():
    from quire.extract.base import SafeZip

    z = SafeZip(docx([("", "y" * 60_000)]), "Word", Limits(max_unzipped_bytes=200_000))
    z.budget = 10_000  # as if earlier parts had used up the allowance
    with pytest.raises(ExtractError, match="zip bomb"):
        z.read("word/document.xml")


def test_too_many_entries():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for i in range(50):
            z.writestr(f"x{i}", "")
    with pytest.raises(ExtractError, match="too many parts"):
        extract("many.pptx", buf.getvalue(), limits=Limits(max_zip_entries=20))


def test_entity_declarations_refused():
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><x>&b;</x>'
    data = docx([("", "x")])
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, bomb if info.filename == "word/document.xml" else src.read(info))
    with pytest.raises(ExtractError, match="entity"):
        extract("ent.docx", buf.getvalue())


@pytest.mark.parametrize(
    "name, data, kind",
    [
        ("README", b"# Title\ntext", "text"),
        ("scan", b"%PDF-1.7\n...", "pdf"),
        ("page", b"<!DOCTYPE html><html><p>x</p>", "html"),
        ("Report.PDF", b"", "pdf"),
        ("notes.Markdown", b"", "markdown"),
    ],
)
def test_kind_of(name, data, kind):
    assert kind_of(name, data) == kind


def test_supported_covers_the_promised_formats():
    assert set(SUPPORTED.values()) == {"pdf", "docx", "pptx", "xlsx", "csv", "markdown", "html", "epub", "text", "image", "audio"}


# ---------------------------------------------------------------- the cause, named (real files, broken)

OFFICE = Path(__file__).parent / "fixtures" / "office"


def _rezip(data: bytes, part: str, new: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, new if info.filename == part else src.read(info))
    return out.getvalue()


def _corrupt(data: bytes, part: str) -> bytes:
    """Flip a byte inside one compressed part (its local header is 30 bytes plus name and extra)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(part)
    at = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 10
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


def _docx() -> bytes:
    return (OFFICE / "docling" / "word_sample.docx").read_bytes()


def _xlsx() -> bytes:
    return (OFFICE / "docling" / "xlsx_05_table_with_title.xlsx").read_bytes()


def _cut_xml(data: bytes, part: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return _rezip(data, part, z.read(part)[:2000])


CAUSES = [  # (name, make from a real file, pieces the message must name)
    ("truncated.docx", lambda pdfs: _docx()[: len(_docx()) // 2],
     ["damaged or incomplete", "it is cut off: the end of the zip (its central directory) is missing", "save a new copy"]),
    ("notzip.docx", lambda pdfs: (pdfs / "acl-papers/N18-3011.pdf").read_bytes(),
     ["this Word file is not a zip archive", "it holds a PDF", "another kind of file renamed"]),
    ("text.pptx", lambda pdfs: b"Minutes of the meeting\nWe agreed on the budget.\n" * 3,
     ["this PowerPoint file is not a zip archive", "it holds plain text"]),
    ("brokenxml.docx", lambda pdfs: _cut_xml(_docx(), "word/document.xml"),
     ["XML error in word/document.xml at line", "(unclosed token)", "save a new copy"]),
    ("brokenxml.xlsx", lambda pdfs: _rezip(_xlsx(), "xl/workbook.xml", b"<workbook><sheets><sheet name='a'"),
     ["this Excel file is damaged: XML error in xl/workbook.xml at line 1, column 18 (unclosed token)"]),
    ("corrupt.docx", lambda pdfs: _corrupt(_docx(), "word/document.xml"),
     ["word/document.xml cannot be unpacked", "a compressed part is corrupt"]),
    ("cut.pdf", lambda pdfs: (pdfs / "acl-papers/N18-3011.pdf").read_bytes()[:5000],
     ["could not read this PDF: the file is cut off", "PdfStreamError", "print it to a new PDF"]),
    ("locked.pdf", lambda pdfs: (pdfs / "py-pdf-sample-files/libreoffice-writer-password.pdf").read_bytes(),
     ["this PDF is password-protected", "save a copy without a password"]),
]


@pytest.mark.parametrize("name, make, pieces", CAUSES, ids=[c[0] for c in CAUSES])
def test_a_broken_file_names_its_cause(pdf_dir, name, make, pieces):
    with pytest.raises(ExtractError) as e:
        extract(name, make(pdf_dir))
    message = str(e.value)
    assert [p for p in pieces if p not in message] == [], message
    assert "looks damaged" not in message
    assert e.value.detail is None  # a known cause: no traceback to report


def test_an_unknown_cause_is_named_by_its_exception_and_keeps_the_traceback(monkeypatch):
    import quire.extract.docx

    def broken(data, name, limits=None):
        return {}["w:numId"]  # a reader bug on an odd file

    monkeypatch.setattr(quire.extract.docx, "extract_docx", broken)
    with pytest.raises(ExtractError) as e:
        extract("odd.docx", _docx())
    assert str(e.value).startswith("could not read odd.docx: KeyError: 'w:numId' (the file may be damaged")
    assert "save a new copy" in str(e.value)
    assert e.value.detail.startswith("Traceback (most recent call last):") and "in broken" in e.value.detail


@pytest.mark.parametrize("data, what", [
    (b"%PDF-1.7\n", "a PDF"), (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office file (97-2003, .doc/.xls/.ppt)"),
    (b"<html><body>", "HTML or XML"), (b"Grocery list: milk", "plain text"), (bytes(range(256)), "binary data of an unknown kind"),
])
def test_looks_like(data, what):
    from quire.extract.causes import looks_like

    assert looks_like(data) == what
