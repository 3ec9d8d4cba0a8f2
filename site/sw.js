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
// A teacher may save a course vault over this file after the build (docs/courses.md): it is asked
// for from the server first, and the cached copy serves offline.
var DROP_IN = SCOPE + 'course.quirevault';

self.addEventListener('install', function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return cache.addAll(FILES.map(function (f) { return new Request(f, { cache: 'reload' }); }));
  }).catch(function (err) {
    // The copy did not fit (or a file could not be fetched): the pages are told why, the half
    // copy goes, and the install fails, so the next visit tries again.
    var reason = { type: 'offline-copy-failed', name: (err && err.name) || 'Error', message: String((err && err.message) || err) };
    return caches.delete(CACHE).catch(function () {}).then(function () {
      return self.clients.matchAll({ includeUncontrolled: true, type: 'window' });
    }).then(function (pages) {
      pages.forEach(function (page) { page.postMessage(reason); });
      throw err;
    });
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
  if (url.pathname === DROP_IN) {
    event.respondWith(caches.open(CACHE).then(function (cache) {
      return fetch(req).then(function (res) {
        if (res.ok) return cache.put(DROP_IN, res.clone()).then(function () { return res; });
        return res;
      }, function (err) {
        return cache.match(DROP_IN).then(function (hit) { if (hit) return hit; throw err; });
      });
    }));
    return;
  }
  var key = req.mode === 'navigate' && (url.pathname === SCOPE || url.pathname === SCOPE + 'index.html') ? './' : req;
  event.respondWith(caches.open(CACHE).then(function (cache) {
    return cache.match(key, { ignoreSearch: true }).then(function (hit) { return hit || fetch(req); });
  }));
});
