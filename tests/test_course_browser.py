"""A bundle that carries a course (issue 27) in Chromium: built with `build.py --library-only` into
a copy of the lean bundle, opened from file:// in a fresh profile.  The page offers the course with
its facts, loads it in one import, and then search, Ask (no model server: the passages) and the
teacher's quiz work; a second open does not offer it again; a tampered course is refused with the
reason; a student's library is never replaced without asking; a kiosk restores the course exactly."""

import shutil

import pytest

from conftest import ROOT, open_logged, wait_until
from course_vaults import course_vault
from vault_crafts import tampered

pytestmark = pytest.mark.browser

import sys  # noqa: E402
sys.path.insert(0, str(ROOT))
import build  # noqa: E402
from quire_build.assemble import add_asset  # noqa: E402
from quire_build.library import COURSE_ASSET  # noqa: E402


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    data, quiz = course_vault()
    path = tmp_path_factory.mktemp("course") / "course.quirevault"
    path.write_bytes(data)
    return path, quiz


@pytest.fixture(scope="module")
def course_dist(lean_dist, course, tmp_path_factory):
    dist = shutil.copytree(lean_dist, tmp_path_factory.mktemp("course-dist") / "dist")
    assert build.main(["--dist", str(dist), "--library", str(course[0]), "--library-title", "Earth 101",
                       "--library-only"]) == 0
    return dist


def offered(page) -> str:
    page.wait_for_selector("[data-testid=course-offer]")
    return page.inner_text("[data-testid=course-facts]")


def no_errors(log):
    assert not log.errors, log.errors


def test_a_student_loads_the_course_from_disk_and_uses_it(course_dist, course, browser):
    _, quiz = course
    ctx = browser.new_context()
    try:
        url = (course_dist / "index.html").as_uri()
        page, log = open_logged(ctx, url)
        facts = offered(page)
        assert facts.startswith("This copy comes with a library: Earth 101, 2 documents, ")
        assert "passages, made 20" in facts
        # Every step the card showed while loading (each text node the status line was given).
        page.evaluate("""() => { window.steps = []; new MutationObserver(records => records.forEach(r =>
            r.addedNodes.forEach(n => n.nodeType === 3 && window.steps.push(n.data)))).observe(
            document.querySelector('[data-testid=course-message]'), {childList: true}); }""")
        page.click("[data-testid=course-load]")
        wait_until(page, "quire.courseState().then(s => s === 'loaded')")
        assert page.evaluate("window.steps") == [
            "Loading the course… (checking it, then saving it in one go)", "Loading the course: Checking the whole file…",
            "Loading the course: Building the search index from its passages…",
            "Loading the course: Saving it in one go…", "Loading the course: Opening the library…"]
        assert page.query_selector("[data-testid=course-offer]") is None
        names = page.evaluate("quire.sources().then(s => s.map(x => x.name).sort())")
        assert names == ["Rocks.md", "Volcanoes.md"]
        hits = page.evaluate("quire.search('shield volcano basalt')")
        assert hits and hits[0]["source"] == "Volcanoes.md"
        answer = page.evaluate("quire.ask('Which volcano is built from fluid basalt lava?')")
        assert any(c["source"] == "Volcanoes.md" for c in answer["citations"])
        sets = page.evaluate("quire.studySets()")
        assert [(s["id"], s["course"]["title"]) for s in sets] == [(quiz["id"], "Earth 101")]
        page.goto(url + "#study")
        page.wait_for_selector("[data-testid=from-teacher-badge]")
        played = page.evaluate("(id) => quire.quizAnswer(id, 0)", quiz["id"])
        assert "correct" in played
        # A second open of the same copy does not offer it again.
        again, log2 = open_logged(ctx, url)
        assert again.evaluate("quire.courseState()") == "loaded"
        again.wait_for_selector("[data-testid=view-library]:not([hidden])")
        assert again.query_selector("[data-testid=course-offer]") is None
        no_errors(log)
        no_errors(log2)
    finally:
        ctx.close()


def test_a_student_with_a_library_is_asked_and_not_now_is_kept(course_dist, browser):
    ctx = browser.new_context()
    try:
        url = (course_dist / "index.html").as_uri()
        page, log = open_logged(ctx, url)
        offered(page)
        page.evaluate("quire.stage([{name: 'mine.md', text: '# Mine\\nMy own notes on quartz.'}]).then(() => quire.train())")
        page.reload()
        offered(page)
        assert page.query_selector("[data-testid=course-load]") is None  # merge or replace, never silently
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.click("[data-testid=course-replace]")
        assert dialogs and "Replace the documents in your library" in dialogs[0]
        assert page.evaluate("quire.sources().then(s => s.map(x => x.name))") == ["mine.md"]
        page.click("[data-testid=course-merge]")
        wait_until(page, "quire.courseState().then(s => s === 'loaded')")
        assert page.evaluate("quire.sources().then(s => s.map(x => x.name).sort())") == ["Rocks.md", "Volcanoes.md", "mine.md"]
        no_errors(log)
    finally:
        ctx.close()
    ctx = browser.new_context()
    try:
        page, log = open_logged(ctx, url)
        offered(page)
        page.click("[data-testid=course-decline]")
        wait_until(page, "quire.courseState().then(s => s === 'declined')")
        page.reload()
        page.wait_for_function("() => window.quire && window.quire.ready")
        page.evaluate("quire.ready")
        assert page.query_selector("[data-testid=course-offer]") is None
        page.goto(url + "#privacy")
        page.click("[data-testid=course-add]")
        offered(page)
        no_errors(log)
    finally:
        ctx.close()


