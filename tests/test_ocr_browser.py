"""OCR in real Chromium (issue 8): scanned PDF pages become text over http and from file://.

The bundle comes from the real build (``build.main``), so these tests also check
that build.py packs the OCR assets.  OCR needs no Python engine, only the loader
``quire.loadAsset`` from boot.js, so the tests do not wait for Pyodide.
"""

import base64
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, copy_dist

sys.path.insert(0, str(ROOT))
import build  # noqa: E402
from quire_build.ocr import ocr_asset_names  # noqa: E402
from quire_build.pack import pack_name  # noqa: E402

browser = pytest.mark.browser  # the asset-name and CER tests below need no browser

SCANS = "ocrmypdf-scans"
MAX_CER = 0.03  # issue 8; 0.8% was measured on linn.pdf


# --------------------------------------------------------------------------
# Character error rate
# --------------------------------------------------------------------------

def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces: 'a \\n\\n b ' -> 'a b'."""
    return " ".join(text.split())


def levenshtein_reference(a: str, b: str) -> int:
    """The textbook dynamic programme, one row at a time (slow; the cross-check)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def levenshtein(a: str, b: str) -> int:
    """Edit distance with numpy rows: 'kitten' -> 'sitting' is 3 (k->s, e->i, +g).

    Deletions and substitutions come from the previous row in one vector step;
    insertions chain along the row, cur[j] = min(cur[j], cur[j-1] + 1), which is a
    running minimum of cur[k] - k, plus j.
    """
    if not a or not b:
        return len(a) + len(b)
    codes_b = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    offsets = np.arange(len(b) + 1)
    prev = offsets.copy()
    for i, ca in enumerate(a, 1):
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (codes_b != ord(ca)))
        prev = np.minimum.accumulate(cur - offsets) + offsets
    return int(prev[-1])


def cer(recognised: str, truth: str) -> float:
    """Edits needed to turn the recognised text into the truth, per character of truth."""
    truth = normalise(truth)
    return levenshtein(normalise(recognised), truth) / max(1, len(truth))


@pytest.mark.parametrize("a, b, distance", [
    ("kitten", "sitting", 3),
    ("", "abc", 3),
    ("abc", "", 3),
    ("same", "same", 0),
    ("flaw", "lawn", 2),
    ("Käse", "Kase", 1),
    ("ab", "ba", 2),
])
def test_levenshtein_table(a, b, distance):
    assert levenshtein(a, b) == distance == levenshtein_reference(a, b)


def test_levenshtein_agrees_with_the_reference_on_random_strings():
    rng = np.random.default_rng(8)
    for _ in range(200):
        a = "".join(rng.choice(list("abcü "), size=rng.integers(0, 30)))
        b = "".join(rng.choice(list("abcü "), size=rng.integers(0, 30)))
        assert levenshtein(a, b) == levenshtein_reference(a, b)


def test_ocr_js_names_the_assets_build_py_packs():
    names = ocr_asset_names(build.load_pins())
    source = (ROOT / "site" / "assets" / "ocr.js").read_text(encoding="utf-8")
    block = re.search(r"var FILES = \{(.*?)\};", source, re.S).group(1)
    in_js = dict(re.findall(r"(\w+): '([^']+)'", block))
    assert in_js == names


# --------------------------------------------------------------------------
# Driving QuireOCR in the page
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def ocr_dist(built_dist) -> Path:
    bundle = (built_dist / "assets" / "bundle.js").read_text(encoding="utf-8")
    assets = json.loads(bundle.split("=", 1)[1].rstrip().rstrip(";"))["assets"]
    missing = [n for n in ocr_asset_names(build.load_pins()).values() if n not in assets]
    if missing:
        pytest.fail(f"the build has no OCR assets {missing}: wire ocr_assets()/fetch_ocr() into build.py's assemble()/main()")
    return built_dist


def open_quire(context, url, page_log):
    """Open the bundle and wait for the asset loader; add ocr.js if index.html does not load it yet."""
    page = page_log.attach(context.new_page())
    page.set_default_timeout(240_000)
    page.goto(url)
    page.wait_for_function("() => window.quire && typeof window.quire.loadAsset === 'function'")
    if not page.evaluate("!!window.QuireOCR"):
        page.add_script_tag(url="assets/ocr.js")
    page.wait_for_function("() => !!window.QuireOCR")
    return page


def pdf_b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


OCR_PDF = """async ([b64, pages, opts]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const progress = [];
  const results = await QuireOCR.ocrPdf(bytes, pages, Object.assign({}, opts, { onProgress: p => progress.push(p) }));
  return { results, progress };
}"""


def ocr_pdf(page, path: Path, pages=None, lang="eng") -> dict:
    """QuireOCR.ocrPdf on a PDF from disk: {results: [{page, text, confidence}], progress: [...]}."""
    return page.evaluate(OCR_PDF, [pdf_b64(path), pages, {"lang": lang}])


def assert_clean(page_log):
    assert not page_log.errors, "browser console had errors:\n" + "\n".join(page_log.errors)


# --------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------

def check_linn(page, pdf_dir):
    out = ocr_pdf(page, pdf_dir / SCANS / "linn.pdf")
    [result] = out["results"]
    truth = (pdf_dir / SCANS / "linn.txt").read_text(encoding="utf-8")
    rate = cer(result["text"], truth)
    print(f"linn.pdf: CER {rate:.2%}, confidence {result['confidence']}")
    assert rate < MAX_CER
    assert result["page"] == 1 and 50 < result["confidence"] <= 100
    assert out["progress"][0]["done"] == 0 and out["progress"][-1] == {"page": 1, "done": 1, "total": 1, "etaSeconds": 0}


