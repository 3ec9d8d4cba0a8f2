"""OCR through Train in real Chromium, over http and from file://: scans become searchable and
cited by page, only pages without text are read, Cancel keeps pages and Train resumes,
and a bundle built without OCR says so."""

import base64

import pytest

from conftest import wait_ready

pytestmark = pytest.mark.browser

SCANS = "ocrmypdf-scans"
STAGE = "async ([name, b64]) => quire.stage([{name, data: Uint8Array.fromBase64(b64)}])"
COUNT_OCR = """() => { window.__ocrPages = [];
  const real = quire._pageMethods.ocr;
  quire._pageMethods.ocr = (a) => Promise.resolve(real(a)).then(r => {
    if (!r.needData) window.__ocrPages.push(a.page);  // a page actually read, not a request for the file
    return r;
  }); }"""


def b64(path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def open_page(context, url, page_log):
    page = page_log.attach(context.new_page())
    page.set_default_timeout(300_000)
    page.goto(url)
    wait_ready(page)
    return page


@pytest.mark.parametrize("mode", ["http", "file"])
def test_a_scanned_page_becomes_searchable_and_cited_by_page(mode, context, built_dist, serve, pdf_dir, page_log):
    url = serve(built_dist).url if mode == "http" else (built_dist / "index.html").as_uri()
    page = open_page(context, url, page_log)
    page.evaluate(STAGE, ["c02-22.pdf", b64(pdf_dir / SCANS / "c02-22.pdf")])
    counts = page.evaluate("quire.train()")
    assert counts["added"] == 1
    source = page.evaluate("quire.sources()")[0]
    assert list(source["ocr_pages"]) == ["1"] and source["ocr_pages"]["1"] > 50
    hit = page.evaluate("quire.search('there was a light behind him')")[0]
    assert hit["source"] == "c02-22.pdf" and hit["location"] == {"page": 1} and hit["location_label"] == "p. 1"
    assert not page_log.errors, page_log.errors


def test_only_pages_without_text_are_read_and_cancel_resumes(context, built_dist, serve, pdf_dir, page_log):
    page = open_page(context, serve(built_dist).url, page_log)
    page.evaluate(COUNT_OCR)
    page.evaluate(STAGE, ["multipage.pdf", b64(pdf_dir / SCANS / "multipage.pdf")])
    message = page.evaluate("""() => new Promise(resolve => {
        const stop = new AbortController();
        quire.train({signal: stop.signal, onProgress: e => { if (e.stage === 'ocr' && e.done >= 2) stop.abort(); }})
          .then(() => resolve('finished'), err => resolve(err.message));
    })""")
    # The cancel lands between pages: after page 2, or after 3 if page 3 had already begun.
    stopped = int(message.split("OCR stopped after ")[1].split(" ")[0])
    assert stopped in (2, 3) and "of 5 pages" in message and "picks up" in message
    assert page.evaluate("quire.sources()")[0]["status"] == "staged"
    assert page.evaluate("window.__ocrPages") == [1, 2, 3, 5, 6][:stopped]
    counts = page.evaluate("quire.train()")
    assert counts["added"] == 1
    assert page.evaluate("window.__ocrPages") == [1, 2, 3, 5, 6]  # each page read once; page 4 has text
    source = page.evaluate("quire.sources()")[0]
    assert sorted(source["ocr_pages"], key=int) == ["1", "2", "3", "5", "6"] and source["needs_ocr_pages"] == []


def test_without_ocr_in_the_build_scans_stay_marked_and_the_page_says_so(context, lean_dist, serve, pdf_dir, page_log):
    server = serve(lean_dist)  # built with --no-ocr (tests/conftest.py)
    page = open_page(context, server.url + "#settings", page_log)
    assert "OCR is not included" in page.get_by_test_id("ocr-note").inner_text()
    page.evaluate(STAGE, ["c02-22.pdf", b64(pdf_dir / SCANS / "c02-22.pdf")])
    assert page.evaluate("quire.train()")["added"] == 1
    source = page.evaluate("quire.sources()")[0]
    assert source["needs_ocr_pages"] == [1] and any("OCR is not included" in w for w in source["warnings"])
    page.get_by_test_id("nav-library").click()
    page.get_by_test_id("source-row").first.wait_for()
    assert "OCR is not included" in page.get_by_test_id("source-status").first.inner_text()
