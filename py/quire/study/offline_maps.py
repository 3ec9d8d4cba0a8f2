"""Mind maps and workshop outlines made without a model, from document structure.

Structure comes from, in order of preference:
1. chunk locations with ``{"section": [...]}`` breadcrumbs (Markdown, HTML, DOCX);
2. numbered heading lines inside the text ("2.1 Node Types"), as PDFs of papers
   and reports have;
3. failing both, clusters of chunks (k-means over TF-IDF), named by their key
   phrases.
Leaves are the key phrases of each section.

Example: chunks located at ``["Setup"]`` and ``["Setup", "Install"]`` give
the map  topic -> Setup -> Install -> (key phrases of the install text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quire.model import Chunk
from quire.study.items import stamp
from quire.study.select import study_chunks
from quire.study.text import key_phrases, prose_blocks, surface_form

PHRASES_PER_SECTION = 4
MAX_CLUSTERS = 6


@dataclass
class Section:
    path: tuple[str, ...]
    texts: list[str] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)

    def add(self, text: str, chunk: Chunk) -> None:
        if text.strip():
            self.texts.append(text)
        if chunk not in self.chunks:
            self.chunks.append(chunk)


def sections(chunks: list[Chunk]) -> list[Section]:
    """Sections in reading order.  ``path == ()`` holds text before any heading."""
    found: dict[tuple[str, ...], Section] = {}
    current: dict[str, tuple[str, ...]] = {}  # per source: the heading path we are under
    for chunk in chunks:
        if chunk.location.get("section"):
            path = tuple(chunk.location["section"])
            found.setdefault(path, Section(path)).add(" ".join(b for _, b in prose_blocks(chunk.text)), chunk)
            continue
        path = current.get(chunk.source_id, ())
        for head, text in prose_blocks(chunk.text):
            if head:
                number, title = head
                level = number.count(".") + 1
                path = (path + ("",) * level)[: level - 1] + (title,)
                path = tuple(p for p in path if p)
            found.setdefault(path, Section(path)).add(text, chunk)
        current[chunk.source_id] = path
    return list(found.values())


def _leaf_phrases(secs: list[Section]) -> list[list[str]]:
    texts = [" ".join(s.texts) for s in secs]
    return [[surface_form(p, t) for p, _ in ph] for t, ph in zip(texts, key_phrases(texts, per_text=PHRASES_PER_SECTION))]


def _node(label: str, chunks: list[Chunk], children: list | None = None) -> dict:
    return {"label": label, "chunk_ids": [c.id for c in chunks], "children": children or []}


def clusters(chunks: list[Chunk], k: int = MAX_CLUSTERS) -> list[Section]:
    """Group chunks by content (k-means on TF-IDF); each group is named by its top phrase."""
    from sklearn.cluster import KMeans  # lazy: heavy in the browser

    from quire.study.select import tfidf_matrix

    matrix = tfidf_matrix([c.text for c in chunks])
    k = min(k, max(2, len(chunks) // 3))
    if matrix is None or k < 2:
        groups = [list(range(len(chunks)))]
    else:
        labels = KMeans(n_clusters=k, n_init=3, random_state=0).fit_predict(matrix)
        groups = [[i for i, lab in enumerate(labels) if lab == g] for g in dict.fromkeys(labels)]
    out = []
    for group in groups:
        sec = Section(())
        for i in group:
            sec.add(" ".join(b for _, b in prose_blocks(chunks[i].text)), chunks[i])
        out.append(sec)
    names = _leaf_phrases(out)
    for sec, phrases in zip(out, names):
        name = phrases[0] if phrases else "Other"
        sec.path = (name[:1].upper() + name[1:],)
    return out


def _structure(chunks: list[Chunk]) -> list[Section]:
    secs = [s for s in sections(chunks) if s.texts or s.path]
    if any(s.path for s in secs):
        return secs
    return clusters(chunks)


def make_mindmap(chunks: list[Chunk], title: str = "") -> dict:
    """A topic tree ``{"topic", "children": [{"label", "chunk_ids", "children"}]}``."""
    chunks = study_chunks(chunks)
    secs = _structure(chunks)
    phrases = _leaf_phrases(secs)
    root: dict = {"children": []}
    index: dict[tuple[str, ...], dict] = {(): root}
    for sec, leaves in zip(secs, phrases):
        parent = root
        for depth in range(1, len(sec.path) + 1):
            key = sec.path[:depth]
            if key not in index:
                index[key] = _node(key[-1], [])
                parent["children"].append(index[key])
            parent = index[key]
        if not sec.path:
            parent = index.setdefault(("Overview",), _node("Overview", []))
            if parent not in root["children"]:
                root["children"].insert(0, parent)
        parent["chunk_ids"] = sorted(set(parent["chunk_ids"]) | {c.id for c in sec.chunks})
        taken = {parent.get("label", "").lower()} | {c["label"].lower() for c in parent["children"]}
        parent["children"] += [_node(p, sec.chunks) for p in leaves if p.lower() not in taken]
    topic = title or (chunks[0].source if len({c.source_id for c in chunks}) == 1 else "These documents")
    return stamp({"topic": topic, "children": root["children"]}, chunks, made_without_ai=True)


def make_outline(chunks: list[Chunk], title: str = "") -> dict:
    """A workshop outline: top-level sections are modules, their subsections lessons."""
    chunks = study_chunks(chunks)
    secs = _structure(chunks)
    phrases = _leaf_phrases(secs)
    modules: dict[str, dict] = {}
    for sec, leaves in zip(secs, phrases):
        module_title = sec.path[0] if sec.path else "Overview"
        lesson_title = sec.path[-1] if len(sec.path) > 1 else module_title
        module = modules.setdefault(module_title, {"title": module_title, "summary": "", "lessons": []})
        focus = ", ".join(leaves[:3])
        if not sec.texts and not leaves:
            continue
        module["lessons"].append({
            "title": lesson_title,
            "objective": f"Explain {focus}." if focus else f"Summarise {lesson_title}.",
            "chunk_ids": [c.id for c in sec.chunks],
        })
        if not module["summary"] and focus:
            module["summary"] = f"Covers {focus}."
    kept = [m for m in modules.values() if m["lessons"]]
    name = title or (chunks[0].source if len({c.source_id for c in chunks}) == 1 else "Workshop")
    return stamp({"title": name, "modules": kept}, chunks, made_without_ai=True)
