"""Where a bench's figures come from, recorded next to them in its JSON (as small_sources.py does).

    "machine": provenance.machine()        # {"cpus", "python", "commit", "at"}
    "load": [provenance.load(), ...]       # load average (1, 5, 15 min) at the start, between parts, at the end
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def machine() -> dict:
    """The machine and the code: cpu count, Python version, ``git rev-parse --short HEAD``, the time."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "commit": commit,
            "at": time.strftime("%Y-%m-%d %H:%M")}


def load() -> list[float]:
    """The load average now, over 1, 5 and 15 minutes."""
    return [round(x, 2) for x in os.getloadavg()]
