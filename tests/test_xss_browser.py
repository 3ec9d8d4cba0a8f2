"""Every XSS vector of a public sanitizer test corpus, injected everywhere strangers' text reaches.

The vectors are DOMPurify's own test fixtures (tests/fixtures/xss/SOURCE.md).  They go in
as document text (Markdown, plain text and HTML files, then searched and every passage
opened), as file names and categories (the library, the chat's scope pickers), and as a
model's answers, thinking and tool-call arguments (through the Ollama stub), all in a few
page loads.  A canary catches execution: alert/confirm/prompt/print/open are replaced,
JavaScript dialogs and CSP violations are recorded, and the DOM is audited for elements
and attributes that could run or load something.  A control test runs the same canary on
a page that really is injected, so the detector is known to work.
"""

import json
import re

import pytest

from conftest import ROOT, wait_ready
from ollama_server import OllamaStub

pytestmark = pytest.mark.browser

VECTORS = [v["payload"] for v in json.loads((ROOT / "tests" / "fixtures" / "xss" / "dompurify-vectors.json").read_text())]

CANARY = """(() => {
  window.__xss = [];
  const hit = (what) => function () { window.__xss.push(what + ': ' + Array.from(arguments).join(' ').slice(0, 120)); };
  for (const name of ['alert', 'confirm', 'prompt', 'print', 'open']) {
    Object.defineProperty(window, name, {value: hit(name), writable: false, configurable: false});
  }
  document.addEventListener('securitypolicyviolation', e =>
    window.__xss.push('csp: ' + e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')), true);
})();"""

# Everything that could run, load, submit or restyle, anywhere in the page or in a container
# that shows strangers' text.
AUDIT = r"""(containers) => {
  const bad = [];
  const show = e => e.outerHTML.slice(0, 160);
  const urlAttrs = ['href', 'src', 'srcset', 'action', 'formaction', 'xlink:href', 'data', 'poster', 'background', 'srcdoc', 'ping'];
  for (const e of document.querySelectorAll('*')) {
    const tag = e.localName;
    if (['iframe', 'frame', 'object', 'embed', 'base', 'applet', 'portal'].includes(tag)) bad.push(show(e));
    if (tag === 'script' && !(e.src && new URL(e.src, location.href).origin === location.origin)) bad.push(show(e));
    for (const a of e.attributes) {
      const name = a.name.toLowerCase();
      const value = a.value.replace(/[\s\x00-\x1f]/g, '').toLowerCase();
      if (name.startsWith('on')) bad.push(name + ' on ' + show(e));
      if (urlAttrs.includes(name) && /^(javascript|data|vbscript):/.test(value)) bad.push(name + '=' + value.slice(0, 60));
      if (urlAttrs.includes(name) && name !== 'href' && /^(https?:)?\/\//.test(value) && !value.startsWith(location.origin.toLowerCase()))
        bad.push('remote ' + name + '=' + value.slice(0, 60));
    }
  }
  const forbidden = 'script,iframe,object,embed,base,form,meta,link,style,svg,math,img,image,video,audio,source,picture,template,' +
                    'frame,frameset,marquee,isindex,keygen,a[href]:not([data-cite]):not([href^="#"])';
  // Quire's own icons are SVG: one is allowed only when it is exactly what QuireIcons draws
  // for its name (same markup, byte for byte), so an injected <svg data-icon> still counts.
  const ownIcon = e => e.localName === 'svg' && window.QuireIcons && e.dataset.icon &&
                       QuireIcons.names.includes(e.dataset.icon) &&
                       e.outerHTML === QuireIcons.svg(e.dataset.icon).outerHTML;
  let seen = 0;
  for (const sel of containers) {
    for (const root of document.querySelectorAll(sel)) {
      seen++;
      for (const e of root.querySelectorAll(forbidden)) {
        if (ownIcon(e) || (e.closest('svg') && ownIcon(e.closest('svg')))) continue;
        bad.push('in ' + sel + ': ' + show(e));
      }
    }
  }
  return {bad, seen, canary: window.__xss.slice()};
}"""


# Init scripts run outside the page's CSP (which forbids eval), so the audit is installed there.
CANARY += f"\nwindow.__audit = {AUDIT};"
AUDIT_CALL = "(containers) => window.__audit(containers)"


def vectors_named_by(findings):
    """The vectors an offending element most likely came from (same tag and attribute names)."""
    named = set()
    for finding in findings:
        words = set(re.findall(r"[a-z][a-z-]+", finding.lower())) - {"in", "on", "data", "testid", "class"}
        for v in VECTORS:
            if words and sum(w in v.lower() for w in words) >= min(2, len(words)):
                named.add(v)
    return sorted(named)


