// Small behaviours of every page, kept out of the HTML: the Content-Security-Policy
// (config/settings.py) runs no inline script and no onclick= handler.
"use strict";

// A read-only field holding something to copy (the invite link, a new API token):
// a tap or click selects all of it.
document.addEventListener("click", (e) => {
  const field = e.target instanceof Element && e.target.closest("[data-select-on-click]");
  if (field) field.select();
});

// A page that shows live state (an invite waiting to be accepted) is marked
// data-reload-on-restore: back (or forward) to it from the browser's memory would
// show it as it was, so it is fetched again.
addEventListener("pageshow", (e) => {
  if (e.persisted && document.querySelector("[data-reload-on-restore]")) location.reload();
});

// New work refused at the door while the server is saturated (503 + Retry-After,
// matches/lobby/admission_http.py): htmx drops an error response, so a tap on
// 対局を探す or 再戦 would seem to do nothing. Say so, and ask again after the
// server's Retry-After (jittered, so that refused pages do not all come back
// together), at most three times.
const BUSY_RETRIES = 3;
document.addEventListener("htmx:responseError", (e) => {
  const xhr = e.detail.xhr;
  const elt = e.detail.elt;
  if (!xhr || xhr.status !== 503 || !(elt instanceof Element)) return;
  const tries = Number(elt.dataset.sbBusyTries || "0");
  let note = elt.nextElementSibling;
  if (!note || !note.matches("[data-role=busy]")) {
    note = document.createElement("p");
    note.className = "message message--error";
    note.setAttribute("role", "status");
    note.dataset.role = "busy";
    note.dataset.testid = "busy";
    elt.after(note);
  }
  note.textContent = document.body.dataset.busyText || "";
  if (tries >= BUSY_RETRIES) return;
  elt.dataset.sbBusyTries = String(tries + 1);
  const after = Math.min(30, Math.max(1, Number(xhr.getResponseHeader("Retry-After")) || 2));
  const trigger = (e.detail.requestConfig && e.detail.requestConfig.triggeringEvent) || null;
  setTimeout(() => {
    if (!elt.isConnected) return;
    note.remove();
    window.htmx.trigger(elt, trigger ? trigger.type : elt.matches("form") ? "submit" : "click");
  }, after * 1000 * (1 + Math.random() / 2));
});

// A request that went through clears the count of busy retries.
document.addEventListener("htmx:afterRequest", (e) => {
  const elt = e.detail.elt;
  if (e.detail.successful && elt instanceof Element) delete elt.dataset.sbBusyTries;
});
