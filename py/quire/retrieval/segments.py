"""The search index in the store as segments, so that an edit writes what it changed.

The ``index`` bucket holds:

- ``manifest``: ``{"format": 2, "segments": [{"gen", "pieces", "rows"}], "next", "dense_model", "params"}``;
- ``seg:<gen>:<i>``: piece ``i`` of segment ``gen``, the BM25 postings of the rows one save added
  (a Train, a language change) with their own small vocabulary; pieces stay under
  ``PIECE`` bytes because Chromium refuses one value over 133,169,152 bytes;
- ``src:<source id>``: ``{"gens", "category", "language"}``: a source's live rows are its rows in
  the segments ``gens`` names.  Deletions are masks: removing a source deletes this record and
  its rows stay in their segment, dead, until a merge drops them.

So a rename writes one small record, a removal deletes one, a Train or a language change writes
one segment of its own rows, and none rewrites the library.  Vectors are not stored here: the
embedding cache (``vectors``: chunk hash and model -> float32) is their only copy, and opening
attaches them (``Library``).  When dead rows or segments pile up, ``merge_due`` says so and
``snapshot`` rewrites everything as one segment; the page runs it in the background.

Opening reads every segment and joins them without re-tokenizing or re-sorting; BM25's idf and
per-posting weights are refreshed on the first search (one vectorised pass over the postings):
storing them would make every edit that changes a document count rewrite them all.

>>> from quire.retrieval.index import HybridIndex
>>> index = HybridIndex(); index.stored = Stored.empty()
>>> index.add_chunks("s1", ["s1:0"], ["Glaciers carve valleys."], language="en")
>>> p = plan(index); apply(p, index)
>>> sorted(k for _, k, _ in p.puts)
['manifest', 'seg:1:0', 'src:s1']
>>> index.set_category("s1", "Geo"); [k for _, k, _ in plan(index).puts]
['src:s1']
>>> copy = load({k: v for _, k, v in p.puts} | {"src:s1": {"gens": [1], "category": "Geo", "language": "en"}})
>>> [h.id for h in copy.search("glacier", scope="Geo")]
['s1:0']
"""

from __future__ import annotations

import copy
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from .bm25 import BM25Index, Postings

FORMAT = 2
MANIFEST = "manifest"
PIECE = 32 * 1024 * 1024  # bytes per stored piece of a segment (Chromium: at most 133,169,152 per value)
MERGE_DEAD = 0.25  # merge once this share of the stored rows is dead
MERGE_SEGMENTS = 8  # or once this many segments have piled up
PARAMS = ("fusion", "dense_min_z", "candidates", "query_stopwords", "fusion_weights")


@dataclass
class Stored:
    """What the ``index`` bucket holds: its manifest and source records."""

    manifest: dict
    src: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def empty(cls) -> "Stored":
        return cls({"format": FORMAT, "segments": [], "next": 1, "dense_model": None, "params": {}})

    def keys(self) -> list[str]:
        return ([MANIFEST] + [f"src:{s}" for s in self.src]
                + [f"seg:{s['gen']}:{i}" for s in self.manifest["segments"] for i in range(s["pieces"])])

    @property
    def rows(self) -> int:
        return sum(s["rows"] for s in self.manifest["segments"])


@dataclass
class Plan:
    puts: list
    deletes: list
    after: Stored
    gen: int | None = None
    codes: set = field(default_factory=set)
    merged: bool = False  # everything in one segment: the sources' rows are in ``gen`` alone
    touched: set = field(default_factory=set)  # the index's changed source codes this plan writes


def _pieces(data: bytes) -> list[bytes]:
    return [data[i:i + PIECE] for i in range(0, len(data), PIECE)] or [b""]


def segment_bytes(terms: list[str], chunk_ids: list[str], sources: list[str], row_source: np.ndarray,
                  dl: np.ndarray, postings: Postings, hashes: np.ndarray) -> bytes:
    """One segment: rows (chunk id, source, length, text hash) and their postings over ``terms``."""
    meta = {"terms": terms, "chunk_ids": chunk_ids, "sources": sources}
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
             row_source=row_source.astype(np.int32), dl=dl.astype(np.int32), indptr=postings.indptr,
             indices=postings.indices, data=postings.data, hashes=hashes.astype(np.uint8).reshape(-1, 32))
    return buf.getvalue()


def _read_segment(data: bytes) -> dict:
    z = np.load(io.BytesIO(data), allow_pickle=False)
    out = json.loads(z["meta"].tobytes())
    out.update({k: z[k] for k in ("row_source", "dl", "indptr", "indices", "data")})
    # Segments saved before text hashes were kept: zeros (opening then reads those passages).
    out["hashes"] = z["hashes"] if "hashes" in z.files else np.zeros((len(out["chunk_ids"]), 32), np.uint8)
    return out


def _params(index) -> dict:
    return {name: getattr(index, name) for name in PARAMS}


