/* When the engine is quiet: what comes after ready (the cached vectors, every passage,
 * scipy and scikit-learn: about 10 s of the engine's thread at 100k passages) waits until no
 * page call has run for QUIET ms, so the first search after opening does not queue behind
 * it.  A call that needs any of that starts that part itself.
 *
 * It does not wait for calls that have been running for LONG ms or more (a model's answer
 * streaming for minutes, a page call that never settles): that work would wait forever.  It
 * then shares the thread with them, as it does with any call that begins while it runs.
 */
var QuireQuiet = (function () {
  'use strict';
  var QUIET = 300, LONG = 2000;
  var running = new Map(), next = 0, lastChange = -Infinity;

  /* Resolves once no call began or ended in the last QUIET ms and every call still running
   * began LONG ms ago or more. */
  function quiet() {
    return new Promise(function (resolve) {
      (function check() {
        var now = performance.now(), wait = lastChange + QUIET - now;
        running.forEach(function (began) { wait = Math.max(wait, began + LONG - now); });
        if (wait <= 0) resolve(); else setTimeout(check, wait);
      })();
    });
  }

  /* A page call began; returns its token for end(). */
  function begin() {
    var id = ++next;
    running.set(id, lastChange = performance.now());
    return id;
  }

  function end(id) {
    running.delete(id);
    lastChange = performance.now();
  }

  return { quiet: quiet, begin: begin, end: end };
})();
