/* Spectacular Bid: the match page's behaviour (no framework, no build step).
 *
 * The server renders everything; htmx's ws extension swaps the fragments in.
 * This script only
 *   - sends the JSON frames of PROTOCOL.md over the htmx socket (buttons carry data-op),
 *   - lets you pick a hand tile and then a lit position on the table,
 *   - counts the displayed clocks and countdowns down between updates, and sends
 *     {"op": "flag"} once when the running clock shows zero (the server decides),
 *   - follows a rematch: when a swap brings a result panel with data-goto (the new
 *     match's page), it goes there, once,
 *   - fits the stage to the window (--sb-stage-top) and keeps every board position a
 *     full touch target however small the board is drawn (a tap places on the nearest
 *     lit position),
 *   - opens the rules as a sheet over the table (the clocks stay in view and run),
 *   - says when your turn starts: the tab's title, and (opt-in) a short sound and vibration.
 */
(function () {
  "use strict";

  // A player's first few matches show the how-to line and the board's legend on a phone
  // too (CSS: .is-newcomer); the matches seen are counted in this browser.
  var NEWCOMER_MATCHES = 3;
  (function markNewcomer() {
    var root = document.getElementById("sb-match");
    if (!root) return;
    var seen = [];
    try { seen = JSON.parse(localStorage.getItem("sb-matches-seen") || "[]"); } catch (e) { seen = []; }
    if (!Array.isArray(seen)) seen = [];
    var id = String(root.dataset.match);
    if (seen.indexOf(id) < 0 && seen.length < NEWCOMER_MATCHES) {
      seen.push(id);
      try { localStorage.setItem("sb-matches-seen", JSON.stringify(seen)); } catch (e) { /* private mode */ }
    }
    if (seen.indexOf(id) >= 0) root.classList.add("is-newcomer");
  })();

  var socket = null; // htmx ws socket wrapper (htmx:wsOpen)
  var selected = null; // data-tile of the selected hand tile
  var pendingVersion = null; // version an action was sent at: no second one until an answer
  var pendingOp = null; // and its op
  var flaggedVersion = null;
  var clocks = [];
  var countdowns = [];
  var skew = 0; // server clock − browser clock, measured when the view arrived
  var ticker = null;
  var synced = {}; // deadlines of data-sync-at-zero countdowns already synced once
  var initialGoto = null; // data-goto as the page was loaded: an old rematch, not news
  var navigated = false;
  // A confirmed resignation is answered "stale" when the opponent moved as it was
  // sent. The player resigned whatever the position: it goes again on the new one
  // (at most RESIGN_TRIES times). resignAt: the version the last one was sent at.
  var resignAt = null;
  var resignStale = false;
  var resignTries = 0;
  var RESIGN_TRIES = 3;

  // Reconnect soon after a lost socket: the clock keeps running while the page is
  // away (after our outage the server gives back at most 5 s of the way back).
  // htmx's default doubles up to 64 s; here 0.125-0.25 s, then doubling to 1-2 s at
  // most, with jitter so that a restarted server is not met by every page at once.
  if (window.htmx) {
    window.htmx.config.wsReconnectDelay = function (retries) {
      var cap = Math.min(250 * Math.pow(2, retries), 2000);
      return cap / 2 + (Math.random() * cap) / 2;
    };
  }

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $$(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }

  function status() { return document.getElementById("sb-status"); }
  function version() {
    var s = status();
    return s ? Number(s.dataset.version) : null;
  }

  var queued = null; // a frame sent before the socket opened (or while reconnecting)

  function send(frame) {
    if (!socket) {
      // A tap before the socket is open must not be lost: send it on open.
      if (frame.op !== "flag" && frame.op !== "sync") {
        frame.version = version();
        queued = frame;
        return true;
      }
      return false;
    }
    if (frame.op !== "flag" && frame.op !== "sync") {
      frame.version = version();
      pendingVersion = frame.version;
      pendingOp = frame.op;
      document.documentElement.classList.add("sb-pending");
    } else if (frame.op === "flag") {
      frame.version = version();
    }
    socket.send(JSON.stringify(frame));
    return true;
  }

  function busy() {
    return pendingVersion !== null && pendingVersion === version();
  }

  function settle() {
    pendingVersion = null;
    pendingOp = null;
    document.documentElement.classList.remove("sb-pending");
  }

  // A move's answer always redraws the board, the hand or the auction. A message that
  // redraws only the parts drawn from the clocks (matches/ui/fragments.py: TIMED) gave
  // time back (our credit after a restart) while the move was on its way: the move is
  // still in flight, and a second tap would only be refused as stale once it lands.
  var MOVES = { place: true, bid: true, accept: true, decline: true };
  var NOT_TIMED = /id="sb-(?!status"|me"|opponent")/;
  function onlyTimeGiven(message) {
    return pendingOp !== null && MOVES[pendingOp] === true && typeof message === "string" &&
      message.indexOf('id="sb-') !== -1 && !NOT_TIMED.test(message);
  }

  // --- tiles and positions ---------------------------------------------------------

  function tileOf(key) {
    var p = key.split("-");
    return [Number(p[0]), Number(p[1])];
  }

  function posOf(key) {
    if (key === "open") return null;
    var i = key.indexOf(":");
    return { tile: tileOf(key.slice(0, i)), side: key.slice(i + 1) };
  }

  function place(tileKey, posKey) {
    send({ op: "place", tile: tileOf(tileKey), at: posOf(posKey) });
    select(null);
  }

  function handTile(key) {
    return $('.hand-tile[data-tile="' + key + '"]');
  }

  function select(key) {
    selected = null;
    $$(".hand-tile").forEach(function (b) {
      b.setAttribute("aria-pressed", "false");
      b.classList.remove("is-selected");
    });
    $$(".pos").forEach(function (p) {
      p.classList.remove("is-lit");
      p.setAttribute("aria-disabled", "true");
      p.removeAttribute("tabindex");
    });
    var btn = key && handTile(key);
    if (!btn || !btn.dataset.at) return;
    selected = key;
    btn.setAttribute("aria-pressed", "true");
    btn.classList.add("is-selected");
    btn.dataset.at.split(" ").forEach(function (pk) {
      var p = $('.pos[data-pos="' + pk + '"]');
      if (p) {
        p.classList.add("is-lit");
        p.setAttribute("aria-disabled", "false");
        p.setAttribute("tabindex", "0");
      }
    });
  }

  function onHandTile(btn) {
    if (busy() || !btn.dataset.at) return;
    var at = btn.dataset.at.split(" ");
    if (at.length === 1) {
      place(btn.dataset.tile, at[0]); // fits one place only: one tap
    } else if (selected === btn.dataset.tile) {
      select(null);
    } else {
      select(btn.dataset.tile);
    }
  }

  function onPosition(g) {
    if (busy() || !selected || !g.classList.contains("is-lit")) return;
    place(selected, g.dataset.pos);
  }

  // The lit position nearest to a tap on the board, within its hit circle (≥ 22 px).
  function nearestLit(x, y) {
    var best = null, bestD = Infinity;
    $$(".pos.is-lit").forEach(function (g) {
      var hit = $(".pos__hit", g) || g;
      var r = hit.getBoundingClientRect();
      var cx = r.left + r.width / 2, cy = r.top + r.height / 2;
      var d = Math.hypot(x - cx, y - cy);
      if (d <= Math.max(HIT_PX, r.width / 2) && d < bestD) { best = g; bestD = d; }
    });
    return best;
  }

  // --- the board's size: every position a full touch target -------------------------

  var HIT_PX = 23; // half of a 44 px target, and a little more

  function fitHits() {
    var svg = $(".sb-board__svg");
    if (!svg || !svg.viewBox || !svg.viewBox.baseVal) return;
    var vb = svg.viewBox.baseVal;
    var box = svg.getBoundingClientRect();
    if (!vb.width || !vb.height || !box.width || !box.height) return;
    var k = Math.min(box.width / vb.width, box.height / vb.height); // px per unit
    var r = Math.max(14, HIT_PX / k).toFixed(1);
    // Written only where it differs: an unchanged attribute would still dirty the layout.
    $$(".pos__hit", svg).forEach(function (c) {
      if (c.getAttribute("r") !== r) c.setAttribute("r", r);
    });
  }

  // Read where the layout is already done (a ResizeObserver's callback: after layout,
  // before paint), not forced on load: the board's own observer then fits its hits.
  function fitStage() {
    var stage = $(".sb-stage");
    if (!stage) return;
    var top = Math.round(stage.getBoundingClientRect().top + window.scrollY) + "px";
    // Set only when it moves: a new value restyles and lays out the whole page again.
    var root = document.documentElement.style;
    if (root.getPropertyValue("--sb-stage-top") !== top) root.setProperty("--sb-stage-top", top);
  }

  // One fit per frame, however many resizes and observer calls asked for it in that
  // frame: each fit reads the layout, so it runs once, before the next paint.
  var fitQueued = false;
  function fitSoon() {
    if (fitQueued) return;
    fitQueued = true;
    window.requestAnimationFrame(function () { fitQueued = false; fitStage(); });
  }

  // Anything above the stage that changes height after load (the arena bar when berserk
  // moves into it, the connection banner, a message) moves the stage's top: fit again.
  function watchAbove() {
    if (!window.ResizeObserver) { fitStage(); fitHits(); return; }
    // Its first call comes once the page is laid out (the header has a size): the first fit.
    var above = new ResizeObserver(fitStage);
    for (var node = $(".sb-layout"); node && node !== document.body; node = node.parentElement) {
      for (var el = node.previousElementSibling; el; el = el.previousElementSibling) {
        above.observe(el);
      }
    }
  }

  var resizeObserver = null;
  function watchBoard() {
    if (!window.ResizeObserver) return;
    if (!resizeObserver) resizeObserver = new ResizeObserver(fitHits);
    resizeObserver.disconnect();
    var fit = $(".sb-board__fit");
    if (fit) resizeObserver.observe(fit);
  }

  // --- the rules sheet -------------------------------------------------------------------

  function rulesSheet() { return document.getElementById("sb-rules"); }

  // ``term``: a word of the game tapped on the table (data-term): the sheet opens at its
  // line of the glossary (templates/rules/_glossary.html), marked.
  function openRules(term) {
    var d = rulesSheet();
    if (!d) return;
    // Not modal: the clocks above and below the table stay in view, and keep running.
    // Over the start screen (no clock runs yet) it opens above it, as a modal.
    var overlay = document.getElementById("sb-overlay");
    var over = overlay && !overlay.hidden;
    if (d.open) d.close();
    if (over && d.showModal) d.showModal();
    else if (d.show) d.show();
    else d.setAttribute("open", "");
    var close = $("[data-testid=rules-close]", d);
    if (close) close.focus();
    Array.prototype.forEach.call(d.querySelectorAll(".glossary .is-pointed"), function (e) {
      e.classList.remove("is-pointed");
    });
    var entry = term ? document.getElementById("term-" + term) : null;
    if (entry && d.contains(entry)) {
      entry.classList.add("is-pointed");
      entry.scrollIntoView({ block: "start" });
    }
  }

  function closeRules() {
    var d = rulesSheet();
    if (d && d.open) { if (d.close) d.close(); else d.removeAttribute("open"); }
  }

  // --- your turn: the title, and (opt-in) a sound and a vibration -------------------------

  var ALERT_KEY = "sb-turn-alert";
  var baseTitle = document.title;
  var wasMyTurn = null;
  var audio = null;

  function alertOn() {
    try { return window.localStorage.getItem(ALERT_KEY) === "1"; } catch (e) { return false; }
  }

  // The settings page keeps sound and vibration apart ("0" turns one off); unset is on.
  function alertPart(key) {
    try { return window.localStorage.getItem(key) !== "0"; } catch (e) { return true; }
  }

  function showAlertSetting() {
    var on = alertOn();
    $$("[data-notify-toggle]").forEach(function (b) {
      b.setAttribute("aria-pressed", on ? "true" : "false");
      var label = on ? b.dataset.labelOn : b.dataset.labelOff;
      if (label) b.textContent = label;
    });
  }

  function beep() {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) return;
    try {
      if (!audio) audio = new Ctx();
      if (audio.state === "suspended") audio.resume();
      var osc = audio.createOscillator(), gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.15, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.18);
      osc.connect(gain);
      gain.connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.2);
    } catch (e) { /* no sound: the title still says it */ }
  }

  function toggleAlert() {
    var on = !alertOn();
    try {
      window.localStorage.setItem(ALERT_KEY, on ? "1" : "0");
      if (on && !alertPart("sb-turn-sound") && !alertPart("sb-turn-vibration")) {
        window.localStorage.removeItem("sb-turn-sound"); // switched on here: both parts on
        window.localStorage.removeItem("sb-turn-vibration");
      }
    } catch (e) { /* private mode */ }
    showAlertSetting();
    if (on) { beep(); if (navigator.vibrate) navigator.vibrate(80); } // a tap lets audio start
  }

  function showTurn() {
    var s = status();
    var mine = !!s && s.dataset.myTurn === "1";
    var m = document.getElementById("sb-match");
    var word = (m && m.dataset.turnTitle) || "";
    var title = mine && word ? "\u25b6 " + word + " \u00b7 " + baseTitle : baseTitle;
    if (document.title !== title) document.title = title;
    if (mine && wasMyTurn === false && alertOn()) {
      if (alertPart("sb-turn-sound")) beep();
      if (navigator.vibrate && alertPart("sb-turn-vibration")) navigator.vibrate([120, 60, 120]);
    }
    wasMyTurn = mine;
  }

  // --- buttons -----------------------------------------------------------------------

  function bidInput() { return $("[data-bid-amount]"); }

  function clampBid(v) {
    var i = bidInput();
    var lo = Number(i.min), hi = Number(i.max);
    var step = Number(i.step) || 1; // the engine's bid step, from the view
    if (isNaN(v)) v = lo;
    v = lo + Math.round((v - lo) / step) * step;
    return Math.max(lo, Math.min(hi, v));
  }

  function showBidCost() {
    var i = bidInput();
    var out = $("[data-bid-cost]");
    if (!i || !out) return;
    var v = Number(i.value);
    if (isNaN(v)) return;
    // Each amount's cost comes with the view (the engine applies the jockey's discount).
    var cost = null;
    (i.dataset.costs || "").split(" ").forEach(function (pair) {
      var kv = pair.split(":");
      if (Number(kv[0]) === v) cost = kv[1];
    });
    if (cost !== null) out.textContent = cost;
    // The bid button names the amount it sends: 「25点に引き上げ」.
    var label = $("[data-bid-value]");
    if (label) label.textContent = String(v);
  }

  function onOp(btn) {
    var op = btn.dataset.op;
    if (op === "resign" && !btn.hasAttribute("data-confirm")) {
      var d = document.getElementById("sb-resign-dialog");
      if (d && d.showModal) { d.showModal(); return; }
      if (!window.confirm(d ? d.querySelector(".sb-dialog__q").textContent : "?")) return;
    }
    if (busy() && op !== "resign") return;
    var frame = { op: op };
    if (op === "bid") {
      var v = clampBid(Number(bidInput().value));
      bidInput().value = v;
      frame.amount = v;
    }
    if (!send(frame)) return;
    btn.disabled = op !== "resign";
    if (op === "resign") { resignAt = frame.version; resignStale = false; resignTries = 0; }
  }

  // Before a message settles the action in flight: was a resignation refused as stale?
  function noteStaleResign() {
    var toast = document.getElementById("sb-toast");
    if (!toast || toast.hidden || toast.dataset.code !== "stale") return;
    toast.dataset.code = "seen"; // the next message does not count it again
    if (resignAt !== null) resignStale = true;
  }

  // Once the new position is in, the refused resignation goes again.
  function resignAgain() {
    if (!$(".sb-resign")) { resignAt = null; resignStale = false; return; } // over
    if (!resignStale || version() === resignAt || resignTries >= RESIGN_TRIES) return;
    resignStale = false;
    resignTries += 1;
    var frame = { op: "resign" };
    if (send(frame)) resignAt = frame.version;
  }

  document.addEventListener("click", function (ev) {
    var t = ev.target;
    var rules = t.closest("[data-open-rules]");
    if (rules) { openRules(rules.dataset.term); return; }
    if (t.closest("[data-notify-toggle]")) { toggleAlert(); return; }
    var step = t.closest("[data-step]");
    if (step) {
      var i = bidInput();
      if (i) { i.value = clampBid(Number(i.value) + Number(step.dataset.step)); showBidCost(); }
      return;
    }
    var op = t.closest("[data-op]");
    if (op && !op.disabled) { onOp(op); return; }
    var ht = t.closest(".hand-tile");
    if (ht && !ht.disabled) { onHandTile(ht); return; }
    var pos = t.closest(".pos");
    if (pos) { onPosition(pos); return; }
    if (selected && t.closest(".sb-board__fit")) {
      var near = nearestLit(ev.clientX, ev.clientY);
      if (near) onPosition(near);
    }
  });

  document.addEventListener("keydown", function (ev) {
    if ((ev.key === "Enter" || ev.key === " ") && ev.target.classList &&
        ev.target.classList.contains("pos")) {
      ev.preventDefault();
      onPosition(ev.target);
    }
    if (ev.key === "Escape") {
      if (rulesSheet() && rulesSheet().open) closeRules();
      else if (selected) select(null);
    }
  });

  document.addEventListener("input", function (ev) {
    if (ev.target.matches && ev.target.matches("[data-bid-amount]")) showBidCost();
  });

  // --- clocks ----------------------------------------------------------------------

  function fmt(ms) {
    ms = Math.max(0, ms);
    if (ms < 10000) {
      return "0:0" + Math.floor(ms / 1000) + "." + Math.floor((ms % 1000) / 100);
    }
    var s = Math.ceil(ms / 1000);
    var sec = s % 60;
    return Math.floor(s / 60) + ":" + (sec < 10 ? "0" : "") + sec;
  }

  function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function bindClocks() {
    var now = Date.now();
    var s = status();
    var serverNow = s && Number(s.dataset.serverNow);
    if (serverNow) skew = serverNow - now;
    clocks = $$("[data-clock]").map(function (el) {
      return {
        el: el,
        main: Number(el.dataset.main),
        delay: Number(el.dataset.delayLeft || 0),
        running: el.dataset.running === "1",
        since: now,
        mainEl: $("[data-clock-main]", el),
        delayEl: $("[data-clock-delay]", el),
        delayVal: $("[data-clock-delay-value]", el),
      };
    });
    countdowns = $$("[data-countdown]").map(function (el) {
      var sn = Number(el.dataset.serverNow);
      return {
        el: el,
        deadline: Number(el.dataset.deadline),
        skew: sn ? sn - now : skew,
        sync: el.hasAttribute("data-sync-at-zero"),
      };
    });
    if (!ticker) ticker = window.setInterval(tick, 100);
    tick();
  }

  function tick() {
    var now = Date.now();
    clocks.forEach(function (c) {
      if (!c.running) return;
      var elapsed = now - c.since;
      var delay = Math.max(0, c.delay - elapsed);
      var main = Math.max(0, c.main - Math.max(0, elapsed - c.delay));
      // Written only when the figure changes (a tick is 100 ms, a figure mostly 1 s):
      // a new text, even the same one, lays its line out again.
      setText(c.mainEl, fmt(main));
      if (c.delayEl) {
        c.delayEl.hidden = delay <= 0;
        if (c.delayVal) setText(c.delayVal, String(Math.ceil(delay / 1000)));
      }
      c.el.classList.toggle("is-low", main < 10000 && delay <= 0);
      if (main <= 0 && delay <= 0) {
        var v = version();
        if (flaggedVersion !== v && send({ op: "flag" })) flaggedVersion = v;
      }
    });
    countdowns.forEach(function (c) {
      var left = c.deadline - (now + c.skew);
      setText(c.el, String(Math.max(0, Math.ceil(left / 1000))));
      // Nothing is pushed when (say) a rematch offer lapses: ask once for the view,
      // a second after the deadline so that the server's clock has passed it too.
      if (c.sync && left < -1000 && !synced[c.deadline] && send({ op: "sync" })) {
        synced[c.deadline] = true;
      }
    });
  }

  // --- socket and swaps ------------------------------------------------------------------

  document.addEventListener("htmx:wsOpen", function (ev) {
    socket = ev.detail.socketWrapper;
    settle(); // a reconnection brings the whole view again
    var c = document.getElementById("sb-conn");
    if (c) c.hidden = true;
    if (queued) {
      // Sent with the version it was chosen at: if the match moved on meanwhile,
      // the server answers "stale" with the current view instead of applying it.
      var f = queued;
      queued = null;
      pendingVersion = f.version;
      socket.send(JSON.stringify(f));
    }
  });

  document.addEventListener("htmx:wsClose", function () {
    socket = null;
    var c = document.getElementById("sb-conn");
    if (c) c.hidden = false;
  });

  // --- rematch: follow the new match ---------------------------------------------------

  function gotoTarget() {
    var el = $("[data-goto]");
    var url = el ? el.dataset.goto : "";
    // Only a path on this site (the server writes /matches/<id>/).
    return url && url.charAt(0) === "/" && url.charAt(1) !== "/" ? url : "";
  }

  function followRematch() {
    var url = gotoTarget();
    if (!url || navigated || url === initialGoto) return;
    navigated = true;
    window.location.assign(url);
  }

  var toastTimer = null;
  function afterSwap(ev) {
    // Any message answers the action in flight (a new state, or an error toast), except
    // one that only gave time back: the move is still on its way.
    noteStaleResign();
    if (onlyTimeGiven(ev && ev.detail ? ev.detail.message : null)) {
      pendingVersion = version();
    } else {
      settle();
    }
    var keep = selected;
    if (keep) select(keep); // still playable? keep it selected
    bindClocks();
    showBidCost();
    followRematch();
    fitSoon(); // before the next paint, where the layout is read anyway
    watchBoard();
    showAlertSetting();
    showTurn();
    resignAgain();
    var toast = document.getElementById("sb-toast");
    if (toast && !toast.hidden) {
      window.clearTimeout(toastTimer);
      toastTimer = window.setTimeout(function () { toast.hidden = true; }, 5000);
    }
  }

  document.addEventListener("htmx:wsAfterMessage", afterSwap);

  function onLoad() {
    initialGoto = gotoTarget(); // reopening an old match page stays on it
    bindClocks();
    watchAbove();
    watchBoard();
    showAlertSetting();
    showTurn();
    window.addEventListener("resize", fitSoon);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", onLoad);
  } else {
    onLoad();
  }
})();
