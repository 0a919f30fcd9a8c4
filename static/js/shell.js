// On every page: install the service worker (/sw.js: the shell kept for repeat visits),
// the share and copy buttons ([data-share], [data-copy]: the text or URL to send), and
// the header's account menu closing on a tap elsewhere or Escape, as menus do.
"use strict";
(function () {
  if ("serviceWorker" in navigator && location.protocol !== "file:") {
    // Once the page has settled: the worker's start and its caching of the shell are
    // the longest tasks of a phone's first seconds otherwise (Lighthouse on a fresh
    // profile), and nothing needs it sooner. notify.js's pushes use the same worker.
    window.addEventListener("load", function () {
      window.setTimeout(function () {
        var idle = window.requestIdleCallback || function (f) { f(); };
        idle(function () {
          navigator.serviceWorker.register("/sw.js").catch(function () {});
        });
      }, 3000);
    });
  }

  function flash(button, text) {
    var status = button.parentElement.querySelector("[data-share-status]");
    if (status) status.textContent = text;
  }

  function closeMenus(except) {
    document.querySelectorAll("details.account-menu[open]").forEach(function (menu) {
      if (menu !== except) menu.open = false;
    });
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "Escape") return;
    var open = document.querySelector("details.account-menu[open]");
    if (!open) return;
    closeMenus(null);
    open.querySelector("summary").focus();
  });

  document.addEventListener("click", function (ev) {
    closeMenus(ev.target.closest("details.account-menu"));
    var share = ev.target.closest("[data-share]");
    if (share) {
      var data = { title: share.dataset.shareTitle || document.title, text: share.dataset.shareText || "", url: share.dataset.share };
      if (navigator.share) {
        navigator.share(data).catch(function () {});
      } else {
        // No Web Share here (most desktops): LINE's own share page takes the link.
        window.open("https://social-plugins.line.me/lineit/share?url=" + encodeURIComponent(data.url), "_blank", "noopener");
      }
      return;
    }
    var copy = ev.target.closest("[data-copy]");
    if (copy) {
      var done = function () { flash(copy, copy.dataset.copied || "Copied"); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(copy.dataset.copy).then(done, function () {});
      } else {
        // Plain http on a LAN: the old way, through a selected text field.
        var field = document.createElement("textarea");
        field.value = copy.dataset.copy;
        field.setAttribute("readonly", "");
        field.style.position = "fixed";
        field.style.opacity = "0";
        document.body.appendChild(field);
        field.select();
        try { if (document.execCommand("copy")) done(); } catch (e) { /* nothing to do */ }
        field.remove();
      }
    }
  });
})();
