"""site/assets/markdown.js in real Chromium: what it renders, and that hostile text stays inert.

The page is a tiny HTML file in tmp_path loading markdown.js as a classic
script from file://.  Hostile fixtures point at a local http.server; the
server's log and Playwright's request log must both stay empty of them.
"""

import http.server
import re
import shutil
import threading
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser

MARKDOWN_JS = [ROOT / "site" / "assets" / "markdown-inline.js", ROOT / "site" / "assets" / "markdown.js"]
MALICIOUS = sorted((ROOT / "tests" / "fixtures" / "malicious").glob("*.md"))
ALLOWED_TAGS = {"P", "H1", "H2", "H3", "H4", "H5", "H6", "EM", "STRONG", "DEL", "CODE", "PRE", "UL", "OL", "LI",
                "BLOCKQUOTE", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "A", "BUTTON", "BR", "HR", "MARK", "SPAN"}
ALLOWED_ATTRS = {"href", "title", "class", "data-cite", "type", "start", "style", "data-open", "tabindex", "colspan"}

PAGE = """<!doctype html><meta charset="utf-8"><title>markdown.js test</title>
<div id="out"></div><script src="markdown-inline.js"></script><script src="markdown.js"></script>"""

# Renders into #out (attached, so anything that could load would load) and reports the DOM.
RENDER = """([text, citeMax]) => {
  const out = document.getElementById('out');
  const cite = n => n <= citeMax ? {href: '#cite-' + n, title: 'Source ' + n} : null;
  out.replaceChildren(QuireMarkdown.render(text, {citations: cite}));
  const els = [...out.querySelectorAll('*')];
  return {
    html: out.innerHTML,
    text: out.textContent,
    tags: [...new Set(els.map(e => e.tagName))],
    attrs: els.flatMap(e => [...e.attributes].map(a => [e.tagName, a.name, a.value])),
  };
}"""


class RecordingHandler(http.server.BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"ok")

    do_POST = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def trap():
    """A local http server that records every request made to it."""
    RecordingHandler.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RecordingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def md_page(context, tmp_path, page_log):
    for js in MARKDOWN_JS:
        shutil.copy(js, tmp_path / js.name)
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    page = page_log.attach(context.new_page())
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((tmp_path / "index.html").as_uri())
    page.wait_for_function("() => window.QuireMarkdown && typeof QuireMarkdown.render === 'function'")
    page.requests = requests
    yield page
    assert not page_log.errors, "browser console had errors:\n" + "\n".join(page_log.errors)


def render(page, text, cite_max=3):
    return page.evaluate(RENDER, [text, cite_max])


