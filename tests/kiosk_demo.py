"""A kiosk demo driven by Playwright: the known library, search, ask, quiz, flashcards, mind map.

    python3 tests/kiosk_demo.py                         # serves dist/ (building it when stale), headless
    python3 tests/kiosk_demo.py --headed --lang de      # full screen, in German, at a watchable pace
    python3 tests/kiosk_demo.py --shots /tmp/shots --video /tmp/video
    python3 tests/kiosk_demo.py --url http://127.0.0.1:8765/

The page runs as a kiosk (?kiosk=1, docs/kiosk.md) in a fresh browser profile, so the kiosk starts
with its known library: the course vault the bundle carries, else the sample library.  Every step
clicks what a visitor would, using the page's stable data-testid attributes, and waits on the
page's own signals, never on a timer (--pace only slows the demo down for people watching).
--shots saves a screenshot after each step; --video records the demo as WebM with Chromium's own
screencast and the system's ffmpeg (Playwright's record_video needs Playwright's own ffmpeg build,
which `playwright install ffmpeg` downloads and an offline machine does not have).
tests/test_kiosk_browser.py runs it in English and German.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("QUIRE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SIZE = {"width": 1280, "height": 800}
# What a kiosk takes out of the page (assets/kiosk.js): none may be in it, in any view.
REMOVED = ["erase-all", "remove-source", "chat-delete", "set-delete", "sample-remove", "flag-delete", "vault-export",
           "vault-import", "nav-settings", "view-settings", "llm-badge", "lang-switch"]
# Meaning-based search "None (keywords only)", as a person can choose in Settings (tests/conftest.py
# does the same for the suite): otherwise the tab loads its 72 MB embedding model after the library arrives.
KEYWORDS_ONLY = "try { localStorage.setItem('quire.embed.tab', 'off'); } catch (e) { /* about:blank */ }"


def answered(page, count: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=msg-assistant]').length === {count} "
                           "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")


SAMPLE_FILES = {"Quire user guide (sample).md", "Der Wasserkreislauf (Beispiel).md"}  # site/assets/sample-library.js


def suggestions(page) -> dict:
    """What to search for and ask: the sample card's suggestions, or, with a course vault, words
    from the first passage of its first source."""
    names = page.evaluate("quire.sources().then(s => s.map(x => x.name))")
    if page.get_by_test_id("sample-card").count() or SAMPLE_FILES & set(names):
        # The library's rows can come before the sample card does (a busy machine: the demo then
        # asked words of the German sample's first passage), so the card is waited for.
        page.get_by_test_id("sample-card").wait_for()
        return {"search": None, "question": None}
    words = page.evaluate("""async () => { const s = (await quire.sources()).find(x => x.status === 'trained');
        const text = (await quire.chunks(s.id))[0].text;
        return text.replace(/[^\\p{L}\\p{N} ]+/gu, ' ').split(/\\s+/).filter(w => w.length > 4).slice(0, 3).join(' '); }""")
    return {"search": words, "question": words + "?"}


def type_into(page, testid: str, text: str) -> None:
    page.get_by_test_id(testid).fill(text)
    page.get_by_test_id(testid).press("Enter")


PLAYED_BY = {"quiz": "quiz-option", "flashcards": "flash-show", "mindmap": "mm-node"}  # what each player shows first


def study(page, tool: str, count: int | None = None) -> None:
    """Study: back to the shelf if a set is open, choose the tool, Generate; waits for the player."""
    page.get_by_test_id("nav-study").click()
    if page.get_by_test_id("player-back").is_visible():
        page.get_by_test_id("player-back").click()
    page.get_by_test_id(f"tool-{tool}").click()
    if count:
        page.get_by_test_id("study-count").fill(str(count))
    page.get_by_test_id("study-generate").click()
    page.locator(f"[data-testid=study-player] [data-testid={PLAYED_BY[tool]}]").first.wait_for()


def run(page, url: str, lang: str = "en", pace_ms: int = 0, shots: Path | None = None) -> dict:
    """The demo on an open page of a fresh profile; returns what it showed."""
    taken = []

    def step(name: str) -> None:
        if shots:
            taken.append(str(shots / f"{len(taken) + 1:02d}-{name}-{lang}.png"))
            page.screenshot(path=taken[-1])
        if pace_ms:
            page.wait_for_timeout(pace_ms)

    page.goto(f"{url.split('?')[0].split('#')[0]}?kiosk=1&lang={lang}#library")
    page.wait_for_function("() => window.quire && window.quire.ready")
    page.evaluate("async () => { await quire.ready }")
    assert page.evaluate("quire.kiosk"), "the page did not enter kiosk mode"
    # The kiosk installs its known library on its first start (assets/kiosk-reset.js).
    state = page.wait_for_function("() => ['ready', 'takeover', 'failed'].includes(quire.kioskStatus().state) "
                                   "&& quire.kioskStatus().state").json_value()
    assert state == "ready", f"the kiosk did not start: {page.evaluate('quire.kioskStatus()')}"
    page.wait_for_function("() => document.querySelector('[data-testid=sample-card], [data-testid=source-row]')")
    asks = suggestions(page)
    step("library")

    # 1. Search: the sample card's suggestion, or words of the course.
    if asks["search"] is None:
        page.get_by_test_id("sample-search").click()
    else:
        page.get_by_test_id("nav-search").click()
        type_into(page, "search-input", asks["search"])
    page.get_by_test_id("search-hit").first.wait_for()
    hits = page.get_by_test_id("search-hit").count()
    step("search")

    # 2. Ask: answered from the documents, with or without a model server.
    page.get_by_test_id("nav-library").click()
    if asks["question"] is None:
        question = page.get_by_test_id("sample-question").first
        asked = question.inner_text()
        question.click()
    else:
        asked = asks["question"]
        page.get_by_test_id("nav-ask").click()
        type_into(page, "chat-input", asked)
    answered(page, 1)
    answer = page.locator("[data-testid=msg-assistant]").last.inner_text()
    step("ask")

    # 3. A five-question quiz: answer each, then see the score.
    page.get_by_test_id("nav-library").click()
    if page.get_by_test_id("sample-quiz").count():
        page.get_by_test_id("sample-quiz").click()
        page.get_by_test_id("player-title").wait_for()
    else:
        study(page, "quiz", 5)
    while page.get_by_test_id("quiz-score").count() == 0:
        page.locator("[data-testid=quiz-option]:not([disabled])").first.click()
        page.get_by_test_id("quiz-next").wait_for(state="visible")
        page.get_by_test_id("quiz-next").click()
        page.wait_for_function("() => document.querySelector('[data-testid=quiz-score]') || "
                               "document.querySelector('[data-testid=quiz-option]:not([disabled])')")
    score = page.get_by_test_id("quiz-score").inner_text()
    step("quiz")

    # 4. Flashcards: show the answer, rate it Good, and the reviewer says when it comes back.
    study(page, "flashcards", 5)
    page.get_by_test_id("flash-show").click()
    step("flashcards")
    page.get_by_test_id("rate-good").click()
    rated = page.get_by_test_id("flash-rated").inner_text()

    # 5. A mind map: open a topic and see the passages it comes from.
    study(page, "mindmap")
    page.locator("[data-testid=mm-node]").first.click()
    topic = page.get_by_test_id("mm-selected").inner_text()
    page.get_by_test_id("mm-passage").first.wait_for()
    step("mindmap")

    present = page.evaluate("""(ids) => { const found = [];
        for (const view of ['library', 'search', 'ask', 'study', 'progress', 'privacy', 'about', 'settings']) {
          quire.showView(view);
          for (const id of ids) if (document.querySelector(`[data-testid=${id}]`)) found.push(view + ':' + id); }
        quire.showView('library'); return found; }""", REMOVED)
    return {"question": asked, "answer": answer, "search_hits": hits, "quiz_score": score, "card_rated": rated,
            "mindmap_topic": topic, "removed_present": present, "screenshots": taken}


class Screencast:
    """A WebM video of the page from Chromium's screencast (CDP ``Page.startScreencast``), encoded
    by the system's ffmpeg.  Chromium sends a frame when the page changes; each is held until the
    next, so the video keeps the demo's real pace at FPS frames a second."""

    FPS = 8

    def __init__(self, page, path: Path):
        self.path, self.frames, self.last, self.start = path, 0, None, None
        self.ffmpeg = subprocess.Popen(
            ["ffmpeg", "-loglevel", "error", "-y", "-f", "image2pipe", "-framerate", str(self.FPS), "-c:v", "mjpeg",
             "-i", "-", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M", "-pix_fmt", "yuv420p",
             str(path)], stdin=subprocess.PIPE)
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.on("Page.screencastFrame", self.frame)
        self.cdp.send("Page.startScreencast", {"format": "jpeg", "quality": 70, "maxWidth": SIZE["width"],
                                               "maxHeight": SIZE["height"]})

    def hold_until(self, at: float) -> None:
        while self.last is not None and self.frames < max(1, round((at - self.start) * self.FPS)):
            self.ffmpeg.stdin.write(self.last)
            self.frames += 1

    def frame(self, event: dict) -> None:
        import base64

        self.cdp.send("Page.screencastFrameAck", {"sessionId": event["sessionId"]})
        at = event["metadata"]["timestamp"]
        self.start = self.start if self.start is not None else at
        self.hold_until(at)
        self.last, self.at = base64.b64decode(event["data"]), at

    def stop(self) -> Path:
        self.cdp.send("Page.stopScreencast")
        if self.last is not None:
            self.hold_until(self.at + 1.0)  # the last picture, for a second
        self.ffmpeg.stdin.close()
        if self.ffmpeg.wait() != 0 or self.last is None:
            raise RuntimeError(f"ffmpeg could not write {self.path}" if self.last else "Chromium sent no screencast frame")
        return self.path


