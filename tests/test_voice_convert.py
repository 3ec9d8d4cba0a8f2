"""The voice pack's build-time pieces (py/quire_build/whisper): CTranslate2 reader, ggml writer,
mel filterbank, vocabulary, quantizers, asset names; no browser, no Emscripten."""

import io
import re
import struct

import numpy as np
import pytest

from conftest import ROOT
from quire_build.whisper import ct2, ggml, pack, wasm
from quire_build.common import load_pins
from quire_build.wheel import build_quire_wheel


def ct2_bytes(variables: dict, aliases: dict | None = None) -> bytes:
    """A model.bin written the way CTranslate2's ModelSpec._serialize writes it."""
    ids = {np.dtype(np.float32): 0, np.dtype(np.int8): 1, np.dtype(np.int16): 2, np.dtype(np.float16): 4}
    out = io.BytesIO()

    def string(s):
        out.write(struct.pack("<H", len(s) + 1) + s.encode() + b"\0")

    out.write(struct.pack("<I", 6))
    string("WhisperSpec")
    out.write(struct.pack("<II", 3, len(variables)))
    for name, value in variables.items():
        value = np.asarray(value)
        string(name)
        out.write(struct.pack(f"<B{value.ndim}I", value.ndim, *value.shape))
        out.write(struct.pack("<BI", ids[value.dtype], value.nbytes) + value.tobytes())
    out.write(struct.pack("<I", len(aliases or {})))
    for alias, target in (aliases or {}).items():
        string(alias)
        string(target)
    return out.getvalue()


def tiny_whisper(n_state=32, n_vocab=64, layers=1) -> dict:
    """A Whisper-shaped CTranslate2 variable set, small enough to check by hand."""
    rng = np.random.default_rng(0)
    f16 = lambda *shape: rng.normal(0, 0.1, shape).astype(np.float16)  # noqa: E731
    v = {"encoder/conv1/weight": f16(n_state, 80, 3), "encoder/conv1/bias": f16(n_state),
         "encoder/conv2/weight": f16(n_state, n_state, 3), "encoder/conv2/bias": f16(n_state),
         "encoder/position_encodings/encodings": f16(30, n_state), "encoder/layer_norm/gamma": f16(n_state),
         "encoder/layer_norm/beta": f16(n_state), "encoder/num_heads": np.array(2, np.int16),
         "decoder/num_heads": np.array(2, np.int16), "decoder/embeddings/weight": f16(n_vocab, n_state),
         "decoder/position_encodings/encodings": f16(8, n_state), "decoder/layer_norm/gamma": f16(n_state),
         "decoder/layer_norm/beta": f16(n_state)}
    for side in ("encoder", "decoder"):
        for i in range(layers):
            p = f"{side}/layer_{i}/"
            for ln in ("self_attention", "ffn") + (("attention",) if side == "decoder" else ()):
                v[p + ln + "/layer_norm/gamma"], v[p + ln + "/layer_norm/beta"] = f16(n_state), f16(n_state)
            v[p + "self_attention/linear_0/weight"], v[p + "self_attention/linear_0/bias"] = f16(3 * n_state, n_state), f16(3 * n_state)
            v[p + "self_attention/linear_1/weight"], v[p + "self_attention/linear_1/bias"] = f16(n_state, n_state), f16(n_state)
            v[p + "ffn/linear_0/weight"], v[p + "ffn/linear_0/bias"] = f16(4 * n_state, n_state), f16(4 * n_state)
            v[p + "ffn/linear_1/weight"], v[p + "ffn/linear_1/bias"] = f16(n_state, 4 * n_state), f16(n_state)
            if side == "decoder":
                v[p + "attention/linear_0/weight"], v[p + "attention/linear_0/bias"] = f16(n_state, n_state), f16(n_state)
                v[p + "attention/linear_1/weight"], v[p + "attention/linear_1/bias"] = f16(2 * n_state, n_state), f16(2 * n_state)
                v[p + "attention/linear_2/weight"], v[p + "attention/linear_2/bias"] = f16(n_state, n_state), f16(n_state)
    return v


