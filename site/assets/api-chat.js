/* Chat on the automation surface: window.quire.ask and the chat sessions.
 *
 *   const r = await quire.ask('What makes ATP?', {scope: {sources: [id]}, session: sid, onEvent: e => ...});
 *   r.answer, r.citations (source, location_label, passage), r.events, r.session
 *
 * Events arrive in order: citations (retrieval done), thinking, content, tool_call /
 * tool_result, then done with the session's memory use.  Without a reachable chat model
 * the events are citations, connection (why, and the fix), extractive (the passages).
 * `signal` (an AbortSignal) or quire.stopAsk(promise) stops an answer; what arrived is kept. */
(function () {
  'use strict';
  var q = self.quire;

  function changed(detail) {
    document.dispatchEvent(new CustomEvent('quire:chats-changed', { detail: detail || null }));
  }

  function streamed(method, args, opts) {
    opts = opts || {};
    var events = [];
    var p = q._call(method, args, { onEvent: function (e) {
      events.push(e);
      if (opts.onEvent) opts.onEvent(e);
    } });
    if (opts.signal) {
      if (opts.signal.aborted) q._cancel(p.id);
      else opts.signal.addEventListener('abort', function () { q._cancel(p.id); });
    }
    var out = p.then(function (result) {
      result.events = events;
      changed({ session: result.session });
      return result;
    });
    out.id = p.id;
    return out;
  }

  /** ask(question, {scope, session, onEvent, signal}) -> {answer, citations, events, session, memory, mode, ...} */
  q.ask = function (question, opts) {
    opts = opts || {};
    var o = {};
    if (opts.session) o.session = opts.session;
    if (opts.scope !== undefined) o.scope = opts.scope;
    return streamed('ask', [question, o], opts);
  };

  /** editQuestion(session, messageIndex, text, {onEvent, signal}): rewind to that question and answer it again. */
  q.editQuestion = function (session, index, text, opts) {
    return streamed('editQuestion', [session, index, text], opts);
  };

  /** stopAsk(promise): the Stop button for a promise from ask() or editQuestion(). */
  q.stopAsk = function (promise) { if (promise && promise.id != null) q._cancel(promise.id); };

  q.chatSessions = function () { return q._call('chatSessions'); };
  q.chatSession = function (id) { return q._call('chatSession', [id]); };
  q.newChat = function (opts) {
    opts = opts || {};
    return q._call('newChat', [opts.scope || null, opts.title || '']).then(function (s) { changed({ session: s.id }); return s; });
  };
  q.renameChat = function (id, title) {
    return q._call('renameChat', [id, title]).then(function (s) { changed({ session: id }); return s; });
  };
  q.deleteChat = function (id) {
    return q._call('deleteChat', [id]).then(function (r) { changed(null); return r; });
  };
  q.setChatScope = function (id, scope) {
    return q._call('setChatScope', [id, scope || null]).then(function (s) { changed({ session: id }); return s; });
  };
})();
