"""A package's archive unpacked a piece at a time (the study tools: scipy, scikit-learn and the rest).

Pyodide's ``loadPackage`` unpacks each archive in one synchronous call (``unpack_buffer``): a
task of 250-480 ms of the engine on a loaded 2-core machine, and a call the page made meanwhile
waited that long (tests/bench/call_waits.py).  ``Unpacking`` does the same work
(the files, the wheel's INSTALLER and data files, the list of shared libraries to load), but
``step()`` writes only a few milliseconds' worth of files at a time; the worker gives the thread
back between steps (site/engine/worker-lazy.js).

tests/test_unpack.py checks it on CPython (with Pyodide's three helpers stood in for).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from zipfile import ZipFile

STEP_S = 0.012  # files written per step: about this long, then the thread goes back to the page


class Unpacking:
    """The archive at ``path`` (a zip or wheel named ``filename``) into ``extract_dir``, in steps."""

    def __init__(self, path: str, filename: str, extract_dir: str, budget_s: float = STEP_S):
        self.path, self.filename, self.budget_s = path, filename, budget_s
        self.target = Path(extract_dir)
        self.target.mkdir(parents=True, exist_ok=True)
        self.archive = ZipFile(path)
        self.members = self.archive.infolist()
        self.at = 0

    def step(self) -> bool:
        """Write files for about ``budget_s`` (at least one); True once every file is written."""
        until = time.monotonic() + self.budget_s
        while self.at < len(self.members):
            self._write(self.members[self.at])
            self.at += 1
            if time.monotonic() >= until:
                break
        return self.at >= len(self.members)

    def _write(self, member) -> None:
        # What zipfile's extract does, without its per-name checks (the archive is the bundle's
        # own, checked against its sha256): a member never leaves the target.
        name = member.filename
        if name.startswith("/") or ".." in Path(name).parts:
            raise ValueError(f"{self.filename}: the entry {name!r} points outside its folder")
        out = self.target / name
        if member.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        with self.archive.open(member) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        mode = member.external_attr >> 16
        if mode & 0o111:
            os.chmod(out, mode & 0o777)

    def finish(self, loader, installer: str | None = None, source: str | None = None) -> list[str]:
        """Record the installer and data files as Pyodide does; the shared libraries to load, in
        the archive's order.  ``loader`` is Pyodide's ``pyodide._package_loader`` (its
        ``set_wheel_installer``, ``install_datafiles`` and ``should_load_dynlib``), handed in by
        the worker: only ``quire.browser`` imports the browser's modules."""
        try:
            if self.filename.endswith(".whl"):
                loader.set_wheel_installer(self.filename, self.archive, self.target, installer, source)
                loader.install_datafiles(self.filename, self.archive, self.target)
            return [str((self.target / m.filename).resolve()) for m in self.members
                    if loader.should_load_dynlib(m.filename)]
        finally:
            self.archive.close()
