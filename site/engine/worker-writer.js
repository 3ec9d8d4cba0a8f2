/* One writer at a time: the engine methods that change the library run under a lock shared by
 * every Quire tab of this origin, and a write that must not wait for this tab's Train cancels it.
 *
 * worker.js hands it the table of writes once boot is done (start: quire.browser.WRITES, read by
 * worker-boot.js, and how to cancel a running call) and runs each engine call that writes through
 * write(); dispatch's reply passes through settle() so a cancelled Train says why.  Without Web
 * Locks it takes the lease in IndexedDB (QuireLease, worker-lease.js).  A caller waiting for the
 * lock is told so as the call's progress ({type: 'event'}).
 *
 *   QuireWriter.start(writes, cancel)   writes: method -> 'wait' | 'cancel' | 'shared'; cancel(id)
 *   QuireWriter.writes(name)            -> whether the engine method `name` writes
 *   QuireWriter.write(name, id, run)    -> run()'s promise, run under the lock
 *   QuireWriter.busy()                  -> whether a write of this tab is running
 *   QuireWriter.settle(name, id, reply) notes how a cancelled write ended; says why in reply.error
 */
var QuireWriter = (function () {
  'use strict';
  var post = QuireReport.post, logWarning = QuireReport.warn;

  /* Library writes hold the Web Lock LOCK, shared by every Quire tab of this origin (all
   * file:// pages are one origin here, as for IndexedDB); quire.browser.WRITES says which
   * methods write and how they wait.  Without Web Locks, a lease in IndexedDB does the same
   * (worker-lease.js); without that either, a promise chain serialises this tab only. */
  var LOCK = 'quire.library';
  var writes = {};
  var cancel = null;  // cancel(id): the engine call id stops at its next check (quire.browser.cancel)
  var running = null;  // this tab's write in progress: {id, name, cancelledBy}
  var chain = Promise.resolve();
  var CANCELLABLE = { train: 'Train', embed: 'Adding meaning vectors' };
  var ACTION = { eraseAll: '“Erase all knowledge”', importVault: 'the vault import' };

  function start(table, cancelCall) {
    writes = table;
    cancel = cancelCall;
  }

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
      cancel(stopped.id);
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

  /* The engine's reply to the call `id` (method `name`): when another write cancelled it,
   * note whether it stopped or had already finished, and say why in its error. */
  function settle(name, id, reply) {
    if (running && running.id === id && running.cancelledBy) {
      running.outcome = !reply.ok && reply.kind === 'TrainCancelled' ? 'cancelled' : 'finished';
      if (running.outcome === 'cancelled') {
        reply.error = (CANCELLABLE[name] || name) + ' was cancelled so that ' + ACTION[running.cancelledBy] +
          ' could run; nothing from it was saved.';
      }
    }
  }

  return { start: start, writes: function (name) { return writes[name]; }, write: write,
           busy: function () { return !!running; }, settle: settle };
})();
