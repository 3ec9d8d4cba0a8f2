/* The engine's boot: Pyodide started from the bundle (restored from the build's memory
 * snapshot when there is one), numpy and the boot wheels installed from their file images,
 * then Quire imported and its library opened.  Stages are reported by name as it goes
 * (pyodide, numpy, wheels, quire); the page turns them into the progress bar.
 *
 * worker.js calls start(config) once, on the page's init message, and announces ready
 * itself; it, worker-lazy.js and worker-writer.js then use the Pyodide started here.  The
 * bytes come from QuireAssets, the snapshot from QuireSnapshot, the images' files and
 * libraries from QuireImages (worker-images.js), the SIMD kernels from quireKernels.
 *
 *   QuireEngineBoot.start(config) -> {pyodide, library, versions, writes}; on failure it posts
 *       {type: 'fatal'} naming the stage (QuireReport.describe) and rejects
 *   QuireEngineBoot.pyodide()     -> Pyodide once started, else null
 *   QuireEngineBoot.toPlain(v)    -> a Python value as plain JavaScript (the proxy destroyed)
 */
var QuireEngineBoot = (function () {
  'use strict';
  var post = QuireReport.post, stage = QuireReport.stage, mark = QuireReport.mark, logWarning = QuireReport.warn;
  var pyodide = null;

  /* The Memory Pyodide's wasm runs in (seen when it is instantiated): the SIMD kernels
   * (kernels.js) read numpy's arrays in it in place. */
  var engineMemory = null;

  async function start(cfg) {
    QuireAssets.init(cfg, post);
    var where = 'pyodide';
    try {
      stage('pyodide');
      // After the files Pyodide starts from, which the page hands over first (arrived or failed:
      // a damaged snapshot only means Python starts the ordinary way).
      var first = Object.keys(cfg.assets).filter(function (name) { return cfg.assets[name].first; });
      var dynlibs = Promise.all(first.map(function (name) { return QuireAssets.get(name).catch(function () {}); }))
        .then(function () { return QuireImages.compileDynlibs(cfg.bootImages); });
      pyodide = await startPyodide(cfg);
      installKernels();
      where = 'numpy';
      stage('numpy');
      await QuireImages.install(pyodide, cfg.bootImages);
      await QuireImages.linkDynlibs(pyodide, await dynlibs);
      mark('dynlibs-linked');
      where = 'wheels';
      stage('wheels');
      await QuireImages.install(pyodide, cfg.wheelImages);
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
      // Which methods write, and how they wait for the writer lock (worker-writer.js).
      var writes = JSON.parse(pyodide.runPython('import quire.browser\nquire.browser.writes_json()'));
      QuireImages.reportLateDynlibs(pyodide);
      return { pyodide: pyodide, library: library, versions: JSON.parse(versions), writes: writes };
    } catch (err) {
      post(QuireReport.describe(err, where));
      throw err;
    }
  }

  /* Pyodide restored from the build's memory snapshot when the bundle has one (about
   * two seconds faster); started the ordinary way when it has none or it fails. */
  async function startPyodide(cfg) {
    var options = {
      indexURL: cfg.base,
      fullStdLib: false,
      stdout: QuireReport.info,
      stderr: QuireReport.warn,
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

  return { start: start, pyodide: function () { return pyodide; }, toPlain: toPlain };
})();
