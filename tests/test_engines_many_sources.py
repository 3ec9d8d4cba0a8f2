"""A library of many small sources in Firefox and WebKit (Chromium: test_many_sources_browser.py):
past 300 rows the Library table holds only the rows in sight, scrolling brings the last ones,
and the filter, a rename and the sort work on all of them.  In the same browser, the store's range
deletes (a commit with many deletes in one bucket: tests/test_store_js_browser.py) delete exactly
their keys, on a page of its own origin."""

from __future__ import annotations

import pytest

from conftest import StaticServer
from engines import ENGINES, missing, open_engine
from test_store_js_browser import RANGE_DELETES, check_range_deletes, store_site

pytestmark = pytest.mark.browser

N = 900
STAGE = """async (n) => { await quire.stage(Array.from({length: n}, (_, i) => ({name: 'note-' + i + '.md',
  text: '# Note ' + i + '\\nmarker' + i + ' gneiss and basalt, note ' + i + '.'})));
  const counts = await quire.train(); return counts.added; }"""
TABLE = "document.querySelector('[data-testid=source-table]')"
ROWS = "document.querySelectorAll('[data-testid=source-row]')"
LAST = f"[...{ROWS}].pop().dataset.name"
# Marks the table in the page, then says the library changed (as a Train ending or another tab's
# change does): the page builds a new table.
REBUILD = """async () => { document.querySelector('[data-testid=source-scroll]').dataset.old = '1';
  document.dispatchEvent(new CustomEvent('quire:library-changed')); }"""


@pytest.fixture(scope="module")
def server(built_dist):
    s = StaticServer(built_dist).start()
    yield s
    s.stop()


@pytest.mark.parametrize("name", ENGINES)
def test_nine_hundred_sources_are_a_windowed_table_that_filters_renames_and_sorts(name, server, serve, tmp_path):
    why = missing(name)
    if why:
        pytest.fail(f"{name} is needed for this tier and is missing here: {why}")
    with open_engine(name, tmp_path) as b:
        b.goto(server.url + "#library")
        b.wait_ready()
        assert b.run(STAGE, N) == N
        b.wait(f"{TABLE} && {TABLE}.getAttribute('aria-rowcount') === '{N + 1}'",
               describe=f"{TABLE} && {TABLE}.getAttribute('aria-rowcount')")
        shown = b.js(f"return {ROWS}.length;")
        assert 10 <= shown < N // 2, shown  # only the rows in sight are in the page
        # Scrolled to the end, the last rows are there: the last batch of 200 files staged
        # together holds notes 800-899, and among them the order is by name.
        last = sorted((f"note-{i}.md" for i in range(800, N)), key=str.lower)[-1]
        b.js("const s = document.querySelector('[data-testid=source-scroll]'); s.scrollTop = s.scrollHeight;")
        b.wait(f"{LAST} === {last!r}", describe=LAST)
        # A change elsewhere rebuilds the table; the reader stays where they scrolled to.
        b.run(REBUILD)
        b.wait("!document.querySelector('[data-testid=source-scroll]').dataset.old")
        assert b.js(f"return {LAST};") == last
        # The filter finds one source among all of them, not only those in sight; rename it.
        b.js("const f = document.querySelector('[data-testid=source-filter]'); f.value = 'note-17.md';"
             "f.dispatchEvent(new Event('input', {bubbles: true}));")
        b.wait(f"{ROWS}.length === 1", describe=f"{ROWS}.length")
        assert b.js("return document.querySelector('[data-testid=source-count]').textContent;").startswith("1 of 900")
        b.js("const c = document.querySelector(\"[data-testid=source-row][data-name='note-17.md'] input.cat\");"
             "c.value = 'Rocks'; c.dispatchEvent(new Event('change', {bubbles: true}));")
        b.wait("quire.sources().then(s => s.some(x => x.name === 'note-17.md' && x.category === 'Rocks'))")
        # Sorted by category, the renamed one comes first (sources without a category last).
        b.js("const f = document.querySelector('[data-testid=source-filter]'); f.value = '';"
             "f.dispatchEvent(new Event('input', {bubbles: true}));"
             "const s = document.querySelector('[data-testid=source-sort]'); s.value = 'category';"
             "s.dispatchEvent(new Event('change', {bubbles: true}));")
        b.wait(f"{ROWS}[0] && {ROWS}[0].dataset.name === 'note-17.md'", describe=f"{ROWS}[0] && {ROWS}[0].dataset.name")
        # Sorted by name, note-0 leads and the window still holds only a few rows.
        b.js("const s = document.querySelector('[data-testid=source-sort]'); s.value = 'name';"
             "s.dispatchEvent(new Event('change', {bubbles: true}));")
        b.wait(f"{ROWS}[0] && {ROWS}[0].dataset.name === 'note-0.md'", describe=f"{ROWS}[0] && {ROWS}[0].dataset.name")
        assert b.js(f"return {ROWS}.length;") < N // 2
        # The store's range deletes, on a page that loads only the store (its own origin).
        b.goto(serve(store_site(tmp_path / "store")).url)
        b.run("async () => QuireStore.openLibrary(['notes'], 1)")
        check_range_deletes(b.run(RANGE_DELETES))
