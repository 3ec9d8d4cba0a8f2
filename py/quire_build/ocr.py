"""OCR assets (issue 8).

pdf.js renders scanned pages and Tesseract reads them, both in blob: workers that
the page starts only when a scanned page needs them (site/assets/ocr.js).  They come
from npm tarballs pinned in [tool.quire.ocr]; `--no-ocr` builds leave them out.
"""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

from quire_build.common import ROOT, BuildError, DownloadError, verify
from quire_build.downloads import npm_tarball

OCR_HEAD = "engine/ocr/tesseract-head.js"  # our part of the OCR worker, run before Tesseract's


def fetch_ocr_or_skip(pins: dict, cache: Path) -> dict[str, bytes]:
    """OCR's files, or none (with a warning) when they cannot be downloaded and are not
    cached: Quire still builds and runs there, and the page says OCR is not included."""
    try:
        return fetch_ocr(pins, cache)
    except DownloadError as exc:
        print(f"warning: building without OCR: {exc}", file=sys.stderr)
        return {}


def fetch_ocr(pins: dict, cache: Path) -> dict[str, bytes]:
    """Every pinned OCR file, keyed ``<pin key>/<path in package>``, e.g. ``core/tesseract-core-simd-lstm.wasm``."""
    files = {}
    for key, pin in sorted(pins["ocr"].items()):
        tarball = npm_tarball(pin["package"], pin["version"], pin["integrity"], cache)
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
            for rel, sha256 in sorted(pin["files"].items()):
                try:
                    member = archive.extractfile(f"package/{rel}")  # read in memory: nothing touches the disk
                except KeyError:
                    member = None
                if member is None:
                    raise BuildError(f"{pin['package']}@{pin['version']} has no file {rel}")
                files[f"{key}/{rel}"] = verify(f"{pin['package']}/{rel}", member.read(), sha256)
    return files


def ocr_asset_names(pins: dict) -> dict[str, str]:
    """Asset name of each OCR role; site/assets/ocr.js lists the same names."""
    ocr = pins["ocr"]
    return {
        "pdf": f"ocr/pdf-{ocr['pdfjs']['version']}.min.js",
        "pdfWorker": f"ocr/pdf.worker-{ocr['pdfjs']['version']}.min.js",
        "worker": f"ocr/tesseract-worker-{ocr['tesseract']['version']}.js",
        "wasm": f"ocr/tesseract-core-simd-lstm-{ocr['core']['version']}.wasm",
        "eng": "ocr/eng-4.0.0_best_int.traineddata.gz",
        "deu": "ocr/deu-4.0.0_best_int.traineddata.gz",
    }


def ocr_assets(pins: dict, files: dict[str, bytes], root: Path = ROOT) -> dict[str, bytes]:
    """The OCR assets to pack, by asset name.

    The Tesseract worker is one script (our head, the core's loader, Tesseract's
    worker) because a blob: worker opened from file:// cannot load anything else; the
    head hands it the wasm and the language data the page posts in.
    """
    if not files:
        return {}
    names = ocr_asset_names(pins)
    worker = b"\n;\n".join([(root / "site" / OCR_HEAD).read_bytes(),
                            files["core/tesseract-core-simd-lstm.js"],
                            files["tesseract/dist/worker.min.js"]])
    return {
        names["pdf"]: files["pdfjs/build/pdf.min.js"],
        names["pdfWorker"]: files["pdfjs/build/pdf.worker.min.js"],
        names["worker"]: worker,
        names["wasm"]: files["core/tesseract-core-simd-lstm.wasm"],
        names["eng"]: files["eng/4.0.0_best_int/eng.traineddata.gz"],
        names["deu"]: files["deu/4.0.0_best_int/deu.traineddata.gz"],
    }
