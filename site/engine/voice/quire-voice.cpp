// Quire's C API over whisper.cpp, compiled with it to WebAssembly (py/quire_build/whisper/wasm.py).
// Four calls: load a model from memory, guess the language of 16 kHz mono float32 (a multilingual
// model), transcribe it in a language ("en" for tiny.en), free.  Greedy decoding, with whisper.cpp's
// temperature fallback against loops.
#include <emscripten.h>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include "whisper.h"

extern int quire_mel_pad;  // frames of silence after the audio (the build adds this knob to whisper.cpp)
extern int quire_no_timestamps;  // 1: <|notimestamps|> in the prompt (the build adds this knob too)

static struct whisper_context *g_ctx = nullptr;
static struct whisper_state *g_state = nullptr;
static std::string g_text;

static const int FRAMES_PER_SECOND = 100;  // whisper's 10 ms hop
static const int MAX_AUDIO_CTX = 1500;     // 30 s: Whisper's window
static const int HALF_WINDOW = 200;        // n_fft / 2

extern "C" {
// Loading is two calls, so the page's copy of the weights (as large as the model) is freed in
// between: the inference buffers then reuse its room instead of growing the worker's memory,
// which never shrinks.
EMSCRIPTEN_KEEPALIVE int qv_init(void *buffer, size_t size) {
    if (g_state) whisper_free_state(g_state);
    if (g_ctx) whisper_free(g_ctx);
    g_state = nullptr;
    g_ctx = whisper_init_from_buffer_no_state(buffer, size);
    return g_ctx ? 0 : 1;
}

EMSCRIPTEN_KEEPALIVE int qv_init_state(void) {
    if (!g_ctx) return 1;
    g_state = whisper_init_state(g_ctx);
    return g_state ? 0 : 1;
}

// The encoder reads 2*audio_ctx mel frames.  Whisper pads every clip to 30 s; a short
// question needs only its own frames plus one second of silence, which makes both the
// mel spectrogram and the encoder several times faster for the same words.
// The five likeliest languages of the first 30 s, as "de 0.690 en 0.201 fr 0.050 …"; null on failure
// or with an English-only model.
EMSCRIPTEN_KEEPALIVE const char *qv_detect(const float *pcm, int n_samples) {
    g_text.clear();
    if (!g_ctx || !g_state || !whisper_is_multilingual(g_ctx)) return nullptr;
    quire_mel_pad = 0;  // whisper.cpp's own padding: the encoder reads a whole 30 s window
    if (whisper_pcm_to_mel_with_state(g_ctx, g_state, pcm, n_samples, 1) != 0) return nullptr;
    std::vector<float> probs(whisper_lang_max_id() + 1, 0.0f);
    if (whisper_lang_auto_detect_with_state(g_ctx, g_state, 0, 1, probs.data()) < 0) return nullptr;
    std::vector<int> order(probs.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = (int) i;
    for (int k = 0; k < 5 && k < (int) order.size(); k++) {
        for (size_t j = k + 1; j < order.size(); j++) if (probs[order[j]] > probs[order[k]]) std::swap(order[j], order[k]);
        char part[32];
        std::snprintf(part, sizeof part, "%s%s %.3f", k ? " " : "", whisper_lang_str(order[k]), probs[order[k]]);
        g_text += part;
    }
    return g_text.c_str();
}

// Text alone: every timestamp token masked (with <|notimestamps|> in the prompt, as
// faster-whisper's without_timestamps; the tab's pieces and questions are one segment each).
static void mask_timestamps(struct whisper_context *ctx, struct whisper_state *, const whisper_token_data *, int,
                            float *logits, void *) {
    for (int i = whisper_token_beg(ctx); i < whisper_n_vocab(ctx); i++) logits[i] = -INFINITY;
}

EMSCRIPTEN_KEEPALIVE const char *qv_transcribe(const float *pcm, int n_samples, const char *language) {
    g_text.clear();
    if (!g_ctx || !g_state) return nullptr;
    whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
    int frames = (n_samples + HALF_WINDOW) / 160;
    // whisper.cpp's mel length with quire_mel_pad = 100: whole seconds, plus one.
    int n_len = (frames + FRAMES_PER_SECOND - 1) / FRAMES_PER_SECOND * FRAMES_PER_SECOND + FRAMES_PER_SECOND;
    if (n_len / 2 < MAX_AUDIO_CTX) {
        quire_mel_pad = FRAMES_PER_SECOND;
        p.audio_ctx = n_len / 2;
    } else {
        quire_mel_pad = 0;  // whisper.cpp's own 30 s windows
        p.audio_ctx = 0;
    }
    p.n_threads = 1;  // no SharedArrayBuffer from file://: single-threaded
    p.language = language && *language ? language : "en";
    p.translate = false;
    p.print_progress = false;
    p.print_realtime = false;
    p.print_special = false;
    p.print_timestamps = false;
    p.no_context = true;
    // One question, one window, one segment: without this whisper.cpp seeks on inside the
    // shortened window and decodes the trailing silence again ("... slowly? Where does ... slowly?").
    p.single_segment = true;
    p.suppress_blank = true;
    p.suppress_non_speech_tokens = true;  // as faster-whisper's default: no "( ( ( (" loops
    // Decoded without timestamps: on the tab's own samples of a test lecture faster-whisper wrote
    // 0.302 of the words wrong with them and 0.262 without (tests/test_lectures_browser.py).
    quire_no_timestamps = 1;
    p.logits_filter_callback = mask_timestamps;
    p.logits_filter_callback_user_data = nullptr;
    // Temperature fallback stays on: a repetition loop (low entropy) is decoded again, warmer.
    // OpenAI's STFT centres frame i on sample i*160 (reflect-padding the start by half a
    // window); whisper.cpp 1.4.1 starts frame i there.  Padding here gives OpenAI's frames,
    // and transcripts match faster-whisper's (without it: "how many sounds does my toes is make").
    if (n_samples <= HALF_WINDOW) return "";
    std::vector<float> padded(n_samples + HALF_WINDOW);
    for (int i = 0; i < HALF_WINDOW; i++) padded[i] = pcm[HALF_WINDOW - i];
    std::copy(pcm, pcm + n_samples, padded.begin() + HALF_WINDOW);
    if (whisper_full_with_state(g_ctx, g_state, p, padded.data(), (int) padded.size()) != 0) return nullptr;
    for (int i = 0; i < whisper_full_n_segments_from_state(g_state); i++) g_text += whisper_full_get_segment_text_from_state(g_state, i);
    return g_text.c_str();
}

EMSCRIPTEN_KEEPALIVE void qv_free(void) {
    if (g_state) whisper_free_state(g_state);
    if (g_ctx) whisper_free(g_ctx);
    g_state = nullptr;
    g_ctx = nullptr;
}
}
