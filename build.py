#!/usr/bin/env python3
"""Assemble ``dist/``: a static Quire bundle that opens over http, from disk and offline.

Every file that enters ``dist/`` from outside the repo is pinned by sha256 in
``pyproject.toml`` (``[tool.quire.*]``).  Downloads are cached outside the repo
(``~/.cache/quire-build`` or ``$QUIRE_BUILD_CACHE``), so a rebuild works offline,
and the same inputs give the same bytes.

Binary assets are emitted as classic ``.js`` files that hand their bytes (gzip
where it pays, 15 bits per UTF-16 character) to ``self.__quirePack``: a page
opened from ``file://`` may run classic scripts but may not ``fetch``, so this is
the one asset format that loads in every way Quire is opened.

The steps live in ``py/quire_build/`` (one module per concept; see its ``__init__``);
this file is the entry point and reads as the list of them, in order.

    python build.py                      # pinned runtime from PyPI (cached)
    python build.py --pyodide-dist DIR   # an official Pyodide 0.27.7 release folder
    python build.py --kiosk              # every page a kiosk (docs/kiosk.md)
    python build.py --library course.quirevault                # a bundle that carries a course (docs/courses.md)
    python build.py --library course.quirevault --library-only # ... put into dist/ as built, in seconds
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "py"))

from quire_build.assemble import assemble, finish, with_course, write_dist  # noqa: E402
from quire_build.common import DEFAULT_CACHE, ROOT, BuildError, load_pins  # noqa: E402
from quire_build.embedder import fetch_embedder_or_skip  # noqa: E402
from quire_build.kiosk import kiosk_config  # noqa: E402
from quire_build.library import DROP_IN, dist_files, read_bundle, read_course, write_changed  # noqa: E402
from quire_build.ocr import fetch_ocr_or_skip  # noqa: E402
from quire_build.precompile import make_snapshot  # noqa: E402
from quire_build.runtime import fetch_runtime, fetch_wheels, trim_runtime  # noqa: E402
from quire_build.voice import fetch_voice_or_skip  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default: dist/)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="download cache outside the repo")
    parser.add_argument("--pyodide-dist", type=Path, help="take the runtime from an official Pyodide release folder")
    parser.add_argument("--no-ocr", action="store_true", help="leave OCR out (6.2 MB smaller, e.g. for a USB stick)")
    parser.add_argument("--no-voice", action="store_true",
                        help="leave voice input out (about 31 MB smaller; no Emscripten needed)")
    parser.add_argument("--no-embedder", action="store_true",
                        help="leave in-browser embeddings out (about 77 MB smaller; no Emscripten needed)")
    parser.add_argument("--no-precompile", action="store_true",
                        help="leave out the Pyodide memory snapshot and .pyc files (the steps that need Node.js; "
                             "the engine then starts ~2 s slower)")
    parser.add_argument("--kiosk", action="store_true",
                        help="make every page a kiosk for a shared screen, as ?kiosk does (docs/kiosk.md)")
    parser.add_argument("--kiosk-idle", type=float, metavar="MINUTES",
                        help="minutes without input before a kiosk resets for the next visitor (default 5)")
    parser.add_argument("--library", type=Path, metavar="VAULT",
                        help="carry this vault as the bundle's course: offered to every student on first open, "
                             "and a kiosk's known library (docs/courses.md)")
    parser.add_argument("--library-title", metavar="TEXT",
                        help="the course's title as students see it (default: the category most of its documents share)")
    parser.add_argument("--library-only", action="store_true",
                        help="only put the course (or, without --library, no course) into the bundle already in --dist: "
                             "seconds instead of a whole build")
    args = parser.parse_args(argv)
    if args.library_title is not None and args.library is None:
        parser.error("--library-title needs --library VAULT")
    try:
        course = read_course(args.library, args.library_title) if args.library else None
        if args.library_only:
            return library_only(args.dist, course)
        kiosk = kiosk_config(args.kiosk, args.kiosk_idle)
        pins = load_pins()
        runtime = trim_runtime(pins, fetch_runtime(pins, args.cache, args.pyodide_dist))
        wheels = fetch_wheels(pins, args.cache)
        ocr = {} if args.no_ocr else fetch_ocr_or_skip(pins, args.cache)
        voice = {} if args.no_voice else fetch_voice_or_skip(pins, args.cache)
        embedder = {} if args.no_embedder else fetch_embedder_or_skip(pins, args.cache)
        snapshot = None if args.no_precompile else make_snapshot(runtime, args.cache, pins["pyodide"]["snapshot_imports"])
        files = assemble(pins, runtime, wheels, ocr=ocr, snapshot=snapshot, voice=voice,
                         pyc_cache=None if args.no_precompile else args.cache, embedder=embedder, kiosk=kiosk,
                         course=course)
        write_dist(files, args.dist)
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    total = sum(len(d) for d in files.values())
    print(f"built {args.dist} ({len(files)} files, {total / 1e6:.1f} MB, build {json.loads(files['manifest.json'])['build']})")
    return 0


def library_only(dist: Path, course: tuple[bytes, dict] | None) -> int:
    """The course (or none) put into the bundle already built in ``dist``: its pack, bundle.js, sw.js
    and the manifest rewritten, every other file left as it is."""
    bundle = read_bundle(dist)
    files = dist_files(dist)
    files.setdefault(DROP_IN, b"")  # a bundle built before the drop-in slot existed gets it, as a whole build has
    files = finish(with_course(files, bundle, course), bundle)
    changed = write_changed(files, dist)
    what = f"course {course[1]['title']!r} ({course[1]['documents']} documents, {course[1]['passages']} passages)" \
        if course else "no course"
    print(f"{dist} now carries {what}, build {bundle['build']} ({len(changed)} files written)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
