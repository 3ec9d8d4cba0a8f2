"""A course put into a bundle without building (issue 27): a teacher saves a vault over the empty
``course.quirevault`` the build writes next to ``index.html``, and serves the folder.  Chromium, over
http with the service worker: the page offers the course with the engine's facts, loads it, keeps it
offline, offers a new version when the teacher replaces the file, refuses a damaged one with the
reason, says it in German, and a kiosk goes back to it.  A page opened from file:// may not read a
file, so there a course must be built in (``build.py --library``: tests/test_course_browser.py)."""

import asyncio
import base64
import shutil

import pytest

from conftest import open_logged, wait_until
from course_vaults import course_vault
from quire.app import Quire
from quire.store import MemoryStore
from vault_crafts import tampered

pytestmark = [pytest.mark.browser, pytest.mark.service_worker]

GLACIERS = ("# Glaciers\nA glacier is a river of ice that moves slowly downhill under its own weight. "
            "Moraines are ridges of rock and gravel that a glacier pushes ahead of it or leaves at its sides. "
            "A cirque is the bowl-shaped hollow carved at the head of a mountain glacier.")


def second_course() -> bytes:
    """Another course vault: one document under "Ice 201"."""
    async def make():
        q = await Quire.open(MemoryStore())
        await q.stage_text("Glaciers", GLACIERS, "Ice 201")
        await q.train()
        return base64.b64decode((await q.export_vault())["base64"])
    return asyncio.run(make())


@pytest.fixture(scope="module", autouse=True)
def vaults():
    """Made before the module's browser starts: Playwright's sync API keeps an event loop in this thread."""
    return course_vault(), second_course()


@pytest.fixture
def course(vaults):
    return vaults[0]


@pytest.fixture
def dropin_dist(lean_dist, tmp_path):
    return shutil.copytree(lean_dist, tmp_path / "dist")


def facts(page) -> str:
    page.wait_for_selector("[data-testid=course-offer]")
    return page.inner_text("[data-testid=course-facts]")


def test_the_build_leaves_an_empty_slot_and_an_empty_slot_offers_nothing(dropin_dist, context, serve):
    assert (dropin_dist / "course.quirevault").read_bytes() == b""
    page, log = open_logged(context, serve(dropin_dist).url)
    assert page.evaluate("quire.courseState()") == "none"
    assert page.evaluate("quire.courseFound()") is None
    assert page.evaluate("quire.courseProblem()") is None
    page.wait_for_selector("[data-testid=view-library]:not([hidden])")
    assert page.query_selector("[data-testid=course-offer]") is None
    assert page.query_selector("[data-testid=course-problem]") is None
    assert not log.errors, log.errors


def test_a_dropped_in_course_is_offered_loaded_kept_offline_and_replaced(dropin_dist, course, vaults, context, serve):
    data, quiz = course
    (dropin_dist / "course.quirevault").write_bytes(data)
    server = serve(dropin_dist)
    page, log = open_logged(context, server.url)
    text = facts(page)
    assert text.startswith("This copy comes with a library: Earth 101, 2 documents, "), text
    about = page.evaluate("quire.course()")
    assert about["dropIn"] == "course.quirevault" and about["size"] == len(data) and about["sets"] == 1
    page.click("[data-testid=course-load]")
    wait_until(page, "quire.courseState().then(s => s === 'loaded')")
    assert page.evaluate("quire.sources().then(s => s.map(x => x.name).sort())") == ["Rocks.md", "Volcanoes.md"]
    hits = page.evaluate("quire.search('shield volcano basalt')")
    assert hits and hits[0]["source"] == "Volcanoes.md"
    assert [(s["id"], s["course"]["title"]) for s in page.evaluate("quire.studySets()")] == [(quiz["id"], "Earth 101")]

    # Offline, the service worker's copy of the slot names the same course: nothing is offered again.
    page.evaluate("""async () => {
        await navigator.serviceWorker.ready;
        if (!navigator.serviceWorker.controller)
          await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true}));
    }""")
    server.stop()
    context.set_offline(True)
    page.reload()
    page.wait_for_function("() => window.quire && window.quire.ready")
    page.evaluate("quire.ready")
    assert page.evaluate("quire.courseFound().then(c => c && c.sha256)") == about["sha256"]
    assert page.evaluate("quire.courseState()") == "loaded"
    assert page.query_selector("[data-testid=course-offer]") is None

    # The teacher saves a new course over the file: the next open online offers it.
    context.set_offline(False)
    (dropin_dist / "course.quirevault").write_bytes(vaults[1])
    server = serve(dropin_dist, server.port)
    page.reload()
    text = facts(page)
    assert text.startswith("This copy comes with a library: Ice 201, 1 document, "), text
    page.click("[data-testid=course-merge]")
    wait_until(page, "quire.courseState().then(s => s === 'loaded')")
    names = page.evaluate("quire.sources().then(s => s.map(x => x.name).sort())")
    assert names == ["Glaciers.md", "Rocks.md", "Volcanoes.md"]
    assert not log.errors, log.errors


def test_a_damaged_drop_in_is_refused_with_the_reason_in_german(dropin_dist, course, context, serve):
    (dropin_dist / "course.quirevault").write_bytes(tampered(course[0]))
    url = serve(dropin_dist).url
    page, log = open_logged(context, url + "?lang=de")
    problem = page.wait_for_selector("[data-testid=course-problem]").inner_text()
    assert "Die Kursdatei course.quirevault neben dieser Seite kann nicht verwendet werden:" in problem
    assert "Bitte die Lehrkraft um eine neue Kopie davon." in problem
    assert page.evaluate("quire.courseState()") == "none"
    assert page.query_selector("[data-testid=course-offer]") is None
    assert page.evaluate("quire.sources()") == []
    # The intact course, offered in German.
    (dropin_dist / "course.quirevault").write_bytes(course[0])
    page.reload()
    text = facts(page)
    assert text.startswith("Diese Kopie bringt eine Bibliothek mit: Earth 101, 2 Dokumente, "), text
    assert page.inner_text("[data-testid=course-load]") == "Kurs laden"


def test_a_kiosk_goes_back_to_the_dropped_in_course(dropin_dist, course, context, serve):
    data, quiz = course
    (dropin_dist / "course.quirevault").write_bytes(data)
    page, log = open_logged(context, serve(dropin_dist).url + "?kiosk")
    page.wait_for_function("() => quire.kioskStatus().state === 'ready'")
    sha = page.evaluate("quire.courseFound().then(c => c.sha256)")
    assert page.evaluate("quire.kioskStatus()")["known"] == "course:" + sha
    assert page.evaluate("quire.sources().then(s => s.map(x => x.name).sort())") == ["Rocks.md", "Volcanoes.md"]
    assert [s["id"] for s in page.evaluate("quire.studySets()")] == [quiz["id"]]
    assert page.query_selector("[data-testid=course-offer]") is None
    assert not log.errors, log.errors
