"""The kiosk build flags as data: ``assets/kiosk-config.js``, which the page's kiosk.js reads.

``python3 build.py --kiosk`` makes every page of the bundle a kiosk; ``--kiosk-idle MINUTES``
sets how long a kiosk waits without input before it resets for the next visitor (5 unless
given; ``?idle=`` in the address still wins).  Only this one small classic script changes, so a
kiosk bundle opens from disk as every bundle does, and the service worker's list and the
manifest carry it with its hash like every other file.

>>> kiosk_config(True, 2.5).decode().splitlines()[-1]
'self.QUIRE_KIOSK_BUILD = {"idleMinutes": 2.5, "kiosk": true};'
>>> kiosk_config() == (ROOT / "site" / CONFIG).read_bytes()  # without the flags: the site's own file
True
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from quire_build.common import ROOT, BuildError

CONFIG = "assets/kiosk-config.js"
ASSIGN = "self.QUIRE_KIOSK_BUILD = "


def kiosk_config(kiosk: bool = False, idle_minutes: float | None = None, root: Path = ROOT) -> bytes:
    """The site's kiosk-config.js with its data line written for these flags (its comment kept)."""
    if idle_minutes is not None and not (math.isfinite(idle_minutes) and idle_minutes > 0):
        raise BuildError(f"--kiosk-idle takes a number of minutes above 0, not {idle_minutes}")
    text = (root / "site" / CONFIG).read_text(encoding="utf-8")
    data = json.dumps({"idleMinutes": idle_minutes, "kiosk": bool(kiosk)}, sort_keys=True)
    return (text[:text.index(ASSIGN)] + ASSIGN + data + ";\n").encode("utf-8")
