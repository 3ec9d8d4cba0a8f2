"""build.py: pinned inputs, a manifest that matches dist/, no URL outside the bundle, same bytes twice."""

import fnmatch
import hashlib
import io
import json
import re
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402
from conftest import LEAN_BUILD  # noqa: E402
from quire_build import common, downloads, precompile  # noqa: E402
from quire_build import images as file_images  # noqa: E402
from quire_build import runtime as runtime_step, wheel as wheel_step  # noqa: E402
from quire_build import pack as packing  # noqa: E402

# URLs that may appear inside the bundle because nothing ever fetches them:
INERT_URLS = {
    # Pyodide's default CDN, replaced because the worker always passes indexURL and
    # the page's Content-Security-Policy would refuse it anyway.
    "https://cdn.jsdelivr.net/pyodide/v",
}
# The cloud providers Settings offers as presets (issue 29): their addresses are shipped as text, and
# the page reaches one only after the person chose it and confirmed it (the CSP admits no other host).
PROVIDER_URL = re.compile(r"^https://(api\.openai\.com|generativelanguage\.googleapis\.com|api\.anthropic\.com)([:/]|$)")
LOCAL_URL = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\]|[a-z0-9.-]*\.invalid)([:/]|$)")
XML_NAMESPACE = re.compile(r"^http://www\.w3\.org/")
URL = re.compile(r"""(?:https?:)?//[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2,}[^\s"'`)<>]*""")


def unpack(script: bytes) -> bytes:
    """The payload of an ``assets/pack/*.js`` file."""
    return packing.unpack(script)[1]


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
    assert {a["group"] for a in bundle["assets"].values()} == {"boot", "lazy", "engine", "ocr", "voice", "embedder"}
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
    wheel = wheel_step.deterministic_zip({"a/x.py": b"x = 1", "a/y.c": b"int y;"})
    assert runtime_step.strip_wheel(wheel, ["*.h"]) is wheel
    assert zipfile.ZipFile(io.BytesIO(runtime_step.strip_wheel(wheel, ["*.c"]))).namelist() == ["a/x.py"]


def test_file_image_round_trips():
    files = {"pkg/__init__.py": b"", "pkg/data.bin": bytes(range(256)), "pkg/\u00e9t\u00e9.py": b"x"}
    assert file_images.read_image(file_images.file_image(files)) == files
    with pytest.raises(ValueError):
        file_images.read_image(b"PK\x03\x04")


def test_boot_images_carry_the_wheels_and_compiled_modules(built_dist):
    """quire, numpy and every pure-Python wheel reach the worker as file images: the wheel's
    files, less the stripped ones, plus unchecked-hash .pyc files made by the runtime's Python.
    Nothing is left for micropip after ready (the first call waited for it)."""
    bundle = bundle_of(built_dist)
    images = {i["package"]: i["asset"] for i in bundle["bootImages"] + bundle["wheelImages"]}
    assert set(images) == {"numpy", "quire", "snowballstemmer", "pypdf", "fsrs", "typing_extensions"}
    assert bundle["lazyWheels"] == []
    quire = file_images.read_image(unpack((built_dist / bundle["assets"][images["quire"]]["src"]).read_bytes()))
    assert "quire/__init__.py" in quire and "quire/prompts.py" in quire
    assert {f"quire/prompts/{p.name}" for p in (ROOT / "prompts").glob("*.md")} <= set(quire)
    record = quire[next(n for n in quire if n.endswith("/RECORD"))].decode()
    assert "quire/__init__.py,sha256=" in record
    assert quire["quire/__init__.py"] == (ROOT / "py/quire/__init__.py").read_bytes()
    pyc = quire["quire/__pycache__/__init__.cpython-312.pyc"]
    assert pyc[4:8] == (0b01).to_bytes(4, "little"), "expected an unchecked hash-based .pyc (PEP 552 flags = 1)"
    numpy = file_images.read_image(unpack((built_dist / bundle["assets"][images["numpy"]]["src"]).read_bytes()))
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
    runtime = runtime_step.trim_runtime(pins, build.fetch_runtime(pins, build.DEFAULT_CACHE))
    modules = pins["pyodide"]["snapshot_imports"]
    one = precompile.make_snapshot(runtime, tmp_path / "a", modules)
    two = precompile.make_snapshot(runtime, tmp_path / "b", modules)
    assert one["data"] == two["data"] and one["sha256"] == two["sha256"]
    sources = {"pkg/__init__.py": b"X = {'a', 'b', 'c'}\n", "pkg/mod.py": b"def f():\n    return 1\n"}
    pycs = precompile.compile_pycs(sources, runtime, tmp_path / "a")
    assert set(pycs) == {"pkg/__pycache__/__init__.cpython-312.pyc", "pkg/__pycache__/mod.cpython-312.pyc"}
    assert precompile.compile_pycs(sources, runtime, tmp_path / "b") == pycs


