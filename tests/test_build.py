"""build.py: pinned inputs, a manifest that matches dist/, no URL outside the bundle, same bytes twice."""

import fnmatch
import hashlib
import io
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
    return build.unpack(script)[1]


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


def bundle_of(dist: Path) -> dict:
    return json.loads((dist / "assets/bundle.js").read_text().removeprefix("self.QUIRE_BUNDLE = ").rstrip().rstrip(";"))


def test_bundle_table_matches_pack_payloads(built_dist):
    """Every asset the page can ask for decodes to the bytes and hash bundle.js promises,
    and each is the pinned file, or a wheel trimmed as the shipped lock file records."""
    bundle = bundle_of(built_dist)
    pins = build.load_pins()
    lock = json.loads(unpack((built_dist / bundle["assets"]["pyodide-lock.json"]["src"]).read_bytes()))
    locked = {p["file_name"]: p["sha256"] for p in lock["packages"].values()}
    for name, info in bundle["assets"].items():
        data = unpack((built_dist / info["src"]).read_bytes())
        assert hashlib.sha256(data).hexdigest() == info["sha256"], name
        assert len(data) == info["size"]
        pinned = pins["pyodide"]["files"].get(name) or pins["wheels"].get(name.removeprefix("wheels/"))
        if name in locked:
            assert info["sha256"] == locked[name], f"{name} is not what the shipped lock file says"
        elif pinned and name != "pyodide-lock.json":
            assert info["sha256"] == pinned, f"{name} is not the pinned file"
    assert bundle["base"].startswith("https://") and ".invalid/" in bundle["base"]
    assert {a["group"] for a in bundle["assets"].values()} == {"boot", "lazy", "engine", "ocr"}
    lazy = {n for n, a in bundle["assets"].items() if a["group"] == "lazy"}
    assert any(n.startswith("scikit_learn-") for n in lazy) and any(n.startswith("scipy-") for n in lazy)
    first = {n for n, a in bundle["assets"].items() if a.get("first")}
    assert first == {"pyodide.asm.wasm", "pyodide-snapshot.bin", "python_stdlib.zip", "pyodide-lock.json"}


def test_trimmed_wheels_lose_only_what_strip_names(built_dist):
    """scipy without its sample images and C sources; every module and data file it needs stays."""
    pins = build.load_pins()
    original = build.fetch_runtime(pins, build.DEFAULT_CACHE)
    bundle = bundle_of(built_dist)
    name = next(n for n in bundle["assets"] if n.startswith("scipy-"))
    before = set(zipfile.ZipFile(io.BytesIO(original[name])).namelist())
    after = set(zipfile.ZipFile(io.BytesIO(unpack((built_dist / bundle["assets"][name]["src"]).read_bytes()))).namelist())
    gone = before - after
    assert {"scipy/misc/face.dat", "scipy/misc/ascent.dat"} <= gone
    assert all(any(fnmatch.fnmatchcase(n, pat) for pat in pins["pyodide"]["strip"]) for n in gone)
    assert "scipy/stats/_sobol_direction_numbers.npz" in after and "scipy/sparse/__init__.py" in after


def test_strip_wheel_keeps_the_same_bytes_when_nothing_matches():
    wheel = build.deterministic_zip({"a/x.py": b"x = 1", "a/y.c": b"int y;"})
    assert build.strip_wheel(wheel, ["*.h"]) is wheel
    assert zipfile.ZipFile(io.BytesIO(build.strip_wheel(wheel, ["*.c"]))).namelist() == ["a/x.py"]


def test_file_image_round_trips():
    files = {"pkg/__init__.py": b"", "pkg/data.bin": bytes(range(256)), "pkg/\u00e9t\u00e9.py": b"x"}
    assert build.read_image(build.file_image(files)) == files
    with pytest.raises(ValueError):
        build.read_image(b"PK\x03\x04")


def test_boot_images_carry_the_wheels_and_compiled_modules(built_dist):
    """quire, snowballstemmer and numpy reach the worker as file images: the wheel's files,
    less the stripped ones, plus unchecked-hash .pyc files made by the runtime's Python."""
    bundle = bundle_of(built_dist)
    images = {i["package"]: i["asset"] for i in bundle["bootImages"] + bundle["wheelImages"]}
    assert set(images) == {"numpy", "quire", "snowballstemmer"}
    quire = build.read_image(unpack((built_dist / bundle["assets"][images["quire"]]["src"]).read_bytes()))
    assert "quire/__init__.py" in quire and "quire/prompts.py" in quire
    assert {f"quire/prompts/{p.name}" for p in (ROOT / "prompts").glob("*.md")} <= set(quire)
    record = quire[next(n for n in quire if n.endswith("/RECORD"))].decode()
    assert "quire/__init__.py,sha256=" in record
    assert quire["quire/__init__.py"] == (ROOT / "py/quire/__init__.py").read_bytes()
    pyc = quire["quire/__pycache__/__init__.cpython-312.pyc"]
    assert pyc[4:8] == (0b01).to_bytes(4, "little"), "expected an unchecked hash-based .pyc (PEP 552 flags = 1)"
    numpy = build.read_image(unpack((built_dist / bundle["assets"][images["numpy"]]["src"]).read_bytes()))
    assert "numpy/_core/_multiarray_umath.cpython-312-wasm32-emscripten.so" in numpy
    assert "numpy/__pycache__/__init__.cpython-312.pyc" in numpy
    assert not [n for n in numpy if n.endswith((".pyi", ".pxd", ".h", ".c"))]


