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
