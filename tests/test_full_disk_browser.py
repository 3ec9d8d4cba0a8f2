"""A full disk in real Chromium: the profile lives on a 400 MB tmpfs that the test fills
from outside (the CDP quota override does not reach an open IndexedDB connection).

Every write then fails with a message that says the disk is full and what to free;
nothing saved before is lost, the connection reopens once space is back, and after a
browser restart every source and chat is still there and searchable.  (Without
store-seal.js's seal() the restart found an empty library 3 times out of 3: Chromium appended
after the torn record a failed write left in its log, and deleted the origin's
databases at the next start on the checksum mismatch.)
"""

import json
import os
import random
import string
import subprocess

import pytest

from conftest import launch_profile, open_logged, wait_until

pytestmark = pytest.mark.browser

FILES = {"glacier.md": "# Ice\nGlaciers carve U-shaped valleys.", "dune.md": "# Sand\nBarchan dunes migrate downwind.",
         "magma.md": "# Fire\nRhyolite is a felsic volcanic rock."}
WORDS = {"glacier.md": "glaciers valleys", "dune.md": "barchan dunes", "magma.md": "rhyolite felsic"}
# Chromium compresses what it stores (snappy): test writes are random, so they take their size.
NOISE = """n => { const b = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(b.subarray(i, Math.min(n, i + 65536)));
  return b; }"""
RAW = ("DataError", "IOError", "JsException", "InvalidStateError", "UnknownError", "FILE_ERROR")


@pytest.fixture
def small_disk(tmp_path):
    """A 400 MB tmpfs, mounted for this test (the suite runs as root): room for WebKit's service
    worker copy of the bundle (210 MB since the multilingual voice model) before it is filled."""
    if os.geteuid() != 0:
        pytest.fail("this test mounts a 400 MB tmpfs (mount -t tmpfs), which needs root; run the suite as root")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode:
        pytest.fail(f"could not mount a tmpfs at {mnt} ({r.stderr.strip()}); this test needs a real small disk")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(disk) -> None:
    """Write into the tmpfs until the kernel says ENOSPC, down to the last block.  Called
    before each step: the browser frees files of its own after a failed write."""
    n = len(list(disk.glob("filler*")))
    for block in (1 << 20, 1 << 12):
        with open(disk / f"filler{n}", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * block)
            except OSError as exc:
                assert exc.errno == 28, exc
        n += 1
    assert os.statvfs(disk).f_bavail == 0


def free(disk) -> None:
    for f in disk.glob("filler*"):
        f.unlink()


def launch(pw, profile, url, args=()):
    # No service worker: its 76 MB copy of the bundle, written at some moment after ready,
    # would race the test's filling of the disk.
    ctx = launch_profile(pw, profile, args, service_workers="block")
    page, log = open_logged(ctx, url, 120_000)
    return ctx, page, log


def fail_on_full_disk(page, disk, script: str, what: str) -> str:
    """Fill the disk and run a write there; its error message.  The browser may free files of
    its own after fill() (compaction, a rotated log), and then the write lands: fill again."""
    for _ in range(3):
        fill(disk)
        message = attempt(page, script)
        if message != "it worked":
            break
    assert_translated(message, what)
    return message


def trained(page) -> set:
    return {s["name"] for s in page.evaluate("quire.sources()") if s["status"] == "trained"}


def attempt(page, script: str) -> str:
    """Run a write that must fail; its error message."""
    return page.evaluate(f"async () => {{ try {{ await {script}; return 'it worked'; }} catch (e) {{ return e.message; }} }}")


def assert_translated(message: str, what: str) -> None:
    assert "full" in message.lower() and "free" in message.lower(), f"{what}: {message}"
    assert "Nothing was changed" in message, f"{what}: {message}"
    assert not any(raw in message.split("(")[0] for raw in RAW), f"{what} shows a raw browser error: {message}"


def random_words(n: int) -> str:
    """n incompressible made-up words (Chromium compresses what it stores)."""
    rnd = random.Random(7)
    return " ".join("".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(3, 9))) for _ in range(n))


def findable(page) -> dict:
    return {name: [h["source"] for h in page.evaluate("q => quire.search(q)", words)][:1] == [name]
            for name, words in WORDS.items()}


