/* The automation surface beyond boot: window.quire.stage/train/sources/remove/eraseAll/search.
 * Views use exactly these functions, so a kiosk script drives what a person clicks.  Each one
 * calls the engine through quire._call, the one call pipeline (boot-calls.js). */
(function () {
  'use strict';
  var q = self.quire;
  var MAX_BYTES_KEY = 'quire.maxFileMB';
  /* The largest file one tab trains safely: a 50 MB text file peaks near 2.7 GB in the tab's
   * process (tests/bench/tab_limits.py); Settings can raise it for a machine with more memory. */
  var DEFAULT_MAX_MB = 50;

  /* Recordings are decoded in the page and their bytes never enter the engine (api-recordings.js),
   * so they may be larger: a 90-minute lecture video is often 200-700 MB (py/quire/extract:
   * MAX_RECORDING_BYTES, the same figure; the larger of it and the Settings limit binds). */
  var RECORDING_MAX_MB = 1024;
  var RECORDING = /\.(mp3|m4a|aac|ogg|oga|opus|wav|flac|webm|mp4)$/i;

  function maxBytes(name) {
    var mb = Number(localStorage.getItem(MAX_BYTES_KEY)) || DEFAULT_MAX_MB;
    if (name && RECORDING.test(name)) mb = Math.max(mb, RECORDING_MAX_MB);
    return mb * 1024 * 1024;
  }
  function tooLarge(name, size) {
    var limit = Math.round(maxBytes(name) / 1048576);
    return name + ' is too large (' + Math.round(size / 1048576) + ' MB; ' + (RECORDING.test(name)
      ? 'the limit for recordings is ' + limit + ' MB)' : 'the limit is ' + limit + ' MB, which Settings can raise)');
  }

  function isFile(x) { return typeof File !== 'undefined' && x instanceof File; }

  /* Bytes the engine sent as base64 (a vault, a download, a recording), for a File or Blob. */
  q._fromBase64 = function (b64) {
    if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(b64);
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  };

  /* Stage one thing: a File, {name, text}, {name, data}, or a URL string. */
  function stageOne(input, opts) {
    var category = opts.category || null;
    if (typeof input === 'string') return stageUrl(input, category);
    if (isFile(input) || (input && typeof input.arrayBuffer === 'function' && input.name)) {
      var name = input.webkitRelativePath || input.name;
      if (input.size > maxBytes(name)) return q._call('reject', [name, input.size, tooLarge(name, input.size)]);
      return input.arrayBuffer().then(function (buf) {
        return q._call('stage', [name, category, null, maxBytes()], { payload: new Uint8Array(buf) });
      });
    }
    if (input && typeof input.text === 'string') return q._call('stageText', [input.name || 'Pasted text', input.text, category]);
    if (input && input.data) {
      var bytes = input.data instanceof Uint8Array ? input.data : new Uint8Array(input.data);
      if (bytes.length > maxBytes(input.name)) return q._call('reject', [input.name, bytes.length, tooLarge(input.name, bytes.length)]);
      return q._call('stage', [input.name, category, null, maxBytes()], { payload: bytes.slice() });
    }
    return Promise.reject(new Error('stage() takes files, {name, text}, {name, data} or a URL'));
  }

  function stageUrl(url, category) {
    var parsed;
    try { parsed = new URL(url); } catch (e) { return Promise.reject(new Error('“' + url + '” is not a web address.')); }
    // csp.js decided at load: on only if switched on in this tab (a stored flag alone could be forged).
    if (!self.QuirePrivacy.urlFetch) {
      return Promise.reject(new Error('Adding by web address is switched off: Quire’s privacy lock stops this page from ' +
        'contacting any website. Save the page from your browser (Ctrl+S, “Web page, HTML only”) and drop the file here, ' +
        'or allow adding by address in Settings (it then applies to this tab after a reload).'));
    }
    return fetch(parsed.href, { mode: 'cors', credentials: 'omit', referrerPolicy: 'no-referrer' }).then(function (resp) {
      if (!resp.ok) throw new Error(parsed.host + ' answered ' + resp.status + ' ' + resp.statusText + '.');
      return resp.arrayBuffer().then(function (buf) {
        var type = resp.headers.get('content-type') || '';
        var name = (parsed.pathname.split('/').pop() || parsed.host).replace(/[?#].*$/, '');
        if (!/\.\w{2,5}$/.test(name)) name += /html/.test(type) ? '.html' : /pdf/.test(type) ? '.pdf' : '.txt';
        return q._call('stage', [name, category, null, maxBytes()], { payload: new Uint8Array(buf) });
      });
    }, function () {
      throw new Error(parsed.host + ' does not let other pages read it (no cross-origin permission), or it could not be reached. ' +
        'Save the page from your browser (Ctrl+S) and drop the saved file here instead.');
    });
  }

  /* Files, {name, data} and {name, text} travel in batches: one call and one transaction for up
   * to BATCH_FILES files or BATCH_BYTES bytes (a folder of 5,000 notes is 26 calls, not 5,000),
   * a large file alone, so memory stays bounded. URLs, recordings and files over the limit go one by one. */
  var BATCH_FILES = 200, BATCH_BYTES = 8 * 1024 * 1024;

  function textName(name) { name = name || 'Pasted text'; return name.indexOf('.') < 0 ? name + '.md' : name; }

  function batchable(item) {
    if (item && item.name && typeof item.text !== 'string' && RECORDING.test(item.webkitRelativePath || item.name)) return false;  // alone: its bytes stay out of the engine
    if (isFile(item) || (item && typeof item.arrayBuffer === 'function' && item.name)) return item.size <= maxBytes();
    if (item && typeof item.text === 'string') return true;
    if (item && item.data) return (item.data.byteLength || item.data.length || 0) <= maxBytes();
    return false;
  }

  function sizeOf(item) {
    if (typeof item.text === 'string') return item.text.length * 3;
    return item.size || (item.data && (item.data.byteLength || item.data.length)) || 0;
  }

  function bytesOf(item) {
    if (typeof item.text === 'string') return Promise.resolve({ name: textName(item.name), bytes: new TextEncoder().encode(item.text) });
    if (item.data) return Promise.resolve({ name: item.name, bytes: item.data instanceof Uint8Array ? item.data : new Uint8Array(item.data) });
    return item.arrayBuffer().then(function (buf) { return { name: item.webkitRelativePath || item.name, bytes: new Uint8Array(buf) }; });
  }

  function stageBatch(group, category) {
    return Promise.all(group.map(bytesOf)).then(function (files) {
      var total = files.reduce(function (n, f) { return n + f.bytes.length; }, 0);
      var payload = new Uint8Array(total), at = 0;
      files.forEach(function (f) { payload.set(f.bytes, at); at += f.bytes.length; });
      return q._call('stageMany', [files.map(function (f) { return [f.name, f.bytes.length]; }), category, null, maxBytes()],
        { payload: payload });
    });
  }

  /** stage(files | FileList | File | {name, text} | {name, data} | url, {category, onProgress}) -> [source records]
   * onProgress({done, total}) follows a large folder. */
  q.stage = function (input, opts) {
    opts = opts || {};
    var items = input && typeof input.length === 'number' && typeof input !== 'string' ? Array.prototype.slice.call(input) : [input];
    var out = [], i = 0, category = opts.category || null;
    function step(records, n) {
      out.push.apply(out, records);
      if (opts.onProgress) opts.onProgress({ done: out.length, total: items.length });
      return next();
    }
    function next() {
      if (i >= items.length) return Promise.resolve();
      if (!batchable(items[i])) return stageOne(items[i++], opts).then(function (rec) { return step([rec]); });
      var group = [], bytes = 0;
      while (i < items.length && batchable(items[i]) && group.length < BATCH_FILES &&
             (!group.length || bytes + sizeOf(items[i]) <= BATCH_BYTES)) {
        bytes += sizeOf(items[i]);
        group.push(items[i++]);
      }
      return stageBatch(group, category).then(step);
    }
    return next().then(function () {
      document.dispatchEvent(new CustomEvent('quire:library-changed'));
      return out;
    }, function (err) {
      if (out.length) document.dispatchEvent(new CustomEvent('quire:library-changed'));  // the batches before stay staged
      throw err;
    });
  };

  /** train({onProgress, signal}) -> {added, changed, skipped, failed, files} */
  q.train = function (opts) {
    opts = opts || {};
    stopBackground();  // Train goes first; the passages still missing are embedded after it
    var p = q._call('train', [], { onEvent: opts.onProgress });
    if (opts.signal) opts.signal.addEventListener('abort', function () { q._cancel(p.id); });
    return p.then(function (counts) {
      document.dispatchEvent(new CustomEvent('quire:library-changed'));
      q.embedInBackground();
      return counts;
    });
  };

  // sources(), categories(): assets/api-sources.js (the page's one copy of the source list).

  // The storage figure follows every change of what is stored (stage, Train, remove, erase, import).
  document.addEventListener('quire:library-changed', function () { if (q.refreshStorage) q.refreshStorage(); });
  q.setCategory = function (id, category) { return q._call('setCategory', [id, category]); };
  /** chunks(sourceId) -> its passages in order: {chunk_id, source_id, n, text, location, start, end, hash} */
  q.chunks = function (id) { return q._call('chunks', [id]); };
  /** setLanguage(id, 'en'|'de'|'other') overrides the detected language; the source is re-tokenized. */
  q.setLanguage = function (id, language) { return q._call('setLanguage', [id, language]); };
  q.librarySettings = function () { return q._call('librarySettings'); };
  q.setKeepOriginals = function (keep) { return q._call('setKeepOriginals', [!!keep]); };
  q.remove = function (id) {
    return q._call('remove', [id]).then(function (r) { document.dispatchEvent(new CustomEvent('quire:library-changed')); return r; });
  };

  /** Wipe everything Quire stored in this browser: library, settings, chats, progress, and the
   * API keys unless {keepKeys: true}.
   * -> {erased: true, train: 'none'|'cancelled'|'waited', message}: a Train running in this
   * tab is cancelled first (or, if it was already saving, waited for). */
  q.eraseAll = function (opts) {
    var result, keepKeys = !!(opts || {}).keepKeys;
    return q._call('eraseAll').then(function (r) {
      result = { erased: true, train: r.train, message: r.message, keysKept: keepKeys };
      return keepKeys ? null : q._call('llmRemoveKeys');
    }).then(function () {
      return QuireStore.clearMain(keepKeys ? ['llm.api_key', 'llm.embed_api_key'] : []);  // py/quire/services/llm.py SECRET_PREFIX
    }).then(function () {
      // ...but not the open-tab keys (this tab and others are still open: store-tabs.js).
      Object.keys(localStorage).forEach(function (k) {
        if (k.indexOf('quire.') === 0 && k.indexOf(QuireStore.SESSION_PREFIX) !== 0) localStorage.removeItem(k);
      });
      // Every view drops what it shows (open chat, mind map, hits) before the lists reload.
      document.dispatchEvent(new CustomEvent('quire:erased'));
      document.dispatchEvent(new CustomEvent('quire:library-changed'));
      return result;
    });
  };

  /* ---- the model server ---- */

  /** llmStatus() -> the chat server's {status: connected|not_running|cors_refused|model_missing|reload_needed|unconfirmed,
   * message, fix, version, models}, embed: the same for the embedding server, settings, picked, choose */
  // Statuses are shown in the order they were asked for: one asked before a save that answers
  // after it would show the old settings (and bring back a picker already answered).
  var statusAsked = 0, statusShown = 0;
  function showStatus(seq, s) {
    if (seq < statusShown) return;
    statusShown = seq;
    document.dispatchEvent(new CustomEvent('quire:llm-status', { detail: s }));
  }
  q.llmStatus = function (model) {
    var seq = ++statusAsked;
    return q._call('llmStatus', model === undefined ? [] : [model]).then(function (s) {
      showStatus(seq, s);
      return s;
    });
  };

  /** saveSettings({url, kind, chat_model, embed_url, embed_kind, embed_model, prefixes, temperature, num_ctx},
   * {confirm: origin or [origins]}) -> status.
   * A server on another computer needs its origin in confirm: the person agreed to send it
   * their questions and passages (Settings asks, naming the host).
   * The page may only reach the servers chosen when it opened (Content-Security-Policy):
   * new addresses are remembered for csp.js, and the status says a reload is needed. */
  q.saveSettings = function (changes, opts) {
    var confirm = (opts || {}).confirm || null, seq = ++statusAsked;
    return q._call('saveLlmSettings', [changes, confirm]).then(function (status) {
      var st = status.settings;
      localStorage.setItem('quire.llm.url', st.url);
      localStorage.setItem('quire.llm.embed_url', st.embed_url);
      var remote = [st.url, st.embed_url].filter(function (u) { return !QuirePrivacy.isLoopback(u); })
        .map(function (u) { return new URL(u).origin; })
        .filter(function (o, i, all) { return all.indexOf(o) === i; });  // chat and embeddings on one server: once
      QuirePrivacy.remember({ servers: remote, urls: { chat: st.url, embeddings: st.embed_url } });
      showStatus(seq, status);
      return status;
    });
  };

  /** pullModel(name, {onProgress, role}) downloads a model into Ollama (role: 'chat' or 'embeddings' server). */
  q.pullModel = function (name, opts) {
    return q._call('pullModel', [name, (opts || {}).role || 'chat'], { onEvent: (opts || {}).onProgress });
  };

  /** embeddingStatus() -> {model, index_model, total, missing, active} */
  q.embeddingStatus = function () { return q._call('embeddingStatus'); };

  /** embed({onProgress, signal}) embeds passages that have no vector from the chosen model. */
  q.embed = function (opts) {
    opts = opts || {};
    var p = q._call('embed', opts.limit ? [opts.limit] : [], { onEvent: opts.onProgress });
    if (opts.signal) opts.signal.addEventListener('abort', function () { q._cancel(p.id); });
    return p;
  };

  /* ---- Embeddings in this tab (no server): the engine asks the page for vectors ---- */
  var embedderLoad = null, embedderFailed = false, embedderIn = false;
  function loadEmbedder() {
    if (embedderIn && !QuireEmbedder.stats().loaded) embedderLoad = null;  // unloaded since: load again
    if (!embedderLoad) {
      embedderIn = false;
      embedderLoad = QuireEmbedder.load(function (p) {
        document.dispatchEvent(new CustomEvent('quire:embedder-load', { detail: p }));
      }).then(function (r) {
        embedderFailed = false;
        embedderIn = true;
        document.dispatchEvent(new CustomEvent('quire:embedder-load', { detail: { fraction: 1, done: true } }));
        return r;
      }, function (err) { embedderLoad = null; embedderFailed = true; throw err; });
    }
    return embedderLoad;
  }
  /** embedderLoading(): whether this tab's embedding model is on its way in (a search meanwhile
   * is answered by keywords only). */
  q.embedderLoading = function () { return !!(embedderLoad && self.QuireEmbedder && !QuireEmbedder.stats().loaded); };
  /* {texts, kind} -> {dim, data}: the vectors one after another in one Float32Array
   * (py/quire/browser/embedder.py).  The model loads on first use; quire:embedder-load events
   * carry its progress ({fraction, stage, loaded, total}, then {done: true}). */
  q._pageMethods.embed = function (a) {
    if (!self.QuireEmbedder || !QuireEmbedder.available()) {
      var missing = new Error('In-browser embeddings are not included in this copy of Quire');
      missing.kind = 'not-included';
      throw missing;
    }
    // A search does not wait 1-2 s for the model's 72 MB (after a reload, while the embedding
    // resumes): it is answered by keywords now, its hits say "loading", and the Search view asks
    // again once the model is in (quire:embedder-load, done).
    // After a load failed, a search waits for the next try, as before (not "loading" forever).
    if (a.kind === 'query' && !QuireEmbedder.stats().loaded && !embedderFailed) {
      loadEmbedder().catch(function () { /* the passages' run or the next search says what failed */ });
      return { loading: true };
    }
    return loadEmbedder().then(function () { return QuireEmbedder.embed(a.texts, a.kind); }).then(function (vectors) {
      var dim = vectors.length ? vectors[0].length : 0;
      var data = new Float32Array(vectors.length * dim);
      vectors.forEach(function (v, i) { data.set(v, i * dim); });
      return { dim: dim, data: data };
    });
  };

  /* After Train (and when a tab opens a library with passages still missing), the passages that
   * have no vector yet are embedded in the background when the vectors are made in this tab (no
   * embedding server): one run at a time, in steps of STEP passages per embedding engine (more than one
   * where the machine has cores to spare: QuireEmbedder.passageEngines), each step its own engine call, so
   * a rename or a removal (in this tab or another) waits only for a step's store, never for the
   * embedding itself (which runs in this tab with no lock held).
   * The next Train stops it (and restarts it after), as does Cancel; a search meanwhile answers at
   * once, by keywords until its passages have vectors, its query embedded by a second engine when
   * the run has more than QUERY_ENGINE_PASSAGES to embed (QuireEmbedder.prepareQueries).  Its progress is the document event
   * quire:embedding ({state: 'running' | 'done' | 'stopped' | 'failed', done, total, eta_s, error}). */
  var STEP = 8;  // one page batch (py/quire/browser/embedder.py): seconds, not minutes
  var QUERY_ENGINE_PASSAGES = 3 * STEP;  // a run of more passages (tens of seconds) gets a query engine of its own
  var QUERY_ENGINE_WAIT_MS = 30000;  // the longest a run waits for its query engine before its first batch
  var background = null;
  function embeddingNews(detail) {
    if (background) background.last = detail;
    document.dispatchEvent(new CustomEvent('quire:embedding', { detail: detail }));
  }
  function stopBackground() { if (background) background.controller.abort(); }
  function stopped() { var e = new Error('Embedding stopped; what is embedded is kept.'); e.kind = 'TrainCancelled'; return e; }
  /** embedInBackground() -> a promise of the run's result (null when there was nothing to do). */
  q.embedInBackground = function () {
    if (background) return background.promise;
    var run = background = { controller: new AbortController(), last: null };
    var signal = run.controller.signal;
    run.promise = q.embeddingStatus().then(function (st) {
      if (st.where !== 'tab' || !st.missing || signal.aborted) return null;
      var total = st.missing, sum = { done: 0, embedded: 0, cached: 0 }, started = performance.now();
      // A run of more than a few steps gets a second engine for queries, so a search meanwhile never
      // waits behind a batch of passages (a batch cannot be cut short).  The first batch waits until
      // that engine is in (about 3 s on 2 quiet cores; up to QUERY_ENGINE_WAIT_MS): started side by
      // side, the batches kept the cores busy and it could take more than 45 s, with every search
      // waiting 0.3-0.9 s behind a batch meanwhile (tests/bench/call_waits.py).
      var queryEngine = total > QUERY_ENGINE_PASSAGES && !!QuireEmbedder.prepareQueries;
      var queriesIn = Promise.resolve();
      if (queryEngine) {
        queriesIn = QuireEmbedder.prepareQueries().catch(function (err) {  // released meanwhile (the run ended): nothing to say
          if (!err || err.kind !== 'cancelled') console.warn('Quire: no second engine for queries:', err && err.message);
        });
        queriesIn = Promise.race([queriesIn, new Promise(function (resolve) { setTimeout(resolve, QUERY_ENGINE_WAIT_MS); })]);
      }
      // With cores to spare, helper engines embed beside the main one (QuireEmbedder.passageEngines):
      // each step then asks for STEP passages per engine that is ready and gives each engine STEP.
      var helpers = total > STEP && !!QuireEmbedder.preparePassages && QuireEmbedder.passageEngines() > 1;
      if (helpers) {
        QuireEmbedder.preparePassages().catch(function (err) {  // the main engine goes on alone
          if (!err || err.kind !== 'cancelled') console.warn('Quire: no helper engines for passages:', err && err.message);
        });
      }
      run.release = function () {
        if (queryEngine) { queryEngine = false; QuireEmbedder.releaseQueries(); }
        if (helpers) { helpers = false; QuireEmbedder.releasePassages(); }
      };
      embeddingNews({ state: 'running', done: 0, total: total, model: st.model });
      // A step: the engine names the next passages (a read), this tab embeds them with no lock
      // held (seconds), and the engine stores the vectors (a short write), so a rename or a
      // removal meanwhile waits for that store only.
      function step() {
        if (signal.aborted) throw stopped();
        var engines = 1 + (helpers ? QuireEmbedder.stats().helpersLoaded : 0);
        return q._call('embedNext', [STEP * engines]).then(function (next) {
          if (signal.aborted) throw stopped();
          if (!next.todo.length && !next.cached.length) return null;
          var texts = next.todo.map(function (p) { return p.text; });
          var pieces = [];  // STEP texts per engine; each piece goes to the least busy one
          for (var i = 0; i < texts.length; i += STEP) {
            pieces.push(QuireEmbedder.embed(texts.slice(i, i + STEP), 'passage', { signal: signal }));
          }
          var made = Promise.all(pieces).then(function (parts) { return [].concat.apply([], parts); });
          return made.then(function (vectors) {
            var dim = vectors.length ? vectors[0].length : 0, data = new Float32Array(vectors.length * dim);
            vectors.forEach(function (v, i) { data.set(v, i * dim); });
            return q._call('embedAdd', [next.model, next.todo.map(function (p) { return p.chunk_id; }),
              next.todo.map(function (p) { return p.hash; }), next.cached], { payload: new Uint8Array(data.buffer) });
          }, function (err) {
            if (err && err.kind === 'cancelled') throw stopped();
            var e = new Error('The embedding in this browser failed: ' + (err && err.message || err));
            e.kind = 'connection';
            throw e;
          });
        }).then(function (r) {
          if (!r || r.stale) return null;  // nothing left, or another model was chosen meanwhile
          sum.done += r.done; sum.embedded += r.embedded; sum.cached += r.cached;
          var done = Math.min(total, sum.done);
          var rate = done / Math.max(1, performance.now() - started);  // passages per ms
          var eta = rate > 0 ? Math.round((total - done) / rate / 1000) : null;
          embeddingNews({ state: 'running', done: done, total: total, eta_s: eta, model: st.model });
          return r.remaining > 0 && r.done > 0 ? step() : null;
        });
      }
      return queriesIn.then(step).then(function () {
        var r = { done: sum.done, total: total, embedded: sum.embedded, cached: sum.cached };
        embeddingNews({ state: 'done', done: r.done, total: r.total, embedded: r.embedded, cached: r.cached, model: st.model });
        return r;
      });
    }).catch(function (err) {
      embeddingNews({ state: err.kind === 'TrainCancelled' ? 'stopped' : 'failed', error: err.message });
      return null;
    }).then(function (r) {
      if (run.release) run.release();
      if (background === run) background = null;
      return r;
    });
    return run.promise;
  };
  // Resuming: a library opened with passages still missing is embedded once the tab's own start-up
  // work is done (the vectors already made are in the cache, keyed by passage and model).  A library
  // with nothing missing gets its model loaded then instead, so the first search does not wait
  // seconds for 72 MB of weights to load: every search embeds its question.
  document.addEventListener('quire:ready', function () {
    (q.backgroundDone ? q.backgroundDone() : Promise.resolve()).then(function () {
      return q.embedInBackground();
    }).then(function (ran) {
      if (ran || !self.QuireEmbedder || !QuireEmbedder.available()) return null;
      return q.embeddingStatus().then(function (st) {
        if (st.where === 'tab' && st.active && st.total > st.missing) return loadEmbedder();
        return null;
      });
    }).catch(function () { /* a search loads it when asked (and says what failed) */ });
  });
  /** embedInTab(on): the embedding choice "In this browser" (on) or "None (keywords only)" (off),
   * kept for this browser (localStorage quire.embed.tab); on, the missing passages are embedded. */
  q.embedInTab = function (on) {
    try {
      if (on) localStorage.removeItem('quire.embed.tab'); else localStorage.setItem('quire.embed.tab', 'off');
    } catch (e) { /* no storage: for this tab only */ }
    if (!on) stopBackground();
    var available = !!(self.QuireEmbedder && QuireEmbedder.available());
    return q._call('tabEmbedder', [available, !!on]).then(function (active) {
      if (active) q.embedInBackground();
      return active;
    });
  };
  /** embeddingProgress() -> the running background embedding's latest news, or null. */
  q.embeddingProgress = function () { return background && background.last; };
  /** stopEmbedding() cancels the background embedding (what is embedded is kept). */
  q.stopEmbedding = stopBackground;

  /* ---- OCR: the engine asks the page to read scanned pages (canvas and Tesseract live here) ---- */
  var ocrFile = { key: null, bytes: null };  // the file being read, so each page does not resend it
  q._pageMethods.ocr = function (a) {
    if (!self.QuireOCR || !QuireOCR.available()) {
      var missing = new Error('OCR is not included in this copy of Quire');
      missing.kind = 'not-included';
      throw missing;
    }
    if (a.data) ocrFile = { key: a.key, bytes: a.data };
    if (ocrFile.key !== a.key) return { needData: true };
    var read = a.kind === 'image'
      ? QuireOCR.recognize([ocrFile.bytes], { lang: a.lang })
      : QuireOCR.ocrPdf(ocrFile.bytes, [a.page], { lang: a.lang });
    return read.then(function (pages) {
      var r = pages[0] || {};
      if (r.error) throw new Error('page ' + a.page + ': ' + r.error);
      return { text: r.text || '', confidence: r.confidence || 0 };
    });
  };
  q.ocrAvailable = function () { return !!(self.QuireOCR && QuireOCR.available()); };
  q.setForceOcr = function (id, force) {
    return q._call('setForceOcr', [id, !!force]).then(function (r) { document.dispatchEvent(new CustomEvent('quire:library-changed')); return r; });
  };
  q.setOcrLanguage = function (choice) { return q._call('setOcrLanguage', [choice]); };

  /** search(query, {k, scope}) -> ranked passages, each named by chunk_id, with bm25/dense/fused details */
  q.search = function (query, opts) {
    opts = opts || {};
    return q._call('search', [query, opts.k || 7, opts.scope || null]);
  };
})();
