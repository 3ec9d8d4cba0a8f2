"""A numpy array attribute that grows by appends without being copied at each one.

Train adds a source at a time.  ``a = np.concatenate((a, new))`` copies the whole array on
every add, so a Train of 20,000 one-passage notes copied its per-row arrays 20,000 times
(the text hashes alone: 6.4 GB); here the added parts wait in a list and are joined once,
on the next read.

>>> import numpy as np
>>> class Rows:
...     source = Grown()
>>> r = Rows(); r.source = np.zeros(2, np.int32)
>>> for code in (1, 2): Grown.append(r, "source", np.full(2, code, np.int32))
>>> Grown.size(r, "source")
6
>>> r.source.tolist()
[0, 0, 1, 1, 2, 2]
>>> r.source[0] = 7; r.source.tolist()[:2]  # a read gives the array itself: writes to it stay
[7, 0]
"""

from __future__ import annotations

import numpy as np


class Grown:
    """A data descriptor: ``obj.name`` is an array; ``Grown.append(obj, "name", part)`` adds rows."""

    def __set_name__(self, owner, name: str) -> None:
        self.value, self.parts, self.rows = f"{name}__value", f"{name}__parts", f"{name}__rows"

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        d = obj.__dict__
        parts = d.get(self.parts)
        if parts:
            d[self.value] = np.concatenate([d[self.value], *parts])
            parts.clear()
        return d[self.value]

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.value] = value
        obj.__dict__[self.parts] = []
        obj.__dict__[self.rows] = value.shape[0]

    @staticmethod
    def append(obj, name: str, part: np.ndarray) -> None:
        g = getattr(type(obj), name)
        obj.__dict__[g.parts].append(part)
        obj.__dict__[g.rows] += part.shape[0]

    @staticmethod
    def size(obj, name: str) -> int:
        """Rows held, without joining the parts."""
        return obj.__dict__[getattr(type(obj), name).rows]
