"""Kiosk mode (site/assets/kiosk*.js, docs/kiosk.md): on with ?kiosk, ?kiosk=1 or build.py --kiosk,
off without; the controls a kiosk leaves out are not in the page in any view, reached by a click, by
its #address or by Tab, while the same walk finds every one of them without kiosk mode; an idle
kiosk (Playwright's clock stands in for the minutes) restores its known library in one transaction,
also when the page is reloaded mid-reset; and tests/kiosk_demo.py, run as the script it is, drives
a whole demo in English and German."""

import json
import subprocess
import sys

import pytest

from conftest import LEAN_BUILD, ROOT, hold, shared_build, wait_ready, wait_until

pytestmark = pytest.mark.browser

# What a kiosk takes out of the page, named here and not read from kiosk.js, so a control dropped
# from its list fails this test.  erase-dialog is left out: it exists only after Erase is pressed.
REMOVED = ["erase-all", "remove-source", "sample-remove", "chat-delete", "set-delete", "flag-delete", "vault-export",
           "vault-import", "vault-file", "nav-settings", "view-settings", "llm-badge", "lang-switch",
           "chat-settings-link", "embedding-settings-hint"]
FOUND = """(ids) => ids.filter(id => document.querySelector(`[data-testid="${id}"]`))
    .concat(document.querySelector('a[href="#settings"]') ? ['a[href="#settings"]'] : [])"""
VIEWS = ["library", "search", "ask", "study", "progress", "privacy", "about", "settings"]
SHOWN = "() => { const v = document.querySelector('[data-view]:not([hidden])'); return v && v.dataset.view; }"
# The focused element after a Tab: its testid and whether it is, or sits in, a removed control.
FOCUSED = """(ids) => { const e = document.activeElement;
    if (!e || e === document.body) return null;
    const again = !!e.__tabbed; e.__tabbed = true;
    const removed = ids.map(id => `[data-testid="${id}"]`).concat(['a[href="#settings"]']).join(', ');
    return {testid: e.dataset.testid || e.tagName.toLowerCase(), again, removed: !!e.closest(removed)}; }"""
LIBRARY = """async () => ({sources: (await quire.sources()).map(s => [s.id, s.name, s.category, s.status, s.chunks]),
    sets: (await quire.studySets()).map(s => [s.id, s.kind, s.title]), chats: (await quire.chatSessions()).map(c => c.id)})"""
IMPORT = """async (b64) => { const bin = atob(b64), data = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) data[i] = bin.charCodeAt(i);
    return (await quire.importVault(new Blob([data]), {mode: 'merge'})).sources; }"""
# Touch targets under 44 CSS pixels high (WCAG's target size) in each view, as "view:testid:height".
SMALL_TARGETS = """(views) => views.flatMap(view => { quire.showView(view);
    return [...document.querySelectorAll('button, a[href], select, summary, input:not([type=checkbox]):not([type=radio]):not([type=file])')]
      .filter(e => e.checkVisibility() && e.getBoundingClientRect().height < 44)
      .map(e => view + ':' + (e.dataset.testid || e.tagName.toLowerCase()) + ':' + Math.round(e.getBoundingClientRect().height)); })"""
# A control a view builds later (a flagged card's Delete, say), and a button that becomes one after it
# was added (its testid set later): in a kiosk each is gone by the next microtask.
ADDED_LATER = """async () => { const tick = () => new Promise(r => queueMicrotask(r));
    const view = document.querySelector('[data-view="study"]'), added = document.createElement('button'),
          became = document.createElement('button');
    added.dataset.testid = 'flag-delete';
    view.append(added, became);
    await tick();
    became.dataset.testid = 'flag-delete';
    await tick();
    return [added.isConnected, became.isConnected]; }"""


NOTES = b"""# Volcanoes
Basalt is a dark volcanic rock that forms when lava cools quickly at the surface.
Granite is a light rock that forms when magma cools slowly deep underground.
## Eruptions
An eruption begins when pressure from gas dissolved in magma pushes it up through the crust.
Ash clouds from large eruptions can travel around the whole planet within a few weeks.
Pyroclastic flows are fast currents of hot gas and rock that destroy everything in their path.
"""


