"""CTranslate2 Whisper weights -> whisper.cpp's ggml model file (the v1.4 format).

whisper.cpp reads: magic, eleven int32 hyper-parameters, the mel filterbank, the
vocabulary as byte strings, then each tensor as (n_dims, name length, type, ne[...],
name, data) with ``ne`` in ggml's order (fastest dimension first, so numpy's shape
reversed).  CTranslate2 fuses self-attention's q/k/v into one matrix and
cross-attention's k/v into another; whisper.cpp wants them apart, under the names
OpenAI's PyTorch checkpoint uses.

    >>> whisper_names(1)["encoder/layer_0/self_attention/linear_1/weight"]
    'encoder.blocks.0.attn.out.weight'
"""

from __future__ import annotations

import io
import json
import struct

import numpy as np

MAGIC = 0x67676D6C  # "ggml"
SAMPLE_RATE = 16000  # Whisper's fixed input rate
N_FFT = 400  # 25 ms windows
N_MELS = 80
# ggml type ids and whisper.cpp file types (ggml.h of the vendored whisper.cpp).
GGML_F32, GGML_F16, GGML_Q5_0, GGML_Q8_0 = 0, 1, 6, 8
FTYPES = {"f16": (1, GGML_F16), "q8_0": (7, GGML_Q8_0), "q5_0": (8, GGML_Q5_0)}
QK = 32  # values per quantization block (both q8_0 and q5_0)
# Two-dimensional tensors whisper.cpp keeps in f32 whatever the file type.
KEEP_F32 = {"encoder.conv1.bias", "encoder.conv2.bias", "encoder.positional_embedding", "decoder.positional_embedding"}

_PARTS = {  # CTranslate2 layer part -> whisper's, per layer
    "self_attention/layer_norm/gamma": "attn_ln.weight", "self_attention/layer_norm/beta": "attn_ln.bias",
    "self_attention/linear_1/weight": "attn.out.weight", "self_attention/linear_1/bias": "attn.out.bias",
    "attention/layer_norm/gamma": "cross_attn_ln.weight", "attention/layer_norm/beta": "cross_attn_ln.bias",
    "attention/linear_0/weight": "cross_attn.query.weight", "attention/linear_0/bias": "cross_attn.query.bias",
    "attention/linear_2/weight": "cross_attn.out.weight", "attention/linear_2/bias": "cross_attn.out.bias",
    "ffn/layer_norm/gamma": "mlp_ln.weight", "ffn/layer_norm/beta": "mlp_ln.bias",
    "ffn/linear_0/weight": "mlp.0.weight", "ffn/linear_0/bias": "mlp.0.bias",
    "ffn/linear_1/weight": "mlp.2.weight", "ffn/linear_1/bias": "mlp.2.bias",
}
_FIXED = {
    "encoder/conv1/weight": "encoder.conv1.weight", "encoder/conv1/bias": "encoder.conv1.bias",
    "encoder/conv2/weight": "encoder.conv2.weight", "encoder/conv2/bias": "encoder.conv2.bias",
    "encoder/position_encodings/encodings": "encoder.positional_embedding",
    "encoder/layer_norm/gamma": "encoder.ln_post.weight", "encoder/layer_norm/beta": "encoder.ln_post.bias",
    "decoder/embeddings/weight": "decoder.token_embedding.weight",
    "decoder/position_encodings/encodings": "decoder.positional_embedding",
    "decoder/layer_norm/gamma": "decoder.ln.weight", "decoder/layer_norm/beta": "decoder.ln.bias",
}


class ConvertError(ValueError):
    """The weights are not a Whisper model this converter can write for whisper.cpp."""


def whisper_names(n_layers: int) -> dict[str, str]:
    """CTranslate2 variable name -> whisper.cpp tensor name, for the unfused tensors."""
    names = dict(_FIXED)
    for side in ("encoder", "decoder"):
        for i in range(n_layers):
            for part, target in _PARTS.items():
                if side == "decoder" or not part.startswith("attention/"):  # the encoder has no cross-attention
                    names[f"{side}/layer_{i}/{part}"] = f"{side}.blocks.{i}.{target}"
    return names


