/* Ask: chat with your documents.  Sessions on the left; on the right the chat's scope,
 * its memory meter, the messages (answers rendered by QuireMarkdown, citations as links
 * to the passage in context) and the question box with Stop.  Everything here goes
 * through window.quire (api-chat.js), so a script can drive what a person clicks. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var q = self.quire;
  var el = {};
  var state = { sessions: [], session: null, draftScope: null, busy: null, sources: [], categories: [], llm: null };
  var LABELS = { not_running: 'The model server is not running', cors_refused: 'The model server refuses this page',
    model_missing: 'The chat model is not installed', no_chat_model: 'No chat model is chosen',
    unconfirmed: 'The model server on another computer is not confirmed yet' };

  function init(root) {
    el.list = h('ul', { class: 'chat-list', testid: 'chat-session-list' });
    el.title = h('h2', { testid: 'chat-title' }, 'New chat');
    el.scope = h('select', { testid: 'chat-scope', 'aria-label': 'Answer from', onchange: scopeChanged });
    el.sourcePicker = h('fieldset', { class: 'chat-sources', testid: 'chat-scope-sources', hidden: true });
    el.scopeLabel = h('p', { class: 'chat-scope-label', testid: 'chat-scope-label' });
    el.meterFill = h('div', { class: 'progress-fill' });
    el.meterText = h('span', { class: 'small muted', testid: 'memory-text' });
    el.meter = h('div', { class: 'chat-meter', testid: 'memory-meter', title: 'How much of this chat the model still remembers' },
      h('div', { class: 'progress', role: 'meter', 'aria-label': 'Conversation memory', 'aria-valuemin': '0', 'aria-valuemax': '100' }, el.meterFill),
      el.meterText);
    el.connection = h('p', { class: 'chat-connection', testid: 'chat-connection', hidden: true });
    el.messages = h('ol', { class: 'chat-messages', testid: 'chat-messages', 'aria-live': 'polite' });
    el.input = h('textarea', { rows: '2', testid: 'chat-input', placeholder: 'Ask about your documents…', 'aria-label': 'Question',
      onkeydown: function (e) { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); submit(); } } });
    el.ask = h('button', { type: 'submit', class: 'primary', testid: 'chat-ask' }, 'Ask');
    el.stop = h('button', { type: 'button', class: 'danger', testid: 'chat-stop', hidden: true, onclick: stop }, 'Stop');
    var form = h('form', { class: 'chat-form', onsubmit: function (e) { e.preventDefault(); submit(); } }, el.input, el.ask, el.stop);

    root.append(h('div', { class: 'chat-layout' },
      h('aside', { class: 'chat-side card' },
        h('button', { type: 'button', class: 'primary chat-new', testid: 'chat-new', onclick: newChat }, '+ New chat'),
        el.list),
      h('div', { class: 'chat-main card' },
        h('div', { class: 'chat-head' }, el.title, h('span', { class: 'spacer' }),
          h('label', { class: 'inline small' }, 'Answer from', el.scope)),
        el.sourcePicker, el.scopeLabel, el.meter, el.connection, el.messages, form)));

    el.messages.addEventListener('click', onCite);
    document.addEventListener('quire:llm-status', function (e) { state.llm = e.detail; renderConnection(); });
    document.addEventListener('quire:library-changed', loadScopes);
    document.addEventListener('quire:erased', erased);
  }

  /* After Erase all (or a vault replace) nothing of the old chats may stay on screen. */
  function erased() {
    stop();
    setBusy(false);
    state.session = null;
    state.draftScope = null;
    state.sessions = [];
    el.input.value = '';
    renderSession();
    renderList();
    refresh();
  }

  function show() {
    loadScopes();
    q.chatSessions().then(function (list) {
      state.sessions = list;
      renderList();
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
      var del = h('button', { type: 'button', class: 'icon', testid: 'chat-delete', title: 'Delete this chat', 'aria-label': 'Delete ' + s.title,
        onclick: function () {
          if (del.dataset.armed) { remove(s.id); return; }
          del.dataset.armed = '1'; del.textContent = 'Delete?';
          setTimeout(function () { delete del.dataset.armed; del.textContent = '×'; }, 4000);
        } }, '×');
      var li = h('li', { class: 'chat-item' + (current ? ' current' : ''), testid: 'chat-session', dataset: { id: s.id } },
        h('button', { type: 'button', class: 'chat-open', testid: 'chat-open', 'aria-current': current ? 'true' : null,
          onclick: function () { open(s.id); } },
          h('span', { class: 'chat-item-title', testid: 'chat-session-title' }, s.title),
          h('span', { class: 'small muted' }, QuireUI.plural(s.questions, 'question'))),
        h('button', { type: 'button', class: 'icon', testid: 'chat-rename', title: 'Rename', 'aria-label': 'Rename ' + s.title,
          onclick: function () { renaming(li, s); } }, '✎'),
        del);
      el.list.appendChild(li);
    });
    if (!state.sessions.length) el.list.appendChild(h('li', { class: 'muted small chat-empty' }, 'No chats yet.'));
  }

  function renaming(li, s) {
    var input = h('input', { type: 'text', testid: 'chat-rename-input', value: s.title, 'aria-label': 'Chat name' });
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
    return q.chatSession(id).then(function (s) {
      state.session = s;
      renderSession();
      renderList();
    }, function (e) { QuireUI.toast(e.message, 'error'); });
  }

  function newChat() {
    if (state.busy) return;
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
    QuireUI.clear(el.scope).appendChild(h('option', { value: '' }, 'All documents'));
    if (state.categories.length) {
      var g = h('optgroup', { label: 'A category' });
      state.categories.forEach(function (c) { g.appendChild(h('option', { value: 'cat:' + c }, c)); });
      el.scope.appendChild(g);
    }
    el.scope.appendChild(h('option', { value: 'pick' }, 'Chosen sources…'));
    el.scope.value = !scope ? '' : scope.category ? 'cat:' + scope.category : 'pick';
    var chosen = scope && scope.sources ? scope.sources.map(function (s) { return s.id; }) : [];
    QuireUI.fill(el.sourcePicker, h('legend', { class: 'small muted' }, 'Answer only from these sources'),
      state.sources.length ? state.sources.map(function (s) {
        return h('label', { class: 'inline small' }, h('input', { type: 'checkbox', value: s.id, checked: chosen.indexOf(s.id) >= 0,
          testid: 'chat-scope-source', dataset: { name: s.name }, onchange: sourcesChanged }), s.name);
      }) : h('span', { class: 'small muted' }, 'No trained sources yet.'));
    el.sourcePicker.hidden = el.scope.value !== 'pick';
    el.scopeLabel.textContent = scopeText(scope);
    el.scopeLabel.classList.toggle('pinned', !!scope);
  }

  function scopeText(scope) {
    if (!scope) return 'Answering from all your documents.';
    if (scope.category) return 'Answering only from the category “' + scope.category + '”.';
    return 'Answering only from: ' + scope.sources.map(function (s) { return s.name; }).join(', ') + '.';
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
    q.setChatScope(state.session.id, scope).then(function (s) { state.session.scope = s.scope; done(); },
      function (e) { QuireUI.toast(e.message, 'error'); });
  }

  /* ---------------- connection and memory ---------------- */

  function renderConnection(event) {
    var s = event || state.llm;
    if (!s) return;
    var status = s.status === 'connected' && !event && !(s.settings && s.settings.chat_model) ? 'no_chat_model' : s.status;
    if (status === 'connected') { el.connection.hidden = true; return; }
    el.connection.hidden = false;
    el.connection.dataset.state = status;
    QuireUI.fill(el.connection,
      h('strong', { testid: 'chat-connection-state' }, LABELS[status] || status), ' — ',
      status === 'no_chat_model' ? 'Quire answers with the best passages from your documents, without an AI summary. '
        : (s.message || '') + ' ',
      s.fix && status !== 'no_chat_model' ? h('span', { class: 'small', testid: 'chat-connection-fix' }, s.fix + ' ') : null,
      h('a', { href: '#settings', testid: 'chat-settings-link' }, 'Open Settings'));
  }

  function renderMemory(mem) {
    mem = mem || { fullness: 0, used: 0, budget: 48000, dropped: 0 };
    var pct = Math.round(mem.fullness * 100);
    el.meterFill.style.width = Math.max(pct, mem.used ? 1 : 0) + '%';
    el.meter.firstChild.setAttribute('aria-valuenow', String(pct));
    el.meter.dataset.fullness = String(mem.fullness);
    el.meter.classList.toggle('full', mem.fullness >= 1);
    el.meterText.textContent = 'Memory ' + (mem.used && pct < 1 ? 'under 1' : pct) + '% of ' + Number(mem.budget).toLocaleString() + ' characters' +
      (mem.dropped ? ' · the oldest ' + (mem.dropped === 1 ? 'exchange is' : QuireUI.plural(mem.dropped, 'exchange') + ' are') + ' forgotten' : '');
  }

  /* ---------------- messages ---------------- */

  function renderSession() {
    var s = state.session;
    el.title.textContent = s ? s.title : 'New chat';
    renderScope();
    renderMemory(s && s.memory);
    QuireUI.clear(el.messages);
    if (!s || !s.messages.length) {
      el.messages.appendChild(h('li', { class: 'chat-hello muted', testid: 'chat-empty' },
        'Ask a question about your documents. Every answer cites the passages it comes from; click a [number] to read it in place.'));
      return;
    }
    var question = '';
    s.messages.forEach(function (m, i) {
      if (m.role === 'user') { question = m.content; el.messages.appendChild(userNode(m.content, i)); }
      else el.messages.appendChild(new Answer(question, m).node);
    });
    el.messages.lastChild.scrollIntoView({ block: 'end' });
  }

  function userNode(text, index) {
    var edit = h('button', { type: 'button', class: 'icon small', testid: 'edit-question', title: 'Edit and ask again',
      onclick: function () { editing(li, text, index); } }, 'Edit');
    var li = h('li', { class: 'msg user', testid: 'msg-user', dataset: { index: String(index) } },
      h('div', { class: 'bubble', testid: 'msg-user-text' }, text), edit);
    return li;
  }

  function editing(li, text, index) {
    if (state.busy) return;
    var box = h('textarea', { rows: '2', testid: 'edit-input', 'aria-label': 'Edited question' });
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
        } }, 'Ask again'),
        h('button', { type: 'button', testid: 'edit-cancel', onclick: function () { li.replaceWith(userNode(text, index)); } }, 'Cancel'))));
    box.focus();
  }

  /* One answer on screen: thinking, citations, tools, text (or passages), and any error. */
  function Answer(question, msg) {
    this.question = question;
    this.citations = (msg && msg.citations) || [];
    this.thinkingText = h('div', { class: 'thinking-text', testid: 'thinking-text' });
    this.thinking = h('details', { class: 'thinking', testid: 'thinking', hidden: true },
      h('summary', null, 'Thinking'), this.thinkingText);
    this.cites = h('ol', { class: 'citations', testid: 'citations', hidden: true });
    this.tools = h('ul', { class: 'tool-events', testid: 'tool-events', hidden: true });
    this.body = h('div', { class: 'answer md', testid: 'answer' });
    this.extra = h('div', { class: 'answer-extra' });
    this.status = h('p', { class: 'answer-status small muted', testid: 'answer-status' });
    this.node = h('li', { class: 'msg assistant', testid: 'msg-assistant' },
      this.thinking, this.cites, this.tools, this.body, this.extra, this.status);
    this.text = '';
    if (!msg) { this.status.textContent = 'Searching your documents…'; return; }
    this.text = msg.content || '';
    if (msg.thinking) this.addThinking(msg.thinking, true);
    this.showCitations(this.citations);
    (msg.events || []).forEach(this.toolEvent, this);
    if (msg.extractive) this.showExtractive(msg.extractive);
    else this.paint();
    this.finish({ stopped: msg.stopped, error: msg.error });
  }

  Answer.prototype.addThinking = function (text, done) {
    this.thinking.hidden = false;
    this.thinkingText.textContent += text;
    if (!done && !this.text) this.thinking.open = true;
  };

  Answer.prototype.showCitations = function (citations) {
    var self = this;
    this.citations = citations;
    if (this.live) { this.live = null; this.body.replaceChildren(); }  // [n] markers must point at the new list
    QuireUI.clear(this.cites);
    if (!citations.length) return;
    this.cites.hidden = false;
    citations.forEach(function (c) {
      self.cites.appendChild(h('li', null, h('a', { href: '#ask', class: 'citation', testid: 'citation', dataset: { cite: String(c.n), chunk: c.chunk_id },
        title: c.passage.slice(0, 300) }, h('span', { class: 'cite-n' }, String(c.n)), c.source + (c.location_label ? ' · ' + c.location_label : ''))));
    });
  };

  Answer.prototype.toolEvent = function (e) {
    if (e.type === 'tool_call') {
      this.tools.hidden = false;
      this.tools.appendChild(h('li', { testid: 'tool-call', dataset: { tool: e.name } }, h('span', { class: 'tool-name' }, e.name),
        ' ', h('code', null, JSON.stringify(e.arguments))));
    } else if (e.type === 'tool_result') {
      var last = this.tools.querySelector('[data-tool="' + CSS.escape(e.name) + '"]:not([data-done])');
      var line = h('details', { class: 'tool-result' + (e.ok ? '' : ' failed'), testid: 'tool-result' },
        h('summary', null, e.ok ? 'result' : 'failed'), h('pre', null, e.result));
      if (last) { last.dataset.done = '1'; last.appendChild(line); } else { this.tools.hidden = false; this.tools.appendChild(h('li', null, line)); }
    } else if (e.type === 'error') {
      this.error(e.message);
    }
  };

  /* Rendering goes through one QuireMarkdown.stream per answer: while the answer streams
   * in, each frame re-renders only the blocks that changed (normally the last one), so a
   * long answer never costs a whole re-render per frame. */
  Answer.prototype.paint = function () {
    if (!this.live) {
      var cits = this.citations;
      this.live = QuireMarkdown.stream(this.body, { citations: function (n) {
        var c = cits[n - 1];
        return c ? { href: '#ask', title: c.source + (c.location_label ? ', ' + c.location_label : '') } : null;
      } });
    }
    this.live.update(this.text);
  };

  Answer.prototype.content = function (piece) {
    var self = this;
    this.text += piece;
    this.status.textContent = '';
    this.node.classList.add('streaming');
    if (this.painting) return;
    this.painting = true;
    requestAnimationFrame(function () { self.painting = false; self.paint(); });
  };

  Answer.prototype.showExtractive = function (ex) {
    var self = this;
    this.cites.hidden = true;  // the passages below are the answer
    this.live = null;
    this.body.replaceChildren();
    var list = h('ol', { class: 'extractive-results' });
    ex.results.forEach(function (r) {
      list.appendChild(h('li', { testid: 'extractive-result', dataset: { chunk: r.chunk_id } },
        h('div', { class: 'hit-head' },
          h('a', { href: '#ask', class: 'citation', dataset: { cite: String(r.n), chunk: r.chunk_id }, testid: 'extractive-source' },
            h('span', { class: 'cite-n' }, String(r.n)), r.source + (r.location_label ? ' · ' + r.location_label : '')),
          h('span', { class: 'small muted', testid: 'extractive-relevance' }, 'relevance ' + Math.round(r.relevance * 100) + '%')),
        h('p', { class: 'hit-text' }, QuireMarkdown.highlight(r.passage, r.highlights))));
    });
    QuireUI.fill(this.extra, h('div', { class: 'extractive', testid: 'extractive' },
      h('p', { class: 'extractive-label', testid: 'extractive-label' }, ex.label),
      ex.results.length ? list : h('p', { class: 'muted' }, ex.message)));
    this.citations = ex.results;
    self.status.textContent = '';
  };

  Answer.prototype.error = function (message) {
    this.extra.appendChild(h('p', { class: 'answer-error', role: 'alert', testid: 'answer-error' }, message));
  };

  Answer.prototype.finish = function (done) {
    this.node.classList.remove('streaming');
    this.thinking.open = false;
    if (this.thinkingText.textContent) this.thinking.firstChild.textContent = 'Thought process';
    this.status.textContent = done.stopped ? 'Stopped — the answer so far is kept.' : '';
    if (done.error && !this.extra.querySelector('[data-testid="answer-error"]')) this.error(done.error);
  };

  Answer.prototype.on = function (e) {
    switch (e.type) {
      case 'citations':
        this.showCitations(e.citations);
        this.status.textContent = e.citations.length ? 'Answering…' : 'No passage matched; answering anyway…';
        break;
      case 'thinking': this.addThinking(e.text); this.status.textContent = 'Thinking…'; break;
      case 'content': this.content(e.text); break;
      case 'connection': renderConnection(e); break;
      case 'extractive': this.showExtractive(e); break;
      case 'done': this.paintNow(); this.finish(e); renderMemory(e.memory); break;
      default: this.toolEvent(e);
    }
  };

  Answer.prototype.paintNow = function () { if (this.text && this.body.isConnected) this.paint(); };

  /* A [n] in an answer, or a citation chip: the passage in its page, highlighted. */
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
    if (chunk) QuirePassage.open(chunk, question);
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
    var answer = new Answer(question, null);
    el.messages.appendChild(answer.node);
    answer.node.scrollIntoView({ block: 'end' });
    setBusy(true);
    var p = start({ onEvent: function (e) {
      answer.on(e);
      if (e.type === 'citations' && !state.session) state.session = { id: e.session, title: e.title, scope: e.scope, messages: [] };
    } });
    state.busy = p;
    return p.then(function (r) {
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