def test_a_tampered_course_is_refused_with_the_reason(course_dist, course, browser, tmp_path):
    dist = shutil.copytree(course_dist, tmp_path / "dist")
    # The pack swapped for one of a tampered vault; the bundle's sha256 still names the original.
    files, assets = {}, {}
    add_asset(files, assets, COURSE_ASSET, tampered(course[0].read_bytes()), "course")
    for name, data in files.items():
        (dist / name).write_bytes(data)
    ctx = browser.new_context()
    try:
        page, log = open_logged(ctx, (dist / "index.html").as_uri())
        offered(page)
        page.click("[data-testid=course-load]")
        error = page.wait_for_selector("[data-testid=course-error]").inner_text()
        assert "The course in this copy of Quire is damaged (its checksum does not match" in error
        assert page.evaluate("quire.sources()") == []
        assert page.evaluate("quire.courseState()") == "new"
    finally:
        ctx.close()


def test_a_kiosk_restores_the_course_exactly(course_dist, course, browser):
    _, quiz = course
    ctx = browser.new_context()
    try:
        url = (course_dist / "index.html").as_uri() + "?kiosk"
        page, log = open_logged(ctx, url)
        page.wait_for_function("() => quire.kioskStatus().state === 'ready'")
        status = page.evaluate("quire.kioskStatus()")
        assert status["known"] == "course:" + page.evaluate("quire.course().sha256")
        assert page.query_selector("[data-testid=course-offer]") is None
        def library():
            return page.evaluate("""async () => ({
                sources: (await quire.sources()).map(s => [s.id, s.name, s.category, s.status]).sort(),
                sets: (await quire.studySets()).map(s => [s.id, s.title, s.course && s.course.title]),
                chats: (await quire.chatSessions()).length})""")
        first = library()
        assert sorted(s[1] for s in first["sources"]) == ["Rocks.md", "Volcanoes.md"]
        assert first["sets"] == [[quiz["id"], quiz["title"], "Earth 101"]]
        page.evaluate("quire.stage([{name: 'visitor.md', text: '# Visitor\\nA visitor wrote this.'}]).then(() => quire.train())")
        page.evaluate("(id) => quire.quizAnswer(id, 0)", quiz["id"])
        assert len(library()["sources"]) == 3
        with page.expect_navigation():
            page.evaluate("quire.kioskReset()")
        page.wait_for_function("() => window.quire && window.quire.ready")
        page.wait_for_function("() => quire.kioskStatus().state === 'ready'")
        assert library() == first
        sets = page.evaluate("(id) => quire.openSet(id)", quiz["id"])
        assert sets["session"]["answers"] == []
        no_errors(log)
    finally:
        # Leave the page first: its pagehide ends the engine's worker (boot.js) before the context
        # goes.  Closing the context with the kiosk's page still running hung once in CI for the
        # whole 900 s timeout (Chromium's disposeBrowserContext never answered; never seen here).
        for open_page in ctx.pages:
            open_page.goto("about:blank")
        ctx.close()


@pytest.mark.service_worker
def test_over_http_the_course_is_precached_and_loads_offline(course_dist, course, context, serve):
    """The first visit over http precaches the course's pack with the rest (the service worker's
    list); with the server gone and the network off, the reloaded page offers and loads it."""
    server = serve(course_dist)
    page, log = open_logged(context, server.url)
    cached = page.evaluate("""async () => {
        await navigator.serviceWorker.ready;
        if (!navigator.serviceWorker.controller)
          await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true}));
        const cache = await caches.open((await caches.keys())[0]);
        return (await cache.keys()).map(r => new URL(r.url).pathname);
    }""")
    assert "/assets/pack/course/course.quirevault.js" in cached
    offered(page)
    server.stop()
    context.set_offline(True)
    page.reload()
    page.wait_for_function("() => window.quire && window.quire.ready")
    page.evaluate("quire.ready")
    offered(page)
    page.click("[data-testid=course-load]")
    wait_until(page, "quire.courseState().then(s => s === 'loaded')")
    hits = page.evaluate("quire.search('shield volcano basalt')")
    assert hits and hits[0]["source"] == "Volcanoes.md"
    answer = page.evaluate("quire.ask('Which volcano is built from fluid basalt lava?')")
    assert any(c["source"] == "Volcanoes.md" for c in answer["citations"])
    no_errors(log)
