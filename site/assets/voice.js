/* QuireVoice: spoken questions to text inside this tab, over http and from file://, offline.
 *
 * whisper.cpp (compiled to WebAssembly, single-threaded SIMD) runs Whisper tiny.en in a
 * blob: worker that the page starts only on first use, from the same classic-script
 * packs as every other asset (quire.loadChecked, assets/boot-assets.js).  Audio never leaves the tab
 * and is not stored.  English only.
 *
 *   QuireVoice.available()                   -> false when the build left voice out
 *   QuireVoice.load({onProgress})            -> resolves when the engine is ready
 *   QuireVoice.transcribe(pcm16k, {language}) -> {text, ms}   (Float32Array, 16 kHz mono; language 'en' by
 *                                               default, with tiny.en; another, such as 'de', with multilingual base)
 *   QuireVoice.multilingual()                -> false when the build has no multilingual model
 *   QuireVoice.detect(pcm16k)                -> {language: 'de', probability: 0.69, guesses: [['de', 0.69], …]}
 *                                               or null: the multilingual model's guess at the first 30 s
 *   QuireVoice.toMono16k(audioBuffer)        -> Float32Array, resampled in the page
 *   QuireVoice.silent(pcm16k)                -> true when nothing in it is loud enough to be speech
 *   QuireVoice.canCapture()                  -> false when this browser cannot record off the main thread
 *   var c = QuireVoice.capture()             (in the press handler: its AudioContext starts with the press)
 *   c.ready, then getUserMedia, then c.start(stream, {onRecorded: ms => …}) -> 'worklet' | 'recorder'
 *                                            (c.analyser feeds a level meter)
 *   c.stop(maxSeconds)                        -> Float32Array (16 kHz mono);  c.cancel()
 */
