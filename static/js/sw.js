// The service worker (served at /sw.js by config/pwa.py, which puts SHELL and VERSION
// above this line). It keeps the shell (the CSS, JS and icons every page loads) so
// that a repeat visit fetches only the HTML, and shows /offline/ when a page cannot be
// reached. Pages themselves are never cached: they hold a player's own match.
// The Web Push handlers are in sw-push.js, next to this file (social/).
/* global SHELL, VERSION */
"use strict";

const CACHE = "sb-shell-" + VERSION;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)));
  self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/static/")) {
    // Hashed names never change content: the cache first, then the network (kept).
    event.respondWith(
      caches.match(request).then(
        (hit) =>
          hit ||
          fetch(request).then((response) => {
            if (response.ok) {
              const copy = response.clone();
              caches.open(CACHE).then((cache) => cache.put(request, copy));
            }
            return response;
          }),
      ),
    );
  } else if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match("/offline/")));
  }
});

importScripts("/static/js/sw-push.js");