def plan(index) -> Plan:
    """The puts and deletes that make the store match ``index``: its unsaved rows as one new
    segment, changed source records, and the manifest if it changed."""
    stored = index.stored or Stored.empty()
    manifest = copy.deepcopy(stored.manifest)
    puts, deletes = [], []
    entries = [e for e in index.unsaved_rows if index.by_code[e[0]]["live"]]
    gen, codes = None, set()
    if entries:
        gen = manifest["next"]
        codes = {e[0] for e in entries}
        order = list(dict.fromkeys(e[0] for e in entries))  # sources in the order of their first rows
        local = {c: i for i, c in enumerate(order)}
        lengths = np.concatenate([e[2] for e in entries])
        cols = np.concatenate([e[3] for e in entries])
        used, local_cols = np.unique(cols, return_inverse=True)
        vocab = list(index.bm25.vocab)
        rows = np.repeat(np.arange(lengths.shape[0]), lengths.astype(np.intp))
        postings = Postings.from_pairs(rows, local_cols, np.ones(rows.shape[0], np.int64),
                                        lengths.shape[0], used.shape[0])
        row_source = np.concatenate([np.full(len(e[1]), local[e[0]], np.int32) for e in entries])
        data = segment_bytes([vocab[c] for c in used.tolist()], [c for e in entries for c in e[1]],
                             [index.by_code[c]["id"] for c in order], row_source, lengths, postings,
                             np.concatenate([e[4] for e in entries]))
        pieces = _pieces(data)
        puts += [("index", f"seg:{gen}:{i}", p) for i, p in enumerate(pieces)]
        manifest["segments"].append({"gen": gen, "pieces": len(pieces), "rows": int(lengths.shape[0])})
        manifest["next"] = gen + 1
    touched = index.touched
    if touched is None or index.stored is None:  # not known what changed: compare every source
        index.touched, touched = set(), set()
        want = {}
        for code, s in enumerate(index.by_code):
            if s["live"]:
                gens = list(s.get("gens") or []) + ([gen] if code in codes else [])
                want[s["id"]] = {"gens": gens, "category": s["category"], "language": s["language"]}
        ids = set(want) | set(stored.src)
    else:  # only the sources changed since the last save; a removed code before a new one of the same id
        touched = set(touched)
        want = dict(stored.src)
        for code in sorted(touched | codes, key=lambda c: index.by_code[c]["live"]):
            s = index.by_code[code]
            if s["live"]:
                gens = list(s.get("gens") or []) + ([gen] if code in codes else [])
                want[s["id"]] = {"gens": gens, "category": s["category"], "language": s["language"]}
            else:
                want.pop(s["id"], None)
        ids = {index.by_code[c]["id"] for c in touched | codes}
    puts += [("index", f"src:{sid}", want[sid]) for sid in ids if sid in want and stored.src.get(sid) != want[sid]]
    deletes += [("index", f"src:{sid}") for sid in ids if sid not in want and sid in stored.src]
    manifest["dense_model"], manifest["params"] = index.dense_model, _params(index)
    if manifest != stored.manifest:
        puts.append(("index", MANIFEST, manifest))
    return Plan(puts, deletes, Stored(manifest, want), gen, codes, touched=touched)


def snapshot(index, extra_keys=()) -> Plan:
    """Everything as one segment (a merge; also a migration, a vault import, a repair):
    dead rows dropped, every other key of the bucket (``extra_keys`` too) deleted."""
    stored = index.stored or Stored.empty()
    gen = stored.manifest["next"]
    serials, dl, postings = index.bm25.live_postings()
    serials = np.asarray(serials, dtype=np.int64)
    codes = index.row_source[serials] if serials.shape[0] else np.empty(0, np.int32)
    order, row_source = np.unique(codes, return_inverse=True)
    live = [c for c, s in enumerate(index.by_code) if s["live"]]
    data = segment_bytes(list(index.bm25.vocab), [index.row_ids[s] for s in serials.tolist()],
                         [index.by_code[c]["id"] for c in order.tolist()], row_source.reshape(-1), dl, postings,
                         index.row_hashes[serials] if serials.shape[0] else np.empty((0, 32), np.uint8))
    pieces = _pieces(data)
    manifest = {"format": FORMAT, "segments": [{"gen": gen, "pieces": len(pieces), "rows": int(serials.shape[0])}],
                "next": gen + 1, "dense_model": index.dense_model, "params": _params(index)}
    want = {index.by_code[c]["id"]: {"gens": [gen], "category": index.by_code[c]["category"],
                                      "language": index.by_code[c]["language"]} for c in live}
    puts = [("index", f"seg:{gen}:{i}", p) for i, p in enumerate(pieces)]
    puts += [("index", f"src:{sid}", rec) for sid, rec in want.items()] + [("index", MANIFEST, manifest)]
    written = {k for _, k, _ in puts}
    deletes = [("index", k) for k in dict.fromkeys([*stored.keys(), *extra_keys]) if k not in written]
    touched, index.touched = set(index.touched or ()), set()  # everything is written: known from here on
    return Plan(puts, deletes, Stored(manifest, want), gen, set(live), merged=True, touched=touched)


