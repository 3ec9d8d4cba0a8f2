"""Pinned files from PyPI and npm, cached outside the repo (``--cache``), so a rebuild works offline.

No pip or npm is needed: with them the download goes through them, without them
straight to the registry over HTTPS.  Every file is checked against its pin either way.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from quire_build.common import BuildError, DownloadError, sha256_bytes, verify

# Registries, overridable the way pip and npm themselves are (a mirror, a proxy).
PYPI_SIMPLE = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
NPM_REGISTRY = os.environ.get("npm_config_registry", "https://registry.npmjs.org").rstrip("/")


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
    if has_pip() and filename.endswith(".whl"):
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


def npm_tarball_name(package: str, version: str) -> str:
    """The file ``npm pack`` writes: ``@tesseract.js-data/eng`` 1.0.0 -> ``tesseract.js-data-eng-1.0.0.tgz``."""
    return f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"


def npm_integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def npm_tarball(package: str, version: str, integrity: str, cache: Path) -> bytes:
    """The pinned tarball from the cache, fetched when missing or wrong: with ``npm pack``
    when npm is installed, else straight from the registry (the integrity is checked either way)."""
    path = cache / "npm" / npm_tarball_name(package, version)
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
