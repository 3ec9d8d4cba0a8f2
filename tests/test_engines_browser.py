"""The main journeys in the other engines people run: Firefox ESR and WebKitGTK (Safari's engine).

Each engine opens the same built ``dist/`` over http and from file://, stages real files (a PDF
with text, a Word file, a scanned page that needs OCR), trains, finds the right page, asks
without a model, makes and plays a quiz and a flashcard deck, exports a vault into a fresh
profile and imports it, survives a browser restart (the same profile or storage folder), reloads offline,
and speaks German.  WebKit from file:// used to stop at once with a false "damaged" message,
and in WebKit Ask and the study tools never answered: these tests fail on that code.
"""

from __future__ import annotations

import base64
import json

import pytest

from conftest import FIXTURES, StaticServer
from engines import ENGINES, missing, missing_webkit_app, open_engine

pytestmark = pytest.mark.browser

FILES = {
    "N18-3011.pdf": FIXTURES / "pdfs/acl-papers/N18-3011.pdf",
    "word_sample.docx": FIXTURES / "office/docling/word_sample.docx",
    "c02-22.pdf": FIXTURES / "pdfs/ocrmypdf-scans/c02-22.pdf",  # a scanned page: no text until OCR reads it
}
# (words to search, source, location): a sentence on page 2 of the paper, a section of the
# Word file, and a line only OCR can read on the scan.
FINDS = [
    ("We obtain metadata and PDF files of papers via partnerships with publishers", "N18-3011.pdf", {"page": 2}),
    ("first lay down in a water and try not to drown", "word_sample.docx", {"section": ["Swimming in the lake", "Let’s swim!"]}),
    ("there was a light behind him", "c02-22.pdf", {"page": 1}),
]
STAGE = """async (files) => {
  const out = [];
  for (const [name, b64] of files) {
    const bin = atob(b64), data = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) data[i] = bin.charCodeAt(i);
    out.push(...await quire.stage([{name, data}]));
  }
  return out.map(r => r.status); }"""
PIECE = 1 << 18  # characters per script result or argument when moving a vault through the driver
SUMMARY = "async () => (await quire.sources()).map(s => [s.name, s.status, s.chunk_count ?? s.chunks ?? null]).sort()"


def engine_ok(name: str) -> None:
    why = missing(name)
    if why:
        pytest.fail(f"{name} is needed for this tier and is missing here: {why}")


def files_payload(names=FILES) -> list[list[str]]:
    return [[n, base64.b64encode(FILES[n].read_bytes()).decode()] for n in names]


@pytest.fixture(scope="module")
def server(built_dist):
    s = StaticServer(built_dist).start()
    yield s
    s.stop()


def url_of(mode: str, server, built_dist, query: str = "") -> str:
    return (server.url if mode == "http" else (built_dist / "index.html").as_uri()) + query


def trained(b) -> list:
    """Stage the three files and Train; the summary of sources."""
    assert b.run(STAGE, files_payload()) == ["staged"] * len(FILES)
    counts = b.run("async () => quire.train()")
    assert counts["added"] == len(FILES) and counts["failed"] == 0, counts
    return b.run("async () => (await quire.sources()).map(s => ({name: s.name, status: s.status, ocr: s.ocr_pages}))")