@pytest.fixture(scope="module")
def visit_vault() -> str:
    """What a visitor leaves behind, made on CPython: their own notes, a chat and a flashcard deck (merged
    into the page, so a study set exists without loading scikit-learn in the tab)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from quire.app import Quire
    from quire.store import MemoryStore

    async def make():
        q = await Quire.open(MemoryStore())
        await q.stage("visitor notes.md", NOTES)
        await q.train()
        await q.ask("How does basalt form?")
        await q.generate("flashcards", count=2, offline=True)
        return (await q.call("exportVault"))["base64"]
    with ThreadPoolExecutor(1) as other:  # Playwright's event loop runs in this thread
        return other.submit(asyncio.run, make()).result()


def removed_controls_found(page) -> set[str]:
    """Every view by its nav link and by its #address, a chat and a study set opened, and a control
    added later: the removed controls found in the page on the way, as "view:testid"."""
    found = set()

    def look(where):
        found.update(f"{where}:{x}" for x in page.evaluate(FOUND, REMOVED))

    for view in VIEWS:
        link = page.locator(f"[data-testid=nav-{view}]")
        if link.count():
            link.click()
            page.wait_for_function(f"() => ({SHOWN})() === '{view}'")
            look(view)
        page.evaluate(f"location.hash = '#{view}'")
        page.wait_for_function(f"() => ['{view}', 'library'].includes(({SHOWN})())")
        look(page.evaluate(SHOWN))
        if view == "ask":
            page.get_by_test_id("chat-open").first.click()
            page.get_by_test_id("msg-assistant").first.wait_for()
            look("ask")
        if view == "study":
            page.get_by_test_id("set-open").first.click()
            page.get_by_test_id("flash-reviewer").wait_for()
            look("study")
            page.get_by_test_id("player-back").click()
    added, became = page.evaluate(ADDED_LATER)
    found.update(["study:flag-delete (added later)"] if added else [], ["study:flag-delete (became one)"] if became else [])
    return found


def tab_stops(page, views=("library", "ask", "study", "privacy")) -> list[dict]:
    """Tab through each view's page until focus comes back to an element it had: every stop."""
    stops = []
    for view in views:
        page.evaluate(f"location.hash = '#{view}'")
        page.wait_for_function(f"() => ({SHOWN})() === '{view}'")
        page.evaluate("() => document.querySelectorAll('*').forEach(e => { delete e.__tabbed; })")
        for _ in range(400):
            page.keyboard.press("Tab")
            stop = page.evaluate(FOCUSED, REMOVED)
            if stop and stop["again"]:
                break
            if stop:
                stops.append({**stop, "view": view})
        else:
            raise AssertionError(f"Tab never came back round in {view}")
    return stops


def kiosk_state(page) -> dict:
    """The kiosk's status once its start-up work is done (a first library installed, a reset finished)."""
    page.wait_for_function("() => !['starting', 'resetting'].includes(quire.kioskStatus().state)")
    return page.evaluate("quire.kioskStatus()")


