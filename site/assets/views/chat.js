/* Ask: chat with your documents.  Sessions on the left; on the right the chat's scope,
 * its memory meter, the messages and the question box with Stop.  Each answer is a
 * QuireAnswer (views/chat-answer.js): rendered by QuireMarkdown, citations as links to the
 * passage in context.  Everything here goes through window.quire (api-chat.js), so a
 * script can drive what a person clicks. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;
  var Answer = self.QuireAnswer;  // views/chat-answer.js loads first
  var el = {};
  var answers = new WeakMap();  // an answer's <li> -> its QuireAnswer (a [n] opens that citation)
  var state = { sessions: [], session: null, draftScope: null, busy: null, sources: [], categories: [], llm: null, said: null, nav: 0 };
  // nav counts the user's moves between chats: a chat that finishes opening after the user has
  // moved on (New chat, another chat, a question sent) must not replace what they chose.
  var LABELS = { not_running: t('The model server is not running'), cors_refused: t('The model server refuses this page'),
    model_missing: t('The chat model is not installed'), no_chat_model: t('No chat model is chosen'),
    unconfirmed: t('The model server on another computer is not confirmed yet'), reload_needed: t('Reload the page to use the new model server') };

  function init(root) {
    el.list = h('ul', { class: 'chat-list', testid: 'chat-session-list' });
    el.title = h('h2', { testid: 'chat-title' }, t('New chat'));
    el.scope = h('select', { testid: 'chat-scope', 'aria-label': t('Answer from'), onchange: scopeChanged });
    el.sourcePicker = h('fieldset', { class: 'chat-sources', testid: 'chat-scope-sources', hidden: true });
    el.scopeLabel = h('p', { class: 'chat-scope-label', testid: 'chat-scope-label' });
    el.meterFill = h('div', { class: 'progress-fill' });
    el.meterText = h('span', { class: 'small muted', testid: 'memory-text' });
    el.meter = h('div', { class: 'chat-meter', testid: 'memory-meter', title: t('How much of this chat the model still remembers') },
      h('div', { class: 'progress', role: 'meter', 'aria-label': t('Conversation memory'), 'aria-valuemin': '0', 'aria-valuemax': '100' }, el.meterFill),
      el.meterText);
    el.connection = h('p', { class: 'chat-connection', testid: 'chat-connection', hidden: true });
    el.messages = h('ol', { class: 'chat-messages', testid: 'chat-messages', 'aria-live': 'polite' });
    el.input = h('textarea', { rows: '2', testid: 'chat-input', placeholder: t('Ask about your documents…'), 'aria-label': t('Question'),
      onkeydown: function (e) { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); submit(); } } });
    el.ask = h('button', { type: 'submit', class: 'primary', testid: 'chat-ask' }, t('Ask'));
    el.stop = h('button', { type: 'button', class: 'danger', testid: 'chat-stop', hidden: true, onclick: stop }, t('Stop'));
    var form = h('form', { class: 'chat-form', onsubmit: function (e) { e.preventDefault(); submit(); } }, el.input,
      QuireVoiceButton.attach(el.input, { testid: 'chat-mic' }), el.ask, el.stop);

    root.append(h('div', { class: 'chat-layout' },
      // A list of chats to go between: navigation, not an <aside> (a complementary landmark must
      // not sit inside <main>: axe's landmark-complementary-is-top-level).
      h('nav', { class: 'chat-side card', 'aria-label': t('Chats') },
        h('button', { type: 'button', class: 'primary chat-new', testid: 'chat-new', onclick: newChat }, t('+ New chat')),
        el.list),
      h('div', { class: 'chat-main card' },
        h('div', { class: 'chat-head' }, el.title, h('span', { class: 'spacer' }),
          h('label', { class: 'inline small' }, t('Answer from'), el.scope)),
        el.sourcePicker, el.scopeLabel, el.meter, el.connection, el.messages, form)));

    el.messages.addEventListener('click', onCite);
    document.addEventListener('quire:llm-status', function (e) { state.llm = e.detail; renderConnection(); });
    document.addEventListener('quire:library-changed', function () { if (QuireUI.shown(el.messages)) loadScopes(); });
    document.addEventListener('quire:erased', erased);
  }

  /* After Erase all (or a vault replace) nothing of the old chats may stay on screen. */
  function erased() {
    stop();
    setBusy(false);
    state.nav++;
    state.session = null;
    state.draftScope = null;
    state.sessions = [];
    el.input.value = '';
    renderSession();
    renderList();
    refresh();
  }

  /* The newest exchange right above the question box: <main> scrolled to its end, where the sticky
   * box stands in its own place and covers nothing (scrolled elsewhere it covers what passes under
   * it; an answer's end brought into view with scrollIntoView ended up there). */
  function toLatest() {
    var main = el.messages.closest('main');
    if (main) main.scrollTop = main.scrollHeight;
  }

  function show() {
    toLatest();
    loadScopes();
    var nav = state.nav;
    q.chatSessions().then(function (list) {
      state.sessions = list;
      renderList();
      if (nav !== state.nav) return;  // the user has picked a chat, or a new one, meanwhile
      if (!state.session && list.length) return open(list[0].id);
      if (!state.session) renderSession();
    });
    if (!state.llm) q.llmStatus().catch(function () {});
  }

  /* ---------------- sessions ---------------- */

  function renderList() {
    QuireUI.clear(el.list);
    state.sessions.forEach(function (s) {
      var current = state.session && state.session.id === s.id;
      var del = h('button', { type: 'button', class: 'icon', testid: 'chat-delete', title: t('Delete this chat'), 'aria-label': t('Delete {name}', { name: s.title }),
        onclick: function () {
          if (del.dataset.armed) { remove(s.id); return; }
          del.dataset.armed = '1'; del.textContent = t('Delete?');
          setTimeout(function () { delete del.dataset.armed; del.textContent = '×'; }, 4000);
        } }, '×');
      var li = h('li', { class: 'chat-item' + (current ? ' current' : ''), testid: 'chat-session', dataset: { id: s.id } },
        h('button', { type: 'button', class: 'chat-open', testid: 'chat-open', 'aria-current': current ? 'true' : null,
          onclick: function () { open(s.id); } },
          h('span', { class: 'chat-item-title', testid: 'chat-session-title' }, s.title),
          h('span', { class: 'small muted' }, QuireUI.plural(s.questions, 'question'))),
        h('button', { type: 'button', class: 'icon', testid: 'chat-rename', title: t('Rename'), 'aria-label': t('Rename {name}', { name: s.title }),
          onclick: function () { renaming(li, s); } }, '✎'),
        del);
      el.list.appendChild(li);
    });
    if (!state.sessions.length) el.list.appendChild(h('li', { class: 'muted small chat-empty' }, t('No chats yet.')));
  }

  function renaming(li, s) {
    var input = h('input', { type: 'text', testid: 'chat-rename-input', value: s.title, 'aria-label': t('Chat name') });
    var done = false;
    function commit(save) {
      if (done) return;
      done = true;
      if (!save || !input.value.trim() || input.value === s.title) { renderList(); return; }
      q.renameChat(s.id, input.value).then(function () { if (state.session && state.session.id === s.id) state.session.title = input.value.trim(); refresh(); },
        function (e) { QuireUI.toast(e.message, 'error'); renderList(); });
    }
    input.addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { e.preventDefault(); commit(true); }
      if (e.key === 'Escape') commit(false);
    });
    input.addEventListener('blur', function () { commit(true); });
    QuireUI.fill(li, input);
    input.focus();
    input.select();
  }

  function refresh() {
    return q.chatSessions().then(function (list) {
      state.sessions = list;
      renderList();
      if (state.session) {
        var s = list.filter(function (x) { return x.id === state.session.id; })[0];
        if (s) { state.session.title = s.title; el.title.textContent = s.title; }
      }
    });
  }

  function open(id) {
    if (state.busy) return Promise.resolve();
    var nav = ++state.nav;
    return q.chatSession(id).then(function (s) {
      if (nav !== state.nav || state.busy) return;
      state.session = s;
      renderSession();
      renderList();
    }, function (e) { QuireUI.toast(e.message, 'error'); });
  }

  function newChat() {
    if (state.busy) return;
    state.nav++;
    state.session = null;
    state.draftScope = null;
    renderSession();
    renderList();
    el.input.focus();
  }

  function remove(id) {
    q.deleteChat(id).then(function () {
      if (state.session && state.session.id === id) state.session = null;
      renderSession();
      return refresh();
    }, function (e) { QuireUI.toast(e.message, 'error'); });
  }

  /* ---------------- scope ---------------- */

  function loadScopes() {
    if (q.status().stage !== 'ready') return;
    Promise.all([q.sources(), q.categories()]).then(function (res) {
      state.sources = res[0].filter(function (s) { return s.status === 'trained'; });
      state.categories = res[1];
      renderScope();
    });
  }

  function currentScope() { return state.session ? state.session.scope : state.draftScope; }

  function renderScope() {
    var scope = currentScope();
    QuireUI.clear(el.scope).appendChild(h('option', { value: '' }, t('All documents')));
    if (state.categories.length) {
      var g = h('optgroup', { label: t('A category') });
      state.categories.forEach(function (c) { g.appendChild(h('option', { value: 'cat:' + c }, c)); });
      el.scope.appendChild(g);
    }
    el.scope.appendChild(h('option', { value: 'pick' }, t('Chosen sources…')));
    el.scope.value = !scope ? '' : scope.category ? 'cat:' + scope.category : 'pick';
    var chosen = scope && scope.sources ? scope.sources.map(function (s) { return s.id; }) : [];
    QuireUI.fill(el.sourcePicker, h('legend', { class: 'small muted' }, t('Answer only from these sources')),
      state.sources.length ? state.sources.map(function (s) {
        return h('label', { class: 'inline small' }, h('input', { type: 'checkbox', value: s.id, checked: chosen.indexOf(s.id) >= 0,
          testid: 'chat-scope-source', dataset: { name: s.name }, onchange: sourcesChanged }), s.name);
      }) : h('span', { class: 'small muted' }, t('No trained sources yet.')));
    el.sourcePicker.hidden = el.scope.value !== 'pick';
    el.scopeLabel.textContent = scopeText(scope);
    el.scopeLabel.classList.toggle('pinned', !!scope);
  }

  function scopeText(scope) {
    if (!scope) return t('Answering from all your documents.');
    if (scope.category) return t('Answering only from the category “{category}”.', { category: scope.category });
    return t('Answering only from: {sources}.', { sources: scope.sources.map(function (s) { return s.name; }).join(', ') });
  }

  function scopeChanged() {
    var v = el.scope.value;
    if (v === 'pick') { el.sourcePicker.hidden = false; return sourcesChanged(); }
    setScope(v ? { category: v.slice(4) } : null);
  }

  function sourcesChanged() {
    var ids = Array.prototype.map.call(el.sourcePicker.querySelectorAll('input:checked'), function (c) { return c.value; });
    setScope(ids.length ? { sources: ids.map(function (id) { return { id: id, name: nameOf(id) }; }) } : null, true);
  }

  function nameOf(id) {
    var s = state.sources.filter(function (x) { return x.id === id; })[0];
    return s ? s.name : id;
  }

  function setScope(scope, keepPicker) {
    var done = function () {
      renderScope();
      if (keepPicker) { el.scope.value = 'pick'; el.sourcePicker.hidden = false; }
    };
    if (!state.session) { state.draftScope = scope; done(); return; }
    var session = state.session;
    q.setChatScope(session.id, scope).then(function (s) { session.scope = s.scope; if (state.session === session) done(); },
      function (e) { QuireUI.toast(e.message, 'error'); });
  }

  /* ---------------- connection and memory ---------------- */

  function renderConnection(event) {
    var s = event || state.llm;
    if (!s) return;
    var status = s.status === 'connected' && !event && !(s.settings && s.settings.chat_model) ? 'no_chat_model' : s.status;
    // What the server itself said when it refused the model (a provider's 404 for a model the key may not
    // use) stays shown while the status is the same, also when a later status check redraws this line.
    // Only then: for a server that did not answer, the error is the browser's, not the server's words.
    if (event) state.said = event.error && status === 'model_missing' ? { status: status, words: event.error } : null;
    var said = state.said && state.said.status === status && (s.message || '').indexOf(state.said.words) < 0 ? state.said.words : '';
    if (status === 'connected') { el.connection.hidden = true; return; }
    el.connection.hidden = false;
    el.connection.dataset.state = status;
    QuireUI.fill(el.connection,
      h('strong', { testid: 'chat-connection-state' }, LABELS[status] || status), ' — ',
      status === 'no_chat_model' ? t('Quire answers with the best passages from your documents, without an AI summary.') + ' '
        : QuireI18n.engine(s.message || '') + ' ',
      said ? h('span', { testid: 'chat-connection-said' }, t('The server said: {words}', { words: said }) + ' ') : null,  // quoted, never translated
      s.fix && status !== 'no_chat_model' ? h('span', { class: 'small', testid: 'chat-connection-fix' }, QuireI18n.engine(s.fix) + ' ') : null,
      h('a', { href: '#settings', testid: 'chat-settings-link' }, t('Open Settings')));
  }

  function renderMemory(mem) {
    mem = mem || { fullness: 0, used: 0, budget: 48000, dropped: 0 };
    var pct = Math.round(mem.fullness * 100);
    el.meterFill.style.width = Math.max(pct, mem.used ? 1 : 0) + '%';
    el.meter.firstChild.setAttribute('aria-valuenow', String(pct));
    el.meter.dataset.fullness = String(mem.fullness);
    el.meter.classList.toggle('full', mem.fullness >= 1);
    el.meterText.textContent = t('Memory {percent}% of {budget} characters', { percent: mem.used && pct < 1 ? t('under 1') : pct, budget: mem.budget }) +
      (mem.dropped ? ' · ' + (mem.dropped === 1 ? t('the oldest exchange is forgotten') : t('the oldest {exchanges} are forgotten', { exchanges: QuireUI.plural(mem.dropped, 'exchange') })) : '');
  }

  /* What an answer shows outside itself (views/chat-answer.js). */
  var shown = { connection: renderConnection, memory: renderMemory };

  /* ---------------- messages ---------------- */

  function renderSession() {
    var s = state.session;
    el.title.textContent = s ? s.title : t('New chat');
    renderScope();
    renderMemory(s && s.memory);
    QuireUI.clear(el.messages);
    if (!s || !s.messages.length) {
      el.messages.appendChild(h('li', { class: 'chat-hello muted', testid: 'chat-empty' },
        t('Ask a question about your documents. Every answer cites the passages it comes from; click a [number] to read it in place.')));
      return;
    }
    var question = '';
    s.messages.forEach(function (m, i) {
      if (m.role === 'user') { question = m.content; el.messages.appendChild(userNode(m.content, i)); }
      else el.messages.appendChild(answerNode(new Answer(question, m, shown)));
    });
    toLatest();
  }

  function userNode(text, index) {
    var edit = h('button', { type: 'button', class: 'icon small', testid: 'edit-question', title: t('Edit and ask again'),
      onclick: function () { editing(li, text, index); } }, t('Edit'));
    var li = h('li', { class: 'msg user', testid: 'msg-user', dataset: { index: String(index) } },
      h('div', { class: 'bubble', testid: 'msg-user-text' }, text), edit);
    return li;
  }

  function editing(li, text, index) {
    if (state.busy) return;
    var box = h('textarea', { rows: '2', testid: 'edit-input', 'aria-label': t('Edited question') });
    box.value = text;
    QuireUI.fill(li, h('div', { class: 'edit-box' }, box,
      h('div', { class: 'add-row' },
        h('button', { type: 'button', class: 'primary', testid: 'edit-save', onclick: function () {
          if (!box.value.trim()) return;
          // Rewind: drop this question and everything after it on screen; the engine does the same.
          while (li.nextSibling) li.parentNode.removeChild(li.nextSibling);
          state.session.messages = state.session.messages.slice(0, index);
          li.replaceWith(userNode(box.value.trim(), index));
          state.session.messages.push({ role: 'user', content: box.value.trim() });
          run(box.value.trim(), function (opts) { return q.editQuestion(state.session.id, index, box.value.trim(), opts); });
        } }, t('Ask again')),
        h('button', { type: 'button', testid: 'edit-cancel', onclick: function () { li.replaceWith(userNode(text, index)); } }, t('Cancel')))));
    box.focus();
  }

  function answerNode(answer) { answers.set(answer.node, answer); return answer.node; }

  /* A [n] in an answer, or a citation chip: the passage in its page, highlighted; the dialog
   * shows the cited passage at once while the whole page loads. */
  function onCite(e) {
    var a = e.target.closest('[data-cite]');
    if (!a || !el.messages.contains(a)) return;
    e.preventDefault();
    var msg = a.closest('.msg');
    var chunk = a.dataset.chunk;
    var question = '';
    var prev = msg && msg.previousElementSibling;
    if (prev && prev.classList.contains('user')) question = prev.querySelector('.bubble').textContent;
    if (!chunk && msg) {
      var chip = msg.querySelector('.citations [data-cite="' + a.dataset.cite + '"], .extractive [data-cite="' + a.dataset.cite + '"]');
      chunk = chip && chip.dataset.chunk;
    }
    var answer = msg && answers.get(msg);
    var cited = answer && answer.citations.filter(function (c) { return String(c.n) === a.dataset.cite; })[0];
    if (chunk) QuirePassage.open(chunk, question, cited && cited.chunk_id === chunk ?
      { source: cited.source, location_label: cited.location_label, text: cited.passage } : null);
  }

  /* ---------------- asking ---------------- */

  function submit() {
    var text = el.input.value.trim();
    if (!text || state.busy) return;
    el.input.value = '';
    var hello = el.messages.querySelector('.chat-hello');
    if (hello) hello.remove();
    var index = state.session ? state.session.messages.length : 0;
    if (state.session && state.session.messages.length && state.session.messages[index - 1].role === 'user') index -= 1;
    el.messages.appendChild(userNode(text, index));
    var opts = state.session ? { session: state.session.id } : { scope: scopeForAsk() };
    run(text, function (o) { return q.ask(text, Object.assign(opts, o)); });
  }

  function scopeForAsk() {
    var s = state.draftScope;
    if (!s) return null;
    return s.category ? { category: s.category } : { sources: s.sources.map(function (x) { return x.id; }) };
  }

  function run(question, start) {
    state.nav++;
    var answer = new Answer(question, null, shown);
    el.messages.appendChild(answerNode(answer));
    toLatest();
    setBusy(true);
    var p = start({ onEvent: function (e) {
      answer.on(e);
      if (e.type === 'citations' && !state.session) state.session = { id: e.session, title: e.title, scope: e.scope, messages: [] };
    } });
    state.busy = p;
    return p.then(function (r) {
      if (r.saved === false) {  // the chat was deleted (or everything erased) while it was answered
        setBusy(false);
        QuireUI.toast(t('This chat was deleted while it was being answered, so the answer was not kept.'));
        if (state.session && state.session.id === r.session) { state.session = null; renderSession(); }
        return refresh();
      }
      return q.chatSession(r.session).then(function (s) {
        state.session = s;
        el.title.textContent = s.title;
        renderMemory(s.memory);
        setBusy(false);
        refresh();
      });
    }).catch(function (err) {
      setBusy(false);
      answer.error(err.message);
      answer.finish({});
    });
  }

  function setBusy(on) {
    if (!on) state.busy = null;
    el.ask.disabled = on;
    el.stop.hidden = !on;
    el.scope.disabled = on;
  }

  function stop() { if (state.busy) q.stopAsk(state.busy); }

  QuireUI.register('ask', { init: init, show: show });
})();