def split_fused(variables: dict, n_layers: int) -> dict[str, np.ndarray]:
    """The fused attention projections taken apart: q/k/v (self) and k/v (cross).

    Whisper's key projections have no bias; CTranslate2 stores zeros there, dropped here.
    """
    out = {}
    for side in ("encoder", "decoder"):
        for i in range(n_layers):
            w = variables[f"{side}/layer_{i}/self_attention/linear_0/weight"]
            b = variables[f"{side}/layer_{i}/self_attention/linear_0/bias"]
            q, k, v = np.split(w, 3)
            qb, _, vb = np.split(b, 3)
            prefix = f"{side}.blocks.{i}.attn"
            out.update({f"{prefix}.query.weight": q, f"{prefix}.query.bias": qb, f"{prefix}.key.weight": k,
                        f"{prefix}.value.weight": v, f"{prefix}.value.bias": vb})
            if side == "decoder":
                w = variables[f"decoder/layer_{i}/attention/linear_1/weight"]
                b = variables[f"decoder/layer_{i}/attention/linear_1/bias"]
                k, v = np.split(w, 2)
                _, vb = np.split(b, 2)
                prefix = f"decoder.blocks.{i}.cross_attn"
                out.update({f"{prefix}.key.weight": k, f"{prefix}.value.weight": v, f"{prefix}.value.bias": vb})
    return out


def whisper_tensors(variables: dict) -> dict[str, np.ndarray]:
    """Every tensor whisper.cpp loads, by its name, in checkpoint order of names."""
    n_layers = sum(1 for name in variables if name.startswith("encoder/layer_") and name.endswith("ffn/linear_0/weight"))
    if n_layers == 0 or "decoder/embeddings/weight" not in variables:
        raise ConvertError("these weights are not a CTranslate2 Whisper model (no encoder layers or token embedding)")
    tensors = {target: variables[source] for source, target in whisper_names(n_layers).items()}
    tensors.update(split_fused(variables, n_layers))
    for conv in ("encoder.conv1.bias", "encoder.conv2.bias"):
        tensors[conv] = tensors[conv].reshape(-1, 1)  # whisper.cpp adds them as [1, n_state]
    return dict(sorted(tensors.items()))


def mel_filters(sr: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """Slaney-style mel filterbank, as ``librosa.filters.mel(sr, n_fft, n_mels)`` (what Whisper ships).

    >>> mel_filters().shape
    (80, 201)
    """
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0

    def hz_to_mel(f):
        f = np.asarray(f, dtype=np.float64)
        return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, f / f_sp)

    def mel_to_hz(m):
        return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)

    fftfreqs = np.fft.rfftfreq(n_fft, 1.0 / sr)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2.0), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    lower = -ramps[:n_mels] / fdiff[:n_mels, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights.astype(np.float32)


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level BPE alphabet, reversed: token character -> byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def vocabulary(tokenizer_json: bytes) -> list[bytes]:
    r"""The BPE tokens (ids 0..n-1) as raw bytes; whisper.cpp names the special tokens itself.

    >>> vocabulary(b'{"model": {"vocab": {"\\u0120a": 1, "!": 0}}}')
    [b'!', b' a']
    """
    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    decoder = byte_decoder()
    tokens = sorted(vocab.items(), key=lambda item: item[1])
    if [i for _, i in tokens] != list(range(len(tokens))):
        raise ConvertError("tokenizer.json's vocabulary ids are not 0..n-1")
    return [bytes(decoder[c] for c in text) if all(c in decoder for c in text) else text.encode() for text, _ in tokens]


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C's roundf (numpy's round goes to even)."""
    return np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))


def quantize_q8_0(x: np.ndarray) -> bytes:
    """ggml's reference q8_0 (this ggml: float32 scale + 32 int8 per block)."""
    blocks = x.astype(np.float32).reshape(-1, QK)
    d = (np.abs(blocks).max(axis=1) / np.float32(127)).astype(np.float32)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    q = round_half_away(blocks * inv[:, None]).astype(np.int8)
    out = np.zeros(len(blocks), dtype=[("d", "<f4"), ("qs", "i1", QK)])
    out["d"], out["qs"] = d, q
    return out.tobytes()


