// Follows the transcript: each "line" event carries the HTML of one new
// transcript line, rendered by the server; a tool's result is moved into
// its call when that is on the page. No inline script: the CSP forbids it.
(function () {
  "use strict";
  var log = document.getElementById("log");
  if (!log) return;
  var nearEnd = function () {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
  };
  window.scrollTo(0, document.body.scrollHeight);
  if (!window.EventSource || !log.dataset.events) return;
  var src = new EventSource(log.dataset.events);
  src.addEventListener("line", function (e) {
    var follow = nearEnd();
    var t = document.createElement("template");
    t.innerHTML = e.data;
    t.content.querySelectorAll("[data-for]").forEach(function (r) {
      var host = document.getElementById("r-" + r.dataset.for);
      if (host) host.appendChild(r);
    });
    log.appendChild(t.content);
    if (follow) window.scrollTo(0, document.body.scrollHeight);
  });
  src.addEventListener("end", function () { src.close(); });
  src.addEventListener("reload", function () { src.close(); window.location.reload(); });
})();