def test_the_bundle_names_its_memory_snapshot(built_dist):
    bundle = bundle_of(built_dist)
    snap = bundle["snapshot"]
    assert snap["asset"] == "pyodide-snapshot.bin" and snap["asset"] in bundle["assets"]
    assert re.fullmatch(r"[0-9a-f]{64}", snap["sha256"]) and snap["memoryBase"] == 1024
    data = unpack((built_dist / bundle["assets"][snap["asset"]]["src"]).read_bytes())
    assert len(data) > 16 * 2**20  # Pyodide's whole heap after start-up


def test_the_node_steps_give_the_same_bytes_every_time(tmp_path):
    """The snapshot and the .pyc files are made afresh (empty caches) twice: same bytes."""
    pins = build.load_pins()
    runtime = build.trim_runtime(pins, build.fetch_runtime(pins, build.DEFAULT_CACHE))
    modules = pins["pyodide"]["snapshot_imports"]
    one = build.make_snapshot(runtime, tmp_path / "a", modules)
    two = build.make_snapshot(runtime, tmp_path / "b", modules)
    assert one["data"] == two["data"] and one["sha256"] == two["sha256"]
    sources = {"pkg/__init__.py": b"X = {'a', 'b', 'c'}\n", "pkg/mod.py": b"def f():\n    return 1\n"}
    pycs = build.compile_pycs(sources, runtime, tmp_path / "a")
    assert set(pycs) == {"pkg/__pycache__/__init__.cpython-312.pyc", "pkg/__pycache__/mod.cpython-312.pyc"}
    assert build.compile_pycs(sources, runtime, tmp_path / "b") == pycs


def test_a_machine_without_node_builds_without_the_precompile_steps(tmp_path, monkeypatch, capsys):
    pins = build.load_pins()
    runtime = build.trim_runtime(pins, build.fetch_runtime(pins, build.DEFAULT_CACHE))
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    assert build.make_snapshot(runtime, tmp_path / "empty-cache", ["json"]) is None
    assert "no Pyodide memory snapshot" in capsys.readouterr().err
    assert build.compile_pycs({"a.py": b"x = 1"}, runtime, tmp_path / "empty-cache") == {}


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
    assert gz and unpack(script) == text
    noise = hashlib.sha256(b"seed").digest() * 1  # 32 random-looking bytes do not compress
    script, gz = build.pack("n.bin", noise)
    assert not gz and unpack(script) == noise