def quantize_q5_0(x: np.ndarray) -> bytes:
    """ggml's reference q5_0: float16 scale, 32 high bits, 16 bytes of nibbles per block."""
    blocks = x.astype(np.float32).reshape(-1, QK)
    idx = np.abs(blocks).argmax(axis=1)
    d = (blocks[np.arange(len(blocks)), idx] / np.float32(-16)).astype(np.float32)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    vi = np.minimum(31, (blocks * inv[:, None] + np.float32(16.5)).astype(np.int32)).astype(np.uint32)
    qs = ((vi[:, 0::2] & 0x0F) | ((vi[:, 1::2] & 0x0F) << 4)).astype(np.uint8)
    qh = (((vi >> 4) & 1) << np.arange(QK, dtype=np.uint32)).sum(axis=1, dtype=np.uint32)
    out = np.zeros(len(blocks), dtype=[("d", "<f2"), ("qh", "<u4"), ("qs", "u1", QK // 2)])
    out["d"], out["qh"], out["qs"] = d.astype(np.float16), qh, qs
    return out.tobytes()


def tensor_bytes(name: str, array: np.ndarray, ftype: str) -> tuple[int, bytes]:
    """(ggml type, data) for one tensor in a file of type ``ftype``."""
    file_type = FTYPES[ftype][1]
    if array.ndim == 1 or name in KEEP_F32:
        return GGML_F32, array.astype("<f4").tobytes()
    if array.ndim == 2 and file_type == GGML_Q8_0:
        return GGML_Q8_0, quantize_q8_0(array)
    if array.ndim == 2 and file_type == GGML_Q5_0:
        return GGML_Q5_0, quantize_q5_0(array)
    return GGML_F16, array.astype("<f2").tobytes()  # the conv kernels, and every matrix in an f16 file


def convert(model_bin_vars: dict, config: dict, tokenizer_json: bytes, ftype: str = "q8_0") -> bytes:
    """A whisper.cpp model file from CTranslate2 Whisper variables; the same inputs give the same bytes."""
    if ftype not in FTYPES:
        raise ConvertError(f"unknown model type {ftype!r}; choose one of {', '.join(FTYPES)}")
    v = model_bin_vars
    tensors = whisper_tensors(v)
    vocab = vocabulary(tokenizer_json)
    n_vocab, n_state = v["decoder/embeddings/weight"].shape
    n_layer = sum(1 for name in tensors if name.endswith("mlp.0.weight") and name.startswith("encoder."))
    hparams = [n_vocab, v["encoder/position_encodings/encodings"].shape[0], n_state,
               int(v["encoder/num_heads"]), n_layer, v["decoder/position_encodings/encodings"].shape[0],
               n_state, int(v["decoder/num_heads"]), n_layer, v["encoder/conv1/weight"].shape[1],
               FTYPES[ftype][0]]
    out = io.BytesIO()
    out.write(struct.pack("<I11i", MAGIC, *hparams))
    filters = mel_filters(n_mels=hparams[9])
    out.write(struct.pack("<ii", *filters.shape) + filters.astype("<f4").tobytes())
    out.write(struct.pack("<i", len(vocab)))
    for token in vocab:
        out.write(struct.pack("<I", len(token)) + token)
    for name, array in tensors.items():
        kind, data = tensor_bytes(name, array, ftype)
        encoded = name.encode()
        out.write(struct.pack(f"<iii{array.ndim}i", array.ndim, len(encoded), kind, *reversed(array.shape)))
        out.write(encoded + data)
    return out.getvalue()
