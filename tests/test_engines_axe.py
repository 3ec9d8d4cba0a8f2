"""axe-core finds nothing in any view, study player or dialog of Quire in Firefox ESR and WebKitGTK
(Safari's engine), in English in the light theme and German in the dark one, with every rule it has switched on: best practices,
WCAG 2.2 and AAA, and the experimental and deprecated ones.  tests/test_axe_browser.py does the
same in Chromium (and at phone size).

axe comes from the npm tarball pinned in pyproject.toml (tests/test_axe_browser.py fetches it);
the driver puts it into the page (WebDriver's scripts are not the page's own, so the page's
Content-Security-Policy stays as it is).
"""

from __future__ import annotations

import json

import pytest

from conftest import StaticServer
from engines import ENGINES, missing, open_engine
from test_axe_browser import AXE_RUN, axe_source  # noqa: F401  (axe_source: a fixture, the pinned axe.min.js)
from ui_pages import NOTES, VIEWS

pytestmark = pytest.mark.browser

SHOW = """async (view, ready) => {
  location.hash = '#' + view;
  for (;;) {
    const s = document.querySelector('[data-view=' + view + ']');
    if (s && !s.hidden && (!ready || document.querySelector(ready))) return;
    await new Promise(r => setTimeout(r, 100));
  }
}"""
# What each view shows once its data is in (the state axe should judge).
READY = {"progress": "[data-testid=progress-stats]", "privacy": "[data-testid=inventory-row]",
         "ask": "[data-testid=msg-assistant]"}

ASK = """async (question) => {
  location.hash = '#ask';
  for (;;) { if (document.querySelector('[data-testid=chat-empty], [data-testid=msg-user]')) break; await new Promise(r => setTimeout(r, 100)); }
  const before = document.querySelectorAll('[data-testid=msg-assistant]').length;
  document.querySelector('[data-testid=chat-input]').value = question;
  document.querySelector('[data-testid=chat-ask]').click();
  for (;;) {
    if (document.querySelectorAll('[data-testid=msg-assistant]').length > before && !document.querySelector('.msg.streaming')
        && document.querySelector('[data-testid=chat-stop]').hidden) return;
    await new Promise(r => setTimeout(r, 100));
  } }"""

OPEN_SET = """async (id, ready) => {
  location.hash = '#study';
  for (;;) { if (!document.querySelector('[data-view=study]').hidden) break; await new Promise(r => setTimeout(r, 100)); }
  document.dispatchEvent(new CustomEvent('quire:open-set', {detail: {id}}));
  for (;;) {
    const p = document.querySelector('[data-testid=study-player]');
    if (p && !p.hidden && p.querySelector('[data-testid=player-title]') && (!ready || p.querySelector(ready))) return;
    await new Promise(r => setTimeout(r, 100));
  } }"""

PASSAGE = """async (words) => {
  location.hash = '#search';
  for (;;) { if (!document.querySelector('[data-view=search]').hidden) break; await new Promise(r => setTimeout(r, 100)); }
  document.querySelector('[data-testid=search-input]').value = words;
  document.querySelector('[data-testid=search-button]').click();
  for (;;) {
    if (document.querySelector('[data-testid=search-hit]') && !document.querySelector('[data-testid=search-results]').hasAttribute('aria-busy')) break;
    await new Promise(r => setTimeout(r, 100));
  }
  document.querySelector('[data-testid=open-passage]').click();
  for (;;) {  // judged once the whole page is in (while it loads, the dialog says so)
    const c = document.querySelector('[data-testid=passage-context]');
    if (c && !c.hasAttribute('aria-busy')) return;
    await new Promise(r => setTimeout(r, 100));
  } }"""

ERASE = """async () => {
  location.hash = '#library';
  for (;;) { const b = document.querySelector('[data-testid=erase-all]'); if (b && !document.querySelector('[data-view=library]').hidden) { b.click(); break; }
    await new Promise(r => setTimeout(r, 100)); }
  for (;;) { if (document.querySelector('[data-testid=erase-dialog]')) return; await new Promise(r => setTimeout(r, 100)); }
}"""


@pytest.fixture(scope="module")
def server(built_dist):
    s = StaticServer(built_dist).start()
    yield s
    s.stop()


def states(b):
    """Every view, study player and dialog in turn; yields a name for each state reached."""
    for view in VIEWS:
        b.run(SHOW, view, READY.get(view))
        yield view
    sets = b.run("""async () => { const out = {};
        for (const kind of ['quiz', 'flashcards', 'workshop', 'mindmap']) out[kind] = (await quire.generate(kind, {count: 4, offline: true})).id;
        return out; }""")
    for kind, set_id in sets.items():
        b.run(OPEN_SET, set_id, "svg.mindmap" if kind == "mindmap" else None)
        yield f"player:{kind}"
    b.run(PASSAGE, "Chlorophyll Sonnenlicht")
    yield "dialog:passage"
    b.run("async () => document.querySelector('[data-testid=passage-close]').click()")
    b.run(ERASE)
    yield "dialog:erase"
    b.run("async () => document.querySelectorAll('dialog').forEach(d => { d.close(); d.remove(); })")


@pytest.mark.parametrize("lang,scheme", [("en", "light"), ("de", "dark")])
@pytest.mark.parametrize("name", ENGINES)
def test_no_axe_violations_anywhere(name, lang, scheme, axe_source, server, tmp_path):  # noqa: F811
    why = missing(name)
    if why:
        pytest.fail(f"{name} is needed for this test and is missing here: {why}")
    with open_engine(name, tmp_path, dark=scheme == "dark") as b:
        b.set_size(1280, 900)
        b.goto(server.url + f"?lang={lang}")
        b.wait_ready()
        assert b.js("return matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
        b.js(axe_source + "\nreturn typeof axe")
        b.wait("document.querySelector('[data-testid=welcome]')")
        found = {"first run": b.run(AXE_RUN)}
        b.run("async (text) => { await quire.stage([{name: 'Photosynthese.md', text}]); await quire.train(); }", NOTES)
        b.run(ASK, "Wo findet der Calvin-Zyklus statt?")
        for state in states(b):
            found[state] = b.run(AXE_RUN)
        b.screenshot(tmp_path / f"{name}-{lang}-{scheme}-last.png")
    assert len(found) == 1 + len(VIEWS) + 4 + 2, list(found)
    bad = {k: v for k, v in found.items() if v}
    assert not bad, json.dumps(bad, indent=1, ensure_ascii=False)
