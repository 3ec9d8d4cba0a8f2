/* The privacy lock: narrow the page's Content-Security-Policy to the model server the person
 * chose, and admit a server on another computer only once they confirmed it in this tab.
 *
 * index.html allows only the bundle and http(s); a second policy can only tighten, so the
 * page may then reach the bundle and exactly the origins listed here.  Storage cannot be
 * trusted for the choice: on file:// every local page shares it, and a "saved web page"
 * can write a new server address into it.  So a loopback address (127.0.0.0/8, localhost,
 * [::1]) is used as stored, and any other address only when this tab's own history entry
 * (history.state, which only this document can write) says the person confirmed that very
 * origin here.  Otherwise the page keeps this computer's server and Settings asks.
 * Chat and embeddings may use two servers: each is admitted by this rule, and only they.
 * The same rule holds for "allow adding web pages by address".
 */
(function () {
  'use strict';
  var DEFAULT_URL = 'http://127.0.0.1:11434';
  var DEFAULT_ORIGINS = [DEFAULT_URL, 'http://localhost:11434'];
  var KEY = 'quirePrivacy';  // history.state[KEY] = {servers: [origin], urlFetch: true, urls: {chat, embeddings}}

  function parse(url) {
    try {
      var u = new URL(url);
      return /^https?:$/.test(u.protocol) ? u : null;
    } catch (e) { return null; }
  }

  /* The same rule as quire.llm.loopback.is_loopback (tests run one table through both). */
  function isLoopback(url) {
    var u = parse(url);
    if (!u) return false;
    var h = u.hostname;  // already in the browser's form: 0x7f.1 is 127.0.0.1 here
    return h === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(h);
  }

  function originOf(url) {
    var u = parse(url);
    return u ? u.origin : null;
  }

  // Inside a frame another page could click for the person: confirmations never count there.
  var framed = false;
  try { framed = window.top !== window.self; } catch (e) { framed = true; }
  var kept = !framed && history.state && typeof history.state === 'object' && history.state[KEY] || {};
  // servers: origins confirmed here (older entries name one, as server); urls: the addresses
  // this tab saved last ({chat, embeddings}), for when storage does not show them (below)
  var mine = { servers: Array.isArray(kept.servers) ? kept.servers.filter(function (o) { return typeof o === 'string'; })
    : typeof kept.server === 'string' ? [kept.server] : [], urlFetch: kept.urlFetch === true,
    urls: kept.urls && typeof kept.urls === 'object' ? kept.urls : {} };

  /* The chat server and the embedding server (the chat server's unless set apart).  Chromium,
   * on file:// and a busy machine, sometimes showed the reloaded page a localStorage without
   * what the page before it had just written (Settings' "Use this server" saves the address and
   * reloads): the addresses this tab saved, kept in its history entry, then stand in, and are
   * written back.  They pass the same rule as stored ones. */
  function storedServers() {
    var chat = null, embed = null;
    try {
      chat = localStorage.getItem('quire.llm.url');
      embed = localStorage.getItem('quire.llm.embed_url');
      if (!chat && typeof mine.urls.chat === 'string') localStorage.setItem('quire.llm.url', chat = mine.urls.chat);
      if (!embed && typeof mine.urls.embeddings === 'string') localStorage.setItem('quire.llm.embed_url', embed = mine.urls.embeddings);
    } catch (e) { /* storage blocked: the defaults */ }
    return { chat: chat, embeddings: embed || chat };
  }

  var origins = [];
  var pending = [];    // stored servers on another computer, not confirmed in this tab
  var confirmed = [];  // the other computers' servers confirmed in this tab, in use
  var servers = storedServers();
  ['chat', 'embeddings'].forEach(function (role) {
    var url = servers[role];
    var origin = url && originOf(url);
    var admit = DEFAULT_ORIGINS;  // nothing stored, or a server not confirmed: this computer's server
    if (origin && isLoopback(url)) {
      admit = [origin];
    } else if (origin && mine.servers.indexOf(origin) >= 0) {
      admit = [origin];
      if (confirmed.indexOf(origin) < 0) confirmed.push(origin);
    } else if (origin) {
      if (!pending.some(function (p) { return p.origin === origin; })) pending.push({ role: role, url: url, origin: origin, host: parse(url).host });
    }
    admit.forEach(function (o) { if (origins.indexOf(o) < 0) origins.push(o); });
  });
  // Adding sources by web address: on only if switched on in this tab (the stored flag alone is not enough).
  var urlFetch = mine.urlFetch;

  var meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = "connect-src 'self' data: blob: " + origins.join(' ') + (urlFetch ? ' http: https:' : '');
  document.head.appendChild(meta);

  /* Record a confirmation in this tab's history entry; it takes effect at the next reload. */
  function remember(changes) {
    if (framed) return false;
    Object.keys(changes).forEach(function (k) { mine[k] = changes[k]; });
    var state = Object.assign({}, history.state && typeof history.state === 'object' ? history.state : {});
    state[KEY] = { servers: mine.servers, urlFetch: mine.urlFetch, urls: mine.urls };
    history.replaceState(state, '', location.href);
    return true;
  }
  // Moving between views (#library, #settings) makes new history entries: carry the confirmation along.
  function carry() {
    if (mine.servers.length || mine.urlFetch || mine.urls.chat) remember({});
  }
  window.addEventListener('hashchange', carry);
  window.addEventListener('popstate', carry);

  self.QUIRE_LLM_ORIGINS = origins;
  self.QuirePrivacy = {
    DEFAULT_URL: DEFAULT_URL,
    isLoopback: isLoopback,
    origin: originOf,
    origins: origins,      // what connect-src allows for the model servers (chat and embeddings)
    pending: pending[0] || null,  // a stored server on another computer, not confirmed in this tab
    pendingAll: pending,   // all of them (chat and embedding server may differ)
    confirmed: confirmed,  // the other computers' servers confirmed in this tab, in use
    urlFetch: urlFetch,    // adding web pages by address is allowed in this page
    framed: framed,
    remember: remember,
    remembered: function () { return { servers: mine.servers.slice(), urlFetch: mine.urlFetch }; },
  };
})();
