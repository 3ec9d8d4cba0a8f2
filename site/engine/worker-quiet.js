/* When the engine is quiet: what comes after ready (the cached vectors, every passage,
 * scipy and scikit-learn: about 10 s of the engine's thread at 100k passages) waits until no
 * page call has run for QUIET ms, so the first search after opening does not queue behind
 * it.  A call that needs any of that starts that part itself.
 */
var QuireQuiet = (function () {
  'use strict';
  var QUIET = 300;
  var inFlight = 0, lastCall = 0;

  /* Resolves once no call is running and none ended in the last QUIET ms. */
  function quiet() {
    return new Promise(function (resolve) {
      (function check() {
        var wait = inFlight ? QUIET : lastCall + QUIET - performance.now();
        if (wait <= 0) resolve(); else setTimeout(check, wait);
      })();
    });
  }

  function begin() { inFlight++; }
  function end() { inFlight--; lastCall = performance.now(); }

  return { quiet: quiet, begin: begin, end: end };
})();