@pytest.mark.parametrize("mode", ["http", "file"])
@pytest.mark.parametrize("name", ENGINES)
def test_library_journey(name, mode, server, built_dist, tmp_path):
    """Boot, stage a PDF, a DOCX and a scan, Train, find each on its page, Ask without a model;
    then, from disk, every study tool, and over http, a vault into a fresh profile.  One session
    for each because starting the browser and the engine is most of a check's time."""
    engine_ok(name)
    with open_engine(name, tmp_path) as b:
        b.goto(url_of(mode, server, built_dist))
        status = b.wait_ready()
        assert status["mode"] == mode and status["error"] is None
        # The fast boot, both ways in each engine (the embedder sessions run one way each):
        # the build's memory snapshot, numpy's libraries linked ahead, dense search in WebAssembly SIMD.
        assert "snapshot-restored" in status["marks"] and status["versions"]["dense_kernel"] == "wasm-simd", status
        assert status["marks"]["dynlibs-linked"] <= status["marks"]["numpy-imported"], status["marks"]
        sources = {s["name"]: s for s in trained(b)}
        assert {n: s["status"] for n, s in sources.items()} == dict.fromkeys(FILES, "trained")
        assert list(sources["c02-22.pdf"]["ocr"]) == ["1"]  # the scan was read by OCR, in this engine
        for words, source, location in FINDS:
            hit = b.run("async (q) => (await quire.search(q, {k: 3}))[0]", words)
            assert (hit["source"], hit["location"]) == (source, location), words
        # Ask with no model (none runs here): the answer is the passages, cited by page.
        r = b.run("async () => quire.ask('How does the literature graph obtain metadata and PDF files of papers?')")
        assert r["mode"] == "extractive"
        assert ("N18-3011.pdf", "p. 2") == (r["citations"][0]["source"], r["citations"][0]["location_label"])
        # The model badge and Ask's "no server" line appear (in WebKit the status probe never settled).
        llm = b.run("async () => quire.llmStatus()")
        assert llm["status"] == "not_running"
        b.run("async () => { location.hash = '#ask'; }")
        badge = b.wait("(() => { const el = document.querySelector('[data-testid=llm-badge]'); "
                       "return el && !el.hidden && el.dataset.state !== 'unknown' && [el.dataset.state, el.textContent.trim()]; })()")
        assert badge[0] == "not_running", badge
        if mode == "file":  # the USB-stick way: the study tools, their packs read from disk
            study_tools(b)
        else:  # a vault, exported here, imports into a fresh profile (below)
            vault = export_vault(b)
    if mode == "http":
        import_vault_into_a_fresh_profile(name, vault, server, tmp_path / "fresh")


def study_tools(b) -> None:
    """scikit-learn loads (it never did in WebKit), a quiz is made, answered and scored, a
    flashcard is reviewed and rescheduled, a mind map is drawn and a workshop lesson opens."""
    assert b.run("async () => quire.sklearnReady").startswith("1.")
    quiz = b.run("async () => quire.generate('quiz', {count: 3, offline: true})")
    assert len(quiz["items"]) == 3 and quiz["made_without_ai"]
    correct, score = b.run("""async (id) => { let s = await quire.quizRestart(id); const out = [];
        while (s.current) { s = await quire.quizAnswer(id, s.current.answer); out.push(s.correct); }
        return [out, s.score]; }""", quiz["id"])
    assert correct == [True] * 3 and (score["correct"], score["total"]) == (3, 3), json.dumps(score)
    deck = b.run("async () => quire.generate('flashcards', {count: 3, offline: true})")
    review = b.run("async (id) => quire.review(id)", deck["id"])
    card = review["cards"][0]
    assert set(card["intervals"]) == {"again", "hard", "good", "easy"}
    b.run("async (d, c) => quire.rate(d, c, 'good')", deck["id"], card["id"])
    after = b.run("async (id) => quire.review(id)", deck["id"])
    assert card["id"] not in [c["id"] for c in after["cards"]]  # rated: no longer due
    # The flashcard player: its rating buttons are on screen and not covered.
    b.run("async (id) => { location.hash = '#study'; document.dispatchEvent(new CustomEvent('quire:open-set', {detail: {id}})); }",
          deck["id"])
    b.wait("document.querySelector('[data-testid=flash-show]')")
    b.js("document.querySelector('[data-testid=flash-show]').click()")
    covered = b.wait("""(() => { const bs = [...document.querySelectorAll('[data-testid^=rate-]')];
        if (bs.length < 4 || bs.some(el => !el.getBoundingClientRect().height)) return null;
        bs[0].scrollIntoView({block: 'center'});
        return bs.map(el => { const r = el.getBoundingClientRect();
          const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
          return [el.dataset.testid, !!top && el.contains(top)]; }); })()""")
    assert all(visible for _, visible in covered), covered
    # A mind map, drawn and fitted in its frame, and a workshop lesson opened in its player.
    mindmap = b.run("async () => quire.generate('mindmap', {offline: true})")
    b.run("async (id) => { document.dispatchEvent(new CustomEvent('quire:open-set', {detail: {id}})); }", mindmap["id"])
    nodes = b.wait("document.querySelector('[data-testid=mindmap-svg][data-fitted]') && "
                   "[...document.querySelectorAll('[data-testid=mm-node]')].filter(n => n.getBoundingClientRect().width > 0).length")
    assert nodes > 3
    workshop = b.run("async () => quire.generate('workshop', {count: 3, offline: true})")
    modules = workshop["items"] if "items" in workshop else workshop["outline"]
    assert modules, workshop.keys()
    lesson = b.run("async (id) => quire.openLesson(id, 0, 0)", workshop["id"])
    assert lesson, "the first lesson opens"