def read_ggml(data: bytes) -> dict:
    """Parse a ggml Whisper file the way whisper.cpp 1.4.1's whisper_model_load does."""
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return vals

    magic, *hparams = take("I11i")
    n_mel, n_fft = take("ii")
    filters = np.frombuffer(data, "<f4", n_mel * n_fft, pos).reshape(n_mel, n_fft)
    pos += 4 * n_mel * n_fft
    (n_vocab,) = take("i")
    vocab = []
    for _ in range(n_vocab):
        (n,) = take("I")
        vocab.append(data[pos:pos + n])
        pos += n
    sizes = {0: lambda n: 4 * n, 1: lambda n: 2 * n, 6: lambda n: n // 32 * 22, 8: lambda n: n // 32 * 36}
    tensors = {}
    while pos < len(data):
        n_dims, name_len, kind = take("iii")
        ne = take(f"{n_dims}i")
        name = data[pos:pos + name_len].decode()
        pos += name_len
        nbytes = sizes[kind](int(np.prod(ne)))
        tensors[name] = (kind, ne, data[pos:pos + nbytes])
        pos += nbytes
    return {"magic": magic, "hparams": hparams, "filters": filters, "vocab": vocab, "tensors": tensors}


TOKENIZER = b'{"model": {"vocab": {"!": 0, "\\u0120the": 1, "<|endoftext|>": 2}}}'


def test_ct2_reader_round_trips_variables_and_aliases():
    v = {"a/weight": np.arange(6, dtype=np.float16).reshape(2, 3), "n": np.array(6, np.int16)}
    spec, got = ct2.read_model(ct2_bytes(v, {"b/weight": "a/weight"}))
    assert spec == "WhisperSpec"
    assert got["a/weight"].shape == (2, 3) and got["a/weight"].dtype == np.float16
    assert np.array_equal(got["b/weight"], v["a/weight"]) and int(got["n"]) == 6


@pytest.mark.parametrize("damage, message", [
    (lambda b: struct.pack("<I", 5) + b[4:], "binary version 5"),
    (lambda b: b[:-20], "truncated"),
])
def test_ct2_reader_rejects_damaged_files(damage, message):
    with pytest.raises((ct2.Ct2Error, struct.error), match=message):
        ct2.read_model(damage(ct2_bytes({"x": np.zeros(8, np.float16)})))


def test_fused_attention_is_split_into_query_key_value():
    v = tiny_whisper()
    t = ggml.whisper_tensors(v)
    w = v["encoder/layer_0/self_attention/linear_0/weight"]
    assert np.array_equal(t["encoder.blocks.0.attn.query.weight"], w[:32])
    assert np.array_equal(t["encoder.blocks.0.attn.key.weight"], w[32:64])
    assert np.array_equal(t["encoder.blocks.0.attn.value.weight"], w[64:])
    kv = v["decoder/layer_0/attention/linear_1/weight"]
    assert np.array_equal(t["decoder.blocks.0.cross_attn.value.weight"], kv[32:])
    assert "encoder.blocks.0.attn.key.bias" not in t  # Whisper's keys have no bias
    assert t["encoder.conv1.bias"].shape == (32, 1)
    # whisper.cpp 1.4.1 loads exactly these per layer: 15 (encoder) and 24 (decoder), plus 11 fixed.
    assert len(t) == 15 + 24 + 11


@pytest.mark.parametrize("ftype, matrix_kind", [("f16", 1), ("q8_0", 8), ("q5_0", 6)])
def test_ggml_file_layout_as_whisper_cpp_reads_it(ftype, matrix_kind):
    data = ggml.convert(tiny_whisper(), {}, TOKENIZER, ftype)
    assert data == ggml.convert(tiny_whisper(), {}, TOKENIZER, ftype)  # same inputs, same bytes
    f = read_ggml(data)
    assert f["magic"] == 0x67676D6C
    assert f["hparams"] == [64, 30, 32, 2, 1, 8, 32, 2, 1, 80, ggml.FTYPES[ftype][0]]
    assert f["filters"].shape == (80, 201)
    assert f["vocab"] == [b"!", b" the", b"<|endoftext|>"]
    kinds = {name: kind for name, (kind, _, _) in f["tensors"].items()}
    assert kinds["decoder.token_embedding.weight"] == matrix_kind
    assert kinds["encoder.conv1.weight"] == (1 if ftype != "f32" else 0)
    assert kinds["encoder.positional_embedding"] == 0 and kinds["encoder.conv1.bias"] == 0
    assert f["tensors"]["encoder.conv1.weight"][1] == (3, 80, 32)  # ggml order: numpy's shape reversed


def test_q8_0_hand_example_and_error_bounds():
    x = np.array([0.0, 1.27, -0.635, 0.005] + [0.0] * 28, np.float32)
    block = np.frombuffer(ggml.quantize_q8_0(x), dtype=[("d", "<f4"), ("qs", "i1", 32)])[0]
    assert block["d"] == pytest.approx(0.01)
    assert list(block["qs"][:4]) == [0, 127, -64, 1]  # -63.5 rounds away from zero, as C's roundf
    rng = np.random.default_rng(1)
    w = rng.normal(0, 0.1, 32 * 64).astype(np.float32)
    # q8_0 rounds (half a step); q5_0 clips +16 steps to 15 on the side opposite the maximum (one step).
    for quantize, dtype, levels, steps in [(ggml.quantize_q8_0, [("d", "<f4"), ("qs", "i1", 32)], 127, 0.5),
                                           (ggml.quantize_q5_0, [("d", "<f2"), ("qh", "<u4"), ("qs", "u1", 16)], 16, 1.0)]:
        blocks = np.frombuffer(quantize(w), dtype=dtype)
        assert len(blocks) == 64
        err = np.abs(dequantize(blocks, levels) - w).reshape(-1, 32).max(axis=1)
        amax = np.abs(w).reshape(-1, 32).max(axis=1)
        assert np.all(err <= amax / levels * steps * 1.01 + 1e-4)
        assert np.mean(err) < amax.mean() / levels  # and far from the bound on average


def dequantize(blocks, levels) -> np.ndarray:
    """ggml's dequantize_row_q8_0 / q5_0, for the error-bound check."""
    d = blocks["d"].astype(np.float32)[:, None]
    if levels == 127:
        return (blocks["qs"].astype(np.float32) * d).ravel()
    lo, hi = blocks["qs"] & 0x0F, blocks["qs"] >> 4
    q = np.empty((len(blocks), 32), np.int32)
    q[:, 0::2], q[:, 1::2] = lo, hi
    q |= (((blocks["qh"][:, None] >> np.arange(32, dtype=np.uint32)) & 1) << 4).astype(np.int32)
    return ((q - 16) * d).ravel()


def test_mel_filterbank_is_librosa_slaney():
    f = ggml.mel_filters()
    assert f.shape == (80, 201) and f.dtype == np.float32
    assert f[0, 1] == pytest.approx(0.02486259490251541, rel=1e-5)  # librosa.filters.mel(sr=16000, n_fft=400)[0, 1]
    assert np.all(f >= 0) and np.all((f > 0).sum(axis=1) >= 1)
    assert np.argmax(f[-1]) > np.argmax(f[0])


def test_gpt2_byte_decoder_covers_all_bytes():
    decoder = ggml.byte_decoder()
    assert sorted(decoder.values()) == list(range(256))
    assert decoder["Ġ"] == 32 and decoder["Ċ"] == 10


def test_asset_names_agree_with_voice_js():
    pins = load_pins()["voice"]
    js = (ROOT / "site" / "assets" / "voice.js").read_text()
    listed = dict(re.findall(r"^\s+(\w+): '(voice/[^']+)'", js, re.M))
    assert listed == pack.asset_names(pins)


def test_the_voice_builder_is_not_shipped_in_the_quire_wheel():
    import zipfile
    _, wheel = build_quire_wheel()
    names = zipfile.ZipFile(io.BytesIO(wheel)).namelist()
    assert not [n for n in names if "whisper" in n or "/voice/" in n or "quire_build" in n]
    assert "quire/app.py" in names


def test_whisper_sources_refuse_an_unpatchable_whisper_cpp(tmp_path):
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name in wasm.SOURCES:
            data = b"int main() {}\n"
            info = tarfile.TarInfo("p/" + name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    with pytest.raises(wasm.CompileError, match="padding patch does not apply"):
        wasm.whisper_sources(buf.getvalue(), "p/")


def test_missing_emscripten_without_root_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(pack.shutil, "which", lambda name: None)
    monkeypatch.setattr(pack.Path, "is_file", lambda self: False)
    with pytest.raises(pack.VoiceUnavailable, match="apt-get install -y emscripten.*--no-voice"):
        pack.find_emcc(install=False)