@pytest.mark.parametrize("size", [0, 1, 14, 15, 119, 120, 121, 1000])
def test_pack_round_trips_every_length(size):
    data = (hashlib.sha256(str(size).encode()).digest() * 40)[:size]
    script, _ = build.pack("x.bin", data)
    assert build.unpack(script) == ("x.bin", data)
    units = script[2:].decode("utf-16-le")
    declared = int(units[:units.index(',"')].rsplit(",", 1)[1])
    payload = units[units.index(',"') + 2:-4]
    # 15 bits per character, all in 0x1000..0x8FFF: no quote, backslash, line break or surrogate
    assert all(0x1000 <= ord(c) <= 0x8FFF for c in payload)
    assert len(payload) == 64 * -(-declared // build.PACK_BLOCK)


def test_pack_is_utf16_with_a_byte_order_mark():
    """The BOM makes browsers read the script as UTF-16 whatever charset a server claims."""
    script, _ = build.pack("x.bin", b"payload")
    assert script.startswith(b"\xff\xfe")
    assert script[2:].decode("utf-16-le").startswith('self.__quirePack("x.bin",0,7,"')


def test_service_worker_lists_every_file_and_the_build(built_dist):
    sw = (built_dist / "sw.js").read_text()
    manifest = json.loads((built_dist / "manifest.json").read_text())
    files = json.loads(re.search(r"var FILES = (\[.*?\]);", sw).group(1))
    assert set(files) == {"./"} | (set(manifest["files"]) - {"sw.js"})
    assert f"var BUILD = '{manifest['build']}'" in sw


def test_a_machine_without_npm_or_network_still_builds_without_ocr(tmp_path, monkeypatch, capsys):
    pins = build.load_pins()
    monkeypatch.setattr(build.shutil, "which", lambda name: None)

    def offline(url, what, accept=None):
        raise build.DownloadError(f"could not download {what} from {url} (offline)")

    monkeypatch.setattr(build, "http_get", offline)
    assert build.fetch_ocr_or_skip(pins, tmp_path / "empty-cache") == {}
    assert "building without OCR" in capsys.readouterr().err


def test_without_npm_a_tarball_comes_straight_from_the_registry(tmp_path, monkeypatch):
    """Stock Debian has no npm: the pinned tarball is downloaded over HTTPS and its integrity checked."""
    pin = build.load_pins()["ocr"]["eng"]
    cached = build.DEFAULT_CACHE / "npm" / build.ocr_tarball_name(pin["package"], pin["version"])
    real = build.npm_tarball(pin["package"], pin["version"], pin["integrity"], build.DEFAULT_CACHE)
    asked = []

    def registry(url, what, accept=None):
        asked.append(url)
        return real if url.endswith(f"/{pin['package']}/-/eng-{pin['version']}.tgz") else b"?"

    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    monkeypatch.setattr(build, "http_get", registry)
    assert build.npm_tarball(pin["package"], pin["version"], pin["integrity"], tmp_path) == real
    assert asked == [f"{build.NPM_REGISTRY}/@tesseract.js-data/eng/-/eng-1.0.0.tgz"] and cached.is_file()

    monkeypatch.setattr(build, "http_get", lambda url, what, accept=None: real[:-1] + b"!")
    with pytest.raises(build.BuildError, match="integrity"):
        build.npm_tarball(pin["package"], pin["version"], pin["integrity"], tmp_path / "other")


def test_without_pip_a_wheel_comes_from_the_index_listing(tmp_path, monkeypatch):
    """No pip (stock Debian): the file is found in the index's JSON listing (PEP 691) and checked."""
    filename, sha = next((f, h) for f, h in build.load_pins()["wheels"].items() if f.startswith("fsrs-"))
    real = build.cached_download("fsrs==6.3.2", filename, sha, build.DEFAULT_CACHE)
    listing = {"files": [{"filename": "fsrs-0.1.0-py3-none-any.whl", "url": "https://files.example.invalid/old.whl"},
                         {"filename": filename, "url": "https://files.example.invalid/new.whl"}]}

    def index(url, what, accept=None):
        if url == f"{build.PYPI_SIMPLE}/fsrs/":
            assert accept == "application/vnd.pypi.simple.v1+json"
            return json.dumps(listing).encode()
        assert url == "https://files.example.invalid/new.whl"
        return real

    monkeypatch.setattr(build, "has_pip", lambda: False)
    monkeypatch.setattr(build, "http_get", index)
    assert build.cached_download("fsrs==6.3.2", filename, sha, tmp_path) == real
    monkeypatch.setattr(build, "http_get", lambda url, what, accept=None: (
        json.dumps(listing).encode() if url.endswith("/fsrs/") else real + b"tampered"))
    with pytest.raises(build.BuildError, match="does not match the pinned"):
        build.cached_download("fsrs==6.3.2", filename, sha, tmp_path / "other")


def test_core_files_come_from_the_official_npm_package(tmp_path):
    """pyodide.asm.wasm & co. are the bytes of npm pyodide@0.27.7; the shipped lock lists only
    the packages the bundle carries, with the official sha256 for every untrimmed one."""
    import tarfile

    pins = build.load_pins()
    py = pins["pyodide"]
    tarball = build.npm_tarball(py["npm_package"], py["version"], py["npm_integrity"], build.DEFAULT_CACHE)
    runtime = build.fetch_runtime(pins, build.DEFAULT_CACHE)
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for name in build.CORE_FILES:
            assert runtime[name] == archive.extractfile(f"package/{name}").read(), name
        official = json.loads(archive.extractfile("package/pyodide-lock.json").read())["packages"]
    trimmed = build.trim_runtime(pins, runtime)
    shipped = json.loads(trimmed["pyodide-lock.json"])["packages"]
    assert set(shipped) == {k for k, p in official.items() if p["file_name"] in runtime}
    for key, pkg in shipped.items():
        untouched = trimmed[pkg["file_name"]] == runtime[pkg["file_name"]]
        assert (pkg["sha256"] == official[key]["sha256"]) == untouched, key
        assert pkg["sha256"] == hashlib.sha256(trimmed[pkg["file_name"]]).hexdigest(), key
