"""build.py: pinned inputs, a manifest that matches dist/, no URL outside the bundle, same bytes twice."""

import base64
import gzip
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402

# URLs that may appear inside the bundle because nothing ever fetches them:
INERT_URLS = {
    # Pyodide's default CDN, replaced because the worker always passes indexURL and
    # the page's Content-Security-Policy would refuse it anyway.
    "https://cdn.jsdelivr.net/pyodide/v",
}
LOCAL_URL = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\]|[a-z0-9.-]*\.invalid)([:/]|$)")
XML_NAMESPACE = re.compile(r"^http://www\.w3\.org/")
URL = re.compile(r"""(?:https?:)?//[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2,}[^\s"'`)<>]*""")


def unpack(script: bytes) -> bytes:
    """The payload of an ``assets/pack/*.js`` file."""
    m = re.fullmatch(rb'self\.__quirePack\(("[^"]+"),([01]),"([A-Za-z0-9+/=]*)"\);\n', script)
    assert m, "pack file does not have the loader's shape"
    data = base64.b64decode(m.group(3))
    return gzip.decompress(data) if m.group(2) == b"1" else data


def test_verify_rejects_a_tampered_file():
    data = b"pyodide bytes"
    good = hashlib.sha256(data).hexdigest()
    assert build.verify("x", data, good) == data
    with pytest.raises(build.BuildError, match="does not match the pinned"):
        build.verify("x", data + b"!", good)


def test_runtime_from_a_release_folder_is_checked_file_by_file(tmp_path, built_dist):
    """--pyodide-dist takes an official release folder; a tampered file there is refused."""
    pins = build.load_pins()
    wheel_runtime = build.fetch_runtime(pins, build.DEFAULT_CACHE)
    folder = tmp_path / "pyodide"
    folder.mkdir()
    for name, data in wheel_runtime.items():
        (folder / name).write_bytes(data)
    assert build.fetch_runtime(pins, build.DEFAULT_CACHE, folder) == wheel_runtime

    numpy = next(n for n in wheel_runtime if n.startswith("numpy-"))
    tampered = bytearray(wheel_runtime[numpy])
    tampered[len(tampered) // 2] ^= 0xFF
    (folder / numpy).write_bytes(bytes(tampered))
    with pytest.raises(build.BuildError, match=numpy):
        build.fetch_runtime(pins, build.DEFAULT_CACHE, folder)

    (folder / numpy).unlink()
    with pytest.raises(build.BuildError, match="has no " + re.escape(numpy)):
        build.fetch_runtime(pins, build.DEFAULT_CACHE, folder)


def test_manifest_matches_dist(built_dist):
    manifest = json.loads((built_dist / "manifest.json").read_text())
    on_disk = {p.relative_to(built_dist).as_posix() for p in built_dist.rglob("*") if p.is_file()}
    assert set(manifest["files"]) == on_disk - {"manifest.json"}
    for name, entry in manifest["files"].items():
        data = (built_dist / name).read_bytes()
        assert entry == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}, name
    assert re.fullmatch(r"[0-9a-f]{16}", manifest["build"])


def test_bundle_table_matches_pack_payloads(built_dist):
    """Every asset the page can ask for decodes to the bytes and hash bundle.js promises."""
    text = (built_dist / "assets/bundle.js").read_text()
    bundle = json.loads(text.removeprefix("self.QUIRE_BUNDLE = ").rstrip().rstrip(";"))
    pins = build.load_pins()
    for name, info in bundle["assets"].items():
        data = unpack((built_dist / info["src"]).read_bytes())
        assert hashlib.sha256(data).hexdigest() == info["sha256"], name
        assert len(data) == info["size"]
        pinned = pins["pyodide"]["files"].get(name) or pins["wheels"].get(name.removeprefix("wheels/"))
        if pinned:
            assert info["sha256"] == pinned, f"{name} is not the pinned file"
    assert bundle["base"].startswith("https://") and ".invalid/" in bundle["base"]
    assert {a["group"] for a in bundle["assets"].values()} == {"boot", "lazy", "engine", "ocr"}
    lazy = {n for n, a in bundle["assets"].items() if a["group"] == "lazy"}
    assert any(n.startswith("scikit_learn-") for n in lazy) and any(n.startswith("scipy-") for n in lazy)