# --- what it renders ------------------------------------------------------------------
CASES = [
    ("paragraph", "Hello *world* and **bold** and ~~gone~~",
     "<p>Hello <em>world</em> and <strong>bold</strong> and <del>gone</del></p>"),
    ("nested emphasis", "*a **b** c*", "<p><em>a <strong>b</strong> c</em></p>"),
    ("snake_case stays", "call my_var_name now", "<p>call my_var_name now</p>"),
    ("unclosed emphasis", "a *b c", "<p>a *b c</p>"),
    ("headings", "# One\n### Three ###", "<h1>One</h1><h3>Three</h3>"),
    ("inline code", "use `a[1] <b>` here", "<p>use <code>a[1] &lt;b&gt;</code> here</p>"),
    ("line break", "one\ntwo", "<p>one<br>two</p>"),
    ("fence", "```python\nx = [1]\n```\nafter",
     '<pre><code class="language-python">x = [1]</code></pre><p>after</p>'),
    ("unclosed fence while streaming", "Text\n```js\nlet a = 1;\nlet b",
     '<p>Text</p><pre data-open=""><code class="language-js">let a = 1;\nlet b</code></pre>'),
    ("bullet list", "- a\n- b", "<ul><li>a</li><li>b</li></ul>"),
    ("nested list", "- a\n  - a1\n  - a2\n- b", "<ul><li>a<ul><li>a1</li><li>a2</li></ul></li><li>b</li></ul>"),
    ("a different list after a blank stays tight", "1. a\n2. b\n\n- c", "<ol><li>a</li><li>b</li></ol><ul><li>c</li></ul>"),
    ("ordered list with start", "3. c\n4. d", '<ol start="3"><li>c</li><li>d</li></ol>'),
    ("ordered with nested bullets", "1. one\n   - x\n2. two", "<ol><li>one<ul><li>x</li></ul></li><li>two</li></ol>"),
    ("loose list", "- a\n\n- b", "<ul><li><p>a</p></li><li><p>b</p></li></ul>"),
    ("blockquote", "> quoted *text*\n> more", "<blockquote><p>quoted <em>text</em><br>more</p></blockquote>"),
    ("hr", "a\n\n---\n\nb", "<p>a</p><hr><p>b</p>"),
    ("table", "| A | B |\n|:--|--:|\n| 1 | `x\\|y` |\n| 2 |",
     '<table><thead><tr><th style="text-align: left;">A</th><th style="text-align: right;">B</th></tr></thead>'
     '<tbody><tr><td style="text-align: left;">1</td><td style="text-align: right;"><code>x|y</code></td></tr>'
     '<tr><td style="text-align: left;">2</td><td></td></tr></tbody></table>'),
    ("short row gets one spanning cell", "| A | B | C |\n|---|---|---|\n| 1 |",
     '<table><thead><tr><th>A</th><th>B</th><th>C</th></tr></thead><tbody><tr><td>1</td><td colspan="2"></td></tr></tbody></table>'),
    ("header row only is a paragraph", "| A | B |", "<p>| A | B |</p>"),
    ("http link is inert: label, then the address", "[site](https://example.org/a?b=1 \"T\")",
     '<p><span class="link">site <code class="link-url" tabindex="0" title="Link to example.org — not opened from here; copy the address to visit it">https://example.org/a?b=1</code></span></p>'),
    ("anchor link is inert too", "[see](#notes)",
     '<p><span class="link">see <code class="link-url" tabindex="0" title="Link to this page — not opened from here; copy the address to visit it">#notes</code></span></p>'),
    ("link whose label is its address shows it once", "[https://example.org/](https://example.org/)",
     '<p><span class="link"><code class="link-url" tabindex="0" title="Link to example.org — not opened from here; copy the address to visit it">https://example.org/</code></span></p>'),
    ("bare url", "see https://example.org/x.",
     '<p>see <code class="link-url" tabindex="0" title="Link to example.org — not opened from here; copy the address to visit it">https://example.org/x</code>.</p>'),
    ("autolink", "<https://example.org:8080/y>",
     '<p><code class="link-url" tabindex="0" title="Link to example.org:8080 — not opened from here; copy the address to visit it">https://example.org:8080/y</code></p>'),
    ("unicode host is shown as punycode", "[bank](https://bänk.example/)",
     '<p><span class="link">bank <code class="link-url" tabindex="0" title="Link to xn--bnk-qla.example — not opened from here; copy the address to visit it">https://xn--bnk-qla.example/</code></span></p>'),
    ("citation", "Cells divide [1].",
     '<p>Cells divide <a href="#cite-1" class="cite" data-cite="1" title="Source 1">[1]</a>.</p>'),
    ("citation list and pair", "A [2,3] B [1][3]",
     '<p>A <a href="#cite-2" class="cite" data-cite="2" title="Source 2">[2]</a>'
     '<a href="#cite-3" class="cite" data-cite="3" title="Source 3">[3]</a> B '
     '<a href="#cite-1" class="cite" data-cite="1" title="Source 1">[1]</a>'
     '<a href="#cite-3" class="cite" data-cite="3" title="Source 3">[3]</a></p>'),
    ("unknown citation stays text", "A [9] and [2023]", "<p>A [9] and [2023]</p>"),
    ("citation in code stays code", "`arr[1]`", "<p><code>arr[1]</code></p>"),
    ("image becomes text", "![a cat](https://example.org/cat.png)", "<p>[image: a cat]</p>"),
    ("raw html is text", "<b>hi</b> &amp;", "<p>&lt;b&gt;hi&lt;/b&gt; &amp;amp;</p>"),
    ("escapes", r"\*not em\* and \[1\]", "<p>*not em* and [1]</p>"),
    ("partial link while streaming", "see [the docs](https://exa", "<p>see [the docs](https://exa</p>"),
]