def test_a_kiosk_session(context, built_dist, serve, page_log, visit_vault):
    """?kiosk (no value): the sample library installed on the first start; a visit (a question asked,
    notes, a chat and a deck left behind) walked through every view, where no removed control is found
    nor reached by Tab, and #settings lands on the library; then the idle minutes pass on Playwright's
    clock: input postpones the reset, and the reset brings back exactly the known library, without the
    visit.  A reload while the reset's import is held still ends with the known library."""
    page = page_log.attach(context.new_page())
    page.clock.install()
    page.goto(serve(built_dist).url + "?kiosk&idle=2")
    wait_ready(page)
    assert page.evaluate("quire.kiosk") is True
    assert page.evaluate("document.documentElement.dataset.kiosk") == "1"
    status = kiosk_state(page)
    assert (status["state"], status["resets"], status["idleMinutes"]) == ("ready", 1, 2), status
    known = page.evaluate(LIBRARY)
    assert sorted(s[1] for s in known["sources"]) == ["Der Wasserkreislauf (Beispiel).md", "Quire user guide (sample).md"]
    assert {s[2] for s in known["sources"]} == {"Sample library"} and known["sets"] == known["chats"] == []

    # A visit: a suggested question, and what the visitor's notes, chat and deck add.
    page.get_by_test_id("sample-question").first.click()
    page.get_by_test_id("msg-assistant").first.wait_for()
    assert page.evaluate(IMPORT, visit_vault) == 3
    visit = page.evaluate(LIBRARY)
    assert len(visit["sources"]) == 3 and len(visit["sets"]) == 1 and len(visit["chats"]) == 2

    assert removed_controls_found(page) == set()
    page.evaluate("location.hash = '#settings'")
    page.wait_for_function("() => location.hash === '#library'")
    assert page.evaluate(SHOWN) == "library"
    stops = tab_stops(page)
    assert {"nav-library", "sample-quiz", "chat-input", "study-generate", "privacy-refresh"} <= {s["testid"] for s in stops}
    assert [s for s in stops if s["removed"]] == []
    assert page.evaluate(SMALL_TARGETS, VIEWS[:-1]) == []

    # Idle: input moves the reset on; after 2 minutes without any, the known library comes back.
    page.mouse.move(5, 5)
    page.clock.fast_forward("01:00")
    page.keyboard.press("Shift")
    page.clock.fast_forward("01:30")
    # (a reset starts in the timer's own callback, so it would show as "resetting" by now)
    assert page.evaluate("quire.kioskStatus()")["state"] == "ready", "reset although a key was pressed 1:30 ago"
    with page.expect_navigation():  # an idle reset reloads the page: nothing of the visit stays on screen
        page.clock.fast_forward("00:31")
    wait_ready(page)
    assert kiosk_state(page)["resets"] == 2
    assert page.evaluate(LIBRARY) == known
    assert page.evaluate("location.hash") == "#library"

    # Nobody touched it since: no timer runs, so an idle kiosk is not reset over and over.
    page.clock.fast_forward("05:00")
    assert page.evaluate("quire.kioskStatus()")["state"] == "ready"

    # Reloaded mid-reset (the import held: it never reached the engine): the new page finishes it.
    page.evaluate("async () => { await quire.ask('Wie viel Wasser verdunstet jedes Jahr?'); }")
    assert len(page.evaluate(LIBRARY)["chats"]) == 1
    hold(page, "importVault")
    page.mouse.move(9, 9)
    page.clock.fast_forward("02:01")
    page.wait_for_function("() => window.held.importVault.length === 1")
    assert page.evaluate("async () => (await quire.kv.get('quire.kiosk')).resetting") is True
    page.reload()
    wait_ready(page)
    assert kiosk_state(page)["resets"] == 3
    assert page.evaluate(LIBRARY) == known

    # A visit under way when the page reloads (a visitor pressed F5): its idle minutes run from the load.
    page.mouse.move(3, 3)
    wait_until(page, "quire.kv.get('quire.kiosk').then(s => s.clean === false)")
    page.reload()
    wait_ready(page)
    assert kiosk_state(page)["resets"] == 3
    with page.expect_navigation():
        page.clock.fast_forward("02:01")
    wait_ready(page)
    assert kiosk_state(page)["resets"] == 4
    assert not page_log.errors


def test_without_kiosk_the_controls_are_there_and_a_kiosk_keeps_that_library(context, built_dist, serve, page_log,
                                                                            visit_vault):
    """The walk above finds every removed control on a page without kiosk mode, and Tab reaches them,
    so the kiosk test can fail.  Opened as a kiosk, that library (not the kiosk's) is kept until
    someone confirms on the page; then the kiosk takes it over."""
    page = page_log.attach(context.new_page())
    url = serve(built_dist).url
    page.goto(url + "#library")
    wait_ready(page)
    assert page.evaluate("quire.kiosk") is False and page.evaluate("quire.kioskStatus().on") is False
    assert "data-kiosk" not in page.evaluate("Object.keys(document.documentElement.dataset).join(' ')")
    page.evaluate("async () => { await quire.loadSample(); }")
    page.evaluate(IMPORT, visit_vault)
    page.get_by_test_id("sample-card").wait_for()
    found = {f.split(":", 1)[1] for f in removed_controls_found(page)}
    # (no card here is flagged: the Delete of a flagged card is the one added later)
    assert found == set(REMOVED) - {"flag-delete"} | {'a[href="#settings"]', "flag-delete (added later)", "flag-delete (became one)"}
    assert page.evaluate(SMALL_TARGETS, ["ask"]), "the touch-target check found nothing small outside a kiosk"
    reached = {s["testid"] for s in tab_stops(page) if s["removed"]}
    assert {"erase-all", "remove-source", "sample-remove", "chat-delete", "set-delete", "vault-export", "nav-settings",
            "lang-switch", "llm-badge", "chat-settings-link"} <= reached, reached

    before = page.evaluate(LIBRARY)
    page.goto(url + "?kiosk=1")
    wait_ready(page)
    assert kiosk_state(page)["state"] == "takeover"
    page.get_by_test_id("kiosk-takeover").wait_for()
    assert page.evaluate(LIBRARY) == before
    with page.expect_navigation():
        page.get_by_test_id("kiosk-takeover-confirm").click()
    wait_ready(page)
    assert kiosk_state(page)["state"] == "ready"
    taken = page.evaluate(LIBRARY)
    assert sorted(s[1] for s in taken["sources"]) == ["Der Wasserkreislauf (Beispiel).md", "Quire user guide (sample).md"]
    assert taken["sets"] == taken["chats"] == []
    assert not page_log.errors


