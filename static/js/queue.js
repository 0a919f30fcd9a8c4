// The ranked queue card on the lobby page (templates/lobby/_queue_card.html).
//
// Keeps a socket open to /ws/lobby/ (its presence keeps the queue entry alive),
// counts the time waited and the rating window up locally from the server's
// joined_at (the same rule as matches/queue.py), swaps the card when the queue
// state changes elsewhere, and follows a pairing to the new match at once.
(function () {
  "use strict";
  if (window.sbQueue) return;
  window.sbQueue = true;

  var offset = 0; // server clock minus this clock, in ms
  var socket = null;
  var retry = 1000;

  function card() {
    return document.getElementById("ranked-queue");
  }

  function syncClock() {
    var c = card();
    if (c && c.dataset.serverNow) offset = Number(c.dataset.serverNow) - Date.now();
  }

  function windowFor(waitedS, d) {
    if (waitedS >= Number(d.unboundedAfter)) return "±∞";
    var w = Number(d.windowStart) + Number(d.windowStep) * Math.floor(waitedS / Number(d.windowEvery));
    return "±" + w;
  }

  function clockText(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var sec = s % 60;
    return Math.floor(s / 60) + ":" + (sec < 10 ? "0" : "") + sec;
  }

  function tick() {
    var c = card();
    if (!c || c.dataset.inQueue !== "1" || !c.dataset.joinedAt) return;
    var waited = Date.now() + offset - Number(c.dataset.joinedAt);
    var w = c.querySelector("[data-role=waited]");
    var win = c.querySelector("[data-role=window]");
    if (w) w.textContent = clockText(waited);
    if (win) win.textContent = windowFor(Math.max(0, waited) / 1000, c.dataset);
  }

  function reloadCard() {
    var c = card();
    if (c && window.htmx) {
      window.htmx.ajax("GET", c.dataset.cardUrl, { target: "#ranked-queue", swap: "outerHTML" });
    }
  }

  function showError(message) {
    var c = card();
    var p = c && c.querySelector("[data-role=error]");
    if (p) {
      p.textContent = message;
      p.hidden = false;
    }
  }

  function onMessage(event) {
    var msg;
    try {
      msg = JSON.parse(event.data);
    } catch (e) {
      return;
    }
    if (msg.type === "paired") {
      window.location.assign(msg.url);
    } else if (msg.type === "queue") {
      offset = msg.server_now - Date.now();
      var c = card();
      if (!c) return;
      var inQueue = msg.in_queue ? "1" : "0";
      if (c.dataset.inQueue !== inQueue) {
        reloadCard();
      } else if (msg.joined_at) {
        c.dataset.joinedAt = String(msg.joined_at);
        tick();
      }
    } else if (msg.type === "error") {
      showError(msg.message);
    }
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + "/ws/lobby/");
    socket.addEventListener("open", function () {
      retry = 1000;
    });
    socket.addEventListener("message", onMessage);
    socket.addEventListener("close", function (event) {
      socket = null;
      if (event.code === 4401 || event.code === 4430) return; // logged out; too many sockets
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 10000);
    });
  }

  function start() {
    if (!card()) return;
    syncClock();
    tick();
    setInterval(tick, 250);
    setInterval(function () {
      if (socket && socket.readyState === WebSocket.OPEN) socket.send('{"op":"ping"}');
    }, 10000);
    document.body.addEventListener("htmx:afterSwap", function () {
      syncClock();
      tick();
    });
    connect();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
