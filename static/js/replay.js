// The replay (templates/history/replay.html): ← and → step back and forward.
// The step links do the work (htmx swaps #replay in place), so without this script
// the page still works by tapping. Keys pressed while a step is loading are queued,
// so holding → walks on instead of asking for the same step twice.
(function () {
  "use strict";
  const RELS = { ArrowLeft: "prev", ArrowRight: "next" };
  const queue = [];
  let loading = false;
  let refocus = null;

  function follow(rel) {
    const link = document.querySelector(`#replay a[rel="${rel}"]`);
    if (!link) {
      queue.length = 0;
      return false;
    }
    link.click();
    return true;
  }

  document.addEventListener("keydown", (e) => {
    const rel = RELS[e.key];
    if (!rel || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    if (e.target.closest && e.target.closest("input, select, textarea, [contenteditable]")) return;
    e.preventDefault();
    if (loading) {
      queue.push(rel);
      return;
    }
    loading = follow(rel);
  });

  document.addEventListener("htmx:beforeRequest", (e) => {
    if (!e.target.closest || !e.target.closest("#replay")) return;
    loading = true;
    // A step button that had focus is replaced by the swap: give focus back to the new one.
    const active = document.activeElement;
    refocus = active && active.closest && active.closest("#replay") ? active.getAttribute("rel") : null;
  });

  function settled() {
    loading = false;
    if (refocus) {
      const again = document.querySelector(`#replay a[rel="${refocus}"]`);
      if (again) again.focus({ preventScroll: true });
    }
    const rel = queue.shift();
    if (rel) loading = follow(rel);
  }

  document.addEventListener("htmx:afterSettle", settled);
  document.addEventListener("htmx:responseError", settled);
  document.addEventListener("htmx:sendError", settled);
})();
