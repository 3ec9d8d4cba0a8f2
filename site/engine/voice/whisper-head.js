/* The voice worker's head: runs before Emscripten's loader for whisper.cpp in one blob:
 * worker script (a blob worker opened from file:// cannot load anything else), so the
 * page posts the wasm and the model in; nothing is fetched.
 *
 *   page -> {type: 'init', wasm: ArrayBuffer, model: ArrayBuffer}  -> {type: 'ready', ms}
 *   page -> {type: 'detect', id, pcm}                             -> {type: 'language', id, guess: 'de 0.690 en 0.201 fr 0.050 …' (five) | null, ms}
 *   page -> {type: 'transcribe', id, pcm: Float32Array (16 kHz), language: 'en'}  -> {type: 'text', id, text, ms}
 *   any failure                                                   -> {type: 'error', id, message}
 */
(function () {
  'use strict';
  var M = null;
  var log = [];  // whisper.cpp's stderr, kept for the error message

  function fail(id, message) {
    self.postMessage({ type: 'error', id: id, message: message + (log.length ? ' (' + log.slice(-3).join(' | ') + ')' : '') });
  }

  function init(msg) {
    var t0 = performance.now();
    self.QuireWhisper({
      wasmBinary: new Uint8Array(msg.wasm),
      print: function () {},
      printErr: function (line) { log.push(line); if (log.length > 50) log.shift(); },
    }).then(function (mod) {
      M = mod;
      if (!use(msg.model, null)) return;
      self.postMessage({ type: 'ready', ms: Math.round(performance.now() - t0) });
    }, function (err) { fail(null, 'The voice engine did not start: ' + (err && err.message || err)); });
  }

  /** Loads a model's bytes into whisper.cpp; false (and an error posted) on failure.  One model per
   * worker: the page starts another worker for another model (site/assets/voice.js). */
  function use(model, id) {
    var bytes = new Uint8Array(model);
    var ptr = M._malloc(bytes.length);
    if (!ptr) { fail(id, 'Not enough memory for the voice model.'); return false; }
    M.HEAPU8.set(bytes, ptr);
    var rc = M._qv_init(ptr, bytes.length);
    M._free(ptr);  // whisper.cpp copied the weights: its inference buffers (next) reuse this room
    if (rc !== 0) { fail(id, 'The voice model could not be read.'); return false; }
    if (M._qv_init_state() !== 0) { fail(id, 'Not enough memory for the voice model.'); return false; }
    return true;
  }

  function withPcm(pcm, f) {
    var ptr = M._malloc(pcm.length * 4);
    if (!ptr) return null;
    M.HEAPF32.set(pcm, ptr >> 2);
    try { return f(ptr); } finally { M._free(ptr); }
  }

  function detect(msg) {
    if (!M) { fail(msg.id, 'The voice engine is not loaded.'); return; }
    var t0 = performance.now();
    var out = withPcm(msg.pcm, function (ptr) { return M._qv_detect(ptr, msg.pcm.length); });
    self.postMessage({ type: 'language', id: msg.id, guess: out ? M.UTF8ToString(out) : null, ms: Math.round(performance.now() - t0) });
  }

  function transcribe(msg) {
    if (!M) { fail(msg.id, 'The voice engine is not loaded.'); return; }
    var t0 = performance.now();
    var lang = M._malloc(8);
    M.stringToUTF8(msg.language || 'en', lang, 8);
    var out = withPcm(msg.pcm, function (ptr) { return M._qv_transcribe(ptr, msg.pcm.length, lang); });
    M._free(lang);
    if (!out) { fail(msg.id, 'The voice engine could not transcribe this recording.'); return; }
    self.postMessage({ type: 'text', id: msg.id, text: M.UTF8ToString(out).trim(), ms: Math.round(performance.now() - t0) });
  }

  self.onmessage = function (e) {
    var msg = e.data || {};
    try {
      if (msg.type === 'init') init(msg);
      else if (msg.type === 'detect') detect(msg);
      else if (msg.type === 'transcribe') transcribe(msg);
    } catch (err) {
      fail(msg.id, 'The voice engine failed: ' + (err && err.message || err));
    }
  };
})();