def test_full_disk_fails_cleanly_and_loses_nothing(playwright_instance, built_dist, serve, small_disk):
    url = serve(built_dist).url
    profile = small_disk / "profile"
    ctx, page, log = launch(playwright_instance, profile, url)
    page.evaluate("fs => quire.stage(Object.entries(fs).map(([name, text]) => ({name, text}))).then(() => quire.train())", FILES)
    page.evaluate("quire.ask('What do glaciers carve?')")
    page.evaluate("async () => { window.vault = await quire.exportVault(); }")
    assert len(page.evaluate("quire._call('chatSessions')")) == 1

    # Long and random, so Train's write needs new blocks on the disk (a few passages would fit
    # in the unused tail of a page the database already has, and the write would succeed).
    page.evaluate("text => quire.stage({name: 'late.md', text})", "# Late\nLoess is wind-blown silt. " + random_words(60_000))
    fill(small_disk)
    assert_translated(attempt(page, "quire.train()"), "Train")
    fill(small_disk)
    # long and random enough to need new pages on the disk (a short one fits in a page's unused tail)
    long_question = f"'Where do dunes go? ' + ({NOISE})(150000).toBase64()"
    assert_translated(attempt(page, f"quire.ask({long_question})"), "ask")
    fill(small_disk)
    assert_translated(attempt(page, "quire.importVault(window.vault, {mode: 'replace'})"), "vault import")
    # what this tab knows is untouched, and reads still work on the reopened connection
    assert trained(page) == set(FILES)
    assert all(findable(page).values())
    # The chat list too, once the connection is gone (as after Chromium's close on an I/O error):
    # on the torn log, opening the database needs room, so the small buckets (chats, sets,
    # progress, settings) come from the engine's copy (before, the list failed with "disk full").
    page.evaluate("quire.run('import js; js.QuireStore.library.drop()')")
    assert [c["title"] for c in page.evaluate("quire._call('chatSessions')")] == ["What do glaciers carve?"]

    # A failed write left a torn record in Chromium's log: nothing more is written behind it.
    assert page.evaluate("QuireStore.torn()")
    free(small_disk)  # space is back: the next write retires the torn log first, then lands
    page.evaluate("quire.ask('Which rock is felsic?')")
    assert len(page.evaluate("quire._call('chatSessions')")) == 2
    assert not page.evaluate("QuireStore.torn()")
    assert not [e for e in log.errors if "pageerror" in e], log.errors
    ctx.close()

    ctx, page, log = launch(playwright_instance, profile, url)  # a browser restart
    # Every trained source.  late.md was only staged: Chromium evicts the origin's data after
    # the first failed write (the open tab then saves what it holds again), and originals of
    # files only staged are not kept in memory, so it may be gone.
    assert set(FILES) <= trained(page)
    assert findable(page) == dict.fromkeys(FILES, True)
    assert len(page.evaluate("quire._call('chatSessions')")) == 2, "the chat saved after the disk was freed"
    assert not [e for e in log.errors if "pageerror" in e], log.errors
    ctx.close()


def test_a_large_write_is_refused_before_it_starts(playwright_instance, built_dist, serve, small_disk):
    """Free space is checked before a large write: staging 30 MB with 10 MB free is refused
    with how much to free, and the disk is never filled to the last byte."""
    url = serve(built_dist).url
    ctx, page, _ = launch(playwright_instance, small_disk / "profile", url)
    page.evaluate("quire.stage({name: 'keep.md', text: '# Keep\\nGneiss is banded.'}).then(() => quire.train())")
    fill(small_disk)
    with open(small_disk / "filler0", "r+b") as f:  # leave 10 MB free
        f.truncate(os.path.getsize(small_disk / "filler0") - 10_000_000)
    message = attempt(page, f"quire.stage({{name: 'big.pdf', data: ({NOISE})(30e6)}})")
    assert_translated(message, "stage 30 MB")
    assert "this needs about 30." in message, message
    assert os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize > 5_000_000  # nothing half-written
    assert [s["name"] for s in page.evaluate("quire.sources()")] == ["keep.md"]
    ctx.close()


