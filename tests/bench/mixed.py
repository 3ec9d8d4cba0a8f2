"""Conversational questions over a mixed English/German library: hit@1, hit@3, MRR.

    python tests/bench/mixed.py [--out FILE] [--no-browser] [--hybrid]

The library is four real PDFs from tests/fixtures/pdfs (two English ACL papers, an
English Federal Register notice, a German 117-page math script), trained through
Quire on CPython.  Each question is a full sentence with many function words, in
English or German, with the pages that answer it (checked by reading them; page =
Quire's own page location).  A hit is a passage on one of those pages of the right
source.  "foreign top-3" counts passages in the top 3 from another source whose
language differs from the question's: the failure this benchmark exists for (German
math passages first for an English question because of "is", "it", "in").

Every query-stopword mode of ``quire.retrieval.query`` is measured on the same index
on CPython; then the built bundle in headless Chromium stages the same PDFs through
``window.quire.stage``/``train`` and asks every question through ``window.quire.search``
(the default mode only: the page has no switch for it).

``--hybrid`` adds rows with multilingual-e5-small vectors from the cache that
``e5_cache.py --mixed`` fills (CPython only), one per fusion method.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))

from quire.retrieval.query import MODES  # noqa: E402

PDFS = ROOT / "tests" / "fixtures" / "pdfs"
SOURCES = {
    "N18-3011.pdf": "acl-papers/N18-3011.pdf",  # Construction of the Literature Graph in Semantic Scholar
    "2020.acl-main.207.pdf": "acl-papers/2020.acl-main.207.pdf",  # SPECTER
    "federal-register-2020-17221.pdf": "pdfplumber-public/federal-register-2020-17221.pdf",  # FAA 737 MAX AD
    "GeoTopo-komprimiert.pdf": "py-pdf-sample-files/GeoTopo-komprimiert.pdf",  # German geometry/topology script
}
LANGUAGE = {"GeoTopo-komprimiert.pdf": "de"}  # the rest are English

N18, SPECTER, FAA, GEO = SOURCES
# (question, question language, source, pages that answer it)
QUESTIONS = [
    ("What is SPECTER and how is it trained?", "en", SPECTER, {1, 2, 3, 5}),
    ("How are the hard negative papers chosen when the model is trained?", "en", SPECTER, {3}),
    ("What loss function is used with the query paper, the positive paper and the negative paper?", "en", SPECTER, {2, 3}),
    ("On which GPU was the model trained and for how many epochs did it run?", "en", SPECTER, {5}),
    ("How many training triples were created from the Semantic Scholar corpus?", "en", SPECTER, {5}),
    ("Does the model need any citation information at inference time for a new paper?", "en", SPECTER, {1, 3}),
    ("What is SCIDOCS and what kinds of tasks does it contain?", "en", SPECTER, {1, 3}),
    ("What does the literature graph consist of and how many nodes does it have?", "en", N18, {1}),
    ("Which library is used to turn each page of a PDF into a sequence of tokens?", "en", N18, {3}),
    ("How does the ScienceParse system get the title and the authors out of a paper?", "en", N18, {3}),
    ("How well did the metadata extraction do on the held-out set from PubMed Central?", "en", N18, {4}),
    ("How is the token embedding built for the entity mention extraction model?", "en", N18, {5}),
    ("How are the candidate entities for a mention ranked when it is linked to the knowledge base?", "en", N18, {6}),
    ("Why is the limited coverage of the knowledge base a problem for scientific concepts?", "en", N18, {7}),
    ("Which airplanes does this proposed airworthiness directive apply to?", "en", FAA, {1, 5, 6}),
    ("By when must the FAA receive comments on this proposed AD?", "en", FAA, {1}),
    ("What do the two flight control computers on the 737 MAX do?", "en", FAA, {2}),
    ("What is the pitch attitude of an airplane?", "en", FAA, {2}),
    ("When is the runaway stabilizer checklist used and what would change in it?", "en", FAA, {4}),
    ("How much does the AOA sensor system test cost for each airplane?", "en", FAA, {6}),
    ("Where do I send a request for an alternative method of compliance?", "en", FAA, {14, 15}),
    ("What happens if the flight control system functions are inoperative, is there a minimum equipment list?", "en", FAA, {13}),
    ("Was ist ein topologischer Raum und welche Eigenschaften muss er haben?", "de", GEO, {6}),
    ("Wann heißt eine Abbildung d eine Metrik auf einer Menge?", "de", GEO, {10}),
    ("Wann ist ein topologischer Raum hausdorffsch?", "de", GEO, {12}),
    ("Was ist ein Homöomorphismus zwischen zwei topologischen Räumen?", "de", GEO, {13}),
    ("Wann nennt man einen topologischen Raum kompakt?", "de", GEO, {18}),
    ("Was bedeutet es, dass ein Raum wegzusammenhängend ist?", "de", GEO, {22}),
    ("Wie ist die Euler-Charakteristik eines Simplizialkomplexes definiert?", "de", GEO, {40}),
    ("Was ist die Fundamentalgruppe eines Raumes in einem Basispunkt?", "de", GEO, {52}),
    ("Wann ist eine stetige Abbildung eine Überlagerung?", "de", GEO, {55}),
    ("Wie ist die Gauß-Krümmung einer regulären Fläche definiert?", "de", GEO, {97}),
    ("Was besagt der Satz von Gauß-Bonnet für eine kompakte Fläche?", "de", GEO, {102}),
    ("Was ist die erste Fundamentalform einer Fläche?", "de", GEO, {98}),
    # German questions over the English sources: their German function words must not pick passages either
    ("Wie viele Knoten hat der Literaturgraph von Semantic Scholar?", "de", N18, {1}),
    ("Welche Flugzeuge vom Typ Boeing 737 MAX betrifft die Anweisung der FAA?", "de", FAA, {1, 5, 6}),
    ("Was kostet der AOA-Sensortest pro Flugzeug?", "de", FAA, {6}),
    ("Wie werden bei SPECTER die harten Negativbeispiele (hard negatives) ausgewählt?", "de", SPECTER, {3}),
]

# Questions nothing in the library answers: Ask should say "no passage matches these words well".
UNANSWERABLE = [
    "How do I bake a sourdough bread with a crispy crust?",
    "What is the capital city of Australia and when was it founded?",
    "Who won the football world cup in 2014?",
    "Which vaccines are recommended for travelling to Kenya?",
    "How does photosynthesis turn sunlight into sugar in plants?",
    "What are the side effects of ibuprofen for children?",
    "Wie backe ich einen Apfelkuchen mit Streuseln?",
    "Wer hat den Nobelpreis für Literatur im Jahr 1999 bekommen?",
    "Wie hoch ist die Zugspitze und wie lange dauert der Aufstieg?",
    "Welche Steuerklasse haben verheiratete Paare in Deutschland?",
]


def weak_rates(questions, unanswerable, search) -> dict:
    """How often the best hit's relevance is below relevance.WEAK, for answerable and unanswerable questions."""
    from quire.retrieval.relevance import is_weak

    def best(q):
        hits = search(q)
        return max((h.get("relevance") or 0.0 for h in hits), default=0.0)  # no hit at all: nothing matched

    answerable = [best(q[0]) for q in questions]
    nothing = [best(q) for q in unanswerable]
    return {"weak_on_answerable": sum(map(is_weak, answerable)) / len(answerable),
            "weak_on_unanswerable": sum(map(is_weak, nothing)) / len(nothing),
            "best_relevance_answerable": answerable, "best_relevance_unanswerable": nothing}


