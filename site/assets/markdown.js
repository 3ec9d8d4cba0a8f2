/* QuireMarkdown: a small, safe Markdown renderer for model answers.
 *
 *   var frag = QuireMarkdown.render(text, {citations: function (n) { return {href: '#cite-' + n, title: 'p. 5'}; }});
 *   answerBox.replaceChildren(frag);
 *   snippetBox.replaceChildren(QuireMarkdown.highlight(passage, [[0, 5], [12, 18]]));
 *
 * Why so strict: a model's answer can repeat text planted in a document ("output
 * <img src=http://127.0.0.1/steal?...>"), so nothing in it may load or run anything.
 * The renderer builds DOM nodes itself and never parses untrusted text as HTML:
 *   - raw HTML is shown as literal text; there are no images at all ("![a](b)" -> "[image: a]");
 *   - links keep only http(s) URLs and "#" anchors; any other link is shown as the text it was;
 *   - citation markers [1], [2,3], [1][3] become links or buttons with data-cite="n"
 *     when the `citations` callback knows the number.
 * Partial input (while streaming) renders as far as it goes: an unclosed code fence
 * is code so far, an unclosed *emphasis* is a literal star.
 * A classic script (no modules, no dependencies) so file:// pages and workers can load it.
 */
(function (root) {
  'use strict';

  var MAX_DEPTH = 16;          // nesting of quotes, lists and emphasis; deeper input renders as text
  var MAX_CITE_NUMBERS = 10;   // "[1, 2, ..., 10]" at most, as quire.chat.answer reads them
  var FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
  var HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
  var HR = /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
  var QUOTE = /^ {0,3}> ?/;
  var LIST_ITEM = /^( *)([-*+]|(\d{1,9})[.)])(?:[ \t]+(.*))?$/;
  var TABLE_DELIM = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;
  var CITE = /^\[(\d{1,3}(?:\s*[,;]\s*\d{1,3}|\s*[-\u2013]\s*\d{1,3})*)\](?!\()/;
  var BARE_URL = /^https?:\/\/[^\s<>"'`]+/i;
  var SAFE_ABSOLUTE = /^https?:\/\/[^\s<>"'`\\\x00-\x1f\x7f]+$/i;
  var SAFE_ANCHOR = /^#[^\s<>"'`\\\x00-\x1f\x7f]*$/;
  var PUNCT = /[!-\/:-@\[-`{-~]/;

  function el(tag, text) {
    var node = document.createElement(tag);
    if (text) node.appendChild(document.createTextNode(text));
    return node;
  }

  function isBlank(line) { return !line || !/\S/.test(line); }

  function indentOf(line) { return line.length - line.replace(/^ +/, '').length; }

  /* The href a link may have, or null.  Only http(s) and in-page "#" anchors;
   * entities are never decoded, so "jav&#x61;script:" stays a harmless non-URL. */
  function safeHref(url) {
    url = String(url == null ? '' : url).replace(/^[ \t]+|[ \t]+$/g, '');
    if (SAFE_ANCHOR.test(url)) return url;
    if (!SAFE_ABSOLUTE.test(url)) return null;
    try {
      var parsed = new URL(url);
      return (parsed.protocol === 'http:' || parsed.protocol === 'https:') ? parsed.href : null;
    } catch (e) {
      return null;
    }
  }

  // ---------------------------------------------------------------- blocks
  function startsBlock(lines, i) {
    var line = lines[i];
    return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) ||
      LIST_ITEM.test(line) || isTableStart(lines, i);
  }

  function renderBlocks(lines, parent, ctx, depth) {
    if (depth > MAX_DEPTH) {
      parent.appendChild(el('p', lines.join('\n')));
      return;
    }
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      var m;
      if (isBlank(line)) { i++; continue; }
      if ((m = FENCE.exec(line))) { i = renderFence(lines, i, m, parent); continue; }
      if ((m = HEADING.exec(line))) {
        var h = el('h' + m[1].length);
        renderInline(m[2] || '', h, ctx, depth);
        parent.appendChild(h);
        i++;
        continue;
      }
      if (HR.test(line)) { parent.appendChild(el('hr')); i++; continue; }
      if (QUOTE.test(line)) { i = renderQuote(lines, i, parent, ctx, depth); continue; }
      if (LIST_ITEM.test(line)) { i = renderList(lines, i, parent, ctx, depth); continue; }
      if (isTableStart(lines, i)) { i = renderTable(lines, i, parent, ctx, depth); continue; }
      var para = [line.replace(/^\s+/, '')];
      i++;
      while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines, i)) {
        para.push(lines[i].replace(/^\s+/, ''));
        i++;
      }
      var p = el('p');
      renderInline(para.join('\n').replace(/\s+$/, ''), p, ctx, depth);
      parent.appendChild(p);
    }
  }

  function renderFence(lines, i, m, parent) {
    var fence = m[1];
    var body = [];
    var j = i + 1;
    var closer = new RegExp('^ {0,3}' + (fence[0] === '`' ? '`' : '~') + '{' + fence.length + ',}\\s*$');
    while (j < lines.length && !closer.test(lines[j])) { body.push(lines[j]); j++; }
    var pre = el('pre');
    var code = el('code', body.join('\n'));
    if (m[2]) code.className = 'language-' + m[2].replace(/[^\w+-]/g, '');
    pre.appendChild(code);
    if (j >= lines.length) pre.setAttribute('data-open', '');  // still streaming, or never closed
    parent.appendChild(pre);
    return j + 1;
  }

  function renderQuote(lines, i, parent, ctx, depth) {
    var body = [];
    while (i < lines.length && !isBlank(lines[i])) {
      if (QUOTE.test(lines[i])) body.push(lines[i].replace(QUOTE, ''));
      else if (startsBlock(lines, i)) break;
      else body.push(lines[i]);  // a lazy continuation line
      i++;
    }
    var quote = el('blockquote');
    renderBlocks(body, quote, ctx, depth + 1);
    parent.appendChild(quote);
    return i;
  }

  /* Lenient nesting: any line indented past an item's marker belongs to that item. */
  function renderList(lines, i, parent, ctx, depth) {
    var first = LIST_ITEM.exec(lines[i]);
    var base = first[1].length;
    var ordered = first[3] !== undefined;
    var list = el(ordered ? 'ol' : 'ul');
    if (ordered && first[3] !== '1') list.setAttribute('start', String(parseInt(first[3], 10)));
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
    items.forEach(function (body) {
      var li = el('li');
      renderBlocks(body, li, ctx, depth + 1);
      if (!loose) unwrapParagraphs(li);
      list.appendChild(li);
    });
    parent.appendChild(list);
    return i;
  }

  function unwrapParagraphs(li) {
    var children = Array.prototype.slice.call(li.childNodes);
    children.forEach(function (child) {
      if (child.nodeName !== 'P') return;
      while (child.firstChild) li.insertBefore(child.firstChild, child);
      li.removeChild(child);
    });
  }

  function splitRow(line) {
    var s = line.trim();
    if (s[0] === '|') s = s.slice(1);
    if (s.length && s[s.length - 1] === '|' && s[s.length - 2] !== '\\') s = s.slice(0, -1);
    var cells = [];
    var cur = '';
    for (var k = 0; k < s.length; k++) {
      if (s[k] === '\\' && s[k + 1] === '|') { cur += '|'; k++; continue; }
      if (s[k] === '|') { cells.push(cur.trim()); cur = ''; continue; }
      cur += s[k];
    }
    cells.push(cur.trim());
    return cells;
  }

  function isTableStart(lines, i) {
    if (i + 1 >= lines.length || lines[i].indexOf('|') < 0 || !TABLE_DELIM.test(lines[i + 1])) return false;
    if (lines[i + 1].indexOf('|') < 0 && splitRow(lines[i]).length < 2) return false;
    return splitRow(lines[i]).length === splitRow(lines[i + 1]).length;
  }

  function renderTable(lines, i, parent, ctx, depth) {
    var head = splitRow(lines[i]);
    var aligns = splitRow(lines[i + 1]).map(function (d) {
      var left = d[0] === ':';
      var right = d[d.length - 1] === ':';
      return left && right ? 'center' : right ? 'right' : left ? 'left' : '';
    });
    var table = el('table');
    var thead = el('thead');
    var tbody = el('tbody');
    function row(cells, tag) {
      var tr = el('tr');
      for (var c = 0; c < head.length; c++) {
        var cell = el(tag);
        if (aligns[c]) cell.style.textAlign = aligns[c];
        renderInline(cells[c] || '', cell, ctx, depth);
        tr.appendChild(cell);
      }
      return tr;
    }
    thead.appendChild(row(head, 'th'));
    i += 2;
    while (i < lines.length && !isBlank(lines[i]) && lines[i].indexOf('|') >= 0 &&
           !FENCE.test(lines[i]) && !QUOTE.test(lines[i]) && !HEADING.test(lines[i])) {
      tbody.appendChild(row(splitRow(lines[i]), 'td'));
      i++;
    }
    table.appendChild(thead);
    if (tbody.firstChild) table.appendChild(tbody);
    parent.appendChild(table);
    return i;
  }

  // ---------------------------------------------------------------- inline
  /* [label](dest "title") at text[pos] (pos is the "["), or null. */
  function parseLink(text, pos) {
    var level = 0;
    var k = pos;
    for (; k < text.length; k++) {
      var ch = text[k];
      if (ch === '\\') { k++; continue; }
      if (ch === '`') {
        var run = /^`+/.exec(text.slice(k))[0];
        var close = text.indexOf(run, k + run.length);
        if (close > 0) k = close + run.length - 1;
        continue;
      }
      if (ch === '[') level++;
      else if (ch === ']' && --level === 0) break;
    }
    if (k >= text.length || text[k + 1] !== '(') return null;
    var label = text.slice(pos + 1, k);
    var j = k + 2;
    while (text[j] === ' ' || text[j] === '\n') j++;
    var dest = '';
    if (text[j] === '<') {
      var end = text.indexOf('>', j);
      if (end < 0 || text.slice(j, end).indexOf('\n') >= 0) return null;
      dest = text.slice(j + 1, end);
      j = end + 1;
    } else {
      var depthParen = 0;
      var startDest = j;
      for (; j < text.length; j++) {
        var c = text[j];
        if (c === '\\' && PUNCT.test(text[j + 1] || '')) { j++; continue; }
        if (c === ' ' || c === '\n' || c === '\t') break;
        if (c === '(') depthParen++;
        if (c === ')') { if (depthParen === 0) break; depthParen--; }
      }
      dest = text.slice(startDest, j);
    }
    while (text[j] === ' ' || text[j] === '\n') j++;
    var title = '';
    var quote = text[j];
    if (quote === '"' || quote === "'") {
      var endTitle = text.indexOf(quote, j + 1);
      if (endTitle < 0) return null;
      title = text.slice(j + 1, endTitle);
      j = endTitle + 1;
      while (text[j] === ' ' || text[j] === '\n') j++;
    }
    if (text[j] !== ')') return null;
    return {label: label, dest: dest, title: title, end: j + 1};
  }

  function citeNumbers(body) {
    var out = [];
    body.split(/\s*[,;]\s*/).forEach(function (part) {
      var range = part.split(/\s*[-\u2013]\s*/);
      if (range.length === 2) {
        var lo = parseInt(range[0], 10);
        var hi = parseInt(range[1], 10);
        if (lo <= hi && hi - lo < MAX_CITE_NUMBERS) for (var n = lo; n <= hi; n++) out.push(n);
      } else {
        out.push(parseInt(part, 10));
      }
    });
    return out.filter(function (n, idx) { return n >= 1 && out.indexOf(n) === idx; }).slice(0, MAX_CITE_NUMBERS);
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

  /* A closing run for `delim` (length `size`) after `from`, or -1.  Runs of a
   * different length are stepped over, so "*a **b** c*" pairs the single stars. */
  function findCloser(text, from, delim, size) {
    var k = from;
    while (k < text.length) {
      var ch = text[k];
      if (ch === '\\') { k += 2; continue; }
      if (ch === '`') {
        var run = /^`+/.exec(text.slice(k))[0];
        var close = text.indexOf(run, k + run.length);
        k = close > 0 ? close + run.length : k + run.length;
        continue;
      }
      if (ch !== delim) { k++; continue; }
      var len = 1;
      while (text[k + len] === delim) len++;
      var before = text[k - 1];
      var after = text[k + len] || '';
      var closes = before && !/\s/.test(before) && (delim !== '_' || !/[A-Za-z0-9]/.test(after));
      if (closes && len === size) return k;
      if (closes && size === 1 && len === 3) return k;
      k += len;
    }
    return -1;
  }

  function renderInline(text, parent, ctx, depth, inLink) {
    var buf = '';
    function flush() {
      if (buf) { parent.appendChild(document.createTextNode(buf)); buf = ''; }
    }
    function add(node) { flush(); parent.appendChild(node); }
    if (depth > MAX_DEPTH) { parent.appendChild(document.createTextNode(text)); return; }
    var i = 0;
    while (i < text.length) {
      var ch = text[i];
      var m;
      if (ch === '\\' && i + 1 < text.length && PUNCT.test(text[i + 1])) { buf += text[i + 1]; i += 2; continue; }
      if (ch === '\n') { add(el('br')); i++; continue; }
      if (ch === '`') {
        var run = /^`+/.exec(text.slice(i))[0];
        var close = text.indexOf(run, i + run.length);
        while (close > 0 && text[close + run.length] === '`') close = text.indexOf(run, close + run.length + 1);
        if (close < 0) { buf += run; i += run.length; continue; }
        var inner = text.slice(i + run.length, close).replace(/\n/g, ' ');
        if (/^ .*[^ ].* $/.test(inner)) inner = inner.slice(1, -1);
        add(el('code', inner));
        i = close + run.length;
        continue;
      }
      if (ch === '!' && text[i + 1] === '[') {
        var img = parseLink(text, i + 1);
        if (img) { buf += '[image: ' + img.label + ']'; i = img.end; continue; }
      }
      if (ch === '[') {
        if (!inLink && (m = CITE.exec(text.slice(i)))) {
          var nodes = citeNumbers(m[1]).map(function (n) { return citationNode(n, ctx); });
          if (nodes.length && nodes.every(Boolean)) {
            nodes.forEach(add);
            i += m[0].length;
            continue;
          }
        }
        var link = parseLink(text, i);
        if (link) {
          var href = inLink ? null : safeHref(link.dest);
          if (href) {
            var a = el('a');
            a.setAttribute('href', href);
            if (href[0] !== '#') {
              a.setAttribute('target', '_blank');
              a.setAttribute('rel', 'noopener noreferrer nofollow');
            }
            if (link.title) a.setAttribute('title', link.title);
            renderInline(link.label, a, ctx, depth + 1, true);
            add(a);
          } else {
            buf += text.slice(i, link.end);  // an unsafe link is shown as the text it was
          }
          i = link.end;
          continue;
        }
      }
      if (ch === '<' && !inLink && (m = /^<(https?:\/\/[^\s<>]+)>/i.exec(text.slice(i)))) {
        var auto = safeHref(m[1]);
        if (auto) {
          var la = el('a', m[1]);
          la.setAttribute('href', auto);
          la.setAttribute('target', '_blank');
          la.setAttribute('rel', 'noopener noreferrer nofollow');
          add(la);
          i += m[0].length;
          continue;
        }
      }
      if ((ch === 'h' || ch === 'H') && !inLink && /^$|[\s*_~(]/.test(text[i - 1] || '') &&
          text.slice(i - 2, i) !== '](' &&  // a link still streaming in, not a bare URL
          (m = BARE_URL.exec(text.slice(i)))) {
        var url = m[0].replace(/[.,;:!?*_~]+$/, '');
        while (url[url.length - 1] === ')' && (url.match(/\)/g) || []).length > (url.match(/\(/g) || []).length) {
          url = url.slice(0, -1);
        }
        var bare = safeHref(url);
        if (bare) {
          var lb = el('a', url);
          lb.setAttribute('href', bare);
          lb.setAttribute('target', '_blank');
          lb.setAttribute('rel', 'noopener noreferrer nofollow');
          add(lb);
          i += url.length;
          continue;
        }
      }
      if (ch === '~' && text[i + 1] === '~' && text[i + 2] && !/\s/.test(text[i + 2])) {
        var endDel = findCloser(text, i + 2, '~', 2);
        if (endDel > 0) {
          var del = el('del');
          renderInline(text.slice(i + 2, endDel), del, ctx, depth + 1, inLink);
          add(del);
          i = endDel + 2;
          continue;
        }
      }
      if ((ch === '*' || ch === '_') && !(ch === '_' && /[A-Za-z0-9]/.test(text[i - 1] || ''))) {
        var size = 1;
        while (text[i + size] === ch) size++;
        var next = text[i + size];
        if (next && !/\s/.test(next) && size <= 3) {
          var closer = findCloser(text, i + size, ch, size);
          if (closer < 0 && size > 1) { size = size === 3 ? 2 : 1; closer = findCloser(text, i + size, ch, size); }
          if (closer > 0) {
            var wrap = size === 3 ? el('strong') : el(size === 2 ? 'strong' : 'em');
            var target = wrap;
            if (size === 3) { target = el('em'); wrap.appendChild(target); }
            renderInline(text.slice(i + size, closer), target, ctx, depth + 1, inLink);
            add(wrap);
            i = closer + size;
            continue;
          }
        }
        buf += text.slice(i, i + size);
        i += size;
        continue;
      }
      buf += ch;
      i++;
    }
    flush();
  }

  // ---------------------------------------------------------------- API
  function render(text, options) {
    var ctx = {citations: options && typeof options.citations === 'function' ? options.citations : null};
    var frag = document.createDocumentFragment();
    var lines = String(text == null ? '' : text).replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
    renderBlocks(lines, frag, ctx, 0);
    return frag;
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

  root.QuireMarkdown = {render: render, highlight: highlight, safeHref: safeHref};
})(typeof self !== 'undefined' ? self : this);