def test_quire_wheel_carries_the_package_and_prompts(built_dist):
    bundle = json.loads((built_dist / "assets/bundle.js").read_text().removeprefix("self.QUIRE_BUNDLE = ").rstrip().rstrip(";"))
    name = next(w for w in bundle["wheels"] if "/quire-" in w)
    data = unpack((built_dist / bundle["assets"][name]["src"]).read_bytes())
    with zipfile.ZipFile(__import__("io").BytesIO(data)) as z:
        names = set(z.namelist())
        assert "quire/__init__.py" in names and "quire/prompts.py" in names
        assert {f"quire/prompts/{p.name}" for p in (ROOT / "prompts").glob("*.md")} <= names
        assert z.testzip() is None
        record = z.read(next(n for n in names if n.endswith("/RECORD"))).decode()
        assert "quire/__init__.py,sha256=" in record


def _urls(text: str) -> set[str]:
    return {u for u in URL.findall(text) if u.startswith("http")}


def test_no_url_outside_the_bundle(built_dist):
    """Nothing we ship points at the network; Pyodide's code is scanned too."""
    offending = {}
    for path in built_dist.rglob("*"):
        rel = path.relative_to(built_dist).as_posix()
        if not path.is_file() or rel.startswith("assets/pack/"):
            continue
        for url in _urls(path.read_text(encoding="utf-8")):
            if not (LOCAL_URL.match(url) or XML_NAMESPACE.match(url)):
                offending.setdefault(rel, set()).add(url)
    engine = unpack((built_dist / "assets/pack/engine.js.js").read_bytes()).decode("utf-8")
    for url in _urls(engine):
        if not (LOCAL_URL.match(url) or any(url.startswith(ok) for ok in INERT_URLS)):
            offending.setdefault("engine.js", set()).add(url)
    assert not offending, f"URLs outside the bundle: {offending}"


def test_scanner_finds_an_external_url(tmp_path):
    """The scanner above must be able to fail."""
    assert _urls('<script src="https://cdn.example.com/x.js">') == {"https://cdn.example.com/x.js"}
    assert not LOCAL_URL.match("https://cdn.example.com/x.js")
    assert LOCAL_URL.match("http://127.0.0.1:11434/api/chat")


def test_same_inputs_give_the_same_bytes(tmp_path):
    """Two builds in a row (not against the session build, so editing sources mid-run is harmless)."""
    first, again = tmp_path / "one", tmp_path / "two"
    assert build.main(["--dist", str(first), "--no-ocr"]) == 0
    assert build.main(["--dist", str(again), "--no-ocr"]) == 0
    manifest = (first / "manifest.json").read_bytes()
    assert (again / "manifest.json").read_bytes() == manifest
    for name in json.loads(manifest)["files"]:
        assert (again / name).read_bytes() == (first / name).read_bytes(), name


def test_pack_gzips_only_when_it_pays():
    text = b"abc " * 1000
    script, gz = build.pack("t.txt", text)
    assert gz and unpack(script.encode()) == text
    noise = hashlib.sha256(b"seed").digest() * 1  # 32 random-looking bytes do not compress
    script, gz = build.pack("n.bin", noise)
    assert not gz and unpack(script.encode()) == noise


def test_service_worker_lists_every_file_and_the_build(built_dist):
    sw = (built_dist / "sw.js").read_text()
    manifest = json.loads((built_dist / "manifest.json").read_text())
    files = json.loads(re.search(r"var FILES = (\[.*?\]);", sw).group(1))
    assert set(files) == {"./"} | (set(manifest["files"]) - {"sw.js"})
    assert f"var BUILD = '{manifest['build']}'" in sw


def test_a_machine_without_npm_still_builds_without_ocr(tmp_path, monkeypatch, capsys):
    pins = build.load_pins()
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    assert build.fetch_ocr_or_skip(pins, tmp_path / "empty-cache") == {}
    assert "building without OCR" in capsys.readouterr().err
