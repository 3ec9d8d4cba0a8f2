/* QuireInline: the inline half of QuireMarkdown (emphasis, code, links, citations).
 *
 *   var p = document.createElement('p');
 *   QuireInline.render('Cells *divide* [1]', p, {citations: function (n) { return {href: '#c' + n}; }});
 *   // p: Cells <em>divide</em> <a class="cite" data-cite="1" href="#c1">[1]</a>
 *
 * Linear time: one pass (`scan`) finds every code span, the "]" that closes each "[" and
 * every run of "*", "_" or "~" that can close emphasis; the render pass then looks these
 * up instead of searching ahead, so an opener with no closer costs O(log n), not a scan
 * to the end of the text (what made 48,000 characters of "[" or "*a " take seconds).
 * Nesting is capped at MAX_DEPTH, so the total work is at most MAX_DEPTH passes.
 *
 * Links in model output are inert: the label is shown, then the address as selectable
 * text (focusable, selected on focus so Ctrl+C copies it); nothing navigates on a click.
 * Only citation markers, whose targets the page itself supplies, are links or buttons.
 */
(function (root) {
  'use strict';

  var MAX_DEPTH = 16;          // nesting of emphasis and links; deeper input renders as text
  var MAX_CITE_NUMBERS = 10;   // "[1, 2, ..., 10]" at most, as quire.chat.answer reads them
  var MAX_DEST = 2048;         // a link address longer than this is not a link
  var CITE = /\[(\d{1,3}(?:[ \t]*[,;][ \t]*\d{1,3}|[ \t]*[-\u2013][ \t]*\d{1,3}){0,40})\](?!\()/y;
  var BARE_URL = /https?:\/\/[^\s<>"'`\\\x00-\x1f\x7f]+/iy;
  var AUTOLINK = /<(https?:\/\/[^\s<>]+)>/iy;
  var PLAIN = /[^\\\n`!\[<hH~*_]+/y;  // characters that can never start anything
  var SAFE_ABSOLUTE = /^https?:\/\/[^\s<>"'`\\\x00-\x1f\x7f]+$/i;
  var SAFE_ANCHOR = /^#[^\s<>"'`\\\x00-\x1f\x7f]*$/;
  var PUNCT = /[!-\/:-@\[-`{-~]/;
  var SPACE = /\s/;
  var WORD = /[A-Za-z0-9]/;
  // Steps taken (loop turns and characters searched), read by the linear-time test:
  // counting work, unlike timing it, gives the same answer on a busy machine.
  var stats = {steps: 0};

  function el(tag, text) {
    var node = document.createElement(tag);
    if (text) node.appendChild(document.createTextNode(text));
    return node;
  }

  /* The address a link may point to, or null.  Only http(s) and in-page "#" anchors;
   * entities are never decoded, so "jav&#x61;script:" stays a harmless non-URL. */
  function safeHref(url) {
    url = String(url == null ? '' : url).trim();
    if (SAFE_ANCHOR.test(url)) return url;
    if (!SAFE_ABSOLUTE.test(url)) return null;
    try {
      var parsed = new URL(url);
      return (parsed.protocol === 'http:' || parsed.protocol === 'https:') ? parsed.href : null;
    } catch (e) {
      return null;
    }
  }

  function runLength(text, i, ch) {
    var k = i;
    while (text[k] === ch) k++;
    stats.steps += k - i;
    return k - i;
  }

  /* First value >= from in a sorted array, or -1. */
  function firstAtLeast(list, from) {
    var lo = 0, hi = list.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (list[mid] < from) lo = mid + 1; else hi = mid; }
    return lo < list.length ? list[lo] : -1;
  }

  /* One left-to-right pass: code spans, bracket pairs, emphasis closers.
   * "a `b` [c](d) *e*" -> spans[2] = 4, brackets[6] = 8, closers {'*1': [14]} (-1: none) */
  function scan(text) {
    var ticks = {};  // run length -> sorted starts of every backtick run
    var i = 0, n = text.length;
    while (i < n) {
      var t = text.indexOf('`', i);
      stats.steps += (t < 0 ? n : t) - i;
      if (t < 0) break;
      var len = runLength(text, t, '`');
      (ticks[len] = ticks[len] || []).push(t);
      i = t + len;
    }
    var next = {};   // per run length: index of the first run not yet passed
    // Typed arrays, not objects keyed by position: V8 turns such an object into a slow
    // dictionary once it grows sparse, which made long texts superlinear.
    var spans = new Int32Array(n).fill(-1), brackets = new Int32Array(n).fill(-1), closers = {}, open = [];
    i = 0;
    while (i < n) {
      stats.steps++;
      var ch = text[i];
      if (ch === '\\' && PUNCT.test(text[i + 1] || '')) { i += 2; continue; }
      if (ch === '`') {
        var size = runLength(text, i, '`');
        var runs = ticks[size] || [];
        var k = next[size] || 0;
        while (k < runs.length && runs[k] < i + size) { k++; stats.steps++; }
        next[size] = k;
        if (k < runs.length) { spans[i] = runs[k]; i = runs[k] + size; } else i += size;
        continue;
      }
      if (ch === '[') { open.push(i); i++; continue; }
      if (ch === ']') { if (open.length) brackets[open.pop()] = i; i++; continue; }
      if (ch === '*' || ch === '_' || ch === '~') {
        var run = runLength(text, i, ch);
        var before = text[i - 1];
        var closes = before && !SPACE.test(before) && (ch !== '_' || !WORD.test(text[i + run] || ''));
        if (closes && run <= 3) {
          var key = ch + run;
          (closers[key] = closers[key] || []).push(i);
          if (run === 3) (closers[ch + 1] = closers[ch + 1] || []).push(i);  // "*a***" closes a single star
        }
        i += run;
        continue;
      }
      i++;
    }
    return {spans: spans, brackets: brackets, closers: closers, found: {}};
  }

  /* text.indexOf(ch, from), remembering the last answer: link titles and <addresses> that
   * never close would otherwise make every attempt search to the same far character. */
  function nextIndex(state, text, ch, from) {
    var memo = state.found[ch];
    if (memo && from >= memo.from && (memo.at < 0 || from <= memo.at)) return memo.at;
    var at = text.indexOf(ch, from);
    stats.steps += (at < 0 ? text.length : at) - from;
    state.found[ch] = {from: from, at: at};
    return at;
  }

  /* "(dest "title")" right after the "]" at `close`, or null.  Stops at "[" or "]" so
   * that failed attempts never scan the same text twice. */
  function parseTarget(text, close, end, state) {
    var j = close + 1;
    if (text[j] !== '(') return null;
    j++;
    while (j < end && (text[j] === ' ' || text[j] === '\n')) j++;
    var dest;
    if (text[j] === '<') {
      var gt = nextIndex(state, text, '>', j);
      var nl = nextIndex(state, text, '\n', j);
      if (gt < 0 || gt >= end || (nl >= 0 && nl < gt)) return null;
      dest = text.slice(j + 1, gt);
      j = gt + 1;
    } else {
      var start = j, parens = 0;
      for (; j < end && j - start <= MAX_DEST; j++) {
        stats.steps++;
        var c = text[j];
        if (c === '\\' && PUNCT.test(text[j + 1] || '')) { j++; continue; }
        if (c === ' ' || c === '\n' || c === '[' || c === ']') break;
        if (c === '(') parens++;
        if (c === ')') { if (parens === 0) break; parens--; }
      }
      if (j - start > MAX_DEST) return null;
      dest = text.slice(start, j);
    }
    while (j < end && (text[j] === ' ' || text[j] === '\n')) j++;
    var quote = text[j];
    if (quote === '"' || quote === "'") {
      var endTitle = nextIndex(state, text, quote, j + 1);
      if (endTitle < 0 || endTitle >= end) return null;
      j = endTitle + 1;
      while (j < end && (text[j] === ' ' || text[j] === '\n')) j++;
    }
    if (j >= end || text[j] !== ')') return null;
    return {dest: dest, end: j + 1};
  }

  function citeNumbers(body) {
    var out = [], seen = {};
    body.split(/[ \t]*[,;][ \t]*/).forEach(function (part) {
      var range = part.split(/[ \t]*[-\u2013][ \t]*/);
      var lo = parseInt(range[0], 10);
      var hi = range.length === 2 ? parseInt(range[1], 10) : lo;
      if (hi - lo >= MAX_CITE_NUMBERS) return;
      for (var n = lo; n <= hi; n++) if (n >= 1 && !seen[n]) { seen[n] = true; out.push(n); }
    });
    return out.slice(0, MAX_CITE_NUMBERS);
  }

  function citationNode(n, ctx) {
    var info = null;
    try { info = ctx.citations ? ctx.citations(n) : null; } catch (e) { info = null; }
    if (!info) return null;
    var href = info.href != null ? safeHref(info.href) : null;
    var node = el(href ? 'a' : 'button', '[' + n + ']');
    if (href) node.setAttribute('href', href);
    else node.setAttribute('type', 'button');
    node.className = 'cite';
    node.setAttribute('data-cite', String(n));
    if (info.title) node.setAttribute('title', String(info.title));
    return node;
  }

  function selectContents() {
    var range = document.createRange();
    range.selectNodeContents(this);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  /* The address of an inert link: visible, selectable, reachable with Tab, never followed. */
  function addressNode(href) {
    var node = el('code', href);
    node.className = 'link-url';
    node.setAttribute('tabindex', '0');
    var host = href[0] === '#' ? 'this page' : new URL(href).host;
    node.setAttribute('title', 'Link to ' + host + ' — not opened from here; copy the address to visit it');
    node.addEventListener('focus', selectContents);
    return node;
  }

  /* Trailing punctuation and unbalanced ")" are the sentence's, not the URL's. */
  function trimUrl(url) {
    var opens = 0, closes = 0, end = url.length;
    for (var k = 0; k < url.length; k++) { if (url[k] === '(') opens++; else if (url[k] === ')') closes++; }
    for (;;) {
      var last = url[end - 1];
      if ('.,;:!?*_~'.indexOf(last) >= 0) { end--; continue; }
      if (last === ')' && closes > opens) { end--; closes--; continue; }
      return url.slice(0, end);
    }
  }

  function Renderer(text, ctx) {
    this.text = text;
    this.ctx = ctx;
    this.state = scan(text);
  }

  Renderer.prototype.closer = function (key, from, end) {
    var at = firstAtLeast(this.state.closers[key] || [], from);
    return at >= 0 && at < end ? at : -1;
  };

  /* Render text[start, end) into parent. */
  Renderer.prototype.render = function (start, end, parent, depth, inLink) {
    var text = this.text, st = this.state, ctx = this.ctx;
    if (depth > MAX_DEPTH) { parent.appendChild(document.createTextNode(text.slice(start, end))); return; }
    var buf = '';
    function flush() { if (buf) { parent.appendChild(document.createTextNode(buf)); buf = ''; } }
    function add(node) { flush(); parent.appendChild(node); }
    var i = start, m;
    while (i < end) {
      stats.steps++;
      PLAIN.lastIndex = i;
      if ((m = PLAIN.exec(text))) {
        var stop = Math.min(end, i + m[0].length);
        buf += text.slice(i, stop);
        i = stop;
        continue;
      }
      var ch = text[i];
      if (ch === '\\' && i + 1 < end && PUNCT.test(text[i + 1])) { buf += text[i + 1]; i += 2; continue; }
      if (ch === '\n') { add(el('br')); i++; continue; }
      if (ch === '`') {
        var ticks = runLength(text, i, '`');
        var close = st.spans[i];
        if (close < 0 || close + ticks > end) { buf += text.slice(i, i + ticks); i += ticks; continue; }
        var inner = text.slice(i + ticks, close).replace(/\n/g, ' ');
        if (inner.length > 2 && inner[0] === ' ' && inner[inner.length - 1] === ' ' && /[^ ]/.test(inner)) {
          inner = inner.slice(1, -1);
        }
        add(el('code', inner));
        i = close + ticks;
        continue;
      }
      if (ch === '!' && text[i + 1] === '[') {
        var ic = st.brackets[i + 1];
        var img = ic >= 0 && ic < end ? parseTarget(text, ic, end, st) : null;
        if (img) { buf += '[image: ' + text.slice(i + 2, ic) + ']'; i = img.end; continue; }
        buf += '!';
        i++;
        continue;
      }
      if (ch === '[') {
        if (!inLink) {
          CITE.lastIndex = i;
          if ((m = CITE.exec(text)) && i + m[0].length <= end) {
            var nodes = citeNumbers(m[1]).map(function (n) { return citationNode(n, ctx); });
            if (nodes.length && nodes.every(Boolean)) { nodes.forEach(add); i += m[0].length; continue; }
          }
        }
        var bc = st.brackets[i];
        var link = bc >= 0 && bc < end ? parseTarget(text, bc, end, st) : null;
        if (link) {
          var href = inLink ? null : safeHref(link.dest);
          if (href) {
            var label = el('span');
            label.className = 'link';
            this.render(i + 1, bc, label, depth + 1, true);
            var shown = label.textContent.trim();
            if (shown && shown !== href && shown !== link.dest) label.appendChild(document.createTextNode(' '));
            else label.replaceChildren();
            label.appendChild(addressNode(href));
            add(label);
          } else {
            buf += text.slice(i, link.end);  // an unsafe link is shown as the text it was
          }
          i = link.end;
          continue;
        }
        buf += '[';
        i++;
        continue;
      }
      if (ch === '<' && !inLink) {
        AUTOLINK.lastIndex = i;
        if ((m = AUTOLINK.exec(text)) && i + m[0].length <= end && safeHref(m[1])) {
          add(addressNode(safeHref(m[1])));
          i += m[0].length;
          continue;
        }
        buf += '<';
        i++;
        continue;
      }
      if ((ch === 'h' || ch === 'H') && !inLink && /^$|[\s*_~(]/.test(text[i - 1] || '') &&
          !(text[i - 1] === '(' && text[i - 2] === ']')) {  // a link still streaming in, not a bare URL
        BARE_URL.lastIndex = i;
        if ((m = BARE_URL.exec(text))) {
          var url = trimUrl(m[0].slice(0, end - i));
          var bare = safeHref(url);
          if (bare) add(addressNode(bare));
          else buf += url;
          i += Math.max(url.length, 1);
          continue;
        }
      }
      if (ch === '*' || ch === '_' || ch === '~') {
        var run = runLength(text, i, ch);
        if (run > end - i) run = end - i;
        var after = text[i + run];
        var opens = i + run < end && !SPACE.test(after) && !(ch === '_' && WORD.test(text[i - 1] || '')) &&
          (ch === '~' ? run === 2 : run <= 3);
        if (opens) {
          var size = run;
          var closer = this.closer(ch + size, i + run, end);
          if (closer < 0 && size > 1 && ch !== '~') { size = size === 3 ? 2 : 1; closer = this.closer(ch + size, i + run, end); }
          if (closer >= 0) {
            if (run > size) buf += text.slice(i, i + run - size);
            var wrap = ch === '~' ? el('del') : el(size === 1 ? 'em' : 'strong');
            var target = wrap;
            if (size === 3) { target = el('em'); wrap.appendChild(target); }
            this.render(i + run, closer, target, depth + 1, inLink);
            add(wrap);
            i = closer + size;
            continue;
          }
        }
        buf += text.slice(i, i + run);
        i += run;
        continue;
      }
      buf += ch;
      i++;
    }
    flush();
  };

  /* Render one paragraph's (or cell's, or heading's) text into parent. */
  function render(text, parent, ctx) {
    new Renderer(text, ctx || {}).render(0, text.length, parent, 0, false);
  }

  root.QuireInline = {render: render, safeHref: safeHref, stats: stats};
})(typeof self !== 'undefined' ? self : this);
