// Arenas (templates/tournaments/): the arena page and the arena bar of an arena match.
//
// Both keep a socket open to /ws/tournaments/<id>/ (its presence keeps the player
// from being paused). The arena page counts down to the start or the end, redraws
// the standings from the pushes (at most about one a second) and follows a pairing
// to the new match at once. The bar on an arena match's page takes the player back
// to the arena a few seconds after the match ends (or to the next match, if the
// pairing came first), unless they choose to stay (which pauses them).
(function () {
  "use strict";
  if (window.sbArena) return;
  window.sbArena = true;

  var offset = 0; // server clock minus this clock, in ms
  var retry = 1000;
  var page = document.getElementById("arena");
  var bar = document.getElementById("arena-bar");
  var root = page || bar;
  if (!root || !root.dataset.socket) {
    if (page) startClock();
    return;
  }
  var stayed = false;
  var leaving = null;

  function clockText(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    var sec = s % 60;
    return (h ? h + ":" + (m < 10 ? "0" : "") : "") + m + ":" + (sec < 10 ? "0" : "") + sec;
  }

  function startClock() {
    if (page.dataset.serverNow) offset = Number(page.dataset.serverNow) - Date.now();
    tick();
    setInterval(tick, 500);
  }

  function tick() {
    var now = Date.now() + offset;
    var starts = Number(page.dataset.starts);
    var ends = Number(page.dataset.ends);
    var label = page.querySelector("[data-testid=arena-countdown-label]");
    var time = page.querySelector("[data-testid=arena-countdown]");
    if (page.dataset.phase === "finished" || now >= ends) {
      label.textContent = page.dataset.labelOver;
      time.textContent = "";
    } else if (now < starts) {
      label.textContent = page.dataset.labelStarts;
      time.textContent = clockText(starts - now);
    } else {
      label.textContent = page.dataset.labelEnds;
      time.textContent = clockText(ends - now);
    }
  }

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }

  function drawStandings(frame) {
    var body = document.getElementById("arena-rows");
    if (!body) return;
    var me = root.dataset.me;
    var rows = frame.standings || [];
    var fresh = document.createDocumentFragment();
    rows.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.dataset.player = r.username;
      if (r.username === me) tr.className = "is-me";
      cell(tr, String(r.rank), "num");
      cell(tr, r.username);
      cell(tr, String(r.rating), "num");
      cell(tr, String(r.points), "num").setAttribute("data-points", "");
      var streak = cell(tr, String(r.streak), "num");
      if (r.fire) {
        var f = document.createElement("span");
        f.className = "fire";
        f.textContent = "🔥";
        streak.insertBefore(f, streak.firstChild);
      }
      cell(tr, String(r.played), "num arena-table__played");
      fresh.appendChild(tr);
    });
    if (rows.length) {
      body.replaceChildren(fresh);
    }
    var count = document.querySelector("[data-testid=arena-count]");
    if (count) count.textContent = "(" + frame.count + ")";
    if (frame.arena && frame.arena.phase !== page.dataset.phase) {
      if (frame.arena.phase === "finished") {
        window.location.reload(); // the podium and the final table
        return;
      }
      page.dataset.phase = frame.arena.phase;
    }
  }

  function drawYou(you) {
    var box = page && page.querySelector("[data-testid=arena-me]");
    if (!box) return;
    var state = !you ? "none" : you.match_id ? "playing" : you.state === "active" ? "waiting" : you.state;
    box.dataset.state = state;
    var status = box.querySelector("[data-testid=arena-status]");
    if (status) status.textContent = box.dataset["label" + state.charAt(0).toUpperCase() + state.slice(1)] || "";
    var link = box.querySelector("[data-testid=arena-current-match]");
    if (link) link.href = you && you.match_url ? you.match_url : "#";
    var pts = box.querySelector("[data-testid=arena-my-points]");
    if (pts && you) pts.textContent = String(you.points);
    var rank = box.querySelector("[data-testid=arena-my-rank]");
    if (rank && you) rank.textContent = String(you.rank);
  }

  function barYou(you) {
    // On an arena match's page: once this match is no longer the player's, go back.
    if (!you || stayed || leaving) return;
    var here = Number(bar.dataset.match);
    if (you.match_id === here) return;
    var target = you.match_url || bar.dataset.arenaUrl;
    var note = bar.querySelector("[data-testid=arena-back-note]");
    var n = Number(bar.dataset.backAfterS || 5);
    function say() {
      if (note) note.textContent = (note.dataset.label || "").replace("{n}", String(Math.max(0, n)));
    }
    say();
    if (note) note.hidden = false;
    var stay = bar.querySelector("[data-testid=arena-stay]");
    if (stay) stay.hidden = false;
    leaving = setInterval(function () {
      n -= 1;
      say();
      if (n <= 0) {
        clearInterval(leaving);
        window.location.assign(target);
      }
    }, 1000);
  }

  // The arena page goes to each new match of the player once (as lichess does): on
  // its pairing push, or, when that push was missed (the page reloading just after
  // 参加, its socket reconnecting), on the first "you" that names the match. A
  // player who then comes back to the arena page on purpose is not sent again.
  function goOnce(matchId, url) {
    var key = "sb-arena-sent-" + matchId;
    try {
      if (window.sessionStorage.getItem(key)) return;
      window.sessionStorage.setItem(key, "1");
    } catch (e) {
      /* no storage: go anyway */
    }
    window.location.assign(url);
  }

  function onFrame(frame) {
    if (frame.type === "standings" && page) drawStandings(frame);
    else if (frame.type === "you") {
      if (page) {
        drawYou(frame.you);
        if (frame.you && frame.you.match_id) goOnce(frame.you.match_id, frame.you.match_url);
        page.dataset.synced = "1"; // the socket's own state is drawn (and followed)
      } else barYou(frame.you);
    } else if (frame.type === "paired") {
      if (page) goOnce(frame.match_id, frame.url);
      else if (!stayed && Number(bar.dataset.match) !== frame.match_id) {
        window.location.assign(frame.url);
      }
    }
  }

  function connect() {
    var proto = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(proto + window.location.host + root.dataset.socket);
    socket.onopen = function () {
      retry = 1000;
    };
    socket.onmessage = function (ev) {
      try {
        onFrame(JSON.parse(ev.data));
      } catch (e) {
        /* a frame we do not understand changes nothing */
      }
    };
    socket.onclose = function (ev) {
      if (ev.code === 4401 || ev.code === 4403) return;
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 15000);
    };
  }

  if (bar) {
    var stay = bar.querySelector("[data-testid=arena-stay]");
    if (stay) {
      stay.addEventListener("click", function () {
        // Staying means not being paired meanwhile: pause in the arena.
        stayed = true;
        if (leaving) clearInterval(leaving);
        leaving = null;
        var note = bar.querySelector("[data-testid=arena-back-note]");
        if (note) note.hidden = true;
        stay.hidden = true;
        fetch(bar.dataset.pauseUrl, {
          method: "POST",
          headers: { "X-CSRFToken": bar.dataset.csrf },
          credentials: "same-origin",
        });
      });
    }
    var berserk = bar.querySelector("[data-testid=arena-berserk]");
    if (berserk) {
      berserk.addEventListener("click", function () {
        berserk.disabled = true;
        fetch(bar.dataset.berserkUrl, {
          method: "POST",
          headers: { "X-CSRFToken": bar.dataset.csrf },
          credentials: "same-origin",
        })
          .then(function (r) {
            return r.json().then(function (body) {
              return { ok: r.ok, body: body };
            });
          })
          .then(function (res) {
            var note = bar.querySelector("[data-testid=arena-berserk-note]");
            if (res.ok) {
              berserk.textContent = berserk.dataset.labelDone;
              bar.dataset.berserk = "1";
            } else {
              berserk.disabled = false;
              if (note) {
                note.textContent = res.body.message || "";
                note.hidden = false;
              }
            }
          });
      });
      // Berserk is chosen at 開始: the button stands next to the start overlay's 開始
      // button (put back whenever a push redraws the overlay), and goes once the
      // match runs.
      var watch = setInterval(function () {
        var start = document.querySelector("[data-testid=op-start]");
        if (!start) {
          if (bar.dataset.berserk !== "1") berserk.hidden = true;
          else bar.appendChild(berserk);
          clearInterval(watch);
          return;
        }
        if (berserk.nextElementSibling !== start) start.parentNode.insertBefore(berserk, start);
      }, 200);
    }
  }
  if (page) startClock();
  connect();
})();