def serve_dist() -> tuple[subprocess.Popen, str]:
    """serve.py on a free port (it builds dist/ first when the sources changed)."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "serve.py"), "--port", "0"], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "QUIRE_SERVE_QUIET": "1"})
    for line in proc.stdout:
        if "running at" in line:
            return proc, line.split("running at ")[1].split()[0]
    raise SystemExit("serve.py did not start; run `python3 serve.py` to see why")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="an already running Quire (default: serve dist/ on a free port)")
    ap.add_argument("--lang", choices=["en", "de"], default="en")
    ap.add_argument("--headed", action="store_true", help="show the browser, full screen")
    ap.add_argument("--pace", type=int, default=None, help="ms to pause after each step (default 1500 headed, 0 headless)")
    ap.add_argument("--shots", type=Path, help="save a screenshot of each step in this folder")
    ap.add_argument("--video", type=Path, help="record the demo as kiosk-demo-<lang>.webm in this folder (needs ffmpeg)")
    ap.add_argument("--keywords-only", action="store_true",
                    help="meaning-based search off, as Settings' \"None (keywords only)\" (the tab then loads no embedding model)")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    for folder in (args.shots, args.video):
        if folder:
            folder.mkdir(parents=True, exist_ok=True)
    if args.video and shutil.which("ffmpeg") is None:
        print("no video: ffmpeg is not on PATH (Debian/Ubuntu: apt-get install ffmpeg)", file=sys.stderr)
        args.video = None
    server, url = (None, args.url) if args.url else serve_dist()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=not args.headed,
                                        args=ARGS + (["--kiosk", "--start-fullscreen"] if args.headed else []))
            context = browser.new_context(viewport=None if args.headed else SIZE, locale=args.lang)
            if args.keywords_only:
                context.add_init_script(KEYWORDS_ONLY)
            page = context.new_page()
            # Each step waits as long as the machine needs (a quiz on a busy 2-core machine, with the
            # study tools loading first, took more than Playwright's default 30 s); whoever runs the
            # demo bounds it (the test: its subprocess timeout).
            page.set_default_timeout(0)
            video = Screencast(page, args.video / f"kiosk-demo-{args.lang}.webm") if args.video else None
            result = run(page, url, args.lang, args.pace if args.pace is not None else (1500 if args.headed else 0), args.shots)
            result["video"] = str(video.stop()) if video else None
            browser.close()
    finally:
        if server:
            server.terminate()
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0 if not result["removed_present"] else 1


if __name__ == "__main__":
    sys.exit(main())