@pytest.mark.parametrize("text,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_renders(md_page, text, expected):
    assert render(md_page, text)["html"] == expected


def test_citation_without_href_is_a_button(md_page):
    html = md_page.evaluate("""() => {
        const out = document.getElementById('out');
        out.replaceChildren(QuireMarkdown.render('Fact [2].', {citations: n => ({title: 'p. 5'})}));
        return out.innerHTML; }""")
    assert html == '<p>Fact <button type="button" class="cite" data-cite="2" title="p. 5">[2]</button>.</p>'


def test_citation_callback_href_is_checked_too(md_page):
    html = md_page.evaluate("""() => {
        const out = document.getElementById('out');
        out.replaceChildren(QuireMarkdown.render('Fact [1].', {citations: n => ({href: 'javascript:alert(1)'})}));
        return out.innerHTML; }""")
    assert "javascript" not in html and 'data-cite="1"' in html and html.count("<button") == 1


HIGHLIGHTS = [
    ("Cells divide by mitosis.", [[0, 5], [6, 12]], "<mark>Cells</mark> <mark>divide</mark> by mitosis."),
    ("abc", [[1, 2], [0, 2], [5, 9], [2, 1]], "<mark>ab</mark>c"),
    ("<b>x</b>", [[3, 4]], "&lt;b&gt;<mark>x</mark>&lt;/b&gt;"),
    ("😀 cats", [[2, 6]], "😀 <mark>cats</mark>"),  # code-point offsets, as Python counts
]


@pytest.mark.parametrize("text,spans,expected", HIGHLIGHTS)
def test_highlight(md_page, text, spans, expected):
    html = md_page.evaluate("""([t, s]) => { const out = document.getElementById('out');
        out.replaceChildren(QuireMarkdown.highlight(t, s)); return out.innerHTML; }""", [text, spans])
    assert html == expected


def test_streaming_prefixes_never_throw(md_page):
    """Every prefix of a rich answer renders (what a stream shows chunk by chunk)."""
    text = ("# Title\n\nSome *em* and **strong** [1][2].\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
            "- x\n  - y\n\n> q\n\n```py\nprint('[1]')\n```\n[l](https://example.org) ![i](https://e.org/i.png)")
    count = md_page.evaluate("""(t) => { let n = 0;
        for (let i = 0; i <= t.length; i++) { QuireMarkdown.render(t.slice(0, i), {citations: n => ({href: '#c'})}); n++; }
        return n; }""", text)
    assert count == len(text) + 1


@pytest.mark.parametrize("text", ["[" * 5000, "*a " * 3000, "> " * 400 + "deep", "- " * 400 + "deep",
                                  "a " + "`" * 3000, "![" * 2000, "|" * 3000 + "\n|---|", "**" * 3000 + "x",
                                  "- " + " " * 3000 + "\u2028x", "```" + " " * 3000 + "`"],
                         ids=["brackets", "stars", "quotes", "lists", "ticks", "images", "pipes", "strongs",
                              "item spaces", "fence spaces"])
def test_pathological_input_renders(md_page, text):
    """Deep nesting falls back to text instead of overflowing the stack."""
    dom = render(md_page, text)
    assert dom["text"].replace("\n", "").strip()


# --- links are inert -----------------------------------------------------------------
def test_links_do_not_navigate_and_the_address_is_selectable(md_page, context):
    """Clicking a model's link opens nothing; Tab reaches the address and selects it for copying."""
    md_page.evaluate("""() => { const out = document.getElementById('out');
        out.replaceChildren(QuireMarkdown.render('Read [the paper](https://example.org/p) or https://evil.example/x now.'));
        window.__pops = 0; window.open = () => { window.__pops++; return null; }; }""")
    start = md_page.url
    pages = len(context.pages)
    for target in ("#out .link", "#out .link-url >> nth=0", "#out .link-url >> nth=1"):
        md_page.click(target)
    assert md_page.url == start and len(context.pages) == pages
    assert md_page.evaluate("window.__pops") == 0
    assert md_page.locator("#out a").count() == 0
    assert md_page.locator("#out .link-url").all_inner_texts() == ["https://example.org/p", "https://evil.example/x"]
    md_page.evaluate("""() => { const b = document.createElement('button'); b.textContent = 'before';
        document.getElementById('out').before(b); b.focus(); }""")
    md_page.keyboard.press("Tab")
    assert md_page.evaluate("document.activeElement.textContent") == "https://example.org/p"
    assert md_page.evaluate("String(getSelection())") == "https://example.org/p"
    md_page.keyboard.press("Tab")
    assert md_page.evaluate("String(getSelection())") == "https://evil.example/x"
    md_page.keyboard.press("Enter")  # nothing to activate
    assert md_page.url == start and len(context.pages) == pages


# --- streaming ------------------------------------------------------------------------
STREAMED = ("# Title\n\nSome *em* and **strong** [1][2] and a [link](https://example.org).\n\n"
            "a | b\n--|--\n1 | 2\n\n- x\n  - y\n\n- z\n\n> q\n> r\n\n```py\nprint('[1]')\n```\n"
            "Para\n---\n1. one\n2. two\n\nend ![i](https://e.org/i.png) `code`")


def test_streaming_matches_a_full_render_at_every_prefix(md_page):
    """The incremental renderer shows exactly what a full render of the same text shows."""
    bad = md_page.evaluate("""(t) => { const cite = n => ({href: '#c' + n});
        const box = document.createElement('div'), ref = document.createElement('div');
        const live = QuireMarkdown.stream(box, {citations: cite}); const bad = [];
        for (let i = 0; i <= t.length; i++) {
          live.update(t.slice(0, i));
          ref.replaceChildren(QuireMarkdown.render(t.slice(0, i), {citations: cite}));
          if (box.innerHTML !== ref.innerHTML) bad.push([i, box.innerHTML, ref.innerHTML]);
        }
        return bad.slice(0, 3); }""", STREAMED)
    assert bad == []


def test_streaming_keeps_finished_blocks(md_page):
    kept = md_page.evaluate(r"""() => { const box = document.createElement('div');
        const live = QuireMarkdown.stream(box, {});
        live.update('# Head\n\nFirst paragraph.\n\nSecond');
        const [h, p] = box.children;
        const redrawn = live.update('# Head\n\nFirst paragraph.\n\nSecond paragraph grows');
        return {same: box.children[0] === h && box.children[1] === p, redrawn, count: box.children.length}; }""")
    assert kept == {"same": True, "redrawn": 1, "count": 3}


# --- linear time ----------------------------------------------------------------------
SCALING = {
    "realistic": "Cells *divide* by **mitosis** [1]; see `code` and https://example.org/x.\n\n",
    "brackets": "[", "stars": "*a ", "strong runs": "**a ", "ticks": "a `", "images": "![", "link openers": "[a](",
    "titles": '[a](b "', "angles": "[a](<", "bare urls": "(http://\\", "closing parens": ")", "tildes": "~~a ",
    "underscores": "_a ", "nested emphasis": "*a **b ", "citations": "[1,", "lt": "<http://a",
    "heading spaces": "#" + " " * 50 + "x", "table": "| a | b |\n", "list": "- a\n  - b\n",
    "quotes": "> ", "blank lines": "- a\n\n", "wide table": "|a",
}


def test_rendering_is_linear(md_page):
    """Eight times the input takes at most ~8x the steps (a quadratic renderer takes 64x).

    Steps are the renderer's own count of loop turns and characters searched
    (QuireMarkdown.stats), so the test does not depend on how busy the machine is; a
    generous time ceiling catches what the count cannot see (a regex that backtracks).
    """
    got = md_page.evaluate(r"""(cases) => {
        const steps = (t) => { const s = QuireMarkdown.stats; const before = s.steps; const t0 = performance.now();
          QuireMarkdown.render(t, {citations: n => ({href: '#c'})});
          return [s.steps - before, performance.now() - t0]; };
        const out = {};
        for (const [name, unit] of Object.entries(cases)) {
          const make = n => name === 'wide table' ? '|a'.repeat(n / 12) + '\n' + '|-'.repeat(n / 12) + '\n' + '|\n'.repeat(n / 6)
                                                  : unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
          const [small] = steps(make(12000));
          const [big, ms] = steps(make(96000));
          out[name] = {small, big, ratio: big / small, ms};
        }
        return out; }""", SCALING)
    quadratic = {k: v for k, v in got.items() if v["ratio"] > 10}
    assert not quadratic, f"8x the input took over 10x the steps: {quadratic}"
    slow = {k: v for k, v in got.items() if v["ms"] > 3000}
    assert not slow, f"96,000 characters took over 3 s to render: {slow}"
    assert got["realistic"]["small"] >= 12000, got["realistic"]  # the count does count every character


# --- hostile input -------------------------------------------------------------------
def hostile(path: Path, port: int) -> str:
    return path.read_text(encoding="utf-8").replace("127.0.0.1:9/", f"127.0.0.1:{port}/")


def assert_inert(dom: dict):
    assert set(dom["tags"]) <= ALLOWED_TAGS, f"unexpected elements: {set(dom['tags']) - ALLOWED_TAGS}"
    for tag, name, value in dom["attrs"]:
        assert not name.startswith("on"), f"{tag} has {name}"
        assert name in ALLOWED_ATTRS, f"{tag} has attribute {name}={value!r}"
        if name == "href":
            assert re.match(r"^(https?://|#)", value), f"{tag} href {value!r}"
            assert not re.match(r"^\s*(javascript|data|vbscript):", value, re.I)
        if name == "style":
            assert re.fullmatch(r"text-align: (left|center|right);", value), value


def settle(page, port: int) -> None:
    """Everything the page was going to request has been issued once a later request arrives."""
    page.evaluate("(u) => fetch(u, {mode: 'no-cors'}).then(r => 0, e => 0)", f"http://127.0.0.1:{port}/sentinel")


@pytest.mark.parametrize("path", MALICIOUS, ids=lambda p: p.stem)
def test_hostile_markdown_is_inert(md_page, trap, path):
    port = trap.server_address[1]
    text = hostile(path, port)
    assert f"127.0.0.1:{port}/" in text
    dom = render(md_page, text)
    assert_inert(dom)
    for literal in re.findall(r"<(?:script|iframe|svg|img)\b", text):
        assert literal in dom["text"], f"{literal} should be shown as text"
    settle(md_page, port)
    assert RecordingHandler.hits == ["/sentinel"], f"requests reached the trap: {RecordingHandler.hits}"
    to_trap = [u for u in md_page.requests if f"127.0.0.1:{port}" in u]
    assert to_trap == [f"http://127.0.0.1:{port}/sentinel"]


def test_hostile_model_answer_streamed(md_page, trap):
    """A model that repeats the injection, rendered as it streams in, chunk by chunk."""
    port = trap.server_address[1]
    answer = "".join(hostile(p, port) for p in MALICIOUS)
    doms = md_page.evaluate("""(t) => { const out = document.getElementById('out'); const bad = [];
        for (let i = 0; i <= t.length; i += 7) {
          out.replaceChildren(QuireMarkdown.render(t.slice(0, i), {citations: n => ({href: '#c' + n})}));
          for (const e of out.querySelectorAll('img,script,iframe,svg,object,embed,link,style,meta,form,input,video,audio,base'))
            bad.push(e.tagName);
          for (const e of out.querySelectorAll('*'))
            for (const a of e.attributes) if (a.name.startsWith('on')) bad.push(a.name);
        }
        return bad; }""", answer)
    assert doms == []
    settle(md_page, port)
    assert RecordingHandler.hits == ["/sentinel"]


def test_the_trap_does_catch_a_loading_element(md_page, trap):
    """Control: the same page and trap do see a request when something does load."""
    port = trap.server_address[1]
    md_page.evaluate("""(u) => new Promise(done => { const i = document.createElement('img');
        i.onload = i.onerror = done; i.src = u; document.body.appendChild(i); })""",
                     f"http://127.0.0.1:{port}/control.png")
    settle(md_page, port)
    assert "/control.png" in RecordingHandler.hits
    assert any(u.endswith("/control.png") for u in md_page.requests)


def test_source_never_parses_html():
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", "".join(p.read_text(encoding="utf-8") for p in MARKDOWN_JS), flags=re.S)
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
                 "createContextualFragment", "DOMParser", "setAttribute('on", 'setAttribute("on', "srcdoc"):
        assert sink not in code, f"markdown.js uses {sink}"
    assert "import " not in code and "export " not in code, "markdown.js must stay a classic script"
