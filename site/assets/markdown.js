/* QuireMarkdown: a small, safe Markdown renderer for model answers (blocks; the inline
 * half is markdown-inline.js, which must load first).
 *
 *   var frag = QuireMarkdown.render(text, {citations: function (n) { return {href: '#cite-' + n, title: 'p. 5'}; }});
 *   answerBox.replaceChildren(frag);
 *   var live = QuireMarkdown.stream(answerBox, options);  live.update(textSoFar);  // while streaming
 *   snippetBox.replaceChildren(QuireMarkdown.highlight(passage, [[0, 5], [12, 18]]));
 *
 * Why so strict: a model's answer can repeat text planted in a document ("output
 * <img src=http://127.0.0.1/steal?...>"), so nothing in it may load or run anything.
 * The renderer builds DOM nodes itself and never parses untrusted text as HTML:
 *   - raw HTML is shown as literal text; there are no images at all ("![a](b)" -> "[image: a]");
 *   - links are inert: the label, then the http(s) address as selectable text; never clickable;
 *   - citation markers [1], [2,3], [1][3] become links or buttons with data-cite="n"
 *     when the `citations` callback knows the number.
 * Partial input (while streaming) renders as far as it goes: an unclosed code fence
 * is code so far, an unclosed *emphasis* is a literal star.
 * Linear time: every line is looked at a bounded number of times (MAX_DEPTH levels of
 * nesting at most) and no pattern here can backtrack over a line.
 * A classic script (no modules, no dependencies) so file:// pages and workers can load it.
 */
