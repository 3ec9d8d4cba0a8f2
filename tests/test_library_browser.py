"""The library in real Chromium: drop files, Train, restart the browser, remove, kill mid-Train."""

import base64

import pytest

import fixtures_docs
from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready, wait_until

pytestmark = pytest.mark.browser

DROP = """async ([files]) => {
  const dt = new DataTransfer();
  for (const f of files) dt.items.add(new File([Uint8Array.fromBase64(f.b64)], f.name));
  const zone = document.querySelector('[data-testid="dropzone"]');
  zone.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
}"""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def three_files(pdf_dir):
    return [
        {"name": "N18-3011.pdf", "b64": b64((pdf_dir / "acl-papers/N18-3011.pdf").read_bytes())},
        {"name": "cells.md", "b64": b64(b"# Cells\n## Energy\nMitochondria make ATP for the cell.\n")},
        {"name": "rocks.docx", "b64": b64(fixtures_docs.docx([("Heading1", "Igneous rocks"), ("", "Basalt forms when lava cools quickly.")]))},
    ]


def launch(playwright_instance, profile):
    ctx = playwright_instance.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    log = PageLog()
    log.attach(page)
    return ctx, page, log


def rows(page):
    page.get_by_test_id("source-row").first.wait_for()
    return page.eval_on_selector_all('[data-testid="source-row"]', "rs => rs.map(r => [r.dataset.name, r.dataset.status, r.querySelector('[data-testid=source-chunks]').textContent])")


def train_in_page(page):
    page.get_by_test_id("train-button").click()
    result = page.get_by_test_id("train-result")
    result.wait_for()
    return result.inner_text()


def test_drop_train_restart_and_skip_unchanged(playwright_instance, built_dist, serve, tmp_path, three_files):
    server = serve(built_dist)
    profile = tmp_path / "profile"
    ctx, page, log = launch(playwright_instance, profile)
    page.goto(server.url)
    wait_ready(page)
    page.evaluate(DROP, [three_files])
    page.wait_for_function("() => document.querySelectorAll('[data-testid=source-row][data-status=staged]').length === 3")
    assert page.get_by_test_id("train-button").inner_text() == "Train 3 staged sources"
    assert "3 added, 0 changed, 0 already known" in train_in_page(page)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=source-row][data-status=trained]').length === 3")
    before = rows(page)
    assert {r[0] for r in before} == {"N18-3011.pdf", "cells.md", "rocks.docx"}
    assert all(int(r[2]) > 0 for r in before)
    assert not log.errors, log.errors
    ctx.close()

    ctx, page, log = launch(playwright_instance, profile)  # a browser restart
    page.goto(server.url)
    wait_ready(page)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=source-row]').length === 3")
    assert sorted(rows(page)) == sorted(before)
    hits = page.evaluate("quire.search('Basalt lava')")
    assert hits[0]["source"] == "rocks.docx" and hits[0]["location_label"] == "Igneous rocks"
    page.evaluate(DROP, [three_files[1:2]])  # the unchanged Markdown file again
    page.get_by_test_id("train-button").wait_for()
    assert "0 added, 0 changed, 1 already known" in train_in_page(page)
    assert len(rows(page)) == 3
    assert not log.errors, log.errors
    ctx.close()


def test_bad_file_shows_its_reason_and_the_rest_train(context, built_dist, serve, page_log, pdf_dir):
    page = page_log.attach(context.new_page())
    page.set_default_timeout(120_000)
    page.goto(serve(built_dist).url)
    wait_ready(page)
    files = [{"name": "locked.pdf", "b64": b64((pdf_dir / "py-pdf-sample-files/libreoffice-writer-password.pdf").read_bytes())},
             {"name": "ok.md", "b64": b64(b"# Fine\nThis file is fine.")},
             {"name": "deck.key", "b64": b64(b"keynote")}]
    page.evaluate(DROP, [files])
    page.wait_for_function("() => document.querySelectorAll('[data-testid=source-row]').length === 3")
    text = train_in_page(page)
    assert "1 added" in text and "1 failed" in text
    status = {r[0]: r[1] for r in rows(page)}
    assert status == {"locked.pdf": "failed", "ok.md": "trained", "deck.key": "failed"}
    cells = page.eval_on_selector_all('[data-testid="source-status"]', "cs => cs.map(c => c.textContent)")
    assert any("password-protected" in c for c in cells) and any("unsupported type .key" in c for c in cells)


