"""The course a bundle carries: ``python3 build.py --library VAULT [--library-title TEXT] [--library-only]``.

A teacher trains a library in Quire, exports it as a vault (Privacy → Carry your vault) and builds
a bundle that carries it.  The vault is checked here with the engine's own reader
(``quire.vault``, ``quire.vault_library`` through ``quire.services.vault.course_about``), so a
damaged, tampered or oversized file is refused at build time with the reason, and is then packed
like every other big asset (``assets/pack/course/course.quirevault.js``, a classic script: a page
opened from file:// may not fetch).  The manifest and the service worker's list carry it with its
sha256, and ``assets/bundle.js`` carries a small about record (``QUIRE_BUNDLE.course``: title,
documents, passages, study sets, the day it was made, sha256, size) that the page offers before
loading a byte of it (``site/assets/course.js``).

A course vault is data, never configuration: it sets no model server and changes no CSP; the page
imports it as any vault, minus the teacher's own chats, progress and settings (``quire.vault_course``).

``--library-only`` puts a course into a bundle already built (or takes it out: ``--library-only``
without ``--library``), rewriting only the course's pack, ``bundle.js``, ``sw.js`` and the manifest:
seconds instead of a whole build.  The result is byte for byte what a whole build with the same
``--library`` makes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from quire_build.common import BuildError

COURSE_ASSET = "course/course.quirevault"  # packed as assets/pack/course/course.quirevault.js
# A course put into a bundle without building: a vault saved over this empty file next to index.html
# (read over http(s) only: a page opened from file:// may not read files; site/assets/course.js).
DROP_IN = "course.quirevault"
# The page holds the whole vault in memory twice while it imports (its bytes, then the engine's
# copy), and a wasm32 tab has 4 GB at most; a 5,000-passage course with its originals is ~10-40 MB.
MAX_COURSE_BYTES = 256 * 1024 * 1024
BUNDLE_JS = "assets/bundle.js"
BUNDLE_HEAD = "self.QUIRE_BUNDLE = "
GENERATED = (BUNDLE_JS, "sw.js", "manifest.json")  # what assemble.finish writes from the rest


def read_course(path: Path, title: str | None = None) -> tuple[bytes, dict]:
    """``(vault bytes, about)`` for the vault at ``path``, or ``BuildError`` saying why it cannot be a course."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise BuildError(f"--library {path}: {exc.strerror or exc}") from None
    if size > MAX_COURSE_BYTES:
        raise BuildError(f"--library {path}: {size / 2**20:.0f} MB is over the {MAX_COURSE_BYTES // 2**20} MB a "
                         "course vault may have (a browser tab holds it in memory while it loads). Export the "
                         "vault without the originals you do not need, or split the course.")
    data = path.read_bytes()
    return data, check_course(data, title, str(path))


def check_course(data: bytes, title: str | None = None, name: str = "the course vault") -> dict:
    """The about record of an intact course vault (``QUIRE_BUNDLE.course`` without its asset)."""
    try:
        from quire.services.vault import course_about
        from quire.vault import VaultError
    except ImportError as exc:  # the engine's reader needs numpy
        raise BuildError(f"checking a course vault needs the engine's Python packages ({exc.name} is missing): "
                         "run the build with .venv/bin/python (made by python3 tests/run.py), or install "
                         "python3-numpy") from None
    try:
        about = course_about(data, title)
    except VaultError as exc:
        raise BuildError(f"{name} cannot be a course: {exc}") from None
    if not about["documents"]:
        raise BuildError(f"{name} holds no trained documents; train the library before exporting its vault")
    return about


def read_bundle(dist: Path) -> dict:
    """``QUIRE_BUNDLE`` of a built ``dist/``."""
    try:
        text = (dist / BUNDLE_JS).read_text(encoding="utf-8")
    except OSError:
        raise BuildError(f"--library-only: {dist} holds no built bundle ({BUNDLE_JS}); build it first "
                         "(python3 build.py), then add the course") from None
    return json.loads(text.removeprefix(BUNDLE_HEAD).rstrip().removesuffix(";"))


def dist_files(dist: Path) -> dict[str, bytes]:
    """Every file of a built ``dist/`` but the ones the build generates from the rest."""
    files = {}
    for folder, _, names in os.walk(dist):
        for n in names:
            path = Path(folder) / n
            rel = path.relative_to(dist).as_posix()
            if rel not in GENERATED:
                files[rel] = path.read_bytes()
    return files


def write_changed(files: dict[str, bytes], dist: Path) -> list[str]:
    """Write the files that differ from ``dist/`` (each through a temporary name, then renamed) and
    delete the ones no longer in the bundle; the names written, for the message."""
    written = []
    for name in sorted(files, key=lambda n: n in GENERATED):  # the course's pack before the lists naming it
        path = dist / name
        if path.is_file() and path.read_bytes() == files[name]:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(files[name])
        tmp.replace(path)
        written.append(name)
    for folder, _, names in os.walk(dist, topdown=False):
        for n in names:
            rel = (Path(folder) / n).relative_to(dist).as_posix()
            if rel not in files:
                (Path(folder) / n).unlink()
                written.append(f"{rel} (removed)")
        if Path(folder) != dist and not any(Path(folder).iterdir()):
            Path(folder).rmdir()  # the course's folder, when the course went
    return written
