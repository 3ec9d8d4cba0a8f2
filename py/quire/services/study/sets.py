"""Listing, opening and deleting sets; the page's view of a set, with stale-card flags."""

from __future__ import annotations

from datetime import datetime, timezone

from quire.model import chunk_id
from quire.study import fsrs_sched, quiz

from .common import BUCKET, record_action, load_set


# ---------------------------------------------------------------- listing
def _summary(record: dict, now: datetime | None = None) -> dict:
    now = now or datetime.now(timezone.utc)
    out = {k: record.get(k) for k in ("id", "kind", "title", "created", "scope", "scope_label", "sources",
                                      "made_without_ai", "difficulty", "imported", "course")}
    kind = record["kind"]
    if kind == "quiz":
        s = record["session"]
        done, total = quiz.resume(s)
        out["stats"] = {"status": s["status"], "position": done, "total": total, "score": quiz.score(s),
                        "attempts": len(s["history"]) + (s["status"] == "finished")}
    elif kind == "flashcards":
        scheds = record["schedules"]
        dues = sorted(fsrs_sched.due_at(v) for v in scheds.values())
        out["stats"] = {"total": len(scheds), "due": len(fsrs_sched.due_queue(scheds, now)),
                        "next_due": dues[0].isoformat() if dues else None}
    elif kind == "workshop":
        n = sum(len(m["lessons"]) for m in record["outline"]["modules"])
        out["stats"] = {"lessons": n, "done": len(record["done"])}
    else:
        def count(nodes):
            return sum(1 + count(n.get("children", [])) for n in nodes)
        out["stats"] = {"nodes": count(record["map"]["children"])}
    return out


async def set_view(engine, record: dict) -> dict:
    """The record as the page sees it: summary, content, and cards flagged as stale."""
    out = {**record, **_summary(record)}
    if record["kind"] == "flashcards":
        out["flags"] = await stale_flags(engine, record)
    return out


async def _sets(engine, ctx):
    records = (await engine.store.all(BUCKET)).values()
    return sorted((_summary(r) for r in records), key=lambda s: -s["created"])


async def _open(engine, ctx, set_id):
    record = await load_set(engine, set_id)
    if record["kind"] == "mindmap":  # reading a map is studying (a quiz or deck counts its answers instead)
        record_action(engine, record, "mindmap_open", item=record["id"])
    return await set_view(engine, record)


async def _delete(engine, ctx, set_id):
    await load_set(engine, set_id)
    await engine.store.commit([], [(BUCKET, set_id)])
    return True

# ---------------------------------------------------------------- stale-card flags
async def current_hashes(engine, record: dict) -> dict[str, str]:
    """chunk id -> hash as the library is now; a retrained source answers for the one it replaced."""
    replaced_by = {s.get("replaces"): s["id"] for s in engine.sources() if s.get("replaces")}
    present = {s["id"] for s in engine.sources()}
    out = {}
    for sid in record.get("sources", []):
        current, hops = sid, 0
        while current not in present and current in replaced_by and hops < 20:
            current, hops = replaced_by[current], hops + 1
        if current in present:
            for c in await engine.library.chunks_of(current):
                out[chunk_id(sid, c["n"])] = c.get("hash") or ""
    return out


async def stale_flags(engine, record: dict) -> dict[str, list[str]]:
    items = [i for i in record.get("items", []) if i.get("chunk_hashes")]
    if not items:
        return {}
    return fsrs_sched.stale_items(items, await current_hashes(engine, record))


METHODS = {
    "studySets": _sets,
    "studyOpen": _open,
    "studyDelete": _delete,
}
