/* Narrow the page's Content-Security-Policy to the one LLM server the person configured.
 * index.html already allows only the bundle and loopback hosts; a second policy can
 * only tighten, so the page may then reach the bundle and exactly this origin. */
(function () {
  'use strict';
  var DEFAULT_ORIGINS = ['http://127.0.0.1:11434', 'http://localhost:11434'];
  var origins = DEFAULT_ORIGINS;
  try {
    var configured = localStorage.getItem('quire.llm.url');
    if (configured) origins = [new URL(configured).origin];
  } catch (e) { /* storage blocked or a bad URL: keep the defaults */ }
  var extra = '';
  try {
    // Adding sources by web address is off unless the person switched it on in Settings.
    if (localStorage.getItem('quire.allowUrlFetch') === '1') extra = ' http: https:';
  } catch (e) { /* keep it off */ }
  var meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = "connect-src 'self' data: blob: " + origins.join(' ') + extra;
  document.head.appendChild(meta);
  self.QUIRE_LLM_ORIGINS = origins;
})();