async def build_library():
    from quire.app import Quire
    from quire.store import MemoryStore

    q = await Quire.open(MemoryStore())
    for name, rel in SOURCES.items():
        await q.stage(name, (PDFS / rel).read_bytes(), language=LANGUAGE.get(name, "en"))
    await q.train()
    await q.library.load_chunks()
    return q


def score(questions, search) -> dict:
    """``search(question) -> [{"source", "location"}]`` best first; hit@1/3, MRR@10, foreign top-3."""
    rows, rr, foreign = [], [], 0
    for question, lang, source, pages in questions:
        hits = search(question)[:10]
        right = [i for i, h in enumerate(hits) if h["source"] == source and h["location"].get("page") in pages]
        rank = right[0] + 1 if right else None
        rr.append(1 / rank if rank else 0.0)
        bad = [h for h in hits[:3] if h["source"] != source and LANGUAGE.get(h["source"], "en") != lang]
        foreign += len(bad)
        rows.append({"question": question, "rank": rank, "top3": [f"{h['source']} p.{h['location'].get('page')}" for h in hits[:3]],
                     "relevance": [h.get("relevance") for h in hits[:3]]})
    n = len(questions)
    return {"hit@1": sum(r["rank"] == 1 for r in rows) / n, "hit@3": sum(bool(r["rank"]) and r["rank"] <= 3 for r in rows) / n,
            "mrr@10": sum(rr) / n, "foreign_top3": foreign, "questions": n, "rows": rows}


