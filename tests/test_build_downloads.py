"""py/quire_build/downloads.py: pinned files from PyPI and npm, checked, with or without pip, npm or a network."""

import hashlib
import json
import shutil

import pytest

from quire_build import common, downloads, ocr
from quire_build.common import DEFAULT_CACHE, BuildError, load_pins


def test_verify_rejects_a_tampered_file():
    data = b"pyodide bytes"
    good = hashlib.sha256(data).hexdigest()
    assert common.verify("x", data, good) == data
    with pytest.raises(BuildError, match="does not match the pinned"):
        common.verify("x", data + b"!", good)


def test_a_machine_without_npm_or_network_still_builds_without_ocr(tmp_path, monkeypatch, capsys):
    pins = load_pins()
    monkeypatch.setattr(shutil, "which", lambda name: None)

    def offline(url, what, accept=None):
        raise common.DownloadError(f"could not download {what} from {url} (offline)")

    monkeypatch.setattr(downloads, "http_get", offline)
    assert ocr.fetch_ocr_or_skip(pins, tmp_path / "empty-cache") == {}
    assert "building without OCR" in capsys.readouterr().err


def test_without_npm_a_tarball_comes_straight_from_the_registry(tmp_path, monkeypatch):
    """Stock Debian has no npm: the pinned tarball is downloaded over HTTPS and its integrity checked."""
    pin = load_pins()["ocr"]["eng"]
    cached = DEFAULT_CACHE / "npm" / downloads.npm_tarball_name(pin["package"], pin["version"])
    real = downloads.npm_tarball(pin["package"], pin["version"], pin["integrity"], DEFAULT_CACHE)
    asked = []

    def registry(url, what, accept=None):
        asked.append(url)
        return real if url.endswith(f"/{pin['package']}/-/eng-{pin['version']}.tgz") else b"?"

    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(downloads, "http_get", registry)
    assert downloads.npm_tarball(pin["package"], pin["version"], pin["integrity"], tmp_path) == real
    assert asked == [f"{downloads.NPM_REGISTRY}/@tesseract.js-data/eng/-/eng-1.0.0.tgz"] and cached.is_file()

    monkeypatch.setattr(downloads, "http_get", lambda url, what, accept=None: real[:-1] + b"!")
    with pytest.raises(BuildError, match="integrity"):
        downloads.npm_tarball(pin["package"], pin["version"], pin["integrity"], tmp_path / "other")


def test_without_pip_a_wheel_comes_from_the_index_listing(tmp_path, monkeypatch):
    """No pip (stock Debian): the file is found in the index's JSON listing (PEP 691) and checked."""
    filename, sha = next((f, h) for f, h in load_pins()["wheels"].items() if f.startswith("fsrs-"))
    real = downloads.cached_download("fsrs==6.3.2", filename, sha, DEFAULT_CACHE)
    listing = {"files": [{"filename": "fsrs-0.1.0-py3-none-any.whl", "url": "https://files.example.invalid/old.whl"},
                         {"filename": filename, "url": "https://files.example.invalid/new.whl"}]}

    def index(url, what, accept=None):
        if url == f"{downloads.PYPI_SIMPLE}/fsrs/":
            assert accept == "application/vnd.pypi.simple.v1+json"
            return json.dumps(listing).encode()
        assert url == "https://files.example.invalid/new.whl"
        return real

    monkeypatch.setattr(downloads, "has_pip", lambda: False)
    monkeypatch.setattr(downloads, "http_get", index)
    assert downloads.cached_download("fsrs==6.3.2", filename, sha, tmp_path) == real
    monkeypatch.setattr(downloads, "http_get", lambda url, what, accept=None: (
        json.dumps(listing).encode() if url.endswith("/fsrs/") else real + b"tampered"))
    with pytest.raises(BuildError, match="does not match the pinned"):
        downloads.cached_download("fsrs==6.3.2", filename, sha, tmp_path / "other")
