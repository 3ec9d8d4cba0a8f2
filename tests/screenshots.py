"""README screenshots of the first run, in English and German, made from the real page.

    python3 tests/screenshots.py                 # serves dist/ (building it when stale), writes tests/screens/
    python3 tests/screenshots.py --url http://127.0.0.1:8765/ --out /tmp/screens

Each language gets two pictures: the welcome card on an empty library, and the library after one
click on "Try it with a sample library".  A fresh browser profile per language, so the library is empty.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kiosk_demo import ARGS, CHROMIUM, serve_dist  # noqa: E402

OUT = Path(__file__).resolve().parent / "screens"
SIZE = {"width": 1280, "height": 800}


def shoot(browser, url: str, lang: str, out: Path) -> list[Path]:
    context = browser.new_context(viewport=SIZE, locale=lang, color_scheme="light")
    page = context.new_page()
    page.goto(f"{url.split('?')[0].split('#')[0]}?lang={lang}#library")
    page.wait_for_function("() => window.quire && window.quire.ready")
    page.evaluate("async () => { await quire.ready }")
    page.get_by_test_id("welcome").wait_for()
    first = out / f"first-run-{lang}.png"
    page.screenshot(path=str(first))
    page.get_by_test_id("sample-load").click()
    page.get_by_test_id("sample-card").wait_for()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=sample-tag]').length === 2")
    # The tab embeds the sample in the background (no server): the card's last suggestion says it is
    # found by meaning once that is done.
    page.wait_for_selector("[data-testid=sample-meaning-note][data-state=ready]", timeout=600_000)
    # Toasts come and go (a badge may arrive a moment later): keep them out of the picture.
    page.evaluate("() => { document.querySelector('[data-testid=toasts]').style.display = 'none'; }")
    sample = out / f"sample-library-{lang}.png"
    page.screenshot(path=str(sample))
    context.close()
    return [first, sample]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="an already running Quire (default: serve dist/ on a free port)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    server, url = (None, args.url) if args.url else serve_dist()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for lang in ("en", "de"):
                for path in shoot(browser, url, lang, args.out):
                    print(path)
            browser.close()
    finally:
        if server:
            server.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
