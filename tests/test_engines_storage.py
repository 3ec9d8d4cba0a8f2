"""A full disk in Firefox ESR and WebKitGTK: the browser's storage on a 400 MB tmpfs that the
test fills from outside.

Both keep IndexedDB in SQLite and word a full disk their own way (WebKit aborts a small write
the disk refused with no error at all); Quire must still say the disk is full and what to free,
lose nothing, write again once space is back, and keep it all across a browser restart.
Firefox runs on a profile on that disk; WebKitGTK as an app embeds it, its storage folder there
(tests/webkit_app.py: MiniBrowser under WebKitWebDriver keeps its storage in memory).
"""

import pytest

from conftest import StaticServer
from engines import missing_webkit_app, open_engine
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


def full_disk_journey(b, server, disk, engine: str) -> None:
    """Train on a full disk says so and loses nothing; once freed the next write lands, and a
    restart keeps it all."""
    b.goto(server.url)
    b.wait_ready()
    b.run("async (fs) => { await quire.stage(Object.entries(fs).map(([name, text]) => ({name, text}))); "
          "return quire.train(); }", FILES)
    b.run("async () => quire.ask('What do glaciers carve?')")
    b.run("async (text) => quire.stage({name: 'late.md', text})", "# Late\nLoess is wind-blown silt. " + random_words(60_000))
    message = "it worked"
    for _ in range(3):  # the browser may free files of its own after a failed write: fill again
        fill(disk)
        message = attempt(b, "quire.train()")
        if message != "it worked":
            break
    assert_translated(message, f"Train in {engine}")
    assert trained(b) == set(FILES) and all(findable(b).values())
    free(disk)
    b.run("async () => quire.ask('Which rock is felsic?')")
    assert len(b.run("async () => quire._call('chatSessions')")) == 2
    b.restart()
    b.goto(server.url)
    b.wait_ready()
    assert set(FILES) <= trained(b)
    assert findable(b) == dict.fromkeys(FILES, True)
    assert len(b.run("async () => quire._call('chatSessions')")) == 2


def test_firefox_full_disk_says_so_and_loses_nothing(built_dist, small_disk):
    engine_ok("firefox")
    server = StaticServer(built_dist).start()
    try:
        # No service worker: its 76 MB copy of the bundle would race the filling of the disk.
        with open_engine("firefox", small_disk, prefs={"dom.serviceWorkers.enabled": False}) as b:
            full_disk_journey(b, server, small_disk, "Firefox")
    finally:
        server.stop()


class ServiceWorkerFirst:
    """WebKit with its service worker's copy of the bundle in place before the disk is filled
    (WebKitGTK has no switch to turn service workers off, and a copy still being written would
    race the filling)."""

    def __init__(self, b):
        self.b = b

    def __getattr__(self, name):
        return getattr(self.b, name)

    def wait_ready(self):
        status = self.b.wait_ready()
        self.b.wait("navigator.serviceWorker.ready.then(r => r.active && r.active.state === 'activated')")
        return status


def test_webkit_full_disk_says_so_and_loses_nothing(built_dist, small_disk):
    """Before: "The browser's storage failed to save (Error: storage transaction aborted)", as
    WebKit aborts the refused write without an error; the page now asks IndexedDB for room."""
    why = missing_webkit_app()
    if why:
        pytest.fail(f"the WebKitGTK app host is needed for this test and is missing here: {why}")
    server = StaticServer(built_dist).start()
    try:
        with open_engine("webkit-app", small_disk / "webkit", disk_cache=False) as b:
            full_disk_journey(ServiceWorkerFirst(b), server, small_disk, "WebKit")
    finally:
        server.stop()
