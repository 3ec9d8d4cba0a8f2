/* Ask, one answer on screen (QuireAnswer): the model's thinking, the citations, tool calls,
 * the text as it streams in (or the passages themselves when no model answered), notices
 * and errors.  The chat view (views/chat.js, loaded after this) makes one per answer and
 * feeds it the engine's events with answer.on(event). */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;

  /* One answer on screen: thinking, citations, tools, text (or passages), and any error.
   * `view` is where the chat shows what is not part of an answer: view.connection(event)
   * (the model server's state) and view.memory(memory) (the memory meter). */
  function Answer(question, msg, view) {
    this.question = question;
    this.view = view;
    this.citations = (msg && msg.citations) || [];
    // Scrollable, so focusable; a named region (axe: scrollable-region-focusable, focus-order-semantics).
    this.thinkingText = h('div', { class: 'thinking-text', testid: 'thinking-text', tabindex: '0', role: 'region', 'aria-label': t('Thinking') });
    this.thinking = h('details', { class: 'thinking', testid: 'thinking', hidden: true },
      h('summary', null, t('Thinking')), this.thinkingText);
    this.cites = h('ol', { class: 'citations', testid: 'citations', hidden: true });
    this.tools = h('ul', { class: 'tool-events', testid: 'tool-events', hidden: true });
    this.body = h('div', { class: 'answer md', testid: 'answer' });
    this.extra = h('div', { class: 'answer-extra' });
    this.status = h('p', { class: 'answer-status small muted', testid: 'answer-status' });
    this.node = h('li', { class: 'msg assistant', testid: 'msg-assistant' },
      this.thinking, this.cites, this.tools, this.body, this.extra, this.status);
    this.text = '';
    if (!msg) { this.status.textContent = t('Searching your documents…'); return; }
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
        title: c.passage.slice(0, 300) }, h('span', { class: 'cite-n' }, String(c.n)), h('span', { class: 'cite-label' }, c.source + (c.location_label ? ' · ' + c.location_label : '')))));
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
        h('summary', null, e.ok ? t('result') : t('failed')), h('pre', null, e.result));
      if (last) { last.dataset.done = '1'; last.appendChild(line); } else { this.tools.hidden = false; this.tools.appendChild(h('li', null, line)); }
    } else if (e.type === 'error') {
      this.error(e.message);
    } else if (e.type === 'notice') {  // a cut answer, a model that cannot call tools
      this.extra.appendChild(h('p', { class: 'answer-notice small', role: 'status', testid: 'answer-notice',
        dataset: { code: e.code } }, QuireI18n.engine(e.message)));
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
            h('span', { class: 'cite-n' }, String(r.n)), h('span', { class: 'cite-label' }, r.source + (r.location_label ? ' · ' + r.location_label : ''))),
          h('span', { class: 'small muted', testid: 'extractive-relevance' }, t('relevance {percent}%', { percent: Math.round(r.relevance * 100) }))),
        h('p', { class: 'hit-text', tabindex: '0', role: 'region', 'aria-label': r.source + (r.location_label ? ' · ' + r.location_label : '') },
          QuireMarkdown.highlight(r.passage, r.highlights))));
    });
    QuireUI.fill(this.extra, h('div', { class: 'extractive', testid: 'extractive' },
      h('p', { class: 'extractive-label', testid: 'extractive-label' }, QuireI18n.engine(ex.label)),
      ex.results.length ? list : h('p', { class: 'muted' }, QuireI18n.engine(ex.message))));
    this.citations = ex.results;
    self.status.textContent = '';
  };

  Answer.prototype.error = function (message) {
    this.extra.appendChild(h('p', { class: 'answer-error', role: 'alert', testid: 'answer-error' }, QuireI18n.engine(message)));
  };

  Answer.prototype.finish = function (done) {
    this.node.classList.remove('streaming');
    this.thinking.open = false;
    if (this.thinkingText.textContent) this.thinking.firstChild.textContent = t('Thought process');
    this.status.textContent = done.stopped ? t('Stopped — the answer so far is kept.') : '';
    if (done.error && !this.extra.querySelector('[data-testid="answer-error"]')) this.error(done.error);
  };

  Answer.prototype.on = function (e) {
    switch (e.type) {
      case 'citations':
        this.showCitations(e.citations);
        this.status.textContent = e.citations.length ? t('Answering…') : t('No passage matched; answering anyway…');
        break;
      case 'thinking': this.addThinking(e.text); this.status.textContent = t('Thinking…'); break;
      case 'content': this.content(e.text); break;
      case 'connection': this.view.connection(e); break;
      case 'extractive': this.showExtractive(e); break;
      case 'done': this.paintNow(); this.finish(e); this.view.memory(e.memory); break;
      default: this.toolEvent(e);
    }
  };

  Answer.prototype.paintNow = function () { if (this.text && this.body.isConnected) this.paint(); };

  self.QuireAnswer = Answer;
})();
