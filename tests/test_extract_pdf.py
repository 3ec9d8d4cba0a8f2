"""PDF extraction on real files from the shared corpus (never copied into the repo).

Every expected sentence below was read off the extracted page and checked
against the page as rendered; page numbers are 1-based physical pages.
"""

import time

import pytest

from quire.extract import ExtractError, extract


def flat(text: str) -> str:
    return " ".join(text.split())


def read(pdf_dir, rel: str):
    path = pdf_dir / rel
    return extract(path.name, path.read_bytes())


def page_of(ex, sentence: str) -> list[int]:
    return [u.location["page"] for u in ex.units if sentence in flat(u.text)]


# (file, page, sentence that runs over several lines of one column, later sentence on the same page)
COLUMNS = [
    (
        "acl-papers/N18-3011.pdf",
        2,
        "Papers. We obtain metadata and PDF files of papers via partnerships with publishers (e.g., Springer, Nature),",
        "Authors. Each node of this type represents a unique author, with attributes such as ‘first name’ and ‘last name’.",
    ),
    (
        "acl-papers/2020.acl-main.207.pdf",
        3,
        "A citation from one document to another suggests that the documents are related.",
        "Given a query paper, intuitively we would expect the model to be able to distinguish between cited papers,"
        " and uncited papers sampled randomly from the entire corpus.",
    ),
    (
        "pdfplumber-public/federal-register-2020-17221.pdf",
        1,
        "SUMMARY: The FAA proposes to supersede Airworthiness Directive (AD) 2018–23–51, which applies to all The"
        " Boeing Company Model 737–8 and 737– 9 (737 MAX) airplanes.",
        "This proposed AD would also apply to a narrower set of airplanes than the superseded AD,",
    ),
    (
        "pdfplumber-public/federal-register-2020-17221.pdf",
        2,
        "The flightcrew on Lion Air Flight 043 had no prior awareness of this type of failure or how to respond to it.",
        "MCAS is a function of the Speed Trim System (STS), which is part of the airplane’s flight control system.",
    ),
    (
        "py-pdf-sample-files/multicolumn.pdf",
        1,
        "Lorem ipsum dolor sit amet, consectetuer adipiscing elit. Ut purus elit, vestibulum ut, placerat ac,"
        " adipiscing vitae, felis.",
        "Nam ipsum ligula, eleifend at, accumsan nec, suscipit a, ipsum. Morbi blandit ligula feugiat magna.",
    ),
]


@pytest.mark.parametrize("rel, page, first, second", COLUMNS)
def test_multi_column_pages_keep_sentences_whole(pdf_dir, rel, page, first, second):
    ex = read(pdf_dir, rel)
    text = flat(ex.units[page - 1].text)
    # Whole multi-line sentences only survive if lines of the other column
    # were not interleaved into them.
    assert first in text and second in text
    assert text.index(first) < text.index(second)
    assert page_of(ex, first) == [page]


def test_german_script_umlauts_on_the_right_page(pdf_dir):
    start = time.perf_counter()
    ex = read(pdf_dir, "py-pdf-sample-files/GeoTopo-komprimiert.pdf")
    seconds = time.perf_counter() - start
    assert ex.kind == "pdf" and ex.meta["pages"] == 117 and len(ex.units) == 117
    assert ex.meta["title"] == "Geometrie und Topologie"
    assert ex.meta["needs_ocr"] == 0
    assert page_of(ex, "Er heißt zusammengesetzter Weg und man schreibt") == [50]
    assert page_of(ex, "Abbildung 3.3: Beispiele für (nicht)-Homotopie von Wegen") == [50]
    assert "Obwohl es nicht vorausgesetzt wird, könnte es von Vorteil sein „Einführung in die Algebra und" in flat(ex.units[2].text)
    # ﬂ ligature folded so that "Auflage" is searchable as typed.
    assert "0. Auflage" in ex.units[0].text
    assert all("\x00" not in u.text for u in ex.units)
    print(f"GeoTopo: {117 / seconds:.0f} pages/s")  # benchmark figure, not an assertion


def test_arabic(pdf_dir):
    ex = read(pdf_dir, "py-pdf-sample-files/habibi.pdf")
    assert ex.units[0].text == "حَبيبي habibi حَبيبي"
    # Short but real text on an image-free page is not a scan.
    assert ex.units[0].flags == []


def test_password_protected(pdf_dir):
    with pytest.raises(ExtractError, match="password-protected"):
        read(pdf_dir, "py-pdf-sample-files/libreoffice-writer-password.pdf")


@pytest.mark.parametrize("rel", ["py-pdf-sample-files/imagemagick-CCITTFaxDecode.pdf", "ocrmypdf-scans/c02-22.pdf"])
def test_image_only_pages_need_ocr(pdf_dir, rel):
    ex = read(pdf_dir, rel)
    assert [u.flags for u in ex.units] == [["needs_ocr"]]
    assert ex.meta["needs_ocr"] == 1 and ex.meta["needs_ocr_pages"] == [1]
    assert "need OCR" in ex.warnings[0]


def test_mixed_scan_counts_pages(pdf_dir):
    ex = read(pdf_dir, "ocrmypdf-scans/multipage.pdf")
    assert ex.meta["pages"] == 6
    assert ex.meta["needs_ocr_pages"] == [1, 2, 3, 5, 6]
    assert "needs_ocr" not in ex.units[3].flags


def test_truncated_pdf(pdf_dir):
    data = (pdf_dir / "acl-papers/N18-3011.pdf").read_bytes()
    with pytest.raises(ExtractError, match="could not read this PDF: the file is cut off"):
        extract("cut.pdf", data[:5000])


def test_not_a_pdf():
    with pytest.raises(ExtractError, match="not a valid PDF"):
        extract("fake.pdf", b"hello, I am text " * 10)
