"""Real third-party documents trained in real Chromium give exactly the passages CPython gives.

The extraction fidelity checks (tests/test_extract_office_real.py, tests/test_extract_markup_real.py)
run on CPython against reference converters; this test shows the tab (Pyodide) cuts the same files
into the same passages with the same locations, so those figures hold in the browser too."""

import asyncio
import base64
import concurrent.futures

import pytest

from conftest import FIXTURES, wait_ready

pytestmark = pytest.mark.browser

FILES = [
    "office/docx2python/example.docx",            # footnotes and endnotes
    "office/docling/unit_test_headers_numbered.docx",  # Word's heading numbers
    "office/poi/smartart-simple.pptx",            # SmartArt
    "office/docling/powerpoint_with_image.pptx",  # a subtitle
    "office/poi/DateFormatTests.xlsx",            # number formats
    "markup/pandoc/epub/wasteland.epub",          # one XHTML file, five parts, line numbers, notes
    "markup/docling/epub/sources/epub_purvis_poetry.epub",
    "markup/docling/md/sources/wiki.md",          # links, emphasis, tables
    "markup/docling/html/sources/formatting.html",
    "pdfs/py-pdf-sample-files/GeoTopo-komprimiert.pdf",  # a table of contents
]


def cpython_chunks(name: str, data: bytes) -> list[dict]:
    from quire.app import Quire
    from quire.store import MemoryStore

    async def go():
        q = await Quire.open(MemoryStore(), transport=object())
        rec = await q.stage(name, data)
        await q.train()
        return await q.chunks(rec["id"])

    # Playwright's sync API keeps an event loop running in this thread: use another.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result()


def shape(chunks: list[dict]) -> list[tuple]:
    return [(c["text"], c["location"]) for c in chunks]


def test_the_tab_cuts_real_documents_exactly_as_cpython(context, built_dist, serve, page_log):
    page = page_log.attach(context.new_page())
    page.goto(serve(built_dist).url)
    wait_ready(page)
    files = {rel.rsplit("/", 1)[1]: (FIXTURES / rel).read_bytes() for rel in FILES}
    ids = page.evaluate("""async files => {
        const ids = {};
        for (const [name, b64] of Object.entries(files)) {
          const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
          const [rec] = await quire.stage({name, data: bytes});
          ids[name] = rec.id;
        }
        const counts = await quire.train();
        if (counts.failed) throw new Error(JSON.stringify(counts.files));
        return ids;
    }""", {name: base64.b64encode(data).decode() for name, data in files.items()})
    for name, data in files.items():
        tab = page.evaluate("id => quire.chunks(id)", ids[name])
        assert tab, name
        assert shape(tab) == shape(cpython_chunks(name, data)), name

    # And what the fidelity work is for, seen through the page's own search:
    note = page.evaluate("quire.search('Second footnote', {k: 3})")
    assert note and note[0]["source"] == "example.docx"
    line = page.evaluate("quire.search('ascended', {k: 3})")
    assert line and line[0]["source"] == "wasteland.epub"
    assert not page_log.errors
