"""A full disk in Firefox ESR: its profile on a 200 MB tmpfs that the test fills from outside.

Firefox keeps IndexedDB in SQLite and words a full disk its own way; Quire must still say the
disk is full and what to free, lose nothing, write again once space is back, and keep it all
across a browser restart on the same profile.  (WebKitGTK under automation keeps its storage
in a place of its own choosing, fresh each session, so it cannot be put on a small disk here.)
"""

import pytest

from conftest import StaticServer
from engines import open_engine
from test_engines_browser import engine_ok
from test_full_disk_browser import FILES, WORDS, assert_translated, fill, free, random_words, small_disk  # noqa: F401

pytestmark = pytest.mark.browser


def attempt(b, script: str) -> str:
    return b.run(f"async () => {{ try {{ await {script}; return 'it worked'; }} catch (e) {{ return e.message; }} }}")


def trained(b) -> set:
    return {s["name"] for s in b.run("async () => quire.sources()") if s["status"] == "trained"}


def findable(b) -> dict:
    return {name: [h["source"] for h in b.run("async (q) => quire.search(q)", words)][:1] == [name]
            for name, words in WORDS.items()}


def test_firefox_full_disk_says_so_and_loses_nothing(built_dist, small_disk):
    engine_ok("firefox")
    server = StaticServer(built_dist).start()
    try:
        # No service worker: its 76 MB copy of the bundle would race the filling of the disk.
        with open_engine("firefox", small_disk, prefs={"dom.serviceWorkers.enabled": False}) as b:
            b.goto(server.url)
            b.wait_ready()
            b.run("async (fs) => { await quire.stage(Object.entries(fs).map(([name, text]) => ({name, text}))); "
                  "return quire.train(); }", FILES)
            b.run("async () => quire.ask('What do glaciers carve?')")
            b.run("async (text) => quire.stage({name: 'late.md', text})", "# Late\nLoess is wind-blown silt. " + random_words(60_000))
            message = "it worked"
            for _ in range(3):  # Firefox may free files of its own after a failed write: fill again
                fill(small_disk)
                message = attempt(b, "quire.train()")
                if message != "it worked":
                    break
            assert_translated(message, "Train in Firefox")
            assert trained(b) == set(FILES) and all(findable(b).values())
            free(small_disk)
            b.run("async () => quire.ask('Which rock is felsic?')")
            assert len(b.run("async () => quire._call('chatSessions')")) == 2
            b.restart()
            b.goto(server.url)
            b.wait_ready()
            assert set(FILES) <= trained(b)
            assert findable(b) == dict.fromkeys(FILES, True)
            assert len(b.run("async () => quire._call('chatSessions')")) == 2
    finally:
        server.stop()
