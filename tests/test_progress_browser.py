"""Progress, privacy and the vault in real Chromium: study, restart the browser, see the
dashboard; export over http and import into a fresh profile opened from file://."""

import os

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("QUIRE_SHOTS", "/tmp")

STUDY = """async () => {
  await quire.stage([{name: 'rocks.md', text: '# Rocks\\nBasalt forms when lava cools quickly. Granite cools slowly.'},
                     {name: 'cells.md', text: '# Cells\\n## Energy\\nMitochondria make ATP.\\n## Division\\nMitosis splits a cell.'}]);
  await quire.train();
  const day = 86400000, now = Date.now(), out = [];
  // Today's actions stay after midnight (a run at 00:05 put "10 minutes ago" on yesterday: 4 days).
  const back = Math.floor(Math.min(600000, (now - new Date(now).setHours(0, 0, 0, 0)) / 2));
  for (const d of [2, 1, 0]) {           // three days in a row, a few actions each
    const t = now - d * day - back;
    out.push(await quire.recordProgress({kind: 'chat', t, scoped: d === 0, sources: []}));
    out.push(await quire.recordProgress({kind: 'quiz_answer', t: t + Math.floor(back / 10), correct: d !== 1}));
    out.push(await quire.recordProgress({kind: 'card_review', t: t + Math.floor(back / 5), rating: 'good'}));
  }
  return out;
}"""


def launch(playwright_instance, profile):
    ctx = playwright_instance.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                                 accept_downloads=True, viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    log = PageLog()
    log.attach(page)
    return ctx, page, log


def search_ids(page, query):
    return [h["chunk_id"] for h in page.evaluate("q => quire.search(q)", query)]


def test_study_restart_export_and_import_from_file(playwright_instance, built_dist, serve, tmp_path, browser):
    server = serve(built_dist)
    profile = tmp_path / "profile"

    # 1. study for a while
    ctx, page, log = launch(playwright_instance, profile)
    page.goto(server.url)
    wait_ready(page)
    recorded = page.evaluate(STUDY)
    assert all(r["recorded"] for r in recorded)
    # small notifications: one after Train (asked of the engine), one for the first question
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=badge-toast]')].map(t => t.textContent).join()"
                           ".match(/First page.*Curious|Curious.*First page/)")
    basalt = search_ids(page, "basalt lava")
    assert basalt and not log.errors, log.errors
    ctx.close()

    # 2. a browser restart: the dashboard shows it
    ctx, page, log = launch(playwright_instance, profile)
    page.goto(server.url + "#progress")
    wait_ready(page)
    page.get_by_test_id("heatmap").wait_for()
    assert page.get_by_test_id("stat-streak").inner_text().startswith("3 days")
    assert page.eval_on_selector_all('[data-testid="heatmap"] rect[data-count]', "rs => rs.length") == 90
    assert page.eval_on_selector_all('[data-testid="heatmap"] rect[data-count]:not([data-count="0"])', "rs => rs.length") == 3
    assert page.eval_on_selector_all('[data-testid="accuracy-chart"] circle', "cs => cs.length") == 3
    assert page.get_by_test_id("badges-count").inner_text() == "3 of 25 earned"  # first source, first question, 3-day streak
    assert page.eval_on_selector_all('[data-testid="badge"][data-earned="1"]', "bs => bs.map(b => b.dataset.code)") \
        == page.evaluate("quire.progress().then(p => p.badges.all.filter(b => b.earned).map(b => b.code))")
    assert [r["name"] for r in page.evaluate("quire.progress()")["coverage"]] == ["cells.md", "rocks.md"]
    page.screenshot(path=f"{SHOTS}/quire-progress.png", full_page=True)

    # the privacy view: sizes, and the network log shows nothing but the bundle and this machine
    page.get_by_test_id("nav-privacy").click()
    page.get_by_test_id("inventory-row").first.wait_for()
    sizes = dict(page.eval_on_selector_all('[data-testid="inventory-row"]', "rs => rs.map(r => [r.dataset.bucket, +r.dataset.bytes])"))
    assert set(sizes) >= {"originals", "chunks", "vectors", "chats", "study_items", "progress", "settings",
                          "prompt_overrides", "page_settings", "room_probe", "open_tabs"}
    assert sizes["originals"] > 0 and sizes["chunks"] > 0 and sizes["progress"] > 0
    assert sizes["room_probe"] == 0  # the free-space check's file, empty between checks
    tabs = page.locator('[data-testid="inventory-row"][data-bucket="open_tabs"]')
    assert sizes["open_tabs"] > 0 and tabs.get_attribute("data-count") == "1", tabs.inner_text()  # this tab's mark only
    page.evaluate("quire.llmStatus()")  # the engine asks the model server: that request is logged too
    page.wait_for_function("() => quire.networkLog().some(e => e.from === 'engine' && e.url.endsWith('/api/version'))")
    net = page.evaluate("quire.networkLog()")
    assert len(net) > 5 and {e["kind"] for e in net} <= {"bundle", "in-page", "llm", "loopback"}, net
    assert page.get_by_test_id("network-summary").get_attribute("data-state") == "ok"
    assert page.get_by_test_id("network-row").count() == len(net)
    with page.expect_download() as dl:
        page.get_by_test_id("vault-export").click()
    vault_file = tmp_path / dl.value.suggested_filename
    dl.value.save_as(vault_file)
    page.get_by_test_id("vault-done").wait_for()
    page.screenshot(path=f"{SHOTS}/quire-privacy.png", full_page=True)
    before = page.evaluate("quire.progress()")
    assert not log.errors, log.errors
    ctx.close()

    # 3. a fresh profile, opened from disk: a damaged file is refused, the real one imports
    fresh = browser.new_context()
    page = fresh.new_page()
    page.set_default_timeout(120_000)
    log = PageLog()
    log.attach(page)
    page.goto((built_dist / "index.html").as_uri() + "#privacy")
    wait_ready(page)
    data = vault_file.read_bytes()
    page.get_by_test_id("vault-file").set_input_files(files=[{"name": "cut.quire", "mimeType": "application/zip",
                                                               "buffer": data[: len(data) // 2]}])
    page.get_by_test_id("vault-import").click()
    assert "damaged or incomplete" in page.get_by_test_id("vault-error").inner_text()
    assert page.evaluate("quire.sources()") == []
    page.get_by_test_id("vault-file").set_input_files(str(vault_file))
    page.get_by_test_id("vault-import").click()
    page.get_by_test_id("vault-done").wait_for()
    # one's own vault brings nothing to ignore (the page's state keys, such as its open-tab key, stay out of it)
    assert page.get_by_test_id("vault-ignored").all_inner_texts() == []
    assert sorted(s["name"] for s in page.evaluate("quire.sources()")) == ["cells.md", "rocks.md"]
    assert search_ids(page, "basalt lava") == basalt
    after = page.evaluate("quire.progress()")
    for key in ("heatmap", "streak", "quiz_accuracy", "cards", "coverage"):
        assert after[key] == before[key], key
    assert {b["code"] for b in after["badges"]["earned"]} == {b["code"] for b in before["badges"]["earned"]}
    assert not log.errors, log.errors
    fresh.close()
