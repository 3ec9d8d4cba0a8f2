/* What the engine worker tells the page besides answers: its stages, timing marks, console
 * lines and the description of a failure.  The other worker files (worker-boot.js,
 * worker-images.js, worker-lazy.js, worker-writer.js, worker.js) post through here.
 *
 *   QuireReport.post(msg)               any message to the page
 *   QuireReport.stage(name, extra)      a stage by name; the page turns them into the progress bar
 *   QuireReport.mark(name)              a timing mark
 *   QuireReport.info / warn / error(text)   a line for the page's console
 *   QuireReport.describe(err, where)    -> the {type: 'fatal'} message for err at stage `where`
 */
var QuireReport = (function () {
  'use strict';

  function post(msg) { self.postMessage(msg); }

  /* Times travel as epoch milliseconds: the page and the worker have different clocks' origins. */
  function now() { return performance.timeOrigin + performance.now(); }
  function stage(name, extra) { post(Object.assign({ type: 'stage', stage: name, at: now() }, extra || {})); }
  function mark(name) { post({ type: 'mark', name: name, at: now() }); }

  function info(text) { post({ type: 'log', level: 'info', text: text }); }
  function warn(text) { post({ type: 'log', level: 'warn', text: text }); }
  function error(text) { post({ type: 'log', level: 'error', text: String(text) }); }

  function describe(err, where) {
    var assetError = QuireAssets.firstError();
    if (assetError && err && err.name !== 'AssetError') err = assetError;
    var msg = { type: 'fatal', stage: where, message: String(err && err.message || err) };
    if (err && err.name === 'AssetError') { msg.kind = err.kind; msg.asset = err.asset; }
    if (err && err.stack) msg.detail = String(err.stack).slice(0, 4000);
    return msg;
  }

  return { post: post, stage: stage, mark: mark, info: info, warn: warn, error: error, describe: describe };
})();