def export_vault(b) -> list[str]:
    """The library as a vault file: [its name, its bytes in base64]."""
    size = b.run("""async () => { const f = await quire.exportVault(); const u8 = new Uint8Array(await f.arrayBuffer());
        let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
        window.vault = [f.name, btoa(s)]; return window.vault[1].length; }""")
    # In pieces: WebKitWebDriver could not parse a script result of several megabytes (CI).
    vault = [b.run("async () => window.vault[0]"),
             "".join(b.run("async (i, n) => window.vault[1].slice(i, i + n)", i, PIECE) for i in range(0, size, PIECE))]
    assert vault[0].endswith(".quire") and len(vault[1]) == size > 1000
    return vault


def import_vault_into_a_fresh_profile(name, vault, server, profile) -> None:
    """The vault imports into a fresh profile, with its passages searchable."""
    with open_engine(name, profile) as b:
        b.goto(server.url)
        b.wait_ready()
        assert b.run("async () => (await quire.sources()).length") == 0
        b.run("async () => { window.pieces = []; }")
        for i in range(0, len(vault[1]), PIECE):
            b.run("async (piece) => { window.pieces.push(piece); }", vault[1][i:i + PIECE])
        b.run("""async (name) => { const bin = atob(window.pieces.join('')), u8 = new Uint8Array(bin.length);
            for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
            return quire.importVault(new File([u8], name), {mode: 'merge'}); }""", vault[0])
        assert b.run("async () => (await quire.sources()).map(s => s.name).sort()") == sorted(FILES)
        for words, source, location in FINDS:
            hit = b.run("async (q) => (await quire.search(q, {k: 3}))[0]", words)
            assert (hit["source"], hit["location"]) == (source, location), words


def restart_keeps_the_library(b, url: str) -> None:
    """Train a Word file, quit the browser and start it again: the library and its search are there."""
    b.goto(url)
    b.wait_ready()
    assert b.run(STAGE, files_payload(["word_sample.docx"])) == ["staged"]
    assert b.run("async () => quire.train()")["added"] == 1
    b.restart()
    b.goto(url)
    b.wait_ready()
    assert b.run("async () => (await quire.sources()).map(s => [s.name, s.status])") == [["word_sample.docx", "trained"]]
    words, source, location = FINDS[1]
    hit = b.run("async (q) => (await quire.search(q, {k: 3}))[0]", words)
    assert (hit["source"], hit["location"]) == (source, location)


def test_firefox_restart_keeps_the_library(server, tmp_path):
    """Quit Firefox and start it again on the same profile."""
    engine_ok("firefox")
    with open_engine("firefox", tmp_path) as b:
        restart_keeps_the_library(b, server.url)


def test_webkit_restart_keeps_the_library(server, tmp_path):
    """Quit WebKitGTK and start it again on the same storage folder, as an app that embeds it
    (GNOME Web) keeps it (Safari keeps its storage across a restart the same way; WebKitWebDriver's
    MiniBrowser starts with fresh storage, so it cannot show this)."""
    why = missing_webkit_app()
    if why:
        pytest.fail(f"the WebKitGTK app host is needed for this test and is missing here: {why}")
    with open_engine("webkit-app", tmp_path / "webkit") as b:
        restart_keeps_the_library(b, server.url)


@pytest.mark.parametrize("name", ENGINES)
def test_offline_reload_over_http(name, built_dist, tmp_path):
    """After one visit over http the service worker serves the page with the server gone."""
    engine_ok(name)
    server = StaticServer(built_dist).start()
    try:
        with open_engine(name, tmp_path) as b:
            b.goto(server.url)
            b.wait_ready()
            assert b.run(STAGE, files_payload(["word_sample.docx"])) == ["staged"]
            assert b.run("async () => quire.train()")["added"] == 1
            # The service worker has precached the bundle and controls the page.
            b.wait("navigator.serviceWorker.ready.then(r => r.active && r.active.state === 'activated')")
            server.stop()
            b.goto(server.url)
            status = b.wait_ready()
            assert status["mode"] == "http"
            assert b.js("return !!navigator.serviceWorker.controller")
            words, source, location = FINDS[1]
            hit = b.run("async (q) => (await quire.search(q, {k: 3}))[0]", words)
            assert (hit["source"], hit["location"]) == (source, location)
            # scipy and scikit-learn load only when asked: with the server gone, from the cache.
            assert b.run("async () => quire.studyToolsReady()").startswith("1.6.1")
    finally:
        server.stop()


# Each view by its #address, once what it shows has arrived (so a control it draws late is there
# to be found); the removed controls found, as "view:testid".  #settings must land on the library.
KIOSK_VIEWS = {"library": "source-row", "search": "search-input", "ask": "chat-session", "study": "study-generate",
               "progress": "progress-body", "privacy": "inventory-row", "about": "engine-facts", "settings": "source-row"}
