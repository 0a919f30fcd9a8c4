// Web Push in the service worker (imported by /sw.js): show what the server
// pushed (social/webpush.py: {"title", "text", "url", "kind", ...}) and open
// its page when the notification is tapped.
self.addEventListener("push", function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (e) {
    data = { text: event.data ? event.data.text() : "" };
  }
  event.waitUntil(
    self.registration.showNotification(data.title || "Spectacular Bid", {
      body: data.text || "",
      tag: data.kind || "sb",
      data: { url: data.url || "/" },
      icon: "/static/favicon.svg",
    })
  );
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = (event.notification.data && event.notification.data.url) || "/";
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (list) {
      for (var i = 0; i < list.length; i++) {
        if ("focus" in list[i]) {
          list[i].navigate(url);
          return list[i].focus();
        }
      }
      return self.clients.openWindow(url);
    })
  );
});
