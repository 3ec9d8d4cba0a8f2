"""A library of many sources in real Chromium: reopening it does not freeze the page.

With a thousand sources every view used to ask the engine for the whole source list at
once when the engine was ready (four calls, four copies of the list), and the Library
built its thousand-row table in one task: a search typed at that moment was answered
seconds later.  Now the views share one answer, hidden views wait until they are shown, and
past 300 rows the table holds only the rows in sight (filter and sort work on all of them)."""

import pytest

from conftest import wait_until, with_test_hooks
from ui_pages import open_page

pytestmark = pytest.mark.browser

N = 900
STAGE = """n => quire.stage(Array.from({length: n}, (_, i) => ({name: 'note-' + i + '.md',
  text: '# Note ' + i + '\\nmarker' + i + ' gneiss and basalt, note ' + i + '.'}))).then(() => quire.train()).then(() => 0)"""
# Counts the engine calls the page makes (and how many run at once) and the page's long tasks.
WATCH = """(() => {
  window.__calls = {}; window.__running = {}; window.__most = {}; window.__long = []; window.__rowsPerTask = [];
  window.__offsets = [];  // the offset asked by each sourcesSince: a page of a whole list is asked past 0
  new PerformanceObserver(l => l.getEntries().forEach(e => window.__long.push(Math.round(e.duration))))
    .observe({type: 'longtask', buffered: true});
  // Rows added per task: a MutationObserver's callback runs once after each task that changed the page.
  new MutationObserver(records => {
    let rows = 0;
    for (const r of records) for (const n of r.addedNodes)
      if (n.nodeType === 1) rows += (n.matches('[data-testid=source-row]') ? 1 : 0) + n.querySelectorAll('[data-testid=source-row]').length;
    if (rows) window.__rowsPerTask.push(rows);
  }).observe(document, {childList: true, subtree: true});
  const W = window.Worker;
  window.Worker = function (u, o) {
    const w = new W(u, o), send = w.postMessage.bind(w), names = {};
    w.postMessage = (m, t) => {
      if (m && m.type === 'call') {  // {type: 'call', id, method, argsJson, payload}: site/assets/boot-calls.js
        const n = names[m.id] = m.method;
        window.__calls[n] = (window.__calls[n] || 0) + 1;
        window.__running[n] = (window.__running[n] || 0) + 1;
        window.__most[n] = Math.max(window.__most[n] || 0, window.__running[n]);
        if (n === 'sourcesSince') window.__offsets.push(JSON.parse(m.argsJson)[2] || 0);
      }
      return send(m, t);
    };
    w.addEventListener('message', e => { const m = e.data;
      if (m && m.type === 'result' && names[m.id]) { window.__running[names[m.id]]--; delete names[m.id]; } });
    return w;
  };
})()"""
ROWS = "() => document.querySelectorAll('[data-testid=source-row]').length"
# Marks the table in the page, then says the library changed (as a Train ending or another tab's
# change does): the page builds a new table.
REBUILD = """async () => { document.querySelector('[data-testid=source-scroll]').dataset.old = '1';
  document.dispatchEvent(new CustomEvent('quire:library-changed')); }"""


def test_a_library_of_many_sources_reopens_without_freezing_the_page(context, built_dist, serve, page_log):
    url = serve(built_dist).url
    page = open_page(context, url, page_log)
    page.set_default_timeout(300_000)
    page.evaluate(STAGE, N)
    page.evaluate("quire.setKeepOriginals(false).then(() => quire.setOcrLanguage('deu')).then(() => 0)")
    page.close()

    context.add_init_script(WATCH)
    page = open_page(context, with_test_hooks(url + "#library"), page_log)
    # A search the moment the engine is ready is answered while the views fill in.
    took = page.evaluate("""async () => { const t = performance.now(); const hits = await quire.search('marker417');
      return [performance.now() - t, hits[0].source]; }""")
    assert took[1] == "note-417.md"
    table = "document.querySelector('[data-testid=source-table]')"
    page.wait_for_function(f"() => {table} && {table}.getAttribute('aria-rowcount') === '{N + 1}'")
    most = page.evaluate("window.__most")
    assert most["sourcesSince"] == 1 and most.get("categories", 1) == 1, most  # the views shared one answer
    # The whole list came in two pages of at most 500 (Library.LIST_PAGE), the search answered between.
    assert page.evaluate("window.__offsets").count(500) == 1, page.evaluate("window.__offsets")
    # Once the passages are read, the engine collects its heap once and freezes what survived
    # (quire.heap): later collections no longer walk every passage during a person's calls.
    wait_until(page, "quire.status().marks['heap-settled']")
    assert page.evaluate("(s) => quire.run(s)", "import gc; gc.get_freeze_count()") > 20 * N
    # Study and Settings are hidden: they asked nothing (Study's sets would load every service
    # ahead of the person's first call); each asks once it is opened, and shows what is stored.
    calls = page.evaluate("window.__calls")
    assert "studySets" not in calls and "librarySettings" not in calls, calls
    page.evaluate("location.hash = '#settings'")
    page.wait_for_function("() => !document.querySelector('[data-testid=keep-originals]').checked"
                           " && document.querySelector('[data-testid=ocr-language]').value === 'deu'")
    page.evaluate("location.hash = '#study'")
    wait_until(page, "window.__calls.studySets >= 1")
    page.evaluate("location.hash = '#library'")
    # Only the rows in sight are in the page, each built in the task that scrolled to it.
    shown = page.evaluate(ROWS)
    assert 10 <= shown < N // 2, shown
    per_task = page.evaluate("window.__rowsPerTask")
    assert max(per_task) < N // 2, per_task
    print(f"longest page task {max(page.evaluate('window.__long') or [0])} ms; first search {took[0]:.0f} ms")
    # Scrolled to the end, the last rows are there (sorted by when they were added: the last
    # batch of 200 files staged together holds notes 800-899, and among them the order is by name).
    names = sorted((f"note-{i}.md" for i in range(800, N)), key=lambda n: n.lower())
    page.evaluate("() => { const s = document.querySelector('[data-testid=source-scroll]'); s.scrollTop = s.scrollHeight; }")
    last = f"() => [...document.querySelectorAll('[data-testid=source-row]')].pop().dataset.name"
    page.wait_for_function(f"() => ({last})() === {names[-1]!r}")
    # A change elsewhere rebuilds the table; the reader stays where they scrolled to.
    page.evaluate(REBUILD)
    page.wait_for_function("() => !document.querySelector('[data-testid=source-scroll]').dataset.old")
    assert page.evaluate(f"({last})()") == names[-1]
    # The filter finds one source among all 900 (not only those in sight), and the table still works: rename it.
    page.fill("[data-testid=source-filter]", "note-17.md")
    page.wait_for_function(f"() => ({ROWS})() === 1")
    assert page.text_content("[data-testid=source-count]").startswith("1 of 900")
    row = page.locator("[data-testid=source-row][data-name='note-17.md']")
    row.locator("input.cat").fill("Rocks")
    row.locator("input.cat").dispatch_event("change")
    wait_until(page, "quire.sources().then(s => s.some(x => x.name === 'note-17.md' && x.category === 'Rocks'))")
    # Sorted by category, the renamed one comes first (sources without a category last).
    page.fill("[data-testid=source-filter]", "")
    page.select_option("[data-testid=source-sort]", "category")
    page.wait_for_function("() => document.querySelector('[data-testid=source-row]').dataset.name === 'note-17.md'")
    page.fill("[data-testid=source-filter]", "no such note")
    page.wait_for_selector("[data-testid=filter-empty]")
    assert not page_log.errors, page_log.errors
