"""Bad input: each case must fail with a message a user can act on."""

import io
import zipfile

import pytest

from quire.extract import SUPPORTED, ExtractError, Limits, extract, kind_of
from fixtures_docs import W, docx, epub, lying_zip, pptx, xlsx, zip_bomb

UNSUPPORTED = (
    "unsupported type .xyz; Quire reads PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), "
    "CSV, Markdown, HTML, EPUB, plain text, and PNG or JPEG images (read by OCR)"
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
        ("notzip.epub", b"just some text", "damaged or incomplete"),
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
    assert set(SUPPORTED.values()) == {"pdf", "docx", "pptx", "xlsx", "csv", "markdown", "html", "epub", "text", "image"}