def test_paste_text_category_scope_remove_and_erase(context, built_dist, serve, page_log):
    page = page_log.attach(context.new_page())
    page.set_default_timeout(120_000)
    page.goto(serve(built_dist).url)
    wait_ready(page)
    page.get_by_test_id("category-input").fill("Geology")
    page.locator("details.more-ways summary").click()
    page.get_by_test_id("paste-name").fill("Field notes")
    page.get_by_test_id("paste-text").fill("# Strata\nSandstone layers record ancient rivers.")
    page.get_by_test_id("paste-add").click()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=source-row][data-status=staged]').length === 1")
    train_in_page(page)
    assert page.evaluate("quire.search('sandstone', {scope: {category: 'Geology'}})")[0]["source"] == "Field notes.md"
    assert page.evaluate("quire.search('sandstone', {scope: {category: 'Biology'}})") == []
    # the search view, with the inspector and the passage viewer
    page.get_by_test_id("nav-search").click()
    page.get_by_test_id("search-input").fill("ancient rivers")
    page.get_by_test_id("search-button").click()
    hit = page.get_by_test_id("search-hit").first
    hit.wait_for()
    assert hit.locator("mark").first.inner_text().lower() in ("ancient", "rivers")
    page.get_by_test_id("inspector-toggle").check()
    assert hit.get_by_test_id("bm25").inner_text().startswith("#1")
    hit.get_by_test_id("open-passage").click()
    assert "Sandstone layers" in page.get_by_test_id("passage-mark").inner_text()
    page.get_by_test_id("passage-close").click()
    # erase everything, with typed confirmation
    page.get_by_test_id("nav-library").click()
    page.get_by_test_id("erase-all").click()
    page.get_by_test_id("erase-confirm-input").fill("erase")
    assert page.get_by_test_id("erase-confirm").is_disabled()
    page.get_by_test_id("erase-confirm-input").fill("ERASE")
    page.get_by_test_id("erase-confirm").click()
    page.get_by_test_id("library-empty").wait_for()
    assert page.evaluate("quire.sources()") == [] and page.evaluate("quire.search('sandstone')") == []
    assert not page_log.errors, page_log.errors


def test_closing_the_tab_mid_train_leaves_the_library_as_it_was(playwright_instance, built_dist, serve, tmp_path, pdf_dir):
    server = serve(built_dist)
    profile = tmp_path / "profile"
    ctx, page, _ = launch(playwright_instance, profile)
    page.goto(server.url)
    wait_ready(page)
    page.evaluate("quire.stage({name: 'keep.md', text: '# Keep\\nGlaciers carve valleys.'}).then(() => quire.train())")
    geo = b64((pdf_dir / "py-pdf-sample-files/GeoTopo-komprimiert.pdf").read_bytes())
    page.evaluate("async ([geo]) => quire.stage([{name: 'GeoTopo.pdf', data: Uint8Array.fromBase64(geo)}, {name: 'late.md', text: '# Late\\nDunes migrate.'}])", [geo])
    page.evaluate("""() => { window.__stages = [];
        quire.train({onProgress: e => window.__stages.push(e.stage + ':' + (e.file || ''))}).catch(() => {}); }""")
    page.wait_for_function("() => window.__stages.includes('extract:GeoTopo.pdf')")
    ctx.close()  # the tab and the browser go away in the middle of reading a 117-page PDF

    ctx, page, _ = launch(playwright_instance, profile)
    page.goto(server.url)
    wait_ready(page)
    status = {s["name"]: s["status"] for s in page.evaluate("quire.sources()")}
    assert status == {"keep.md": "trained", "GeoTopo.pdf": "staged", "late.md": "staged"}
    assert page.evaluate("quire.search('dunes')") == []
    assert page.evaluate("quire.search('glaciers')")[0]["source"] == "keep.md"
    counts = page.evaluate("quire.train()")  # pressing Train again finishes the job
    assert (counts["added"], counts["failed"]) == (2, 0)
    assert page.evaluate("quire.search('Homöomorphismus')")[0]["source"] == "GeoTopo.pdf"
    ctx.close()


class _Site(__import__("http.server").server.BaseHTTPRequestHandler):
    """A web page on loopback; /open allows cross-origin reads, /closed does not."""

    def do_GET(self):
        body = b"<html><body><nav>menu</nav><main><h1>Tides</h1><p>The moon pulls the oceans into tides.</p></main></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        if self.path.startswith("/open"):
            self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def website():
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_adding_a_web_address(context, built_dist, serve, website):
    server = serve(built_dist)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(server.url)
    wait_ready(page)
    refused = page.evaluate("(u) => quire.stage(u).then(() => 'staged', e => e.message)", website + "/open/tides.html")
    assert "switched off" in refused and "Ctrl+S" in refused
    page.evaluate("quire.allowUrlFetch(true)")  # the Settings switch: it counts only when flipped in this tab
    page.reload()
    wait_ready(page)
    rec = page.evaluate("(u) => quire.stage(u)", website + "/open/tides.html")[0]
    assert rec["name"] == "tides.html" and rec["status"] == "staged"
    closed = page.evaluate("(u) => quire.stage(u).then(() => 'staged', e => e.message)", website + "/closed/page")
    assert "does not let other pages read it" in closed and "drop the saved file" in closed
    page.evaluate("quire.train()")
    hit = page.evaluate("quire.search('moon tides')")[0]
    assert hit["source"] == "tides.html" and "menu" not in hit["text"]


