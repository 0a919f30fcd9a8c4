// The bell (templates/base.html) on every page of a logged-in player.
//
// Keeps the lobby socket (/ws/lobby/) open: the server pushes notifications to
// the player's group there (social/notify.py), and the open socket is what makes
// the player "online" for their friends. On a notification the bell's count
// changes and a toast (fetched in the page's language from /notifications/toast/)
// shows it, with Accept / Decline for a challenge. When a challenge this player
// made is accepted, the page goes to the new match. Whether the page is hidden is
// reported to /api/presence/ (Web Push goes out only then); the service worker that
// shows pushes (static/js/sw-push.js) is registered by shell.js on every page.
(function () {
  "use strict";
  if (window.sbNotify) return;
  window.sbNotify = true;

  var retry = 1000;

  function csrf() {
    var m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }

  function setCount(n) {
    var c = document.querySelector("#sb-bell .bell__count");
    if (!c) return;
    c.textContent = String(n);
    c.hidden = !n;
  }

  // pending: only a challenge to us still open, or one of ours accepted (asked each
  // time the socket opens, since one made while it was connecting was pushed to no
  // socket of ours).
  function showToast(pending) {
    var bell = document.getElementById("sb-bell");
    var box = document.getElementById("sb-toasts");
    if (!bell || !box) return;
    var url = bell.dataset.toastUrl + "?next=" + encodeURIComponent(location.pathname);
    if (pending) url += "&pending=1";
    fetch(url, { credentials: "same-origin" })
      .then(function (r) {
        // A challenge of ours accepted while this page's socket was not yet open.
        var go = r.headers.get("X-Sb-Go");
        if (go && go !== location.pathname) {
          window.location.assign(go);
          return "";
        }
        return r.status === 200 ? r.text() : "";
      })
      .then(function (html) {
        if (!html) return;
        box.innerHTML = html;
        var t = box.querySelector("[data-unread]");
        if (t) setCount(Number(t.dataset.unread));
        var close = box.querySelector("[data-role=toast-close]");
        if (close) close.addEventListener("click", function () { box.innerHTML = ""; });
        // Out of the way again (it may cover a match's hand); the bell keeps the count.
        var shown = box.firstElementChild;
        setTimeout(function () { if (box.firstElementChild === shown) box.innerHTML = ""; }, 20000);
      });
  }

  function onMessage(event) {
    var msg;
    try {
      msg = JSON.parse(event.data);
    } catch (e) {
      return;
    }
    if (msg.type === "notification") {
      setCount(msg.unread);
      var n = msg.notification || {};
      if (n.kind === "challenge_accepted" && n.url) {
        window.location.assign(n.url); // our challenge was accepted: to the match
        return;
      }
      showToast(false);
      if (window.sbFeedback) window.sbFeedback(); // sound / vibration, if the page has them
    } else if (msg.type === "challenge_closed") {
      var box = document.getElementById("sb-toasts");
      if (box) box.innerHTML = "";
    }
  }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + "/ws/lobby/");
    socket.addEventListener("open", function () {
      retry = 1000;
      showToast(true);
    });
    socket.addEventListener("message", onMessage);
    socket.addEventListener("close", function (event) {
      if (event.code === 4401 || event.code === 4403) return; // logged out / refused
      // On a match page the match's own socket reconnects first (a restarted server
      // serves a live match's seats before anything else): the bell waits a little.
      var wait = retry + (document.getElementById("sb-match") ? 2000 + Math.random() * 2000 : 0);
      setTimeout(connect, wait);
      retry = Math.min(retry * 2, 15000);
    });
  }

  function reportVisibility() {
    fetch("/api/presence/", {
      method: "POST",
      credentials: "same-origin",
      keepalive: true,
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify({ hidden: document.visibilityState === "hidden" }),
    }).catch(function () {});
  }

  // The socket and the report each in a task of their own, after the page's own start:
  // together with this script's they made one long task of a phone's first second.
  function start() {
    window.setTimeout(connect, 0);
    document.addEventListener("visibilitychange", reportVisibility);
    if (document.visibilityState !== "hidden") window.setTimeout(reportVisibility, 0);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
