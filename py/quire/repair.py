"""Repair a search index that does not match the stored passages.

Before writes were serialised, two tabs training at once each kept their own index and
overwrote the one stored index: sources stayed listed as trained but could not be found,
and Train skipped them as already known.  ``Library.open`` runs ``repair_index`` so such a
library heals on the next start.  It only counts when nothing is wrong.

>>> import asyncio
>>> from quire.library import Library
>>> from quire.store import MemoryStore
>>> store = MemoryStore()
>>> lib = asyncio.run(Library.open(store))
>>> _ = asyncio.run(lib.stage("a.md", b"Glaciers carve valleys.")); _ = asyncio.run(lib.train())
>>> store.data["index"].clear()  # the index lost its only source
>>> lib = asyncio.run(Library.open(store)); _ = asyncio.run(lib.load_chunks())
>>> lib.repaired, [h["source"] for h in lib.search("glaciers")]
(['a.md'], ['a.md'])
"""

from __future__ import annotations

from quire import passages
from quire.model import parse_chunk_id


def indexed_counts(index) -> dict[str, int]:
    """Live passages per source id in ``index`` (chunk ids are ``"<source id>:<n>"``)."""
    counts: dict[str, int] = {}
    for chunk_id in index.live_ids():
        sid = parse_chunk_id(chunk_id)[0]
        counts[sid] = counts.get(sid, 0) + 1
    return counts


async def repair_index(index, sources, store) -> tuple[list[str], list]:
    """Make ``index`` hold exactly the passages of the trained records in ``sources`` (by id).

    Returns the names (ids, for sources no longer listed) of what it fixed, and the source
    records it changed, to be stored with the index.  A trained source whose passages were
    lost goes back to "staged" if its original is kept (the next Train reads it again), else
    to "failed" saying to add it again; ``sources`` gets the changed records at once."""
    indexed = indexed_counts(index)
    fixed, puts = [], []
    for sid in [s for s in indexed if s not in sources]:
        index.remove_source(sid)  # passages of a source that was removed
        fixed.append(sid)
    for sid, record in list(sources.items()):
        if record["status"] != "trained" or indexed.get(sid, 0) == record.get("chunks", 0) > 0:
            continue
        chunks = await passages.read(store, sid)
        if chunks and indexed.get(sid, 0) == len(chunks):
            continue
        if chunks:
            index.remove_source(sid)
            index.add_chunks(sid, [c["chunk_id"] for c in chunks], [c["text"] for c in chunks],
                             category=record.get("category"), language=record.get("language"))
        elif record.get("chunks", 0) > 0:
            index.remove_source(sid)
            again = await store.get("originals", sid) is not None
            record = {**record, "status": "staged" if again else "failed",
                      "error": None if again else "its passages were lost; add the file again"}
            sources[sid] = record
            puts.append(("sources", sid, record))
        else:
            continue  # trained with no passages (an empty file): nothing to index
        fixed.append(record["name"])
    return fixed, puts