def assert_clean(result, what):
    problems = result["bad"] + result["canary"]
    assert not problems, (f"{what}: {len(problems)} findings, e.g. {problems[:10]}\n"
                          f"vectors that may have got through: {vectors_named_by(problems)[:20]}")


def open_quire(context, url, page_log, llm_url=None):
    page = page_log.attach(context.new_page())
    page.set_default_timeout(120_000)
    page.add_init_script(CANARY)
    if llm_url:
        page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(llm_url)})")
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    page.goto(url)
    wait_ready(page)
    return page


def test_the_canary_catches_real_injection(context, tmp_path, page_log):
    """Control: parse a few vectors as HTML on purpose; the canary and the audit see it."""
    (tmp_path / "index.html").write_text("<!doctype html><title>control</title><div id=out></div>")
    page = context.new_page()
    page.add_init_script(CANARY)
    page.goto((tmp_path / "index.html").as_uri())
    page.evaluate("""() => { document.getElementById('out').innerHTML =
        '<img src=x onerror="alert(1)"><a href="javascript:alert(2)">x</a><iframe src="data:text/html,x"></iframe>'; }""")
    page.wait_for_function("() => window.__xss.length > 0")
    result = page.evaluate(AUDIT_CALL, ["#out"])
    assert any(c.startswith("alert") for c in result["canary"])
    assert any("onerror" in b for b in result["bad"]) and any("javascript:" in b for b in result["bad"])
    assert any("iframe" in b for b in result["bad"])


def test_the_audit_allows_only_quires_own_icons(context, tmp_path):
    """Control: a real QuireIcons icon passes; an <svg> that only claims to be one is caught."""
    (tmp_path / "icons.js").write_bytes((ROOT / "site" / "assets" / "icons.js").read_bytes())
    (tmp_path / "index.html").write_text("<!doctype html><title>icons</title><div id=out></div><script src=icons.js></script>")
    page = context.new_page()
    page.add_init_script(CANARY)
    page.goto((tmp_path / "index.html").as_uri())
    page.evaluate("() => document.getElementById('out').append(QuireIcons.svg('close'), QuireIcons.svg('🔥'))")
    assert page.evaluate(AUDIT_CALL, ["#out"])["bad"] == []
    fakes = ['<svg class="ico ico-close" data-icon="close"><path d="M6 6l12 12 M18 6L6 18"></path></svg>',
             '<svg data-icon="close" onload="alert(1)"></svg>',
             '<svg data-icon="nope"></svg>']
    for fake in fakes:
        page.evaluate("(html) => { const o = document.getElementById('out'); o.innerHTML = ''; "
                      "o.append(QuireIcons.svg('close')); o.insertAdjacentHTML('beforeend', html); }", fake)
        bad = page.evaluate(AUDIT_CALL, ["#out"])["bad"]
        assert any(b.startswith("in #out: <svg") for b in bad), (fake, bad)


