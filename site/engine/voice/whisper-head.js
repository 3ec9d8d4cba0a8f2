/* The voice worker's head: runs before Emscripten's loader for whisper.cpp in one blob:
 * worker script (a blob worker opened from file:// cannot load anything else), so the
 * page posts the wasm and the model in; nothing is fetched.
 *
 *   page -> {type: 'init', wasm: ArrayBuffer, modelBytes}         the engine starts, with room for the model
 *   page -> {type: 'part', offset, bytes: ArrayBuffer} ...         each part of the model, written into that room
 *   page -> {type: 'load'}                                        -> {type: 'ready', ms}: whisper.cpp reads the model
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

  var started = null;  // resolves once the engine runs and the model's room is taken
  var room = 0, roomBytes = 0, t0 = 0;

  function init(msg) {
    t0 = performance.now();
    started = self.QuireWhisper({
      wasmBinary: new Uint8Array(msg.wasm),
      print: function () {},
      printErr: function (line) { log.push(line); if (log.length > 50) log.shift(); },
    }).then(function (mod) {
      M = mod;
      roomBytes = msg.modelBytes;
      room = M._malloc(roomBytes);
      if (!room) throw new Error('Not enough memory for the voice model.');
    }, function (err) { throw new Error('The voice engine did not start: ' + (err && err.message || err)); });
    started.catch(function (err) { fail(null, err.message); });
  }

  /* Messages keep their order through `started`: a part posted before the engine ran waits for it. */
  function part(msg) {
    started.then(function () {
      if (msg.offset + msg.bytes.byteLength > roomBytes) throw new Error('The voice model is larger than announced.');
      M.HEAPU8.set(new Uint8Array(msg.bytes), room + msg.offset);
    }).catch(function (err) { fail(null, err.message); });
  }

  /** whisper.cpp reads the model from its room, which is then freed: its inference buffers (next)
   * reuse it.  One model per worker: the page starts another worker for another model
   * (site/assets/voice.js). */
  function load() {
    started.then(function () {
      var rc = M._qv_init(room, roomBytes);
      M._free(room);
      room = 0;
      if (rc !== 0) { fail(null, 'The voice model could not be read.'); return; }
      if (M._qv_init_state() !== 0) { fail(null, 'Not enough memory for the voice model.'); return; }
      self.postMessage({ type: 'ready', ms: Math.round(performance.now() - t0) });
    }, function () {});
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
      else if (msg.type === 'part') part(msg);
      else if (msg.type === 'load') load();
      else if (msg.type === 'detect') detect(msg);
      else if (msg.type === 'transcribe') transcribe(msg);
    } catch (err) {
      fail(msg.id, 'The voice engine failed: ' + (err && err.message || err));
    }
  };
})();