BROWSER_SEARCH = """async ([docs, questions]) => {
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  await window.quire.stage(docs.map(([name, b64]) => ({name, data: bytes(b64)})));
  await window.quire.train();
  const out = [];
  for (const q of questions) out.push(await window.quire.search(q, {k: 10}));
  return out;
}"""


def in_browser(texts: list[str]) -> list[list[dict]]:
    """``window.quire.search`` results for ``texts`` in the built bundle (headless Chromium)."""
    import base64
    import subprocess
    import tempfile

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer

    # A fresh build every run: a dist/ left from an older checkout would measure an older engine.
    scratch = tempfile.TemporaryDirectory(prefix="quire-mixed-")
    dist = Path(scratch.name) / "dist"
    subprocess.run([sys.executable, str(ROOT / "build.py"), "--dist", str(dist)], check=True)
    docs = [[name, base64.b64encode((PDFS / rel).read_bytes()).decode()] for name, rel in SOURCES.items()]
    server = StaticServer(dist).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(1_800_000)
            page.goto(server.url)
            page.evaluate("async () => { await window.quire.ready; }")
            hits = page.evaluate(BROWSER_SEARCH, [docs, texts])
            browser.close()
    finally:
        server.stop()
        scratch.cleanup()
    return hits


async def attach_vectors(q) -> dict | None:
    """Cached e5 vectors onto the index; the questions' vectors, or None while any is missing."""
    import numpy as np

    from e5_cache import MODEL, cached

    ids, vectors = [], []
    for source in q.library.sources():
        for chunk in await q.library.chunks_of(source["id"]):
            v = cached(MODEL, "passage", chunk["text"])
            if v is None:
                return None
            ids.append(chunk["chunk_id"])
            vectors.append(v)
    q.library.index.add_vectors(ids, np.stack(vectors), MODEL)
    texts = [x[0] for x in QUESTIONS] + UNANSWERABLE
    got = {t: cached(MODEL, "query", t) for t in texts}
    return None if any(v is None for v in got.values()) else got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "mixed.json")
    ap.add_argument("--no-browser", action="store_true", help="CPython only")
    ap.add_argument("--hybrid", action="store_true", help="also fused with cached e5 vectors (e5_cache.py --mixed)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    import provenance  # here, not at the top: tests/test_retrieval_floor.py imports this file with tests/bench off sys.path

    machine, loads = provenance.machine(), [provenance.load()]
    t0 = time.perf_counter()
    q = asyncio.run(build_library())
    print(f"library trained in {time.perf_counter() - t0:.1f} s: {q.library.index.n_chunks} passages")
    index = q.library.index
    results = {}
    for mode in MODES:
        index.query_stopwords = mode
        results[mode] = score(QUESTIONS, lambda text: q.library.search(text, k=10))
    index.query_stopwords = MODES[0]
    results["weak"] = weak_rates(QUESTIONS, UNANSWERABLE, lambda text: q.library.search(text, k=10))
    print(f"\n{'query stopwords':<18}{'hit@1':>8}{'hit@3':>8}{'MRR@10':>8}{'foreign top-3':>15}")
    for mode, r in results.items():
        if mode.startswith(("weak", "browser", "hybrid", "dense")):
            continue
        print(f"{mode:<18}{r['hit@1']:>8.3f}{r['hit@3']:>8.3f}{r['mrr@10']:>8.3f}{r['foreign_top3']:>15}")
    if not args.no_browser:
        t0 = time.perf_counter()
        texts = [x[0] for x in QUESTIONS] + UNANSWERABLE
        got = dict(zip(texts, in_browser(texts)))
        results["browser"] = score(QUESTIONS, got.__getitem__)
        results["browser_weak"] = weak_rates(QUESTIONS, UNANSWERABLE, got.__getitem__)
        loads.append(provenance.load())
        r = results["browser"]
        print(f"{'Chromium (default)':<18}{r['hit@1']:>8.3f}{r['hit@3']:>8.3f}{r['mrr@10']:>8.3f}{r['foreign_top3']:>15}"
              f"   ({time.perf_counter() - t0:.0f} s incl. staging and Train)")
    if args.hybrid:
        qvecs = asyncio.run(attach_vectors(q))
        if qvecs is None:
            print("hybrid: not every passage/question is embedded yet (run e5_cache.py --mixed)")
        else:
            for fusion in ("rrf", "zscore", "minmax"):
                index.fusion = fusion
                search = lambda text: q.library.search(text, k=10, query_vector=qvecs[text])  # noqa: E731
                r = results[f"hybrid-{fusion}"] = score(QUESTIONS, search)
                results[f"weak-hybrid-{fusion}"] = weak_rates(QUESTIONS, UNANSWERABLE, search)
                print(f"{'e5 + ' + fusion:<18}{r['hit@1']:>8.3f}{r['hit@3']:>8.3f}{r['mrr@10']:>8.3f}{r['foreign_top3']:>15}")
            index.fusion = "zscore"
            where = {}
            for source in q.library.sources():
                for chunk in asyncio.run(q.library.chunks_of(source["id"])):
                    where[chunk["chunk_id"]] = {"source": source["name"], "location": chunk["location"]}
            dense = lambda text: [where[index.row_ids[s]] for s, _ in index.dense.search(qvecs[text], 10)]  # noqa: E731
            r = results["dense-only"] = score(QUESTIONS, dense)
            print(f"{'e5 alone':<18}{r['hit@1']:>8.3f}{r['hit@3']:>8.3f}{r['mrr@10']:>8.3f}{r['foreign_top3']:>15}")
    w = results["weak"]
    print(f"\n'no passage matches these words well' shown for {w['weak_on_answerable']:.0%} of answerable and "
          f"{w['weak_on_unanswerable']:.0%} of unanswerable questions")
    print(f"  best relevance, answerable:   {sorted(round(x, 2) for x in w['best_relevance_answerable'])}")
    print(f"  best relevance, unanswerable: {sorted(round(x, 2) for x in w['best_relevance_unanswerable'])}")
    print(f"\nmisses ({MODES[0]}):")
    for r in results[MODES[0]]["rows"]:
        if not r["rank"] or r["rank"] > 3:
            print(f"  rank {r['rank']}: {r['question']}  top3={r['top3']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    loads.append(provenance.load())
    args.out.write_text(json.dumps({"machine": machine, "load": loads, "results": results}, indent=1))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