WALK = """async ([views, ids]) => { const found = [];
  const shown = () => { const v = document.querySelector('[data-view]:not([hidden])'); return v && v.dataset.view; };
  const until = async (ok) => { while (!ok()) await new Promise(r => setTimeout(r, 50)); };
  for (const [view, marker] of Object.entries(views)) {
    location.hash = '#' + view;
    const lands = view === 'settings' ? 'library' : view;
    await until(() => shown() === lands && location.hash === '#' + lands &&
                      document.querySelector(`[data-view="${lands}"] [data-testid="${marker}"]`));
    for (const id of ids) if (document.querySelector(`[data-testid="${id}"]`)) found.push(view + ':' + id);
    if (document.querySelector('a[href="#settings"]')) found.push(view + ':a[href="#settings"]');
  }
  return found; }"""


@pytest.mark.parametrize("mode", ["file"])  # the USB-stick way; http is the same page (the journeys cover both)
@pytest.mark.parametrize("name", ENGINES)
def test_german_page(name, mode, server, built_dist, tmp_path):
    """?lang=de&kiosk: the page in German, as a kiosk, in every engine.  The kiosk installs the German
    sample library itself (the engine trains it in a library of its own; the page imports its vault),
    no control a kiosk removes is in any view, and #settings lands on the library."""
    from test_kiosk_browser import REMOVED

    engine_ok(name)
    with open_engine(name, tmp_path) as b:
        b.goto(url_of(mode, server, built_dist, "?lang=de&kiosk"))
        b.wait_ready()
        assert b.js("return document.documentElement.lang") == "de"
        assert b.js("return document.querySelector('[data-testid=mode-status]').textContent") == (
            "Über http ausgeliefert" if mode == "http" else "Von der Festplatte geöffnet")
        assert b.js("return document.querySelector('[data-testid=nav-library]').textContent") == "Bibliothek"
        assert b.js("return [quire.kiosk, document.documentElement.dataset.kiosk]") == [True, "1"]
        status = b.wait("(() => { const s = quire.kioskStatus(); return !['starting', 'resetting'].includes(s.state) && s; })()")
        assert (status["state"], status["resets"]) == ("ready", 1), status
        assert b.wait("document.querySelector('[data-testid=sample-card] h3') && "
                      "document.querySelector('[data-testid=sample-card] h3').textContent") == "Die Beispielbibliothek ist bereit"
        sources = b.run("async () => (await quire.sources()).map(s => [s.name, s.status, s.category]).sort()")
        assert sources == [["Der Wasserkreislauf (Beispiel).md", "trained", "Beispielbibliothek"],
                           ["Quire user guide (sample).md", "trained", "Beispielbibliothek"]]
        # The German search it suggests finds the German document.
        hit = b.run("async () => (await quire.search('Niederschlag', {k: 1}))[0]")
        assert hit["source"] == "Der Wasserkreislauf (Beispiel).md" and "Niederschlag" in hit["text"]
        # A chat, so Ask draws its list (and would draw each chat's Delete), then every view.
        b.run("async () => { await quire.ask('Wie viel Wasser verdunstet jedes Jahr?'); }")
        assert b.run(WALK, [KIOSK_VIEWS, REMOVED]) == []
        assert b.run(WALK, [{"library": "source-row"}, ["nav-library"]]) == ["library:nav-library"]  # the walk can find one


ROCKS = ["basalt", "granite", "gneiss", "schist", "marble", "slate", "quartzite", "obsidian"]
MINERALS = ["feldspar", "olivine", "pyroxene", "amphibole", "biotite", "muscovite", "calcite", "dolomite"]
STAGE_WORDS = """async (words) => { await quire.stage(words.map(w => ({name: w + '.md', text: '# ' + w + '\\n' + w + ' is described here in detail.'}))); }"""
# The first tab trains and, once it is under way (holding the writer lock), tells the second,
# which then trains too: the second must wait for the first, however fast either machine is.
TRAIN_FIRST = """async () => { window.events = []; const told = new BroadcastChannel('quire-test-train');
  window.trained = quire.train({onProgress: e => { window.events.push(e);
      if (!window.told && !String(e.stage).startsWith('waiting')) { window.told = true; told.postMessage('under way'); } }})
    .then(r => r, e => ({error: e.message, kind: e.kind})); }"""