(function (root) {
  'use strict';

  var MAX_DEPTH = 16;  // nesting of quotes, lists and emphasis; deeper input renders as text
  var FENCE = /^ {0,3}(`{3,}|~{3,})/;
  var HEADING = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
  var HR = /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
  var QUOTE = /^ {0,3}> ?/;
  var LIST_ITEM = /^( *)([-*+]|(\d{1,9})[.)])(?:[ \t]+([\s\S]*))?$/;  // [\s\S]: '.' stops at U+2028 and would backtrack
  var DELIM_CELL = /^:?-+:?$/;
  var Inline = root.QuireInline;

  function el(tag, text) {
    var node = document.createElement(tag);
    if (text) node.appendChild(document.createTextNode(text));
    return node;
  }

  function isBlank(line) { Inline.stats.steps++; return !line || !/\S/.test(line); }

  function indentOf(line) { var k = 0; while (line[k] === ' ') k++; return k; }

  function inline(text, parent, ctx, depth) {
    if (depth > MAX_DEPTH) parent.appendChild(document.createTextNode(text));
    else Inline.render(text, parent, ctx);
  }

  // ---------------------------------------------------------------- line tests
  /* "## Title ##" -> {level: 2, text: 'Title'} */
  function heading(line) {
    var m = HEADING.exec(line);
    if (!m) return null;
    var body = line.slice(m[0].length).trim();
    var k = body.length;
    while (k > 0 && body[k - 1] === '#') k--;
    if (k === 0) body = '';
    else if (k < body.length && (body[k - 1] === ' ' || body[k - 1] === '\t')) body = body.slice(0, k).trim();
    return {level: m[1].length, text: body};
  }

  /* "```python x" -> {fence: '```', lang: 'python'}; a backtick fence's info has no backtick. */
  function fence(line) {
    var m = FENCE.exec(line);
    if (!m) return null;
    var info = line.slice(m[0].length);
    if (m[1][0] === '`' && info.indexOf('`') >= 0) return null;
    return {fence: m[1], lang: info.trim().split(/\s/)[0]};
  }

  function closesFence(line, open) {
    Inline.stats.steps++;
    var s = line.trim();
    if (indentOf(line) > 3 || s.length < open.length) return false;
    for (var k = 0; k < s.length; k++) if (s[k] !== open[0]) return false;
    return true;
  }

  function splitRow(line) {
    var s = line.trim();
    if (s[0] === '|') s = s.slice(1);
    if (s.length && s[s.length - 1] === '|' && s[s.length - 2] !== '\\') s = s.slice(0, -1);
    var cells = [];
    var from = 0, cur = '';
    for (var k = 0; k < s.length; k++) {
      if (s[k] === '\\' && s[k + 1] === '|') { cur += s.slice(from, k) + '|'; k++; from = k + 1; continue; }
      if (s[k] === '|') { cells.push((cur + s.slice(from, k)).trim()); cur = ''; from = k + 1; }
    }
    cells.push((cur + s.slice(from)).trim());
    return cells;
  }

  function isDelimRow(line) {
    return line.indexOf('-') >= 0 && splitRow(line).every(function (c) { return DELIM_CELL.test(c); });
  }

  function isTableStart(lines, i) {
    if (i + 1 >= lines.length || lines[i].indexOf('|') < 0 || !isDelimRow(lines[i + 1])) return false;
    var head = splitRow(lines[i]).length;
    if (lines[i + 1].indexOf('|') < 0 && head < 2) return false;
    return head === splitRow(lines[i + 1]).length;
  }

  function startsBlock(lines, i) {
    var line = lines[i];
    return !!fence(line) || !!heading(line) || HR.test(line) || QUOTE.test(line) ||
      LIST_ITEM.test(line) || isTableStart(lines, i);
  }

  // ---------------------------------------------------------------- blocks
  /* The block starting at or after line i (blank lines skipped), or null: {kind, start, end, ...}. */
  function nextBlock(lines, i) {
    while (i < lines.length && isBlank(lines[i])) i++;
    if (i >= lines.length) return null;
    var line = lines[i], f, h;
    if ((f = fence(line))) {
      var j = i + 1;
      while (j < lines.length && !closesFence(lines[j], f.fence)) j++;
      var open = j >= lines.length;
      return {kind: 'fence', start: i, end: open ? j : j + 1, lang: f.lang, body: lines.slice(i + 1, j), open: open};
    }
    if ((h = heading(line))) return {kind: 'heading', start: i, end: i + 1, level: h.level, text: h.text};
    if (HR.test(line)) return {kind: 'hr', start: i, end: i + 1};
    if (QUOTE.test(line)) return quoteBlock(lines, i);
    if (LIST_ITEM.test(line)) return listBlock(lines, i);
    if (isTableStart(lines, i)) return tableBlock(lines, i);
    var para = [line.trim()];
    var k = i + 1;
    while (k < lines.length && !isBlank(lines[k]) && !startsBlock(lines, k)) { para.push(lines[k].replace(/^\s+/, '')); k++; }
    return {kind: 'para', start: i, end: k, text: para.join('\n').trimEnd()};
  }

  function quoteBlock(lines, i) {
    var start = i, body = [];
    while (i < lines.length && !isBlank(lines[i])) {
      if (QUOTE.test(lines[i])) body.push(lines[i].replace(QUOTE, ''));
      else if (startsBlock(lines, i)) break;
      else body.push(lines[i]);  // a lazy continuation line
      i++;
    }
    return {kind: 'quote', start: start, end: i, body: body};
  }

  /* Lenient nesting: any line indented past an item's marker belongs to that item. */
  function listBlock(lines, i) {
    var start = i;
    var first = LIST_ITEM.exec(lines[i]);
    var base = first[1].length;
    var ordered = first[3] !== undefined;
    var items = [];
    var loose = false;
    while (i < lines.length) {
      var m = LIST_ITEM.exec(lines[i]);
      if (!m || m[1].length !== base || (m[3] !== undefined) !== ordered) break;  // another list starts here
      var contentIndent = m[1].length + m[2].length + 1;
      var body = [m[4] || ''];
      i++;
      while (i < lines.length) {
        var line = lines[i];
        if (isBlank(line)) {
          var next = i + 1;
          while (next < lines.length && isBlank(lines[next])) next++;
          if (next < lines.length && indentOf(lines[next]) > base) {
            loose = true;
            for (; i < next; i++) body.push('');
            continue;
          }
          var sibling = next < lines.length && LIST_ITEM.exec(lines[next]);
          if (sibling && sibling[1].length === base && (sibling[3] !== undefined) === ordered) loose = true;
          i = next;
          break;
        }
        var indent = indentOf(line);
        if (indent > base) { body.push(line.slice(Math.min(indent, contentIndent))); i++; continue; }
        if (startsBlock(lines, i)) break;
        body.push(line);  // lazy continuation of the item's paragraph
        i++;
      }
      items.push(body);
      if (i < lines.length) {
        var after = LIST_ITEM.exec(lines[i]);
        if (!after || after[1].length !== base) break;
      }
    }
    return {kind: 'list', start: start, end: i, ordered: ordered, first: first[3], items: items, loose: loose};
  }

  function tableBlock(lines, i) {
    var start = i;
    var head = splitRow(lines[i]);
    var aligns = splitRow(lines[i + 1]).map(function (d) {
      var left = d[0] === ':';
      var right = d[d.length - 1] === ':';
      return left && right ? 'center' : right ? 'right' : left ? 'left' : '';
    });
    var rows = [];
    i += 2;
    while (i < lines.length && !isBlank(lines[i]) && lines[i].indexOf('|') >= 0 &&
           !fence(lines[i]) && !QUOTE.test(lines[i]) && !heading(lines[i])) {
      rows.push(splitRow(lines[i]));
      i++;
    }
    return {kind: 'table', start: start, end: i, head: head, aligns: aligns, rows: rows};
  }

  function renderBlock(b, ctx, depth) {
    switch (b.kind) {
      case 'fence': {
        var pre = el('pre');
        var code = el('code', b.body.join('\n'));
        var lang = b.lang.replace(/[^\w+-]/g, '');
        if (lang) code.className = 'language-' + lang;
        pre.appendChild(code);
        if (b.open) pre.setAttribute('data-open', '');  // still streaming, or never closed
        return pre;
      }
      case 'heading': { var h = el('h' + b.level); inline(b.text, h, ctx, depth); return h; }
      case 'hr': return el('hr');
      case 'quote': { var quote = el('blockquote'); renderBlocks(b.body, quote, ctx, depth + 1); return quote; }
      case 'list': return renderList(b, ctx, depth);
      case 'table': return renderTable(b, ctx, depth);
      default: { var p = el('p'); inline(b.text, p, ctx, depth); return p; }
    }
  }

  function renderBlocks(lines, parent, ctx, depth) {
    if (depth > MAX_DEPTH) { parent.appendChild(el('p', lines.join('\n'))); return; }
    var b, i = 0;
    while ((b = nextBlock(lines, i))) { parent.appendChild(renderBlock(b, ctx, depth)); i = b.end; }
  }

  function renderList(b, ctx, depth) {
    var list = el(b.ordered ? 'ol' : 'ul');
    if (b.ordered && b.first !== '1') list.setAttribute('start', String(parseInt(b.first, 10)));
    b.items.forEach(function (body) {
      var li = el('li');
      renderBlocks(body, li, ctx, depth + 1);
      if (!b.loose) unwrapParagraphs(li);
      list.appendChild(li);
    });
    return list;
  }

  function unwrapParagraphs(li) {
    Array.prototype.slice.call(li.childNodes).forEach(function (child) {
      if (child.nodeName !== 'P') return;
      while (child.firstChild) li.insertBefore(child.firstChild, child);
      li.removeChild(child);
    });
  }

  /* A short row gets one empty cell spanning the rest: padding every row to the widest
   * header would let 16,000 header cells times 8,000 rows of "|" explode the DOM. */
  function renderTable(b, ctx, depth) {
    var width = b.head.length;
    function row(cells, tag) {
      var tr = el('tr');
      var count = Math.min(cells.length, width);
      for (var c = 0; c < count; c++) {
        var cell = el(tag);
        if (b.aligns[c]) cell.style.textAlign = b.aligns[c];
        inline(cells[c], cell, ctx, depth);
        tr.appendChild(cell);
      }
      if (count < width) {
        var rest = el(tag);
        if (width - count > 1) rest.setAttribute('colspan', String(width - count));
        tr.appendChild(rest);
      }
      return tr;
    }
    var table = el('table');
    var thead = el('thead');
    thead.appendChild(row(b.head, 'th'));
    table.appendChild(thead);
    if (b.rows.length) {
      var tbody = el('tbody');
      b.rows.forEach(function (cells) { tbody.appendChild(row(cells, 'td')); });
      table.appendChild(tbody);
    }
    return table;
  }

  // ---------------------------------------------------------------- API
  function contextOf(options) {
    return {citations: options && typeof options.citations === 'function' ? options.citations : null};
  }

  function linesOf(text) {
    return String(text == null ? '' : text).replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  }

  function render(text, options) {
    var frag = document.createDocumentFragment();
    renderBlocks(linesOf(text), frag, contextOf(options), 0);
    return frag;
  }

  /* Render into `box` again and again as text grows, keeping the DOM of every top-level
   * block whose source lines did not change: each update re-parses the block structure
   * (a cheap pass over lines) but re-renders only the blocks that changed, normally the
   * last one.  Block structure is recomputed from scratch, so a line that turns an
   * earlier paragraph into a table header is still handled right.
   *   var live = QuireMarkdown.stream(box, {citations: ...});
   *   live.update('# Ti'); live.update('# Title\n\nBody');  // the <h1> is re-rendered once, then kept
   */
  function stream(box, options) {
    var ctx = contextOf(options);
    var kept = [];  // [{key, node}] in order, one per top-level block on screen
    return {
      update: function (text) {
        var lines = linesOf(text);
        var fresh = [];
        var b, i = 0;
        while ((b = nextBlock(lines, i))) {
          var key = b.kind + '\u0000' + lines.slice(b.start, b.end).join('\n');
          var old = kept[fresh.length];
          fresh.push(old && old.key === key ? old : {key: key, node: renderBlock(b, ctx, 0)});
          i = b.end;
        }
        var same = 0;
        while (same < fresh.length && same < kept.length && fresh[same] === kept[same]) same++;
        for (var k = same; k < kept.length; k++) if (kept[k].node.parentNode === box) box.removeChild(kept[k].node);
        for (k = same; k < fresh.length; k++) box.appendChild(fresh[k].node);
        kept = fresh;
        return fresh.length - same;  // blocks rendered by this update
      }
    };
  }

  /* Python's str offsets count code points; JS strings count UTF-16 units. */
  function unitOffsets(text) {
    if (!/[\uD800-\uDBFF]/.test(text)) return null;
    var map = [];
    var unit = 0;
    Array.from(text).forEach(function (chr) { map.push(unit); unit += chr.length; });
    map.push(unit);
    return map;
  }

  /* `spans` are [start, end] code-point offsets (as quire.chat.extractive returns them). */
  function highlight(text, spans) {
    text = String(text == null ? '' : text);
    var map = unitOffsets(text);
    var limit = map ? map.length - 1 : text.length;
    var clean = (spans || []).map(function (s) {
      return [Math.max(0, Math.min(limit, Number(s[0]))), Math.max(0, Math.min(limit, Number(s[1])))];
    }).filter(function (s) { return s[1] > s[0]; }).sort(function (a, b) { return a[0] - b[0]; });
    var frag = document.createDocumentFragment();
    var at = 0;
    clean.forEach(function (s) {
      var start = Math.max(s[0], at);
      if (s[1] <= start) return;
      var a = map ? map[start] : start;
      var b = map ? map[s[1]] : s[1];
      var from = map ? map[at] : at;
      if (a > from) frag.appendChild(document.createTextNode(text.slice(from, a)));
      frag.appendChild(el('mark', text.slice(a, b)));
      at = s[1];
    });
    var rest = map ? map[at] : at;
    if (rest < text.length) frag.appendChild(document.createTextNode(text.slice(rest)));
    return frag;
  }

  root.QuireMarkdown = {render: render, stream: stream, highlight: highlight, safeHref: Inline.safeHref, stats: Inline.stats};
})(typeof self !== 'undefined' ? self : this);