def test_a_machine_without_node_builds_without_the_precompile_steps(tmp_path, monkeypatch, capsys):
    pins = build.load_pins()
    runtime = runtime_step.trim_runtime(pins, build.fetch_runtime(pins, build.DEFAULT_CACHE))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert precompile.make_snapshot(runtime, tmp_path / "empty-cache", ["json"]) is None
    assert "no Pyodide memory snapshot" in capsys.readouterr().err
    assert precompile.compile_pycs({"a.py": b"x = 1"}, runtime, tmp_path / "empty-cache") == {}


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
            if not (LOCAL_URL.match(url) or XML_NAMESPACE.match(url) or PROVIDER_URL.match(url)):
                offending.setdefault(rel, set()).add(url)
    engine = unpack((built_dist / "assets/pack/engine.js.js").read_bytes()).decode("utf-8")
    for url in _urls(engine):
        if not (LOCAL_URL.match(url) or PROVIDER_URL.match(url) or any(url.startswith(ok) for ok in INERT_URLS)):
            offending.setdefault("engine.js", set()).add(url)
    assert not offending, f"URLs outside the bundle: {offending}"


def test_scanner_finds_an_external_url(tmp_path):
    """The scanner above must be able to fail."""
    assert _urls('<script src="https://cdn.example.com/x.js">') == {"https://cdn.example.com/x.js"}
    assert not LOCAL_URL.match("https://cdn.example.com/x.js")
    assert LOCAL_URL.match("http://127.0.0.1:11434/api/chat")
    assert not PROVIDER_URL.match("https://api.openai.com.evil.test/v1") and PROVIDER_URL.match("https://api.openai.com/v1")


def test_same_inputs_give_the_same_bytes(tmp_path):
    """Two builds in a row (not against the session build, so editing sources mid-run is harmless)."""
    first, again = tmp_path / "one", tmp_path / "two"
    assert build.main(["--dist", str(first), *LEAN_BUILD]) == 0
    assert build.main(["--dist", str(again), *LEAN_BUILD]) == 0
    manifest = (first / "manifest.json").read_bytes()
    assert (again / "manifest.json").read_bytes() == manifest
    for name in json.loads(manifest)["files"]:
        assert (again / name).read_bytes() == (first / name).read_bytes(), name


def test_service_worker_lists_every_file_and_the_build(built_dist):
    sw = (built_dist / "sw.js").read_text()
    manifest = json.loads((built_dist / "manifest.json").read_text())
    files = json.loads(re.search(r"var FILES = (\[.*?\]);", sw).group(1))
    assert set(files) == {"./"} | (set(manifest["files"]) - {"sw.js"})
    assert f"var BUILD = '{manifest['build']}'" in sw


def test_core_files_come_from_the_official_npm_package(tmp_path):
    """pyodide.asm.wasm & co. are the bytes of npm pyodide@0.27.7; the shipped lock lists only
    the packages the bundle carries, with the official sha256 for every untrimmed one."""
    import tarfile

    pins = build.load_pins()
    py = pins["pyodide"]
    tarball = downloads.npm_tarball(py["npm_package"], py["version"], py["npm_integrity"], build.DEFAULT_CACHE)
    runtime = build.fetch_runtime(pins, build.DEFAULT_CACHE)
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for name in common.CORE_FILES:
            assert runtime[name] == archive.extractfile(f"package/{name}").read(), name
        official = json.loads(archive.extractfile("package/pyodide-lock.json").read())["packages"]
    trimmed = runtime_step.trim_runtime(pins, runtime)
    shipped = json.loads(trimmed["pyodide-lock.json"])["packages"]
    assert set(shipped) == {k for k, p in official.items() if p["file_name"] in runtime}
    for key, pkg in shipped.items():
        untouched = trimmed[pkg["file_name"]] == runtime[pkg["file_name"]]
        assert (pkg["sha256"] == official[key]["sha256"]) == untouched, key
        assert pkg["sha256"] == hashlib.sha256(trimmed[pkg["file_name"]]).hexdigest(), key
