"""A kiosk demo driven by Playwright: the sample library, a question, a quiz.

    python3 tests/kiosk_demo.py                       # serves dist/ (building it when stale), headless
    python3 tests/kiosk_demo.py --headed --lang de    # full screen, in German, at a watchable pace
    python3 tests/kiosk_demo.py --url http://127.0.0.1:8765/

The page runs in kiosk mode (?kiosk=1): no destructive controls, larger text.  Every step uses the
page's stable data-testid attributes and waits on the page's own signals, never on a timer (the
--pace pause only slows the demo down for people watching).  tests/test_kiosk_browser.py runs it.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("QUIRE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
DESTRUCTIVE = ["erase-all", "remove-source", "chat-delete", "set-delete", "sample-remove", "vault-import"]


def answered(page, count: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=msg-assistant]').length === {count} "
                           "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")


def run(page, url: str, lang: str = "en", pace_ms: int = 0) -> dict:
    """The demo on an open page; returns what it showed: {question, answer, quiz_score, destructive_visible}."""
    def pause():
        if pace_ms:
            page.wait_for_timeout(pace_ms)

    page.goto(f"{url.split('?')[0].split('#')[0]}?kiosk=1&lang={lang}#library")
    page.wait_for_function("() => window.quire && window.quire.ready")
    page.evaluate("async () => { await quire.ready }")
    assert page.evaluate("quire.kiosk"), "the page did not enter kiosk mode"

    # 1. The sample library, in one click.
    if page.get_by_test_id("sample-card").count() == 0:
        page.get_by_test_id("sample-load").click()
    page.get_by_test_id("sample-card").wait_for()
    pause()

    # 2. A suggested question, answered from the documents (with or without a model server).
    question = page.get_by_test_id("sample-question").first
    asked = question.inner_text()
    question.click()
    answered(page, 1)
    answer = page.locator("[data-testid=msg-assistant]").last.inner_text()
    pause()

    # 3. A five-question quiz: answer each, then see the score.
    page.evaluate("quire.showView('library')")
    page.get_by_test_id("sample-quiz").click()
    page.get_by_test_id("player-title").wait_for()
    while page.get_by_test_id("quiz-score").count() == 0:
        page.locator("[data-testid=quiz-option]:not([disabled])").first.click()
        page.get_by_test_id("quiz-next").wait_for(state="visible")
        pause()
        page.get_by_test_id("quiz-next").click()
        page.wait_for_function("() => document.querySelector('[data-testid=quiz-score]') || "
                               "document.querySelector('[data-testid=quiz-option]:not([disabled])')")
    score = page.get_by_test_id("quiz-score").inner_text()
    pause()

    visible = page.evaluate("""(ids) => { const shown = [];
        for (const view of ['library', 'ask', 'study', 'privacy']) { quire.showView(view);
          for (const id of ids) for (const el of document.querySelectorAll(`[data-testid=${id}]`))
            if (el.checkVisibility()) shown.push(view + ':' + id); }
        quire.showView('study'); return shown; }""", DESTRUCTIVE)
    return {"question": asked, "answer": answer, "quiz_score": score, "destructive_visible": visible}


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
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    server, url = (None, args.url) if args.url else serve_dist()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=not args.headed,
                                        args=ARGS + (["--kiosk", "--start-fullscreen"] if args.headed else []))
            page = browser.new_page(viewport=None if args.headed else {"width": 1280, "height": 800})
            # Each step waits as long as the machine needs (a quiz on a busy 2-core machine, with the
            # study tools loading first, took more than Playwright's default 30 s); whoever runs the
            # demo bounds it (the test: its subprocess timeout).
            page.set_default_timeout(0)
            result = run(page, url, args.lang, args.pace if args.pace is not None else (1500 if args.headed else 0))
            browser.close()
    finally:
        if server:
            server.terminate()
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0 if not result["destructive_visible"] else 1


if __name__ == "__main__":
    sys.exit(main())
