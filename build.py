#!/usr/bin/env python3
"""Assemble ``dist/``: a static Quire bundle that opens over http, from disk and offline.

Every file that enters ``dist/`` from outside the repo is pinned by sha256 in
``pyproject.toml`` (``[tool.quire.*]``).  Downloads are cached outside the repo
(``~/.cache/quire-build`` or ``$QUIRE_BUILD_CACHE``), so a rebuild works offline,
and the same inputs give the same bytes.

Binary assets are emitted as classic ``.js`` files that hand base64 (gzip where
it pays) to ``self.__quirePack``: a page opened from ``file://`` may run classic
scripts but may not ``fetch``, so this is the one asset format that loads in
every way Quire is opened.

    python build.py                      # pinned runtime from PyPI (cached)
    python build.py --pyodide-dist DIR   # an official Pyodide 0.27.7 release folder
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEFAULT_CACHE = Path(os.environ.get("QUIRE_BUILD_CACHE", Path.home() / ".cache" / "quire-build"))
VIRTUAL_BASE = "https://bundle.quire.invalid/"  # never on the network: the worker's fetch shim answers it
CORE_FILES = ["pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"]
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps make zips reproducible
GZIP_WORTH_IT = 0.9  # gzip an asset only if it saves more than 10%
# Files whose base64 would only grow from gzip are left raw; this is the only knob.


class BuildError(Exception):
    """Something the person running the build must fix; the message says what."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_pins(root: Path = ROOT) -> dict:
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["quire"]


def verify(name: str, data: bytes, expected: str) -> bytes:
    actual = sha256_bytes(data)
    if actual != expected:
        raise BuildError(
            f"{name}: sha256 {actual} does not match the pinned {expected}. "
            "The download or source folder is damaged or not the pinned version; "
            "delete the build cache and build again."
        )
    return data


# --- step 1: the Pyodide runtime ------------------------------------------------

def pip_download(requirement: str, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.12", "--platform", "any",
           requirement, "-d", str(dest)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"could not download {requirement} (offline with an empty cache?):\n{result.stderr.strip()}")


def cached_download(requirement: str, filename: str, sha256: str, cache: Path) -> bytes:
    """The pinned file from the cache, downloading it with pip only when missing."""
    path = cache / "downloads" / filename
    if not path.is_file() or sha256_bytes(path.read_bytes()) != sha256:
        pip_download(requirement, path.parent)
    if not path.is_file():
        raise BuildError(f"pip did not produce {filename} for {requirement}")
    return verify(filename, path.read_bytes(), sha256)


def runtime_file_names(pins: dict, lock: dict) -> list[str]:
    """Core files plus the wheels of the boot and lazy packages, by lock-file name."""
    packages = lock["packages"]
    names = list(CORE_FILES)
    for pkg in pins["pyodide"]["boot_packages"] + pins["pyodide"]["lazy_packages"]:
        if pkg not in packages:
            raise BuildError(f"package {pkg!r} is not in this Pyodide's lock file")
        names.append(packages[pkg]["file_name"])
    return names


def fetch_runtime(pins: dict, cache: Path, pyodide_dist: Path | None = None) -> dict[str, bytes]:
    """Pyodide's files, each checked against the pins (and packages against the lock)."""
    py = pins["pyodide"]
    if pyodide_dist is not None:
        def read(name: str) -> bytes:
            path = pyodide_dist / name
            if not path.is_file():
                raise BuildError(f"{pyodide_dist} has no {name}: is it a full Pyodide {py['version']} release folder?")
            return path.read_bytes()
    else:
        wheel = cached_download(py["source"], py["source_file"], py["source_sha256"], cache)
        archive = zipfile.ZipFile(io.BytesIO(wheel))

        def read(name: str) -> bytes:
            return archive.read(py["source_prefix"] + name)

    lock_bytes = verify("pyodide-lock.json", read("pyodide-lock.json"), py["files"]["pyodide-lock.json"])
    lock = json.loads(lock_bytes)
    if lock["info"]["version"] != py["version"]:
        raise BuildError(f"the runtime is Pyodide {lock['info']['version']}, but {py['version']} is pinned")
    by_file = {p["file_name"]: p for p in lock["packages"].values()}
    files = {}
    for name in runtime_file_names(pins, lock):
        if name not in py["files"]:
            raise BuildError(f"{name} has no pinned sha256 in pyproject.toml [tool.quire.pyodide.files]")
        data = verify(name, read(name), py["files"][name])
        if name in by_file:
            verify(name + " (lock file)", data, by_file[name]["sha256"])
        files[name] = data
    return files


# --- step 2: the pure-Python wheels ---------------------------------------------

def fetch_wheels(pins: dict, cache: Path) -> dict[str, bytes]:
    wheels = {}
    for filename, sha256 in sorted(pins["wheels"].items()):
        name, version = filename.split("-")[:2]
        wheels[filename] = cached_download(f"{name}=={version}", filename, sha256, cache)
    return wheels


