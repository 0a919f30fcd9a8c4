// The settings page: ticking Web Push asks the browser for a push subscription
// (with the site's VAPID key) and posts it to /api/push/ before the form is saved.
(function () {
  "use strict";
  var form = document.getElementById("sb-settings");
  if (!form) return;
  // The match page's turn alert (static/js/match.js) follows the saved choices: a sound,
  // a vibration, and its own switch on while either is.
  try {
    var sound = form.dataset.turnSound === "1", buzz = form.dataset.turnVibration === "1";
    localStorage.setItem("sb-turn-sound", sound ? "1" : "0");
    localStorage.setItem("sb-turn-vibration", buzz ? "1" : "0");
    localStorage.setItem("sb-turn-alert", sound || buzz ? "1" : "0");
  } catch (e) { /* private mode: the match page's own switch still works */ }
  var box = form.querySelector("[name=push]");
  var status = form.querySelector("[data-role=push-status]");

  function b64ToBytes(s) {
    var pad = "=".repeat((4 - (s.length % 4)) % 4);
    var raw = atob((s + pad).replace(/-/g, "+").replace(/_/g, "/"));
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function csrf() {
    var i = form.querySelector("[name=csrfmiddlewaretoken]");
    return i ? i.value : "";
  }

  function subscribe() {
    return navigator.serviceWorker.register("/sw.js")
      .then(function () { return navigator.serviceWorker.ready; })
      .then(function (reg) {
        return reg.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: b64ToBytes(form.dataset.pushKey),
        });
      })
      .then(function (sub) {
        return fetch("/api/push/", {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
          body: JSON.stringify(sub.toJSON()),
        });
      });
  }

  form.addEventListener("submit", function (e) {
    if (!box || !box.checked || !("serviceWorker" in navigator) || !("PushManager" in window)) return;
    e.preventDefault();
    Notification.requestPermission()
      .then(function (p) { if (p !== "granted") throw new Error(p); return subscribe(); })
      .catch(function (err) { if (status) status.textContent = String(err && err.message || err); box.checked = false; })
      .then(function () { form.submit(); });
  });
})();