def apply(p: Plan, index) -> None:
    """After ``p`` was committed: ``index`` knows what the store now holds."""
    for code in p.codes:
        s = index.by_code[code]
        s["gens"] = [p.gen] if p.merged else list(s.get("gens") or []) + [p.gen]
    index.unsaved_rows = []
    index.stored = p.after
    if index.touched is not None:  # changes made while the commit was on its way stay for the next save
        index.touched -= p.touched


def merge_due(index) -> bool:
    """Enough dead rows or segments in the store that a merge pays off."""
    stored = index.stored
    if stored is None or not stored.manifest["segments"]:
        return False
    unsaved = sum(len(e[1]) for e in index.unsaved_rows if index.by_code[e[0]]["live"])
    dead = stored.rows - (index.n_chunks - unsaved)
    return len(stored.manifest["segments"]) > MERGE_SEGMENTS or dead > MERGE_DEAD * max(stored.rows, 1)


def load(values: dict, tokenizers=None):
    """The HybridIndex these ``index`` bucket values hold (``None`` without a manifest).

    Nothing is re-tokenized: the first segment's postings are used as stored, later ones
    appended column by column (``Postings.appended``)."""
    from .index import HybridIndex

    manifest = values.get(MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    src = {k[4:]: v for k, v in values.items() if k.startswith("src:")}
    index = HybridIndex(tokenizers, **{k: v for k, v in (manifest.get("params") or {}).items() if k in PARAMS})
    index.dense_model = manifest.get("dense_model")
    vocab: defaultdict[str, int] = defaultdict()
    vocab.default_factory = vocab.__len__
    chunk_ids, live_parts, code_parts, dl_parts, hash_parts = [], [], [], [], []
    postings, extra = None, []
    codes: dict[str, int] = {}
    for seg in manifest["segments"]:
        data = b"".join(bytes(values[f"seg:{seg['gen']}:{i}"]) for i in range(seg["pieces"]))
        s = _read_segment(data)
        offset = len(chunk_ids)
        seg_codes, seg_live = [], []
        for sid in s["sources"]:
            rec = src.get(sid)
            alive = rec is not None and seg["gen"] in rec.get("gens", [])
            seg_live.append(alive)
            if alive and sid not in codes:
                codes[sid] = len(codes)
            seg_codes.append(codes[sid] if alive else -1)
        row_source = s["row_source"]
        code_parts.append(np.asarray(seg_codes, dtype=np.int32)[row_source] if row_source.shape[0] else row_source)
        live_parts.append(np.asarray(seg_live, dtype=bool)[row_source] if row_source.shape[0] else row_source.astype(bool))
        dl_parts.append(s["dl"])
        hash_parts.append(s["hashes"])
        chunk_ids += s["chunk_ids"]
        gcols = np.fromiter(map(vocab.__getitem__, s["terms"]), dtype=np.int64, count=len(s["terms"]))
        local = Postings(s["data"], s["indices"], s["indptr"], len(s["chunk_ids"]))
        if postings is None:
            postings = local  # the first segment's vocabulary is the start of the global one
        else:
            rows, cols, counts = local.pairs()
            extra.append((rows.astype(np.int64) + offset, gcols[cols], counts))
    n = len(chunk_ids)
    if postings is None:
        postings = Postings.empty()
    if extra:
        postings = postings.appended(np.concatenate([e[0] for e in extra]), np.concatenate([e[1] for e in extra]),
                                     np.concatenate([e[2] for e in extra]).astype(np.int64), n, len(vocab))
    dead = len(codes)
    source_of = np.concatenate(code_parts) if code_parts else np.empty(0, np.int32)
    source_of = np.where(source_of < 0, dead, source_of).astype(np.int32)
    alive = np.concatenate(live_parts) if live_parts else np.empty(0, bool)
    dl = np.concatenate(dl_parts) if dl_parts else np.empty(0, np.int32)
    index.bm25 = BM25Index.from_parts(list(vocab), np.arange(n, dtype=np.int64), alive, dl, postings,
                            k1=index.bm25.k1, b=index.bm25.b)
    index.bm25.added = []
    index.by_code = [{"id": sid, "category": src[sid].get("category"), "language": src[sid].get("language") or "en",
                       "live": True, "gens": list(src[sid]["gens"])} for sid in codes]
    index.by_code.append({"id": None, "category": None, "language": "en", "live": False, "gens": []})
    index.code_of = dict(codes)
    index.row_ids, index.row_source = chunk_ids, source_of
    index.row_hashes = np.concatenate(hash_parts) if hash_parts else np.empty((0, 32), np.uint8)
    index.serial_of = {chunk_ids[i]: i for i in np.flatnonzero(alive).tolist()}
    # A source whose record names no stored rows (trained empty) still belongs to the library.
    for sid, rec in src.items():
        if sid not in codes:
            index.code_of[sid] = len(index.by_code)
            index.by_code.append({"id": sid, "category": rec.get("category"), "language": rec.get("language") or "en",
                                   "live": True, "gens": list(rec.get("gens") or [])})
    index.stored = Stored(copy.deepcopy(manifest), {sid: {"gens": list(r.get("gens") or []), "category": r.get("category"),
                                                          "language": r.get("language")} for sid, r in src.items()})
    index.touched = set()  # memory is what is stored
    return index