def test_vectors_as_documents_file_names_and_categories(context, built_dist, serve, page_log):
    page = open_quire(context, serve(built_dist).url, page_log)
    sections = "\n\n".join(f"## Vector {i}\n\n{v}" for i, v in enumerate(VECTORS))
    docs = [
        {"name": "vectors.md", "text": sections},
        {"name": "vectors.txt", "text": "\n\n".join(VECTORS)},
        {"name": "vectors.html", "text": "<!doctype html><title>vectors</title><body>" + "<hr>".join(VECTORS)},
    ]
    # Every vector as one file's name and as that file's category (the engine keeps a name's last
    # path part, "a/b.txt" -> "b.txt"; categories stay whole).  They go in through the engine call
    # that quire.stage() makes per file, with one library-changed event at the end as stage() sends
    # for a batch.  These files stay staged: the library lists staged files too, with their categories.
    names = [{"name": v + ".txt", "text": f"vector {i} as a file name", "category": v} for i, v in enumerate(VECTORS)]
    page.evaluate("""async ([docs, names]) => {
        for (const d of docs) await quire.stage({name: d.name, text: d.text}, {category: 'Vectors'});
        await quire.train();
        for (const n of names) await quire._call('stageText', [n.name, n.text, n.category]);
        document.dispatchEvent(new CustomEvent('quire:library-changed'));
    }""", [docs, names])
    sources = page.evaluate("quire.sources()")
    assert len(sources) == len(docs) + len(names), [s["name"] for s in sources][:5]
    # (a vector that is only white space is no category: that file has none)
    categories = page.evaluate("quire.categories()")
    assert {n["category"].strip() for n in names} - {""} <= set(categories)

    # the library: every name and category on screen
    page.get_by_test_id("nav-library").click()
    page.wait_for_function("(n) => document.querySelectorAll('[data-testid=source-row]').length >= n", arg=len(sources))
    assert_clean(page.evaluate(AUDIT_CALL, ["[data-testid=source-list]"]), "library")

    # the chat's scope picker lists every category
    page.get_by_test_id("nav-ask").click()
    page.wait_for_function("(n) => document.querySelectorAll('[data-testid=chat-scope] option').length > n", arg=len(categories))
    page.get_by_test_id("chat-scope").select_option(index=2)
    page.wait_for_function("() => document.querySelector('[data-testid=chat-scope-label]').textContent.includes('category')")
    assert_clean(page.evaluate(AUDIT_CALL, ["[data-testid=chat-scope]", "[data-testid=chat-scope-label]"]), "chat scope")

    # search: hits for words the vectors share, then every passage of the vector documents opened
    page.get_by_test_id("nav-search").click()
    for query in ("alert", "script src", "img onerror", "svg", "href javascript", "style", "iframe", "form action", "math", "vector"):
        page.get_by_test_id("search-input").fill(query)
        page.get_by_test_id("search-button").click()
        page.wait_for_function("() => document.querySelector('[data-testid=search-hit]') || "
                               "document.querySelector('[data-testid=search-note]').textContent")
        assert_clean(page.evaluate(AUDIT_CALL, ["[data-testid=search-results]"]), f"search for {query!r}")
    opened = page.evaluate("""async (ids) => {
        const check = window.__audit; const found = []; let count = 0;
        for (const id of ids) {
          for (const chunk of await quire.chunks(id)) {
            await QuirePassage.open(chunk.chunk_id, 'alert');
            const dialog = document.querySelector('[data-testid=passage-dialog]');
            const r = check(['[data-testid=passage-dialog]']);
            found.push(...r.bad, ...r.canary);
            if (dialog) { dialog.close(); dialog.remove(); count++; }
          }
        }
        return {count, found}; }""", [s["id"] for s in sources if s["name"].startswith("vectors.")])
    assert opened["count"] > 3, opened
    assert not opened["found"], f"passages: {opened['found'][:10]}\nvectors: {vectors_named_by(opened['found'])[:20]}"
    assert_clean(page.evaluate(AUDIT_CALL, []), "whole page")
    assert not page.dialogs, page.dialogs
    assert not page_log.errors, page_log.errors


def test_vectors_as_model_answers_thinking_and_tool_calls(context, built_dist, serve, page_log):
    with OllamaStub() as stub:
        page = open_quire(context, serve(built_dist).url, page_log, stub.url)
        page.evaluate("""async (url) => {
            await quire.stage({name: 'Biology.md', text: '# Cells\\nMitochondria make ATP for the cell.'});
            await quire.train();
            await quire.saveSettings({url, chat_model: 'qwen3:4b'}); }""", stub.url)
        # round 1: every vector as a calculator expression; round 2: as unknown tools' names and arguments
        stub.enqueue_chat("", thinking=VECTORS, tool_calls=[{"name": "calculator", "arguments": {"expression": v}} for v in VECTORS])
        stub.enqueue_chat("", tool_calls=[{"name": v[:200], "arguments": {"q": v}} for v in VECTORS])
        # the answer: every vector streamed in small frames, as Markdown paragraphs, list items and a table
        answer = "\n\n".join(VECTORS) + "\n\n" + "\n".join(f"- {v}" for v in VECTORS) + "\n\n| a | b |\n|---|---|\n" + \
            "\n".join(f"| {v} | [x]({v}) |" for v in VECTORS)
        frames = [answer[i:i + 40] for i in range(0, len(answer), 40)]
        stub.enqueue_chat(frames, thinking=VECTORS)
        page.get_by_test_id("nav-ask").click()
        page.get_by_test_id("chat-input").fill("Tell me about cells")
        page.get_by_test_id("chat-ask").click()
        page.wait_for_function("() => document.querySelectorAll('[data-testid=msg-assistant]').length === 1 "
                               "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")
        box = page.get_by_test_id("msg-assistant").last
        assert box.get_by_test_id("tool-call").count() >= 2 * len(VECTORS) * 0.9
        shown = box.get_by_test_id("answer").inner_text()
        assert "onerror" in shown and "<script" in shown.lower(), "the vectors should be shown as text"
        containers = ["[data-testid=answer]", "[data-testid=thinking-text]", "[data-testid=tool-events]", "[data-testid=chat-messages]"]
        assert_clean(page.evaluate(AUDIT_CALL, containers), "model answer")
        # and once more as the stored chat, rendered from scratch
        page.reload()
        wait_ready(page)
        page.get_by_test_id("nav-ask").click()
        page.wait_for_function("() => document.querySelector('[data-testid=msg-assistant] [data-testid=answer]')?.textContent.length > 1000")
        assert_clean(page.evaluate(AUDIT_CALL, containers), "stored chat")
        assert not page.dialogs, page.dialogs
