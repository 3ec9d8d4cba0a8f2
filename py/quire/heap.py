"""The engine's heap after a big change: one full collection, then what survived is frozen.

Python's cyclic collector runs a full collection now and then as objects pile up, and a full
collection walks every object the engine holds: with 5,000 notes in the tab (passages, the
index's dicts, the source records) that was 80-110 ms every few seconds of a person's calls,
each time collecting nothing (tests/bench/call_waits.py).  ``settle()`` collects once and freezes
what is left (``gc.freeze``), so later collections walk only what was made since.  It runs when
the engine is quiet after the big changes (a Train, an erase, an import, the passages read after
opening, the study tools imported: engine/worker-lazy.js ``settleSoon``); each first unfreezes,
so a cycle that was frozen and has died since is collected then.

>>> import gc
>>> class Node: pass
>>> a, b = Node(), Node(); a.other, b.other = b, a; del a, b   # a cycle, now garbage
>>> freed = settle()["collected"]; freed >= 2, gc.get_freeze_count() > 0
(True, True)
>>> gc.unfreeze()
"""

from __future__ import annotations

import gc
import time


def settle() -> dict:
    """Unfreeze, collect everything, freeze what survived: ``{"collected", "frozen", "ms"}``."""
    t = time.perf_counter()
    gc.unfreeze()
    collected = gc.collect()
    gc.freeze()
    return {"collected": collected, "frozen": gc.get_freeze_count(), "ms": round((time.perf_counter() - t) * 1000, 1)}