@browser
def test_two_column_scan_over_http(context, ocr_dist, serve, pdf_dir, page_log):
    page = open_quire(context, serve(ocr_dist).url, page_log)
    assert page.evaluate("QuireOCR.available()") is True
    check_linn(page, pdf_dir)
    assert_clean(page_log)


@browser
def test_two_column_scan_from_disk(context, ocr_dist, tmp_path, pdf_dir, page_log):
    stick = copy_dist(ocr_dist, tmp_path / "usb stick" / "Quire")
    page = open_quire(context, (stick / "index.html").as_uri(), page_log)
    check_linn(page, pdf_dir)
    assert_clean(page_log)


@browser
def test_render_then_recognize_an_illustrated_page(context, ocr_dist, serve, pdf_dir, page_log):
    """c02-22.pdf (Huckleberry Finn, chapter II, with a drawing): the two halves of ocrPdf, English+German."""
    page = open_quire(context, serve(ocr_dist).url, page_log)
    out = page.evaluate("""async (b64) => {
      const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
      const images = await QuireOCR.renderPdfPages(bytes, [1], { dpi: 300 });
      const png = Array.from(images[0].png.slice(0, 8));
      const read = await QuireOCR.recognize(images, { lang: 'eng+deu' });  // both language files load
      return { width: images[0].width, height: images[0].height, png, read };
    }""", pdf_b64(pdf_dir / SCANS / "c02-22.pdf"))
    # 384 x 470.88 pt at 300 dpi
    assert (out["width"], out["height"]) == (1600, 1962)
    assert out["png"] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    [result] = out["read"]
    text = normalise(result["text"]).lower()
    assert "there was a light behind him" in text
    assert "miss watson" in text
    assert_clean(page_log)


@browser
def test_cancel_keeps_finished_pages_and_resume_reads_the_rest(context, ocr_dist, tmp_path, pdf_dir, page_log):
    """From disk: cancel once the first page is read; the page is kept, and the rest reads later."""
    stick = copy_dist(ocr_dist, tmp_path / "Quire")
    page = open_quire(context, (stick / "index.html").as_uri(), page_log)
    out = page.evaluate("""async (b64) => {
      const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
      const stop = new AbortController();
      const seen = [];
      const t0 = performance.now();
      let error = null;
      try {
        await QuireOCR.ocrPdf(bytes, [1, 3, 5], { signal: stop.signal, onPage: r => { seen.push(r.page); stop.abort(); } });
      } catch (err) { error = { name: err.name, kind: err.kind, kept: err.results.map(r => r.page), text: err.results[0].text }; }
      const stoppedAfter = performance.now() - t0;
      const rest = await QuireOCR.ocrPdf(bytes, [3], {});
      return { seen, error, stoppedAfter, rest };
    }""", pdf_b64(pdf_dir / SCANS / "multipage.pdf"))
    assert out["error"]["name"] == "AbortError" and out["error"]["kind"] == "aborted"
    assert out["error"]["kept"] == [1] == out["seen"]
    assert "light behind him" in normalise(out["error"]["text"]).lower()  # page 1 is c02-22's scan
    assert [r["page"] for r in out["rest"]] == [3] and out["rest"][0]["text"].strip()
    assert_clean(page_log)


@browser
def test_a_bundle_built_without_ocr_says_so(context, lean_dist, serve, page_log):
    dist = lean_dist  # built with --no-ocr (tests/conftest.py)
    assert not list((dist / "assets" / "pack").glob("ocr/*"))
    page = open_quire(context, serve(dist).url, page_log)
    out = page.evaluate("""() => QuireOCR.ocrPdf(new Uint8Array(8), null, {}).then(
        () => 'no error', err => ({ kind: err.kind, message: err.message }))""")
    assert page.evaluate("QuireOCR.available()") is False
    assert out["kind"] == "not-included" and "OCR is not included in this bundle" in out["message"]
    assert_clean(page_log)


@browser
def test_missing_language_file_and_unknown_language_fail_fast(context, ocr_dist, tmp_path, page_log):
    """tesseract.js hangs on a missing language file; QuireOCR must name the file instead."""
    stick = copy_dist(ocr_dist, tmp_path / "Quire")
    eng = ocr_asset_names(build.load_pins())["eng"]
    (stick / pack_name(eng)).unlink()
    page = open_quire(context, (stick / "index.html").as_uri(), page_log)
    out = page.evaluate("""async () => {
      const canvas = document.createElement('canvas');
      canvas.width = canvas.height = 32;
      const png = await new Promise(r => canvas.toBlob(r, 'image/png'));
      const fail = p => p.then(() => 'no error', err => ({ kind: err.kind, message: err.message }));
      const missing = await fail(QuireOCR.recognize([png], { lang: 'eng' }));
      const unknown = await fail(QuireOCR.recognize([png], { lang: 'fra' }));
      return { missing, unknown };  // it answers at all: a missing file fails at once, not at a timeout
    }""")
    assert out["missing"]["kind"] == "missing" and eng in out["missing"]["message"]
    assert out["unknown"]["kind"] == "language" and "eng, deu or eng+deu" in out["unknown"]["message"]
    # The browser reports the missing script itself; nothing else may go wrong.
    assert all("ERR_FILE_NOT_FOUND" in e for e in page_log.errors), page_log.errors