@pytest.fixture(scope="module")
def kiosk_dist(tmp_path_factory):
    """A lean bundle built as a kiosk, with half a minute's idle time."""
    return shared_build(tmp_path_factory, "kiosk", [*LEAN_BUILD, "--kiosk", "--kiosk-idle", "0.5"])


def test_a_kiosk_build_is_always_a_kiosk(kiosk_dist, context, page_log):
    """build.py --kiosk changes one small data file, listed in the manifest and the service worker's
    precache with its hash like every other file; every page of that bundle is a kiosk, ?kiosk=0 too,
    opened from disk (the USB-stick way: the flag is a classic script, not fetched)."""
    import hashlib

    config = (kiosk_dist / "assets/kiosk-config.js").read_bytes()
    assert config.endswith(b'self.QUIRE_KIOSK_BUILD = {"idleMinutes": 0.5, "kiosk": true};\n')
    manifest = json.loads((kiosk_dist / "manifest.json").read_text())
    assert manifest["files"]["assets/kiosk-config.js"]["sha256"] == hashlib.sha256(config).hexdigest()
    assert '"assets/kiosk-config.js"' in (kiosk_dist / "sw.js").read_text()

    page = page_log.attach(context.new_page())
    page.goto((kiosk_dist / "index.html").as_uri() + "?kiosk=0#settings")
    wait_ready(page)
    assert page.evaluate("quire.kiosk") is True
    assert kiosk_state(page)["idleMinutes"] == 0.5
    assert page.evaluate(SHOWN) == "library" and page.evaluate("location.hash") == "#library"
    assert page.evaluate(FOUND, REMOVED) == []
    assert not page_log.errors


@pytest.mark.parametrize("lang,quiz_word,source,passage,video", [
    ("de", "richtig", "Der Wasserkreislauf (Beispiel).md", "500.000 Kubikkilometer", False),
    ("en", "correct", "Quire user guide (sample).md", "Staging and training are two separate steps", True)])
def test_kiosk_demo_script_runs_a_whole_demo(lang, quiz_word, source, passage, video, built_dist, serve, tmp_path):
    """The demo asks the first suggested question, which is in the page's language; a screenshot of
    every step, and in English a video."""
    url = serve(built_dist).url
    args = ["--url", url, "--lang", lang, "--keywords-only", "--shots", str(tmp_path / "shots")]
    if video:
        args += ["--video", str(tmp_path / "video")]
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "kiosk_demo.py"), *args],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["removed_present"] == []
    assert source in result["answer"] and passage in result["answer"], result["answer"]
    assert result["search_hits"] >= 1 and quiz_word in result["quiz_score"]
    assert result["card_rated"] and result["mindmap_topic"]
    names = [p.split("/")[-1] for p in result["screenshots"]]
    steps = ["library", "search", "ask", "quiz", "flashcards", "mindmap"]
    assert names == [f"{i + 1:02d}-{step}-{lang}.png" for i, step in enumerate(steps)]
    for shot in result["screenshots"]:
        assert open(shot, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    if video:
        data = open(result["video"], "rb").read()
        assert data[:4] == b"\x1a\x45\xdf\xa3" and len(data) > 20_000, "not a WebM video"
    else:
        assert result["video"] is None
