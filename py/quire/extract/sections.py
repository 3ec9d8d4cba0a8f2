"""The section outline used by Markdown and HTML, keeping headings with nothing under them.

base.Outline only makes a passage where there is body text, so a heading that
is directly followed by a sibling (or ends the file) would vanish from the
index.  Here such a heading becomes a passage holding its own title.

>>> o = Sections(); o.heading(1, "A"); o.heading(1, "B"); o.text("x")
>>> [(u.location["section"], u.text) for u in o.units()]
[(['A'], 'A'), (['B'], 'x')]
"""

from __future__ import annotations

from quire.extract.base import Outline
from quire.model import Unit


class Sections(Outline):
    def __init__(self) -> None:
        super().__init__()
        self.filled = True  # the current heading has text under it (or there is no heading yet)

    def _keep_empty(self) -> None:
        if self.stack and not self.filled and not any(p.strip() for p in self.parts):
            self.parts.append(self.stack[-1][1])

    def heading(self, level: int, title: str) -> None:
        if not " ".join(title.split()):
            return
        if self.stack and level <= self.stack[-1][0]:
            self._keep_empty()  # a deeper heading would carry this one in its breadcrumb
        super().heading(level, title)
        self.filled = False

    def flush(self) -> None:
        if any(p.strip() for p in self.parts):
            self.filled = True
        super().flush()

    def units(self) -> list[Unit]:
        self._keep_empty()
        return super().units()
