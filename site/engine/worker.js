/* The engine worker: boots Pyodide from the bundle and answers the page's calls.
 *
 * A call from the page (site/assets/boot-calls.js) is {type: 'call', id, method, argsJson,
 * payload}: the worker answers waitForLazy (and run, the test hook, in a page opened with it)
 * itself and hands every other method to quire.browser.dispatch, under the one-writer lock if
 * the method writes (quire.browser.WRITES).  The answer goes back as {type: 'result'}; the
 * engine posts a call's progress and its own news itself (py/quire/browser/page.py).
 *
 * It is one blob: script (Pyodide's loader, QuireAssets, QuireSnapshot, quireKernels,
 * QuireStore (store-*.js) and this file), so it starts the same way over http and from file://.
 * Stages are reported by name; the page turns them into the progress bar.
 */
(function () {
  'use strict';
  var pyodide = null;
  var config = null;
  var booted = null;
  var background = null;
  var libraries = null;  // the wheels installed after ready; engine calls wait for them (but QUICK ones)
  var sitePackages = null;  // where the images are written (Pyodide's site-packages)
  var imageDynlibs = [];  // the boot images' shared libraries, relative to site-packages

  // Read-only calls that need none of the wheels installed after ready (pypdf, fsrs).
  var QUICK = { search: 1, passage: 1, sources: 1, sourcesSince: 1, categories: 1, chunks: 1, usage: 1, librarySettings: 1,
    llmSettings: 1, llmStatus: 1, embeddingStatus: 1, storageWatch: 1 };
  function needLibraries() {
    if (!libraries) {
      libraries = installLazyWheels();
      libraries.catch(function (err) { post(describe(err, 'libraries')); });
    }
    return libraries;
  }

  function post(msg) { self.postMessage(msg); }

  /* The Memory Pyodide's wasm runs in (seen when it is instantiated): the SIMD kernels
   * (kernels.js) read numpy's arrays in it in place. */
  var engineMemory = null;

  /* The engine asks the page for things only a page can do (OCR draws on canvases). */
  var pageCalls = {};
  var nextPageCall = 1;
  self.quirePageCall = function (method, args) {
    var id = nextPageCall++;
    return new Promise(function (resolve, reject) {
      pageCalls[id] = { resolve: resolve, reject: reject };
      post({ type: 'page-call', id: id, method: method, args: args });
    });
  };
  /* Times travel as epoch milliseconds: the page and the worker have different clocks' origins. */
  function now() { return performance.timeOrigin + performance.now(); }
  function stage(name, extra) { post(Object.assign({ type: 'stage', stage: name, at: now() }, extra || {})); }
  function mark(name) { post({ type: 'mark', name: name, at: now() }); }

  function describe(err, where) {
    var assetError = QuireAssets.firstError();
    if (assetError && err && err.name !== 'AssetError') err = assetError;
    var msg = { type: 'fatal', stage: where, message: String(err && err.message || err) };
    if (err && err.name === 'AssetError') { msg.kind = err.kind; msg.asset = err.asset; }
    if (err && err.stack) msg.detail = String(err.stack).slice(0, 4000);
    return msg;
  }

  async function boot(cfg) {
    config = cfg;
    QuireAssets.init(cfg, post);
    var where = 'pyodide';
    try {
      stage('pyodide');
      // After the files Pyodide starts from, which the page hands over first (arrived or failed:
      // a damaged snapshot only means Python starts the ordinary way).
      var first = Object.keys(cfg.assets).filter(function (name) { return cfg.assets[name].first; });
      var dynlibs = Promise.all(first.map(function (name) { return QuireAssets.get(name).catch(function () {}); }))
        .then(function () { return compileDynlibs(cfg.bootImages); });
      pyodide = await startPyodide(cfg);
      installKernels();
      where = 'numpy';
      stage('numpy');
      await installImages(cfg.bootImages);
      await linkDynlibs(await dynlibs);
      mark('dynlibs-linked');
      where = 'wheels';
      stage('wheels');
      await installImages(cfg.wheelImages);
      QuireAssets.release(cfg.bootImages.concat(cfg.wheelImages).map(function (i) { return i.asset; })
        .concat(cfg.snapshot ? [cfg.snapshot.asset, 'pyodide.asm.wasm'] : ['pyodide.asm.wasm']));
      where = 'quire';
      stage('quire');
      pyodide.runPython('import numpy');
      mark('numpy-imported');
      await pyodide.runPythonAsync('import quire.browser');
      mark('quire-imported');
      var started = await pyodide.runPythonAsync('import quire.browser\nawait quire.browser.start()');
      var library = toPlain(started);
      mark('library-open');
      var versions = pyodide.runPython(
        'import json, sys, numpy, quire\n' +
        'from quire.retrieval import kernels\n' +
        'json.dumps({"python": sys.version.split()[0], "numpy": numpy.__version__, "quire": quire.__version__,\n' +
        '            "dense_kernel": kernels.backend()})');
      writes = JSON.parse(pyodide.runPython('import quire.browser\nquire.browser.writes_json()'));
      reportLateDynlibs();
      stage('ready', { versions: JSON.parse(versions), pyodide: pyodide.version, library: library });
      var afterReady = QuireQuiet.quiet().then(needLibraries);
      background = afterReady.then(loadLazy);
      // An index that did not match the stored passages was repaired in memory; save it
      // once this tab holds the writer lock.
      // So is an index in the old single-blob format, rewritten as segments.
      if (library && ((library.repaired && library.repaired.length) || library.save)) {
        afterReady.then(function () { return py('repairIndex', '[]', null, 0); })
          .catch(function (err) { logWarning('The repaired search index was not saved: ' + err.message); });
      }
      if (library && library.merge) mergeSoon();
    } catch (err) {
      post(describe(err, where));
      throw err;
    }
  }

  /* The shared libraries `import numpy` loads (bootImages[].dynlibs), compiled as soon as
   * their image arrives, while the snapshot is restored.  Left to Python's dlopen they were
   * compiled synchronously in the middle of the import, and a synchronous compile in
   * WebKit waits until its compiler threads are free of the tier-up work of Pyodide's
   * own module: up to 6 s on a busy 2-core machine (a few ms in Chromium and Firefox).
   * Resolves to [{path, module}]; a library that fails here is left to dlopen. */
  function compileDynlibs(images) {
    return Promise.all(images.map(function (image) {
      var wanted = image.dynlibs || [];
      if (!wanted.length) return [];
      return QuireAssets.get(image.asset).then(function (bytes) {
        var files = readImage(bytes, image.asset).files;
        return compileAll(wanted, function (path) { return files[path]; });
      }).catch(function (err) {
        logWarning('Compiling the libraries of ' + image.package + ' ahead failed (' + err.message + '); the import loads them.');
        return [];
      });
    })).then(function (lists) {
      mark('dynlibs-compiled');
      return [].concat.apply([], lists);
    });
  }

  function compileAll(paths, bytesOf) {
    return Promise.all(paths.map(function (path) {
      return WebAssembly.compile(bytesOf(path)).then(function (module) { return { path: path, module: module }; });
    }));
  }

  /* Instantiate compiled libraries (paths relative to site-packages) the way Pyodide's package
   * loader does (local symbols, never unloaded) and leave them where Emscripten's dlopen looks
   * first, so an import finds them loaded.  Uses Pyodide 0.27's Emscripten module (pinned). */
  async function linkDynlibs(compiled) {
    var Module = pyodide._module;
    for (var i = 0; i < compiled.length; i++) {
      var path = sitePackages + '/' + compiled[i].path;
      try {
        Module.preloadedWasm[path] = await Module.loadWebAssemblyModule(compiled[i].module,
          { loadAsync: true, nodelete: true, allowUndefined: true, global: false }, path, {});
      } catch (err) {
        logWarning('Loading ' + compiled[i].path + ' ahead failed (' + err.message + '); the import loads it.');
      }
    }
  }

  /* The boot images' other libraries (numpy.random, numpy.fft…), which importing scipy and
   * scikit-learn loads: compiled together and linked before they are imported, for the same
   * reason as at boot (in WebKit, ten synchronous compiles in the middle of that import). */
  async function linkOtherDynlibs() {
    var Module = pyodide._module;
    var rest = imageDynlibs.filter(function (path) {
      var full = sitePackages + '/' + path;
      return !Module.LDSO.loadedLibsByName[full] && !Module.preloadedWasm[full];
    });
    try {
      await linkDynlibs(await compileAll(rest, function (path) { return pyodide.FS.readFile(sitePackages + '/' + path); }));
    } catch (err) {
      logWarning('Compiling the other libraries ahead failed (' + err.message + '); their imports load them.');
    }
    mark('other-dynlibs-linked');
  }

  /* A library the import loaded itself was missed by the list: say which, for the build's list. */
  function reportLateDynlibs() {
    var Module = pyodide._module;
    var late = Object.keys(Module.LDSO.loadedLibsByName).filter(function (name) {
      return name !== '__main__' && !Module.preloadedWasm[name];
    });
    if (late.length) logWarning('Loaded while importing, not compiled ahead (BOOT_DYNLIBS in py/quire_build/common.py): ' + late.join(', '));
  }

  /* Pyodide restored from the build's memory snapshot when the bundle has one (about
   * two seconds faster); started the ordinary way when it has none or it fails. */
  async function startPyodide(cfg) {
    var options = {
      indexURL: cfg.base,
      fullStdLib: false,
      stdout: function (line) { post({ type: 'log', level: 'info', text: line }); },
      stderr: function (line) { post({ type: 'log', level: 'warn', text: line }); },
    };
    // Compiling the 10 MB wasm module starts the moment it arrives, on the browser's
    // compiler threads, while the snapshot is still being unpacked.
    var wasm = QuireAssets.get('pyodide.asm.wasm');
    var compiled = wasm.then(function (bytes) { return WebAssembly.compile(bytes); });
    compiled.then(function () { mark('wasm-compiled'); }, function () {});
    if (cfg.snapshot) {
      try {
        var both = await Promise.all([QuireAssets.get(cfg.snapshot.asset), wasm]);
        var restored = await withCompiledWasm(compiled, function () {
          return QuireSnapshot.load(loadPyodide, options, both[0], both[1], cfg.snapshot);
        });
        mark('snapshot-restored');
        return restored;
      } catch (err) {
        QuireAssets.forget(cfg.snapshot.asset);
        logWarning('Starting from the memory snapshot failed (' + (err && err.message || err) + '); starting Python the ordinary way.');
      }
    }
    return withCompiledWasm(compiled, function () { return loadPyodide(options); });
  }

  /* Run start() with Pyodide instantiating the module compiled in advance. */
  async function withCompiledWasm(compiled, start) {
    var create = self._createPyodideModule;
    var failed = null;
    self._createPyodideModule = function (settings) {
      settings.instantiateWasm = function (imports, receive) {
        engineMemory = imports.env.memory;
        compiled
          .then(function (module) {
            return WebAssembly.instantiate(module, imports).then(function (instance) { receive(instance, module); });
          })
          .catch(function (err) { failed(err); });
        return {};
      };
      return Promise.race([create(settings), new Promise(function (_, reject) { failed = reject; })]);
    };
    try {
      return await start();
    } finally {
      self._createPyodideModule = create;
    }
  }

  /* Dense search falls back to numpy's matrix product if this fails (e.g. no wasm SIMD). */
  function installKernels() {
    try {
      if (!self.quireKernels.install(pyodide, engineMemory)) logWarning('WebAssembly SIMD is not available: dense search uses numpy.');
    } catch (err) {
      logWarning('The SIMD search kernel did not install (' + err.message + '): dense search uses numpy.');
    }
  }

  function logWarning(text) { post({ type: 'log', level: 'warn', text: text }); }

  var LOAD_OPTIONS = { messageCallback: function () {}, errorCallback: logError, checkIntegrity: true };

  function logError(text) { post({ type: 'log', level: 'error', text: String(text) }); }

  /* numpy and the boot wheels (quire, snowballstemmer) arrive as file images (build.py
   * wheel_image): written straight into site-packages, about ten times faster than
   * unzipping wheels with Python in a just-started engine, then marked loaded so later
   * loadPackage calls skip them. */
  async function installImages(images) {
    sitePackages = sitePackages || pyodide.runPython('import pyodide._package_loader as l; str(l.SITE_PACKAGES)');
    var FS = pyodide.FS;
    for (var i = 0; i < images.length; i++) {
      var image = readImage(await QuireAssets.get(images[i].asset), images[i].asset);
      image.names.forEach(function (name) {
        var path = sitePackages + '/' + name;
        FS.mkdirTree(path.slice(0, path.lastIndexOf('/')));
        FS.writeFile(path, image.files[name]);
        if (/\.so$/.test(name)) imageDynlibs.push(name);
      });
      pyodide.loadedPackages[images[i].package] = 'default channel';
    }
    // Only site-packages' cached listing: importlib.invalidate_caches() would import
    // importlib.metadata, and the stdlib zip's finder would re-read the zip (~0.3 s each).
    pyodide.runPython('import sys\nf = sys.path_importer_cache.get(' + JSON.stringify(sitePackages) + ')\nf and f.invalidate_caches()');
  }

  /* A file image (py/quire_build/images.py): {names, files: name -> bytes}, views into `bytes`. */
  function readImage(bytes, asset) {
    var magic = String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]);
    if (magic !== 'QFS1') throw QuireAssets.AssetError('damaged', asset, 'The file ' + asset + ' is not a file image.');
    var headerLength = new DataView(bytes.buffer, bytes.byteOffset + 4, 4).getUint32(0, true);
    var entries = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
    var at = 8 + headerLength, out = { names: [], files: {} };
    entries.forEach(function (entry) {
      out.names.push(entry[0]);
      out.files[entry[0]] = bytes.subarray(at, at + entry[1]);
      at += entry[1];
    });
    return out;
  }

  /* pypdf, fsrs and the rest: installed right after ready, before any engine call runs. */
  async function installLazyWheels() {
    if (!config.lazyWheels || !config.lazyWheels.length) return;
    await pyodide.loadPackage(config.installerPackages, LOAD_OPTIONS);
    var micropip = pyodide.pyimport('micropip');
    try {
      await micropip.install.callKwargs(config.lazyWheels.map(function (w) { return config.base + w; }), { deps: false });
      stage('libraries');
    } finally {
      micropip.destroy();
    }
  }

  /* scipy and scikit-learn (the study tools): about 4 s of this thread and 8-10 s of the
   * machine's CPU on a quiet machine, 15-30 s on a busy one.  They load only once the page asks
   * (quire.studyToolsReady(): opening Study, making or importing a set), never merely because a
   * tab was opened: a tab used to search and ask leaves the machine alone.  The packages are
   * fetched and unpacked, then the modules imported one at a time, each once the engine is
   * quiet, so a page call waits for one step at most.  The first study set then finds
   * TfidfVectorizer and KMeans imported. */
  // In the order they import each other, the heavy ones apart (scipy.stats alone is ~1.5 s).
  var SKLEARN_IMPORTS = ['scipy', 'scipy._lib._util', 'scipy.sparse', 'scipy.special', 'scipy.linalg', 'scipy.fft',
                         'scipy.spatial', 'scipy.optimize', 'scipy.interpolate', 'scipy.ndimage', 'scipy.stats',
                         'sklearn', 'sklearn.feature_extraction.text'];
  // KMeans (the mind map) and what it imports: after scikit-learn is reported ready, so the study
  // tools open as early as before; a mind map made before they are in imports them itself.
  var SKLEARN_AFTER = ['sklearn.linear_model', 'sklearn.decomposition', 'sklearn.neighbors', 'sklearn.cluster'];

  var studyToolsAsked = false, studyTools = null, servicesLoaded = false;

  /* What the tab does by itself after ready: the services, then every passage read into memory
   * (resolves when both are done; the study tools are not part of it). */
  async function loadLazy() {
    try {
      await pyodide.runPythonAsync('import quire.browser\nquire.browser.load_services()');
      mark('services-loaded');
    } catch (err) {
      logError('services did not load: ' + err.message);
    }
    await QuireQuiet.quiet();
    servicesLoaded = true;
    var read = pyodide.runPythonAsync('import quire.browser\nawait quire.browser.background()').then(function () {
      mark('passages-read');
    }, function (err) { logWarning('Reading the library into memory stopped: ' + err.message); });
    if (studyToolsAsked) loadStudyTools();
    await read;
  }

  /* The page asked for the study tools: load them once the services are (loadLazy starts them
   * if they are not yet). */
  function askStudyTools() {
    studyToolsAsked = true;
    if (servicesLoaded) loadStudyTools();
  }

  function loadStudyTools() {
    if (!studyTools) studyTools = importStudyTools();
    return studyTools;
  }

  async function importStudyTools() {
    // Each step first gives the thread back: a page call waiting for it runs before the next step,
    // even when the engine is already quiet (an await of a settled promise would not let it).
    var step = function () {
      return new Promise(function (resolve) { setTimeout(resolve, 0); }).then(function () { return QuireQuiet.quiet(); });
    };
    try {
      await step();
      stage('sklearn-loading');
      await linkOtherDynlibs();
      // One call: Pyodide fetches the packages side by side and unpacks each as it arrives, in
      // tasks of its own (one package at a time fetched them one after the other: 4-6 s more).
      await step();
      await pyodide.loadPackage(config.lazyPackages, LOAD_OPTIONS);
      mark('loaded packages');
      var importlib = pyodide.pyimport('importlib');
      var importAll = async function (names) {
        for (var j = 0; j < names.length; j++) {
          await step();
          try {  // a step is only a way to cut the work; the import that counts comes after
            importlib.import_module(names[j]).destroy();
            mark('imported ' + names[j]);
          } catch (err) {
            logWarning('Importing ' + names[j] + ' ahead failed: ' + err.message);
          }
        }
      };
      try {
        await importAll(SKLEARN_IMPORTS);
        var v = pyodide.runPython('import sklearn, scipy\nsklearn.__version__ + " / scipy " + scipy.__version__');
        stage('sklearn', { version: v });
        await importAll(SKLEARN_AFTER);
        mark('sklearn-imported');
      } finally {
        importlib.destroy();
      }
    } catch (err) {
      var msg = describe(err, 'sklearn');
      msg.type = 'background-failed';
      post(msg);
    }
  }

  function toPlain(value) {
    if (value && typeof value.toJs === 'function') {
      try {
        return value.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
      } finally {
        value.destroy();
      }
    }
    return value;
  }

  /* ---------------- one writer at a time ---------------- */

  /* Library writes hold the Web Lock LOCK, shared by every Quire tab of this origin (all
   * file:// pages are one origin here, as for IndexedDB); quire.browser.WRITES says which
   * methods write and how they wait.  Without Web Locks, a lease in IndexedDB does the same
   * (worker-lease.js); without that either, a promise chain serialises this tab only. */
  var LOCK = 'quire.library';
  var writes = {};
  var running = null;  // this tab's write in progress: {id, name, cancelledBy}
  var chain = Promise.resolve();
  var CANCELLABLE = { train: 'Train', embed: 'Adding meaning vectors' };
  var ACTION = { eraseAll: '“Erase all knowledge”', importVault: 'the vault import' };

  function emit(id, event) { post({ type: 'event', id: id, event: JSON.stringify(event) }); }

  var noLease = false;  // IndexedDB refused the lease once: this tab only, from then on

  function withLock(mode, onWait, body) {
    if (!self.navigator || !navigator.locks) {
      if (!noLease && typeof indexedDB !== 'undefined') {
        return QuireLease.request(LOCK, mode, onWait, body).catch(function (err) {
          if (!err || !err.leaseFailed) throw err;
          noLease = true;
          logWarning(err.message + '; only this tab is kept to one writer.');
          return withLock(mode, onWait, body);
        });
      }
      var next = chain.then(body, body);
      chain = next.catch(function () {});
      return next;
    }
    return navigator.locks.request(LOCK, { mode: mode, ifAvailable: true }, function (lock) {
      if (lock) return body();
      onWait();
      return navigator.locks.request(LOCK, { mode: mode }, body);
    });
  }

  async function write(name, id, run) {
    var how = writes[name];
    var stopped = null;
    if (how === 'cancel' && running && CANCELLABLE[running.name]) {
      stopped = running;
      stopped.cancelledBy = name;
      pyodide.runPython('import quire.browser as b; b.cancel(' + Number(stopped.id) + ')');
    }
    var value = await withLock(how === 'shared' ? 'shared' : 'exclusive', function () {
      emit(id, running
        ? { stage: 'waiting', message: 'Waiting for ' + (CANCELLABLE[running.name] || 'another change') + ' in this tab to finish…' }
        : { stage: 'waiting-other-tab', message: 'Training or saving in another Quire tab; this starts when it is done…' });
    }, async function () {
      var mine = how === 'shared' ? null : { id: id, name: name };
      if (mine) running = mine;
      try {
        return await run();
      } finally {
        if (mine && running === mine) running = null;
      }
    });
    if (how === 'cancel') {
      if (!value || typeof value !== 'object') value = {};
      var what = stopped && CANCELLABLE[stopped.name];
      value.train = !stopped ? 'none' : stopped.outcome === 'cancelled' ? 'cancelled' : 'waited';
      value.message = !stopped ? '' : stopped.outcome === 'cancelled'
        ? what + ' was running; it was cancelled (nothing from it was saved), then ' + ACTION[name] + ' ran.'
        : what + ' was running and had already reached saving; ' + ACTION[name] + ' waited for it to finish, then ran.';
    }
    return value;
  }

  /* Dead rows or segments have piled up in the stored index: merge them once this tab has
   * been quiet for MERGE_IDLE ms (a write like any other, under the lock; it rewrites the
   * index, so it never runs in the middle of someone's edits). */
  var MERGE_IDLE = 3000;
  var mergeTimer = null;
  function mergeSoon() {
    if (mergeTimer) clearTimeout(mergeTimer);
    mergeTimer = setTimeout(function () {
      mergeTimer = null;
      if (running) { mergeSoon(); return; }
      py('mergeIndex', '[]', null, -1).then(function (r) {
        if (r && r.merged) post({ type: 'log', level: 'info', text: 'Quire: search index merged (' + r.rows_before + ' stored rows, ' + r.rows + ' live)' });
      }, function (err) { logWarning('The search index was not merged: ' + err.message); });
    }, MERGE_IDLE);
  }

  async function dispatch(name, argsJson, payload, id) {
    var bridge = pyodide.pyimport('quire.browser');
    try {
      var reply = JSON.parse(await bridge.dispatch(name, argsJson, id, payload));
    } finally {
      bridge.destroy();
    }
    if (reply.changed) post({ type: 'library-changed', method: name });
    if (reply.merge) mergeSoon();
    if (running && running.id === id && running.cancelledBy) {
      running.outcome = !reply.ok && reply.kind === 'TrainCancelled' ? 'cancelled' : 'finished';
      if (running.outcome === 'cancelled') {
        reply.error = (CANCELLABLE[name] || name) + ' was cancelled so that ' + ACTION[running.cancelledBy] +
          ' could run; nothing from it was saved.';
      }
    }
    if (!reply.ok) {  // kind and detail (a traceback) go to the page with the error, which logs them once
      var err = new Error(reply.error);
      err.kind = reply.kind;
      if (typeof reply.detail === 'string' && reply.detail) err.detail = reply.detail;
      throw err;
    }
    return reply.value;
  }

  /* An engine method (quire.browser.dispatch), under the writer lock if it writes. */
  async function py(name, argsJson, payload, id) {
    if (!QUICK[name]) await needLibraries();
    var run = function () { return dispatch(name, argsJson, payload, id); };
    return writes[name] ? write(name, id, run) : run();
  }

  /* The calls the worker answers itself; any other name is an engine method (py). */
  var own = Object.create(null);
  own.waitForLazy = function () { return background; };
  /* quire.run(source): any Python, a hook for tests only.  The page asks for it in its init
   * message when it was opened with ?test-hooks (boot-calls.js); otherwise "run" is unknown. */
  async function runPython(source) {
    await pyodide.loadPackagesFromImports(source, { messageCallback: function () {}, errorCallback: logError });
    return toPlain(await pyodide.runPythonAsync(source));
  }

  async function call(msg) {
    // A call that waits for the work after ready must not hold that work back.
    var token = msg.method !== 'waitForLazy' && QuireQuiet.begin();
    try {
      await booted;
      var fn = own[msg.method];
      var value = fn ? await fn.apply(null, JSON.parse(msg.argsJson || '[]'))
        : await py(msg.method, msg.argsJson, msg.payload, msg.id);
      post({ type: 'result', id: msg.id, ok: true, value: value });
    } catch (err) {
      post({ type: 'result', id: msg.id, ok: false, error: String(err && err.message || err), kind: err && err.kind,
        detail: err && err.detail });
    } finally {
      if (token) QuireQuiet.end(token);
    }
  }

  self.onmessage = function (event) {
    var msg = event.data;
    switch (msg.type) {
      case 'init':
        // A write failed on the disk in an earlier session and the log was not retired yet (store-seal.js).
        if (msg.config.logTears !== undefined) QuireStore.logTears(msg.config.logTears);
        if (msg.config.storageTorn) QuireStore.setTorn(true);
        // ...or the page has not yet judged whether the last session was cut short (store-tabs.js).
        if (msg.config.storagePending) QuireStore.hold();
        if (msg.config.testHooks) own.run = runPython;
        booted = boot(msg.config); booted.catch(function () {}); break;
      case 'storage-judged': QuireStore.verdict(msg.torn); break;
      case 'asset': QuireAssets.receive(msg.name, msg.gz, msg.bytes); break;
      case 'asset-failed': QuireAssets.fail(msg.name, msg.kind, msg.message); break;
      case 'call': call(msg); break;
      case 'study-tools': askStudyTools(); break;
      case 'page-result': {
        var pending = pageCalls[msg.id];
        delete pageCalls[msg.id];
        if (pending) {
          if (msg.ok) pending.resolve(msg.value);
          else { var e = new Error(msg.error); e.kind = msg.kind; pending.reject(e); }
        }
        break;
      }
      case 'cancel':
        if (pyodide) pyodide.runPython('import quire.browser as b; b.cancel(' + Number(msg.id) + ')');
        break;
      default: logError('unknown message ' + msg.type);
    }
  };
  post({ type: 'alive' });
})();
