/* Quire's service worker: precache one versioned bundle, serve it offline, offer updates.
 *
 * build.py fills in the build id and the file list, so every build is a new worker
 * script: the browser notices, installs it beside the old one, and the page offers
 * "Reload to update".  Only caches of this scope with another build id are removed.
 */
'use strict';
var BUILD = '__BUILD__';
var FILES = __FILES__;
var SCOPE = new URL(self.registration.scope).pathname;
var PREFIX = 'quire:' + SCOPE + ':';
var CACHE = PREFIX + BUILD;

self.addEventListener('install', function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return cache.addAll(FILES.map(function (f) { return new Request(f, { cache: 'reload' }); }));
  }));
});

self.addEventListener('activate', function (event) {
  event.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k.indexOf(PREFIX) === 0 && k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }).then(function () { return self.clients.claim(); }));
});

self.addEventListener('message', function (event) {
  if (event.data && event.data.type === 'skip-waiting') self.skipWaiting();
});

self.addEventListener('fetch', function (event) {
  var req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== self.location.origin) return;
  var url = new URL(req.url);
  var key = req.mode === 'navigate' && (url.pathname === SCOPE || url.pathname === SCOPE + 'index.html') ? './' : req;
  event.respondWith(caches.open(CACHE).then(function (cache) {
    return cache.match(key, { ignoreSearch: true }).then(function (hit) { return hit || fetch(req); });
  }));
});
