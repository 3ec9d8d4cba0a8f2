/* QuireVoice: spoken questions to text inside this tab, over http and from file://, offline.
 *
 * whisper.cpp (compiled to WebAssembly, single-threaded SIMD) runs Whisper tiny.en in a
 * blob: worker that the page starts only on first use, from the same classic-script
 * packs as every other asset (quire.loadChecked, assets/boot-assets.js).  Audio never leaves the tab
 * and is not stored.  English only.
 *
 *   QuireVoice.available()                   -> false when the build left voice out
 *   QuireVoice.load({onProgress})            -> resolves when the engine is ready
 *   QuireVoice.transcribe(pcm16k)            -> {text, ms}   (Float32Array, 16 kHz mono)
 *   QuireVoice.toMono16k(audioBuffer)        -> Float32Array, resampled in the page
 */
(function () {
  'use strict';

  // Asset names; build's quire.voice.pack.asset_names() makes the same ones (a test checks both agree).
  var FILES = {
    worker: 'voice/whisper-1.4.1.js',
    wasm: 'voice/whisper-1.4.1.wasm',
    model: 'voice/tiny.en-q5_0.bin',
  };
  var SAMPLE_RATE = 16000;  // Whisper's input rate
  var LIMITS = { loadMs: 180000, transcribeMs: 300000 };
  var TEXT = {  // every sentence the voice engine shows (one place for the translators)
    notIncluded: QuireI18n.t('Voice input is not included in this copy of Quire (it was built with --no-voice, or without Emscripten). Type your question instead.'),
    missing: QuireI18n.t('A voice file could not be loaded, so this copy of Quire is incomplete. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'),
    damaged: QuireI18n.t('A voice file does not match its checksum. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'),
    timeout: QuireI18n.t('The voice engine did not answer in time. Try a shorter recording, or reload the page.'),
    engine: QuireI18n.t('The voice engine failed: '),
  };

  var B = self.QUIRE_BUNDLE;

  function voiceError(kind, message) {
    var err = new Error(message);
    err.name = 'VoiceError';
    err.kind = kind;  // not-included | missing | damaged | timeout | engine
    return err;
  }

  function available() {
    return !!(B && B.assets && Object.keys(FILES).every(function (role) { return B.assets[FILES[role]]; }));
  }

  /* One voice file's bytes, checked against its sha256 by the page's loader (quire.loadChecked). */
  function loadFile(name) {
    return self.quire.loadChecked(name).catch(function (err) {
      throw voiceError(err && err.kind === 'damaged' ? 'damaged' : 'missing', err && err.kind === 'damaged' ? TEXT.damaged : TEXT.missing);
    });
  }

  function withTimeout(promise, ms) {
    var timer;
    return Promise.race([promise, new Promise(function (resolve, reject) {
      timer = setTimeout(function () { reject(voiceError('timeout', TEXT.timeout)); }, ms);
    })]).finally(function () { clearTimeout(timer); });
  }

  /* ---------------- the worker ---------------- */

  var worker = null;
  var ready = null;
  var pending = {};
  var nextId = 1;

  /** Loads the three files (progress by bytes), then starts whisper.cpp in its worker. */
  function load(opts) {
    opts = opts || {};
    if (!available()) return Promise.reject(voiceError('not-included', TEXT.notIncluded));
    if (ready) return ready;
    var t0 = performance.now();
    var names = [FILES.worker, FILES.wasm, FILES.model];
    var total = names.reduce(function (n, name) { return n + B.assets[name].size; }, 0);
    var done = 0;
    function progress(stage) {
      if (opts.onProgress) opts.onProgress({ fraction: Math.min(1, done / total), stage: stage });
    }
    progress('Loading the voice engine');
    var files = names.map(function (name) {
      return loadFile(name).then(function (buffer) { done += B.assets[name].size; progress('Loading the voice engine'); return buffer; });
    });
    ready = withTimeout(Promise.all(files).then(function (buffers) {
      progress('Starting the voice engine');
      worker = new Worker(URL.createObjectURL(new Blob([buffers[0]], { type: 'text/javascript' })), { name: 'quire-voice' });
      return new Promise(function (resolve, reject) {
        worker.onmessage = function (e) {
          var msg = e.data;
          if (msg.type === 'ready') { resolve({ ms: Math.round(performance.now() - t0), startMs: msg.ms }); return; }
          var call = msg.id != null && pending[msg.id];
          if (msg.type === 'error' && !call) { reject(voiceError('engine', TEXT.engine + msg.message)); return; }
          if (!call) return;
          delete pending[msg.id];
          if (msg.type === 'text') call.resolve({ text: clean(msg.text), ms: msg.ms });
          else call.reject(voiceError('engine', TEXT.engine + msg.message));
        };
        worker.onerror = function (e) { reject(voiceError('engine', TEXT.engine + (e.message || 'the worker stopped'))); };
        worker.postMessage({ type: 'init', wasm: buffers[1], model: buffers[2] }, [buffers[1], buffers[2]]);
      });
    }), LIMITS.loadMs);
    ready.catch(function () {
      if (worker) worker.terminate();
      worker = null;
      ready = null;  // a later press may try again
    });
    return ready;
  }

  /** Whisper's non-speech marks dropped: '[BLANK_AUDIO]', '[ Silence ]', '(music)', a music note (U+266A) -> ''. */
  function clean(text) {
    return dropRepeats(text.replace(/\[[a-z_ ]+\]|\((?:music|silence|inaudible|applause)\)|[\u266a\u266b]/gi, ' ').replace(/\s+/g, ' ').trim());
  }

  /** Whisper tiny's known loop, a sentence said again word for word, kept once: 'A? A?' -> 'A?'. */
  function dropRepeats(text) {
    var sentences = text.match(/[^.?!]+[.?!]*/g) || [];
    return sentences.filter(function (s, i) { return i === 0 || s.trim().toLowerCase() !== sentences[i - 1].trim().toLowerCase(); })
      .join('').trim();
  }

  var SILENCE_RMS = 0.002;  // about -54 dBFS: below this nothing was said (Whisper would invent "you")

  function rms(pcm) {
    var sum = 0;
    for (var i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i];
    return Math.sqrt(sum / Math.max(1, pcm.length));
  }

  function transcribe(pcm) {
    if (rms(pcm) < SILENCE_RMS) return Promise.resolve({ text: '', ms: 0, silent: true });
    return load().then(function () {
      var id = nextId++;
      var answer = new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
      worker.postMessage({ type: 'transcribe', id: id, pcm: pcm }, [pcm.buffer]);
      return withTimeout(answer, LIMITS.transcribeMs);
    });
  }

  /* ---------------- audio ---------------- */

  /** An AudioBuffer (any rate, any channels) as 16 kHz mono float32, resampled by the browser. */
  function toMono16k(buffer) {
    var length = Math.max(1, Math.ceil(buffer.duration * SAMPLE_RATE));
    var ctx = new OfflineAudioContext(1, length, SAMPLE_RATE);
    var src = ctx.createBufferSource();
    src.buffer = buffer;  // the offline context mixes the channels down to its one
    src.connect(ctx.destination);
    src.start();
    return ctx.startRendering().then(function (out) { return out.getChannelData(0).slice(); });
  }

  self.QuireVoice = { available: available, load: load, transcribe: transcribe, toMono16k: toMono16k, clean: clean, FILES: FILES,
                      SAMPLE_RATE: SAMPLE_RATE, TEXT: TEXT };
})();