def test_a_folder_is_added_with_everything_in_it(context, built_dist, serve, tmp_path, page_log):
    folder = tmp_path / "Course notes"
    (folder / "week 2").mkdir(parents=True)
    (folder / "intro.md").write_text("# Intro\nPlate tectonics moves continents.")
    (folder / "week 2" / "rivers.md").write_text("# Rivers\nMeanders migrate across floodplains.")
    page = page_log.attach(context.new_page())
    page.set_default_timeout(120_000)
    page.goto(serve(built_dist).url)
    wait_ready(page)
    page.get_by_test_id("folder-input").set_input_files(str(folder))
    page.wait_for_function("() => document.querySelectorAll('[data-testid=source-row][data-status=staged]').length === 2")
    assert sorted(r[0] for r in rows(page)) == ["intro.md", "rivers.md"]
    assert "2 added" in train_in_page(page)
    assert page.evaluate("quire.search('meanders')")[0]["source"] == "rivers.md"


def test_a_category_being_typed_survives_the_table_refreshing(context, built_dist, serve, page_log):
    # Any change (another row's category, a Train ending, another tab) rebuilds the table; the
    # category being typed in a row was replaced by the stored one and lost its focus.
    page = page_log.attach(context.new_page())
    page.set_default_timeout(120_000)
    page.goto(serve(built_dist).url)
    wait_ready(page)
    page.evaluate("""() => quire.stage([{name: 'a.md', text: '# A\\nAlpha basalt.'}, {name: 'b.md', text: '# B\\nBeta granite.'}])
        .then(() => quire.train())""")
    page.evaluate("document.dispatchEvent(new CustomEvent('quire:library-changed'))")
    page.evaluate("""() => { const set = quire.setCategory.bind(quire); window.saved = [];
        quire.setCategory = (id, c) => { window.saved.push(c); return set(id, c); }; }""")
    box = page.locator("[data-testid=source-row][data-name='b.md'] input.cat")
    box.click()
    page.keyboard.type("Geol")
    page.evaluate("""() => new Promise(resolve => {
        const seen = new MutationObserver(() => { seen.disconnect(); resolve(); });
        seen.observe(document.querySelector('[data-testid=source-list]'), {childList: true, subtree: true});
        document.dispatchEvent(new CustomEvent('quire:library-changed'));
    })""")  # until the table has been rebuilt
    page.wait_for_function("() => document.querySelector('[data-testid=source-row][data-name=\"b.md\"] input.cat') === document.activeElement")
    page.keyboard.type("ogy")
    page.keyboard.press("Enter")
    wait_until(page, "quire.sources().then(ss => ss.some(s => s.name === 'b.md' && s.category === 'Geology'))")
    assert page.evaluate("window.saved") == ["Geology"]  # never the half-typed one
    assert {s["name"]: s.get("category") for s in page.evaluate("quire.sources()")} == {"a.md": None, "b.md": "Geology"}
    assert not page_log.errors, page_log.errors


def test_a_large_folder_goes_in_batches_and_says_how_far_it_is(context, built_dist, serve, tmp_path, page_log):
    # 450 notes: three engine calls (200, 200, 50), not 450, and the add card counts them in.
    folder = tmp_path / "Vault"
    folder.mkdir()
    for i in range(450):
        (folder / f"note-{i:03d}.md").write_text(f"# Note {i}\nMarker{i} gneiss.")
    page = page_log.attach(context.new_page())
    page.set_default_timeout(300_000)
    page.goto(serve(built_dist).url)
    wait_ready(page)
    page.evaluate("""() => {
      window.__said = []; window.__calls = 0;
      const note = document.querySelector('[data-testid=stage-progress]');
      new MutationObserver(() => { if (!note.hidden) window.__said.push(note.textContent); })
        .observe(note, {childList: true, characterData: true, subtree: true, attributes: true});
      const call = quire._call;
      quire._call = function (method) { if (method === 'stageMany') window.__calls++; return call.apply(this, arguments); };
    }""")
    page.get_by_test_id("folder-input").set_input_files(str(folder))
    wait_until(page, "quire.sources().then(s => s.filter(x => x.status === 'staged').length === 450)")
    page.wait_for_function("() => document.querySelector('[data-testid=stage-progress]').hidden")
    assert page.evaluate("window.__calls") == 3
    said = page.evaluate("window.__said")
    assert "Adding 200 of 450…" in said and "Adding 400 of 450…" in said, said
    assert page.evaluate("quire.train().then(c => c.added)") == 450
    assert page.evaluate("quire.search('marker321')")[0]["source"] == "note-321.md"