def test_a_browser_closed_on_a_full_disk_loses_nothing(playwright_instance, built_dist, serve, small_disk):
    """The browser is closed right after the errors, the disk still full.  The failed writes
    tore Chromium's log; the flag that says so outlives the browser (localStorage), so the
    next session retires the log before its first write.

    Chromium is started with --unlimited-storage, as for a site it keeps: otherwise it may
    evict the origin's data after the failure (its policy for best-effort storage), and the
    test below covers what the tab then does."""
    url = serve(built_dist).url
    profile = small_disk / "profile"
    keep = ["--unlimited-storage"]
    ctx, page, _ = launch(playwright_instance, profile, url, keep)
    page.evaluate("fs => quire.stage(Object.entries(fs).map(([name, text]) => ({name, text}))).then(() => quire.train())", FILES)
    page.evaluate("quire.ask('What do glaciers carve?')")
    long_question = f"'Where do dunes go? ' + ({NOISE})(150000).toBase64()"
    for _ in range(2):
        fail_on_full_disk(page, small_disk, f"quire.ask({long_question})", "ask")
        assert trained(page) == set(FILES)
    assert page.evaluate("QuireStore.torn()")
    ctx.close()  # closed on a full disk

    free(small_disk)
    ctx, page, _ = launch(playwright_instance, profile, url, keep)
    # the flag outlived the browser: this start retired the log before its first write (the tab's mark)
    wait_until(page, "QuireStore.sealed() > 0")
    assert page.evaluate("QuireStore.sealed()") == 1 and not page.evaluate("QuireStore.torn()")
    assert trained(page) == set(FILES)
    page.evaluate("quire.ask('Which rock is felsic?')")  # the engine's first write of this session
    assert not page.evaluate("QuireStore.torn()")
    assert page.evaluate("quire.run('import js; js.QuireStore.sealed()')") == 0  # the page's seal was enough
    ctx.close()

    ctx, page, log = launch(playwright_instance, profile, url, keep)
    assert trained(page) == set(FILES)
    assert findable(page) == dict.fromkeys(FILES, True)
    assert any("felsic" in json.dumps(c) for c in page.evaluate("quire._call('chatSessions')")), "the second session's chat"
    assert not [e for e in log.errors if "pageerror" in e], log.errors
    ctx.close()


def test_data_the_browser_evicts_after_a_failed_write_is_saved_again_at_once(playwright_instance, built_dist, serve,
                                                                            small_disk):
    """After a write fails on a full disk Chromium may evict the origin's data (every
    database and cache of it), from at once to seconds later.  The tab holds the only copy
    then: it notices (the browser's usage figure drops) and saves everything again into the
    room the eviction freed, with no call from the page, so a browser closed then keeps it.
    The eviction is made here through DevTools, the same deletion, at a known moment."""
    url = serve(built_dist).url
    profile = small_disk / "profile"
    keep = ["--unlimited-storage"]  # no eviction but the test's own
    ctx, page, _ = launch(playwright_instance, profile, url, keep)
    page.evaluate("fs => quire.stage(Object.entries(fs).map(([name, text]) => ({name, text}))).then(() => quire.train())", FILES)
    page.evaluate("quire.ask('What do glaciers carve?')")
    fail_on_full_disk(page, small_disk, f"quire.ask('Where do dunes go? ' + ({NOISE})(150000).toBase64())", "ask")
    # What the tab holds now is what must come back. Not always one chat: on a loaded machine
    # the browser may free room after fill() and an earlier attempt's question is saved (a
    # second chat, rightly restored), before the next attempt fails on the refilled disk.
    chats = len(page.evaluate("quire._call('chatSessions')"))
    assert chats >= 1
    assert page.evaluate("quire._call('storageWatch')")["watching"]
    ctx.new_cdp_session(page).send("Storage.clearDataForOrigin", {
        "origin": url.rstrip("/"), "storageTypes": "indexeddb,cache_storage,service_workers"})
    free(small_disk)  # what the eviction freed
    wait_until(page, "quire._call('storageWatch').then(w => w.restored > 0)")
    ctx.close()

    ctx, page, log = launch(playwright_instance, profile, url, keep)
    assert trained(page) == set(FILES)
    assert findable(page) == dict.fromkeys(FILES, True)
    assert len(page.evaluate("quire._call('chatSessions')")) == chats
    assert not [e for e in log.errors if "pageerror" in e], log.errors
    ctx.close()