TRAIN_WHEN_TOLD = """async () => { window.events = []; const told = new BroadcastChannel('quire-test-train');
  window.trained = new Promise(r => { told.onmessage = r; })
    .then(() => quire.train({onProgress: e => window.events.push(e)}))
    .then(r => r, e => ({error: e.message, kind: e.kind})); }"""
ALL_FOUND = """(async () => { for (const w of %s) { const hits = await quire.search(w);
  if (!hits.length || hits[0].source !== w + '.md') return false; } return true; })()"""
# What a tab that never found them all saw (engines.Engine.wait's describe): a synchronous expression.
MISSING = """JSON.stringify({tab: document.visibilityState, sources: document.querySelectorAll('[data-testid=source-row]').length,
  words: %s, lastCatchUpError: window.quire.lastCatchUpError || null})"""


@pytest.mark.parametrize("name", ENGINES)
def test_two_tabs_train_at_once_one_writer(name, server, built_dist, tmp_path):
    """Two tabs of one profile Train at once: one waits for the other (Web Locks), every file is
    trained once, and each tab finds the other's files without a reload."""
    engine_ok(name)
    with open_engine(name, tmp_path) as b:
        b.goto(server.url)
        b.wait_ready()
        first = b.handle
        second = b.new_tab()
        b.goto(server.url)
        b.wait_ready()
        for handle, words in ((first, ROCKS), (second, MINERALS)):
            b.switch(handle)
            b.run(STAGE_WORDS, words)
        b.switch(second)
        b.run(TRAIN_WHEN_TOLD)
        b.switch(first)
        b.run(TRAIN_FIRST)
        results, events = [], []
        for handle in (first, second):
            b.switch(handle)
            results.append(b.run("async () => window.trained"))
            events += b.run("async () => window.events")
        assert not any("error" in r for r in results), results
        assert sum(r["added"] for r in results) == len(ROCKS + MINERALS), results
        waited = [e for e in events if e["stage"] == "waiting-other-tab"]
        assert waited and "another Quire tab" in waited[0]["message"], [e["stage"] for e in events]
        for handle in (first, second):
            b.switch(handle)
            assert b.wait(ALL_FOUND % json.dumps(ROCKS + MINERALS), describe=MISSING % json.dumps(ROCKS + MINERALS))


@pytest.mark.parametrize("mode", ["http", "file"])
@pytest.mark.parametrize("name", ENGINES)
def test_ask_with_a_model_streams_a_cited_answer(name, mode, server, built_dist, tmp_path):
    """With a model server (a stand-in that speaks Ollama's real HTTP API), Ask in the Ask view
    streams a cited answer in every engine: the page's CSP admits the server, the engine's
    worker streams the reply, and the citation opens its passage."""
    from ollama_server import OllamaStub

    engine_ok(name)
    stub = OllamaStub(origins="*" if mode == "file" else None).start()
    try:
        with open_engine(name, tmp_path) as b:
            url = url_of(mode, server, built_dist)
            b.goto(url)
            b.wait_ready()
            # The server is chosen before the page loads, as Settings does (the CSP is set at load).
            b.js("localStorage.setItem('quire.llm.url', arguments[0])", stub.url)
            b.goto(url + "?opened=again#ask")  # a new load (a hash alone would not reload)
            b.wait_ready()
            assert b.run(STAGE, files_payload(["word_sample.docx"])) == ["staged"]
            b.run("async (url) => { await quire.train(); await quire.saveSettings({url, chat_model: 'qwen3:4b'}); }", stub.url)
            stub.enqueue_chat(["To start swimming, lay down in the water ", "and try not to drown [1]."], thinking=["The guide says."])
            b.run("""async () => { location.hash = '#ask'; const input = document.querySelector('[data-testid=chat-input]');
                input.value = 'How do I start swimming?'; input.dispatchEvent(new Event('input', {bubbles: true}));
                document.querySelector('[data-testid=chat-ask]').click(); }""")
            answer = b.wait("""(() => { const m = [...document.querySelectorAll('[data-testid=msg-assistant]')].pop();
                if (!m || document.querySelector('.msg.streaming') || !document.querySelector('[data-testid=chat-stop]').hidden) return null;
                return {text: m.textContent, chips: [...m.querySelectorAll('[data-testid=citation]')].map(c => c.textContent)}; })()""")
            assert "try not to drown" in answer["text"], answer
            assert answer["chips"] and all("word_sample.docx" in c for c in answer["chips"]), answer
            body = stub.bodies("/api/chat")[-1]
            assert "try not to drown" in body["messages"][-1]["content"]  # the passage went to the model
    finally:
        stub.stop()
