// The regressions page's triage buttons: POST /api/v1/regressions with the ingest token (kept in
// this tab's sessionStorage only) and the author's name (localStorage), then reload.
"use strict";
(function () {
  document.addEventListener("DOMContentLoaded", function () {
    const form = document.getElementById("triage-auth");
    if (!form) return;
    const author = form.elements.author, token = form.elements.token;
    const status = document.getElementById("triage-status");
    author.value = localStorage.getItem("perfgate.author") || "";
    token.value = sessionStorage.getItem("perfgate.token") || "";
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    // A stored gate's age, in words, from its time (the page itself is cached between writes).
    document.querySelectorAll("time.age").forEach(function (t) {
      const s = (Date.now() - Date.parse(t.getAttribute("datetime"))) / 1000;
      if (!(s >= 0)) return;
      const [n, unit] = s < 3600 ? [Math.floor(s / 60), "minute"] : s < 86400 ?
        [Math.floor(s / 3600), "hour"] : [Math.floor(s / 86400), "day"];
      t.title = t.textContent;
      t.textContent = s < 60 ? "just now" : n + " " + unit + (n === 1 ? "" : "s") + " ago";
    });
    document.querySelectorAll("td.triage button").forEach(function (b) {
      b.addEventListener("click", function () {
        const row = b.closest("tr");
        const reasonInput = row.querySelector("input[name=reason]");
        const reason = reasonInput ? reasonInput.value.trim() : "";
        const action = b.getAttribute("data-action");
        if (!author.value.trim() || !token.value) {
          status.textContent = "Give your name and the ingest token first.";
          (author.value.trim() ? token : author).focus();
          return;
        }
        if (action === "dismiss" && !reason) {
          status.textContent = "Dismissing needs a reason.";
          if (reasonInput) reasonInput.focus();
          return;
        }
        localStorage.setItem("perfgate.author", author.value.trim());
        sessionStorage.setItem("perfgate.token", token.value);
        status.textContent = "saving…";
        fetch("/api/v1/regressions", {
          method: "POST",
          headers: { "Content-Type": "application/json", "Authorization": "Bearer " + token.value },
          body: JSON.stringify(Object.assign(row.hasAttribute("data-gate") ?
            { gate_id: Number(row.getAttribute("data-gate")) } :
            { series_id: Number(row.getAttribute("data-series")),
              commit: row.getAttribute("data-commit") },
            { action: action, author: author.value.trim(), reason: reason }))
        }).then(function (r) {
          return r.json().then(function (j) {
            if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
            window.location.reload();
          });
        }).catch(function (err) { status.textContent = "not saved: " + err.message; });
      });
    });
  });
})();