# --- step 3: the quire wheel ----------------------------------------------------

def deterministic_zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, entries[name], compresslevel=9)
    return out.getvalue()


def build_quire_wheel(root: Path = ROOT) -> tuple[str, bytes]:
    """``quire-<version>-py3-none-any.whl`` from ``py/quire`` plus ``prompts/`` as package data."""
    with open(root / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    entries = {}
    for path in sorted((root / "py" / "quire").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in {".py", ".json", ".md", ".txt"}:
            entries[path.relative_to(root / "py").as_posix()] = path.read_bytes()
    for path in sorted((root / "prompts").glob("*.md")):
        entries[f"quire/prompts/{path.name}"] = path.read_bytes()
    dist_info = f"quire-{version}.dist-info"
    entries[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: quire\nVersion: {version}\n".encode()
    entries[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: quire-build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries[f"{dist_info}/top_level.txt"] = b"quire\n"
    record = []
    for name in sorted(entries):
        digest = base64.urlsafe_b64encode(hashlib.sha256(entries[name]).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(entries[name])}")
    record.append(f"{dist_info}/RECORD,,")
    entries[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    return f"quire-{version}-py3-none-any.whl", deterministic_zip(entries)


# --- step 4: packing assets as classic scripts ---------------------------------

def pack(name: str, data: bytes) -> tuple[str, bool]:
    """A classic script handing ``data`` to the loader: ``__quirePack(name, gz, base64)``."""
    squeezed = gzip.compress(data, compresslevel=9, mtime=0)
    gz = len(squeezed) < GZIP_WORTH_IT * len(data)
    payload = base64.b64encode(squeezed if gz else data).decode("ascii")
    return f'self.__quirePack({json.dumps(name)},{int(gz)},"{payload}");\n', gz


def pack_name(name: str) -> str:
    return f"assets/pack/{name}.js"


def engine_source(runtime: dict[str, bytes], root: Path = ROOT) -> bytes:
    """The whole worker as one script: Pyodide's loader and our worker code.

    A blob: worker opened from file:// cannot importScripts anything else, so
    Pyodide's ``pyodide.asm.js`` is defined up front; ``loadPyodide`` then skips
    loading it because ``_createPyodideModule`` already exists.
    """
    parts = [runtime["pyodide.asm.js"], runtime["pyodide.js"]]
    for rel in ("engine/worker-assets.js", "assets/store.js", "engine/worker.js"):
        parts.append((root / "site" / rel).read_bytes())
    return b"\n;\n".join(parts)


# --- step 5: site, manifest, service worker ------------------------------------

def site_files(root: Path = ROOT) -> dict[str, bytes]:
    files = {}
    for path in sorted((root / "site").rglob("*")):
        rel = path.relative_to(root / "site").as_posix()
        if path.is_file() and not rel.startswith("engine/") and rel != "sw.js":
            files[rel] = path.read_bytes()
    for path in sorted((root / "prompts").glob("*.md")):
        files[f"prompts/{path.name}"] = path.read_bytes()
    return files


def build_id(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(f"{name}\0{sha256_bytes(files[name])}\n".encode())
    return h.hexdigest()[:16]


def assemble(pins: dict, runtime: dict[str, bytes], wheels: dict[str, bytes], root: Path = ROOT,
             ocr: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Every file of dist/, in memory, keyed by relative path."""
    files = site_files(root)
    quire_name, quire_wheel = build_quire_wheel(root)
    wheels = {**wheels, quire_name: quire_wheel}
    assets = {}

    def add(name: str, data: bytes, group: str) -> None:
        script, gz = pack(name, data)
        files[pack_name(name)] = script.encode()
        assets[name] = {"src": pack_name(name), "size": len(data), "sha256": sha256_bytes(data),
                        "gz": gz, "group": group}

    lock = json.loads(runtime["pyodide-lock.json"])["packages"]
    lazy_files = {lock[p]["file_name"] for p in pins["pyodide"]["lazy_packages"]}
    for name, data in runtime.items():
        if name in ("pyodide.asm.js", "pyodide.js"):
            continue  # they travel inside engine.js
        add(name, data, "lazy" if name in lazy_files else "boot")
    boot_wheels = set(pins["boot_wheels"]["names"]) | {"quire"}
    for name, data in sorted(wheels.items()):
        add(f"wheels/{name}", data, "boot" if name.split("-")[0] in boot_wheels else "lazy")
    add("engine.js", engine_source(runtime, root), "engine")
    for name, data in sorted(ocr_assets(pins, ocr or {}, root).items()):
        add(name, data, "ocr")  # loaded only when a scanned page needs them

    bundle_id = build_id(files)
    bundle = {
        "build": bundle_id,
        "version": _project_version(root),
        "pyodide": pins["pyodide"]["version"],
        "base": VIRTUAL_BASE,
        "bootPackages": pins["pyodide"]["boot_packages"],
        "lazyPackages": pins["pyodide"]["lazy_packages"],
        "wheels": [f"wheels/{n}" for n in sorted(wheels) if n.split("-")[0] in boot_wheels],
        "lazyWheels": [f"wheels/{n}" for n in sorted(wheels) if n.split("-")[0] not in boot_wheels],
        "assets": assets,
    }
    files["assets/bundle.js"] = ("self.QUIRE_BUNDLE = " + json.dumps(bundle, indent=1, sort_keys=True) + ";\n").encode()
    precache = sorted(["./"] + list(files))
    sw = (root / "site" / "sw.js").read_text(encoding="utf-8")
    sw = sw.replace("__BUILD__", bundle_id).replace("__FILES__", json.dumps(precache))
    files["sw.js"] = sw.encode()
    files["manifest.json"] = manifest(files, bundle_id)
    return files


def manifest(files: dict[str, bytes], bundle_id: str) -> bytes:
    listing = {name: {"size": len(data), "sha256": sha256_bytes(data)} for name, data in sorted(files.items())}
    total = sum(entry["size"] for entry in listing.values())
    return (json.dumps({"build": bundle_id, "total_bytes": total, "files": listing}, indent=1) + "\n").encode()


def _project_version(root: Path) -> str:
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


def write_dist(files: dict[str, bytes], dist: Path) -> None:
    """Write into a sibling folder, then swap, so a server never sees half a build."""
    tmp = dist.with_name(dist.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for name, data in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    old = dist.with_name(dist.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if dist.exists():
        dist.rename(old)
    tmp.rename(dist)
    shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default: dist/)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="download cache outside the repo")
    parser.add_argument("--pyodide-dist", type=Path, help="take the runtime from an official Pyodide release folder")
    parser.add_argument("--no-ocr", action="store_true", help="leave OCR out (about 8 MB smaller, e.g. for a USB stick)")
    args = parser.parse_args(argv)
    try:
        pins = load_pins()
        runtime = fetch_runtime(pins, args.cache, args.pyodide_dist)
        wheels = fetch_wheels(pins, args.cache)
        ocr = {} if args.no_ocr else fetch_ocr_or_skip(pins, args.cache)
        files = assemble(pins, runtime, wheels, ocr=ocr)
        write_dist(files, args.dist)
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    total = sum(len(d) for d in files.values())
    print(f"built {args.dist} ({len(files)} files, {total / 1e6:.1f} MB, build {json.loads(files['manifest.json'])['build']})")
    return 0


# --- OCR assets (issue 8) ---------------------------------------------------------
# pdf.js renders scanned pages and Tesseract reads them, both in blob: workers that
# the page starts only when a scanned page needs them (site/assets/ocr.js).  They come
# from npm tarballs pinned in [tool.quire.ocr]; `--no-ocr` builds leave them out.

import tarfile  # noqa: E402  (kept inside this section so it stays self-contained)

OCR_HEAD = "engine/ocr/tesseract-head.js"  # our part of the OCR worker, run before Tesseract's


def ocr_tarball_name(package: str, version: str) -> str:
    """The file ``npm pack`` writes: ``@tesseract.js-data/eng`` 1.0.0 -> ``tesseract.js-data-eng-1.0.0.tgz``."""
    return f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"


def npm_integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def npm_tarball(package: str, version: str, integrity: str, cache: Path) -> bytes:
    """The pinned tarball from the cache, fetched with ``npm pack`` only when missing or wrong."""
    path = cache / "npm" / ocr_tarball_name(package, version)
    if not path.is_file() or npm_integrity(path.read_bytes()) != integrity:
        path.parent.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError(f"{path.name} is not in the build cache and npm is not installed; "
                             "install Node.js (npm) or build with --no-ocr")
        result = subprocess.run([npm, "pack", f"{package}@{version}", "--pack-destination", str(path.parent)],
                                capture_output=True, text=True)
        if result.returncode != 0 or not path.is_file():
            raise BuildError(f"npm pack {package}@{version} failed (offline with an empty cache?); "
                             f"or build with --no-ocr:\n{result.stderr.strip()}")
    data = path.read_bytes()
    if npm_integrity(data) != integrity:
        raise BuildError(f"{path.name}: integrity {npm_integrity(data)} does not match the pinned {integrity}; "
                         "delete it from the build cache and build again")
    return data


def fetch_ocr_or_skip(pins: dict, cache: Path) -> dict[str, bytes]:
    """OCR's files, or none (with a warning) on a machine without npm and an empty cache:
    Quire still builds and runs there, and the page says OCR is not included."""
    try:
        return fetch_ocr(pins, cache)
    except BuildError as exc:
        if "npm is not installed" not in str(exc):
            raise
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


if __name__ == "__main__":
    sys.exit(main())
