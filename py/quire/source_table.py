"""The library's source records by id, able to say what changed since a caller last looked.

A page keeps its own copy of the source list (20,000 notes are 10 MB of JSON): it asks
``since(epoch, revision)`` and gets only the records put or removed after that, or
``None`` when it must read everything again (a new table: erased, reloaded after
another tab's change, restored).  Every write goes through ``__setitem__`` and
``__delitem__``; a record is replaced, never changed in place.

>>> t = SourceTable({"a": {"id": "a"}})
>>> t.since(t.epoch, 0)
{'epoch': ..., 'revision': 0, 'changed': [], 'removed': []}
>>> t["b"] = {"id": "b"}; del t["a"]
>>> d = t.since(t.epoch, 0); d["changed"], d["removed"], d["revision"]
([{'id': 'b'}], ['a'], 2)
>>> t.since("another", 0) is None
True
"""

from __future__ import annotations

import itertools

_epochs = itertools.count(1)


class SourceTable(dict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.epoch = f"{id(self):x}-{next(_epochs)}"
        self.revision = 0
        self._changed: dict[str, int] = dict.fromkeys(self, 0)  # id -> revision of its last put
        self._removed: dict[str, int] = {}  # id -> revision of its removal

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.revision += 1
        self._changed[key] = self.revision
        self._removed.pop(key, None)

    def __delitem__(self, key):
        super().__delitem__(key)
        self.revision += 1
        self._changed.pop(key, None)
        self._removed[key] = self.revision

    def pop(self, key, *default):
        if key in self:
            value = self[key]
            del self[key]
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self):
        raise TypeError("SourceTable: remove a source by its id")

    def clear(self):
        for key in list(self):
            del self[key]

    def since(self, epoch: str | None, revision: int) -> dict | None:
        """Records put and ids removed after ``revision`` of ``epoch``; ``None``: read all."""
        if epoch != self.epoch or revision > self.revision:
            return None
        return {"epoch": self.epoch, "revision": self.revision,
                "changed": [self[k] for k, r in self._changed.items() if r > revision],
                "removed": [k for k, r in self._removed.items() if r > revision]}