(function () {
  'use strict';

  // Asset names; the build's quire_build.whisper.pack.asset_names() makes the same ones (a test checks both agree).
  var FILES = {
    worker: 'voice/whisper-1.4.1.js',
    wasm: 'voice/whisper-1.4.1.wasm',
    model: 'voice/tiny.en-q8_0.bin.',  // + 00, 01, ...: a model's parts, written one at a time into the worker
    multi: 'voice/base-q5_0.bin.',
  };
  var MODELS = { model: 1, multi: 1 };
  var CORE = ['worker', 'wasm', 'model'];  // what spoken questions need; 'multi' only recordings
  var SAMPLE_RATE = 16000;  // Whisper's input rate
  var LIMITS = { loadMs: 180000, transcribeMs: 300000 };
  var TEXT = {  // every sentence the voice engine shows (one place for the translators)
    notIncluded: QuireI18n.t('Voice input is not included in this copy of Quire (it was built with --no-voice, or without Emscripten). Type your question instead.'),
    missing: QuireI18n.t('A voice file could not be loaded, so this copy of Quire is incomplete. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'),
    damaged: QuireI18n.t('A voice file does not match its checksum. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'),
    timeout: QuireI18n.t('The voice engine did not answer in time. Try a shorter recording, or reload the page.'),
    engine: QuireI18n.t('The voice engine failed: '),
    noCapture: QuireI18n.t('This browser cannot record without gaps here: it has no MediaRecorder, and no AudioWorklet this page can load. Type your question, or open Quire in a current Firefox, Chrome or Safari.'),
    undecodable: QuireI18n.t('This browser could not decode its own recording, so the question cannot be transcribed here. Type your question instead.'),
  };

  var B = self.QUIRE_BUNDLE;

  function voiceError(kind, message) {
    var err = new Error(message);
    err.name = 'VoiceError';
    err.kind = kind;  // not-included | missing | damaged | timeout | engine | no-capture | undecodable
    return err;
  }

  /* A role's files as the bundle lists them: a model's parts in order, or the one file. */
  function filesOf(role) {
    if (!MODELS[role]) return B.assets[FILES[role]] ? [FILES[role]] : [];
    return Object.keys(B.assets).filter(function (n) { return n.indexOf(FILES[role]) === 0; }).sort();
  }

  function available() {
    return !!(B && B.assets && CORE.every(function (role) { return filesOf(role).length; }));
  }

  function multilingual() {
    return available() && filesOf('multi').length > 0;
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

  /** Loads the engine's two files (progress by bytes), starts whisper.cpp in its worker, then
   * writes the model of `opts.role` ('model', tiny.en, unless said) into the worker a part at a
   * time: the page never holds more than one part (8 MB) of it, nor its pack text. */
  function load(opts) {
    opts = opts || {};
    if (!available()) return Promise.reject(voiceError('not-included', TEXT.notIncluded));
    if (ready) return ready;
    var t0 = performance.now();
    var role = opts.role || 'model';
    var parts = filesOf(role);
    var size = function (name) { return B.assets[name].size; };
    var modelBytes = parts.reduce(function (n, name) { return n + size(name); }, 0);
    var total = size(FILES.worker) + size(FILES.wasm) + modelBytes;
    var done = 0;
    function progress(stage) {
      if (opts.onProgress) opts.onProgress({ fraction: Math.min(1, done / total), stage: stage });
    }
    progress('Loading the voice engine');
    var files = [FILES.worker, FILES.wasm].map(function (name) {
      return loadFile(name).then(function (buffer) { done += size(name); progress('Loading the voice engine'); return buffer; });
    });
    ready = withTimeout(Promise.all(files).then(function (buffers) {
      worker = new Worker(URL.createObjectURL(new Blob([buffers[0]], { type: 'text/javascript' })), { name: 'quire-voice' });
      var up = new Promise(function (resolve, reject) {
        worker.onmessage = function (e) {
          var msg = e.data;
          if (msg.type === 'ready') { resolve({ ms: Math.round(performance.now() - t0), startMs: msg.ms }); return; }
          var call = msg.id != null && pending[msg.id];
          if (msg.type === 'error' && !call) { reject(voiceError('engine', TEXT.engine + msg.message)); return; }
          if (!call) return;
          delete pending[msg.id];
          if (msg.type === 'text') call.resolve({ text: clean(msg.text), ms: msg.ms });
          else if (msg.type === 'error') call.reject(voiceError('engine', TEXT.engine + msg.message));
          else call.resolve(msg);
        };
        worker.onerror = function (e) { reject(voiceError('engine', TEXT.engine + (e.message || 'the worker stopped'))); };
      });
      worker.postMessage({ type: 'init', wasm: buffers[1], modelBytes: modelBytes }, [buffers[1]]);
      var offset = 0;
      var written = parts.reduce(function (chain, name) {
        return chain.then(function () { return loadFile(name); }).then(function (bytes) {
          if (!worker) return;  // it failed meanwhile: up says why
          worker.postMessage({ type: 'part', offset: offset, bytes: bytes }, [bytes]);
          offset += size(name);
          done += size(name);
          progress('Loading the voice engine');
        });
      }, Promise.resolve()).then(function () {
        progress('Starting the voice engine');
        if (worker) worker.postMessage({ type: 'load' });
      });
      return Promise.all([up, written]).then(function (r) { return r[0]; });
    }), LIMITS.loadMs);
    ready.catch(function () {
      if (worker) worker.terminate();
      worker = null;
      ready = null;  // a later press may try again
    });
    inWorker = role;
    return ready;
  }

  /* The worker holds one model at a time; every call that needs one waits its turn here, so a
   * question asked while a German lecture is transcribed is answered by tiny.en, not by base. */
  var inWorker = null;
  var turn = Promise.resolve();

  function ask(type, fields, transfer) {
    var id = nextId++;
    var answer = new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
    fields.type = type;
    fields.id = id;
    worker.postMessage(fields, transfer || []);
    return withTimeout(answer, LIMITS.transcribeMs);
  }

  /* Another model means a new worker: WebAssembly's memory only grows, so a worker that once held
   * base (with its larger buffers) would keep that much for tiny.en too (+0.4 GB for the tab
   * while a 90-minute English lecture was transcribed).  Starting one takes about a second. */
  function withModel(role, f) {
    var run = turn.then(function () {
      if (ready && inWorker !== role) {
        if (worker) worker.terminate();
        worker = null;
        ready = null;
      }
      return load({ role: role });
    }).then(f);
    turn = run.catch(function () {});
    return run;
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

  function transcribe(pcm, opts) {
    var language = (opts && opts.language) || 'en';
    if (rms(pcm) < SILENCE_RMS) return Promise.resolve({ text: '', ms: 0, silent: true });
    if (language !== 'en' && !multilingual()) return Promise.reject(voiceError('not-included', TEXT.notIncluded));
    return withModel(language === 'en' ? 'model' : 'multi', function () {
      return ask('transcribe', { pcm: pcm, language: language }, [pcm.buffer]);
    });
  }

  /** The multilingual model's guess at the language of the first 30 s of pcm, or null. */
  function detect(pcm) {
    if (!multilingual()) return Promise.resolve(null);
    var copy = pcm.slice(0, 30 * SAMPLE_RATE);
    return withModel('multi', function () {
      return ask('detect', { pcm: copy }, [copy.buffer]);
    }).then(function (msg) {
      if (!msg || !msg.guess) return null;
      var parts = msg.guess.split(' '), guesses = [];
      for (var i = 0; i + 1 < parts.length; i += 2) guesses.push([parts[i], parseFloat(parts[i + 1])]);
      return guesses.length ? { language: guesses[0][0], probability: guesses[0][1], guesses: guesses, ms: msg.ms } : null;
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

  /* ---------------- capture, off the page's main thread ---------------- */

  // The page's main thread can be seconds late on a busy machine, and a ScriptProcessor that
  // waits for it drops audio.  So samples are taken on the audio thread: an AudioWorklet copies
  // them and posts them in batches, which wait in the queue (none lost) until this thread reads
  // them.  Where the worklet module cannot load from a blob: URL (Chromium and WebKit from
  // file://, origin null) or the AudioContext is not running yet (Firefox with no sound output),
  // MediaRecorder records in the browser's own media threads and the recording is decoded after.

  /* The worklet's source; it runs in the AudioWorkletGlobalScope, not here. */
  function tapModule() {
    registerProcessor('quire-voice-tap', class extends AudioWorkletProcessor {
      constructor() {
        super();
        this.size = Math.round(sampleRate / 10);  // ten batches a second
        this.batch = new Float32Array(this.size);
        this.used = 0;
        this.port.onmessage = () => {  // 'flush': what is left, then done
          if (this.used) this.port.postMessage(this.batch.slice(0, this.used));
          this.used = 0;
          this.port.postMessage('done');
        };
      }
      process(inputs) {
        const samples = inputs[0] && inputs[0][0];  // one channel: the node mixes the stream down
        for (let i = 0; samples && i < samples.length; i++) {
          this.batch[this.used++] = samples[i];
          if (this.used === this.size) {
            this.port.postMessage(this.batch, [this.batch.buffer]);
            this.batch = new Float32Array(this.size);
            this.used = 0;
          }
        }
        return true;
      }
    });
  }

  var tapUrl = null;  // one blob: URL for the page's lifetime; each recording's context loads it

  function AudioCtx() { return self.AudioContext || self.webkitAudioContext; }
  function hasWorklet() { return typeof AudioWorkletNode === 'function' && !!AudioCtx() && 'audioWorklet' in AudioCtx().prototype; }
  function hasRecorder() { return typeof MediaRecorder === 'function' && typeof OfflineAudioContext === 'function'; }

  // Lossless where the browser records it (Chromium: PCM in WebM; WebKit: FLAC in MP4), else its own
  // default (Opus in Firefox); Whisper hears the compressed sound worse on borderline words.
  var LOSSLESS = ['audio/webm;codecs=pcm', 'audio/mp4;codecs=flac', 'audio/ogg;codecs=flac', 'audio/webm;codecs=flac'];

  function recorderOptions() {
    var type = typeof MediaRecorder.isTypeSupported === 'function' && LOSSLESS.filter(function (t) { return MediaRecorder.isTypeSupported(t); })[0];
    return type ? { mimeType: type } : { audioBitsPerSecond: 128000 };
  }

  function canCapture() { return !!AudioCtx() && (hasWorklet() || hasRecorder()); }

  /** A recording in the making; ask for the microphone after making it (see the header). */
  function capture() {
    var Ctx = AudioCtx();
    var ctx = new Ctx();
    if (ctx.state !== 'running') ctx.resume().catch(function () {});  // never settles where there is no output (Firefox)
    var module = Promise.resolve(false);
    if (hasWorklet()) {
      tapUrl = tapUrl || URL.createObjectURL(new Blob(['(' + tapModule + ')();'], { type: 'text/javascript' }));
      module = ctx.audioWorklet.addModule(tapUrl).then(function () { return true; }, function () { return false; });
    }
    // ready: the microphone is asked for once the worklet module has loaded (or failed), so that
    // no sound is lost between the microphone opening and the recording starting.
    var c = { ctx: ctx, analyser: ctx.createAnalyser(), method: null, format: 'audio/pcm', ready: module.then(function () {}) };
    var source = null, node = null, recorder = null, stopped = null, chunks = [], samples = 0, clock = null, ended = false;

    c.start = function (stream, opts) {
      opts = opts || {};
      return module.then(function (loaded) {
        if (ended) return null;  // stopped or cancelled while the module loaded
        source = ctx.createMediaStreamSource(stream);
        source.connect(c.analyser);
        if (loaded && ctx.state === 'running') {
          node = new AudioWorkletNode(ctx, 'quire-voice-tap', { numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1,
                                                                 channelCountMode: 'explicit', channelInterpretation: 'speakers' });
          node.port.onmessage = function (e) {
            if (typeof e.data === 'string') return;  // 'done' is awaited by stop()
            chunks.push(e.data);
            samples += e.data.length;
            if (opts.onRecorded) opts.onRecorded(Math.round(1000 * samples / ctx.sampleRate));
          };
          source.connect(node);
          return (c.method = 'worklet');
        }
        if (!hasRecorder()) throw voiceError('no-capture', TEXT.noCapture);
        recorder = new MediaRecorder(stream, recorderOptions());
        recorder.ondataavailable = function (e) { if (e.data && e.data.size) chunks.push(e.data); };
        stopped = new Promise(function (resolve) { recorder.addEventListener('stop', resolve); });
        var t0 = null;
        recorder.onstart = function () { t0 = performance.now(); };
        // The recorder has no sample count to show; its running time is the audio's length.
        clock = setInterval(function () { if (t0 !== null && opts.onRecorded) opts.onRecorded(Math.round(performance.now() - t0)); }, 100);
        recorder.start();
        c.format = recorder.mimeType;
        return (c.method = 'recorder');
      });
    };

    function finish() {
      ended = true;
      clearInterval(clock);
      if (source) source.disconnect();
      if (node) node.port.onmessage = null;
      if (ctx.state !== 'closed') ctx.close().catch(function () {});
    }

    /** The recording as 16 kHz mono, at most maxSeconds long. */
    c.stop = function (maxSeconds) {
      var pcm;
      if (node) {
        pcm = new Promise(function (resolve) {
          var collect = node.port.onmessage;
          node.port.onmessage = function (e) { if (e.data === 'done') resolve(); else collect(e); };
          node.port.postMessage('flush');
        }).then(function () {
          var all = new Float32Array(Math.max(1, samples)), at = 0;
          chunks.forEach(function (part) { all.set(part, at); at += part.length; });
          var buffer = new AudioBuffer({ length: all.length, numberOfChannels: 1, sampleRate: ctx.sampleRate });
          buffer.copyToChannel(all, 0);
          finish();
          return toMono16k(buffer);
        });
      } else if (recorder) {
        if (recorder.state !== 'inactive') recorder.stop();  // the last data comes before 'stop'
        pcm = stopped.then(function () {
          finish();
          if (!chunks.length) return null;
          return new Blob(chunks, { type: recorder.mimeType }).arrayBuffer();
        }).then(function (bytes) {
          return bytes && new OfflineAudioContext(1, 1, SAMPLE_RATE).decodeAudioData(bytes);
        }).then(function (buffer) { return buffer ? toMono16k(buffer) : new Float32Array(0); }, function (err) {
          throw voiceError('undecodable', TEXT.undecodable + ' (' + (err && (err.name || err.message) || err) + ')');
        });
      } else {  // stopped before it started: nothing was recorded
        finish();
        pcm = Promise.resolve(new Float32Array(0));
      }
      return pcm.then(function (all) {
        var most = Math.round((maxSeconds || Infinity) * SAMPLE_RATE);
        return all.length > most ? all.slice(0, most) : all;  // the recorder may run on while this thread was late
      });
    };

    c.cancel = function () {
      if (recorder && recorder.state !== 'inactive') recorder.stop();
      chunks = [];
      finish();
    };
    return c;
  }

  self.QuireVoice = { available: available, multilingual: multilingual, detect: detect, load: load, transcribe: transcribe, silent: function (pcm) { return rms(pcm) < SILENCE_RMS; }, toMono16k: toMono16k, clean: clean, FILES: FILES,
                      canCapture: canCapture, capture: capture,
                      SAMPLE_RATE: SAMPLE_RATE, TEXT: TEXT };
})();
