"""A bundle that carries a course (issue 27) in Firefox ESR and WebKitGTK, from file:// (the USB-stick
way): the course is offered with its facts and loaded, and search finds it; a kiosk built on it goes
back to the course exactly after an idle reset (a short idle, &idle=0.05: three seconds).  Over http, a
vault saved as course.quirevault next to the page, without building, is offered and loaded too."""

from __future__ import annotations

import shutil
import sys

import pytest

from conftest import ROOT
from course_vaults import course_vault
from engines import ENGINES, missing, open_engine

pytestmark = pytest.mark.browser

sys.path.insert(0, str(ROOT))
import build  # noqa: E402

LIBRARY = """async () => ({
  sources: (await quire.sources()).map(s => [s.id, s.name, s.category, s.status]).sort(),
  sets: (await quire.studySets()).map(s => [s.id, s.title, s.course && s.course.title]),
  chats: (await quire.chatSessions()).length})"""


@pytest.fixture(scope="module")
def course_dist(lean_dist, tmp_path_factory):
    folder = tmp_path_factory.mktemp("course-engines")
    data, quiz = course_vault()
    (folder / "course.quirevault").write_bytes(data)
    dist = shutil.copytree(lean_dist, folder / "dist")
    assert build.main(["--dist", str(dist), "--library", str(folder / "course.quirevault"),
                       "--library-title", "Earth 101", "--library-only"]) == 0
    return dist, quiz


def engine_ok(name: str) -> None:
    why = missing(name)
    if why:
        pytest.fail(f"{name} is needed for this tier and is missing here: {why}")


@pytest.mark.parametrize("name", ENGINES)
def test_the_course_is_offered_and_loaded_from_disk(name, course_dist, tmp_path):
    engine_ok(name)
    dist, quiz = course_dist
    with open_engine(name, tmp_path) as b:
        b.goto((dist / "index.html").as_uri())
        b.wait_ready()
        facts = b.wait("document.querySelector('[data-testid=course-facts]') && "
                       "document.querySelector('[data-testid=course-facts]').textContent",
                       describe="document.querySelector('#main').innerText.slice(0, 400)")
        assert facts.startswith("This copy comes with a library: Earth 101, 2 documents, ")
        b.js("document.querySelector('[data-testid=course-load]').click(); return true;")
        b.wait("quire.courseState().then(s => s === 'loaded')",
               describe="(document.querySelector('[data-testid=course-offer]') || {}).innerText")
        hit = b.run("async () => (await quire.search('shield volcano basalt', {k: 1}))[0]")
        assert hit["source"] == "Volcanoes.md"
        got = b.run(LIBRARY)
        assert sorted(s[1] for s in got["sources"]) == ["Rocks.md", "Volcanoes.md"]
        assert got["sets"] == [[quiz["id"], quiz["title"], "Earth 101"]]


@pytest.mark.parametrize("name", ENGINES)
def test_a_kiosk_goes_back_to_the_course_after_the_idle_minutes(name, course_dist, tmp_path):
    engine_ok(name)
    dist, quiz = course_dist
    with open_engine(name, tmp_path) as b:
        b.goto((dist / "index.html").as_uri() + "?kiosk&idle=0.05")
        b.wait_ready()
        b.wait("['ready', 'failed'].includes(quire.kioskStatus().state)")
        assert b.js("return quire.kioskStatus().known") == "course:" + b.js("return quire.course().sha256")
        first = b.run(LIBRARY)
        assert sorted(s[1] for s in first["sources"]) == ["Rocks.md", "Volcanoes.md"]
        assert first["sets"] == [[quiz["id"], quiz["title"], "Earth 101"]]
        b.run("async () => { await quire.stage([{name: 'visitor.md', text: '# Visitor\\nA visitor wrote this.'}]); "
              "await quire.train(); }")
        b.run("async (id) => { await quire.quizAnswer(id, 0); }", quiz["id"])
        # The visit starts with an input; three seconds without another, the kiosk resets and reloads.
        b.js("window.beforeReset = true; window.dispatchEvent(new Event('pointerdown')); return true;")
        status = None
        for _ in range(100):  # each try ends when the reset's reload cuts the polling script
            try:
                status = b.wait("!window.beforeReset && window.quire && quire.kioskStatus && "
                                "quire.kioskStatus().state === 'ready' && quire.kioskStatus()")
                break
            except Exception:
                continue
        assert status and status["resets"] >= 2, status
        b.wait("window.quire.ready.then(() => true)")
        assert b.run(LIBRARY) == first
        opened = b.run("async (id) => await quire.openSet(id)", quiz["id"])
        assert opened["session"]["answers"] == []


@pytest.fixture(scope="module")
def dropin_dist(lean_dist, tmp_path_factory):
    dist = shutil.copytree(lean_dist, tmp_path_factory.mktemp("dropin-engines") / "dist")
    data, quiz = course_vault()
    (dist / "course.quirevault").write_bytes(data)  # over the build's empty slot
    return dist, quiz


@pytest.mark.parametrize("name", ENGINES)
def test_a_course_saved_next_to_the_page_is_offered_over_http(name, dropin_dist, serve, tmp_path):
    engine_ok(name)
    dist, quiz = dropin_dist
    server = serve(dist)
    with open_engine(name, tmp_path) as b:
        b.goto(server.url)
        b.wait_ready()
        assert b.run("async () => (await quire.courseFound(), quire.course().dropIn)") == "course.quirevault"
        facts = b.wait("document.querySelector('[data-testid=course-facts]') && "
                       "document.querySelector('[data-testid=course-facts]').textContent",
                       describe="document.querySelector('#main').innerText.slice(0, 400)")
        assert facts.startswith("This copy comes with a library: ")
        assert "2 documents" in facts
        b.js("document.querySelector('[data-testid=course-load]').click(); return true;")
        b.wait("quire.courseState().then(s => s === 'loaded')",
               describe="(document.querySelector('[data-testid=course-offer]') || {}).innerText")
        hit = b.run("async () => (await quire.search('shield volcano basalt', {k: 1}))[0]")
        assert hit["source"] == "Volcanoes.md"
        assert b.run(LIBRARY)["sets"][0][0] == quiz["id"]
