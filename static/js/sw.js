// The site's service worker, served at /sw.js (scope "/"). This minimal one only
// brings in the Web Push handlers; the shell caching lives in another branch's
// version of this file, which the lead merges with this line.
importScripts("/static/js/sw-push.js");
