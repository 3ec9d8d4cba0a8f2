/* What the engine loads after ready: the wheels installed once it is quiet (pypdf, fsrs and the
 * rest), then the services and every passage read into memory; and scipy with scikit-learn (the
 * study tools), only once the page asks for them.
 *
 * worker.js starts it once boot is done (start) and asks it before every engine call whether the
 * call must wait for the wheels (quick, needLibraries); the page's waitForLazy call is answered
 * with waitForLazy(), its 'study-tools' message with askStudyTools().  Each step waits until the
 * engine is quiet (QuireQuiet, worker-quiet.js); numpy's other libraries are linked by QuireImages
 * (worker-images.js).
 *
 *   QuireLazy.start(pyodide, config) -> resolves once the wheels are installed
 *   QuireLazy.quick(name)            -> whether the engine method `name` needs none of them
 *   QuireLazy.needLibraries()        -> the wheels' install, started now if it was not yet
 *   QuireLazy.waitForLazy()          -> resolves when the services and the passages are loaded
 *   QuireLazy.askStudyTools()        the page wants scipy and scikit-learn
 *   QuireLazy.settleSoon()           a full collection once quiet, what survives frozen (quire.heap)
 */
var QuireLazy = (function () {
  'use strict';
  var post = QuireReport.post, stage = QuireReport.stage, mark = QuireReport.mark;
  var logWarning = QuireReport.warn, logError = QuireReport.error, describe = QuireReport.describe;
  var pyodide = null;
  var config = null;
  var background = null;
  var libraries = null;  // the wheels installed after ready; engine calls wait for them (but QUICK ones)

  var LOAD_OPTIONS = { messageCallback: function () {}, errorCallback: logError, checkIntegrity: true };

  // Read-only calls that need none of the wheels installed after ready (pypdf, fsrs).
  var QUICK = { search: 1, passage: 1, sources: 1, sourcesSince: 1, categories: 1, chunks: 1, usage: 1, librarySettings: 1,
    llmSettings: 1, llmStatus: 1, embeddingStatus: 1, storageWatch: 1 };
  function quick(name) { return !!QUICK[name]; }

  function needLibraries() {
    if (!libraries) {
      libraries = installLazyWheels();
      libraries.catch(function (err) { post(describe(err, 'libraries')); });
    }
    return libraries;
  }

  /* After ready: the wheels once the engine is quiet, then loadLazy.  Resolves with the wheels. */
  function start(engine, cfg) {
    pyodide = engine;
    config = cfg;
    var afterReady = QuireQuiet.quiet().then(needLibraries);
    background = afterReady.then(loadLazy);
    return afterReady;
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
   * fetched and unpacked, then the modules imported a piece at a time, each once the engine is
   * quiet, so a page call waits for one step at most.  The pieces are every module they need,
   * in the order Python finished them (QuireStudyOrder, worker-study-order.js, recorded by
   * tests/bench/study_imports.py), each once its parent package is in: importing a package runs
   * its whole __init__ (scikit-learn's about 2.5 s of this thread in one step before), so a
   * module whose parent is not in yet comes with its parent.  The names below are then imported
   * as before (nothing left to do unless the list is out of date).  The first study set then
   * finds TfidfVectorizer and KMeans imported. */
  // In the order they import each other, the heavy ones apart (scipy.stats alone is ~1.5 s).
  var SKLEARN_IMPORTS = ['scipy', 'scipy._lib._util', 'scipy.sparse', 'scipy.special', 'scipy.linalg', 'scipy.fft',
                         'scipy.spatial', 'scipy.optimize', 'scipy.interpolate', 'scipy.ndimage', 'scipy.stats',
                         'sklearn', 'sklearn.feature_extraction.text'];
  // KMeans (the mind map) and what it imports: after scikit-learn is reported ready, so the study
  // tools open as early as before; a mind map made before they are in imports them itself.
  var SKLEARN_AFTER = ['sklearn.linear_model', 'sklearn.decomposition', 'sklearn.neighbors', 'sklearn.cluster'];

  // named: one of the lists above, imported whatever its parent (Python imports the parent first);
  // else a piece of QuireStudyOrder, imported only once its parent is in.
  var PIECE = ['import importlib, sys',
               'def piece(name, load=False, named=False):',
               '    parent = name.rpartition(".")[0]',
               '    if name in sys.modules or (parent and parent not in sys.modules and not named):',
               '        return False',
               '    if load:',
               '        importlib.import_module(name)',
               '    return True',
               'piece'].join('\n');

  var studyToolsAsked = false, studyTools = null, servicesLoaded = false;

  /* After a big change (a Train, an erase, an import, the passages read, the study tools in):
   * once the engine is quiet, one full collection and what survives it frozen (quire.heap), so
   * Python's later collections walk only what is new, not every passage (80-110 ms every few
   * seconds of a person's calls with 5,000 notes).  One at a time; asked again meanwhile, it runs
   * once more after. */
  var settling = null, settleAgain = false;
  function settleSoon() {
    if (settling) { settleAgain = true; return; }
    settling = new Promise(function (resolve) { setTimeout(resolve, 0); }).then(QuireQuiet.quiet).then(function () {
      pyodide.runPython('import quire.heap\nquire.heap.settle()').destroy();
      mark('heap-settled');
    }).catch(function (err) { logWarning('The engine\'s heap was not settled: ' + err.message); }).then(function () {
      settling = null;
      if (settleAgain) { settleAgain = false; settleSoon(); }
    });
  }

  /* What the tab does by itself after ready: the services, then every passage read into memory
   * (resolves when both are done; the study tools are not part of it). */
  async function loadLazy() {
    try {
      // A service at a time, the engine quiet before each: the four together held the first
      // page call after a reload for about 80 ms of imports (docs/benchmarks.md, "How long a
      // person's calls wait"); a call that needs one that is not in yet imports it itself.
      var next = pyodide.runPython('import quire.browser\nquire.browser.load_next_service');
      try {
        for (;;) {
          await new Promise(function (resolve) { setTimeout(resolve, 0); });
          await QuireQuiet.quiet();
          if (!next()) break;
        }
      } finally {
        next.destroy();
      }
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
    settleSoon();
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

  /* The study tools' packages (scipy, scikit-learn and what they need), installed as Pyodide's
   * loadPackage does, but unpacked a few milliseconds at a time (quire.unpack) with the thread
   * given back between pieces: loadPackage unpacks a package in one task, 250-480 ms of the
   * engine on a loaded 2-core machine, and a call of the page waited behind it.  Every package's
   * bytes are asked for at once; each is unpacked once those it depends on are in, then its
   * libraries are loaded (compiled off the thread).  Pyodide without the internals this uses
   * (pinned 0.27) gets loadPackage. */
  async function installInSteps(names, step) {
    var api = pyodide._api, lock = api && api.lockfile_packages, FS = pyodide.FS;
    if (!lock || !api.loadDynlibsFromPackage || !api.package_loader) return pyodide.loadPackage(names, LOAD_OPTIONS);
    var order = [], seen = {};
    (function visit(list) {
      list.forEach(function (name) {
        if (seen[name] || pyodide.loadedPackages[name] || !lock[name]) return;
        seen[name] = true;
        visit(lock[name].depends || []);
        order.push(name);
      });
    })(names);
    mark('unpacking');
    var bytes = {};
    order.forEach(function (name) { bytes[name] = QuireAssets.get(lock[name].file_name); bytes[name].catch(function () {}); });
    var Unpacking = pyodide.runPython('from quire.unpack import Unpacking\nUnpacking'), dirs = {};
    var loader = pyodide.pyimport('pyodide._package_loader');
    try {
      for (var i = 0; i < order.length; i++) {
        var info = lock[order[i]], file = '/tmp/' + info.file_name;
        var dir = api.package_loader.get_install_dir(info.install_dir);
        dirs[dir] = true;
        FS.writeFile(file, await bytes[order[i]]);  // in the file system's memory, not the engine's heap
        delete bytes[order[i]];
        var job = Unpacking(file, info.file_name, dir), dynlibs;
        try {
          while (!job.step()) await step();
          var finish = job.finish, list = finish.callKwargs(loader, { installer: 'pyodide.loadPackage', source: 'pyodide' });
          dynlibs = list.toJs();
          list.destroy();
          finish.destroy();
        } finally {
          job.destroy();
          FS.unlink(file);
        }
        await step();
        await api.loadDynlibsFromPackage({ file_name: info.file_name }, dynlibs);
        pyodide.loadedPackages[order[i]] = 'default channel';
        mark('unpacked ' + order[i]);
      }
    } finally {
      Unpacking.destroy();
      loader.destroy();
    }
    // What loadPackage ends with, for these folders only (importlib.invalidate_caches() re-reads
    // the standard library's zip: about 0.3 s).
    pyodide.runPython('import sys\nfor d in ' + JSON.stringify(Object.keys(dirs)) + ':\n' +
      '    f = sys.path_importer_cache.get(d)\n    f and f.invalidate_caches()');
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
      await QuireImages.linkOtherDynlibs(pyodide);
      // One call: Pyodide fetches the packages side by side and unpacks each as it arrives, in
      // tasks of its own (one package at a time fetched them one after the other: 4-6 s more).
      await step();
      await installInSteps(config.lazyPackages, step);
      mark('loaded packages');
      // piece(name, load): whether name is a piece to import now (not in, its parent in), and
      // with load, import it.
      var piece = pyodide.runPython(PIECE);
      var reported = false;
      var ready = function () {
        var last = SKLEARN_IMPORTS[SKLEARN_IMPORTS.length - 1];
        if (reported || piece.callKwargs(last, { load: false, named: true })) return;  // not in yet
        reported = true;
        var v = pyodide.runPython('import sklearn, scipy\nsklearn.__version__ + " / scipy " + scipy.__version__');
        stage('sklearn', { version: v });
      };
      var importAll = async function (names, named) {
        for (var j = 0; j < names.length; j++) {
          if (!piece.callKwargs(names[j], { load: false, named: named })) continue;
          await step();
          try {  // a step is only a way to cut the work; the import that counts comes after
            piece.callKwargs(names[j], { load: true, named: named });
            mark('imported ' + names[j]);
          } catch (err) {
            logWarning('Importing ' + names[j] + ' ahead failed: ' + err.message);
          }
          ready();
        }
      };
      try {
        await importAll(typeof QuireStudyOrder === 'undefined' ? [] : QuireStudyOrder, false);
        await importAll(SKLEARN_IMPORTS, true);
        ready();
        await importAll(SKLEARN_AFTER, true);
        mark('sklearn-imported');
        settleSoon();
      } finally {
        piece.destroy();
      }
    } catch (err) {
      var msg = describe(err, 'sklearn');
      msg.type = 'background-failed';
      post(msg);
    }
  }

  return { start: start, quick: quick, needLibraries: needLibraries, waitForLazy: function () { return background; },
           askStudyTools: askStudyTools, settleSoon: settleSoon };
})();
