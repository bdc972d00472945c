// Triage buttons: the regressions page's (POST /api/v1/regressions) and the compare page's
// accepted slowdowns (POST /api/v1/acceptances), with a credential that may triage -- a token
// typed once (kept in this tab's sessionStorage only), or none at all behind an SSO proxy that
// names the user -- then reload. The server records the event under the credential's name; the
// page only shows it (GET /api/v1/whoami), it never sends one.
"use strict";
(function () {
  document.addEventListener("DOMContentLoaded", function () {
    const form = document.getElementById("triage-auth");
    if (!form) return;
    const token = form.elements.token;
    const who = document.getElementById("triage-who");
    const status = document.getElementById("triage-status");
    let identity = null;
    token.value = sessionStorage.getItem("perfgate.token") || "";
    form.addEventListener("submit", function (e) { e.preventDefault(); });

    function authHeaders() {
      const h = { "Content-Type": "application/json" };
      if (token.value) h["Authorization"] = "Bearer " + token.value;
      return h;
    }
    // Who the server takes this tab for: the token's name, the proxy's user, or nobody.
    function lookUp() {
      return fetch("/api/v1/whoami", { headers: authHeaders(), cache: "no-store" })
        .then(function (r) {
          return r.json().then(function (j) {
            identity = r.ok && j.name ? j : null;
            if (identity) {
              who.textContent = identity.name + (identity.may_triage ? "" : " (may not triage)");
              // Signed in by the proxy: there is nothing to type.
              document.getElementById("triage-token").hidden = identity.via === "header" && !token.value;
              if (token.value) sessionStorage.setItem("perfgate.token", token.value);
            } else {
              who.textContent = r.ok ? "nobody yet" : "nobody: " + (j.error || ("HTTP " + r.status));
            }
          });
        })
        .catch(function () { identity = null; who.textContent = "nobody yet"; });
    }
    token.addEventListener("change", lookUp);
    lookUp();

    // A stored gate's age, in words, from its time (the page itself is cached between writes).
    document.querySelectorAll("time.age").forEach(function (t) {
      const s = (Date.now() - Date.parse(t.getAttribute("datetime"))) / 1000;
      if (!(s >= 0)) return;
      const [n, unit] = s < 3600 ? [Math.floor(s / 60), "minute"] : s < 86400 ?
        [Math.floor(s / 3600), "hour"] : [Math.floor(s / 86400), "day"];
      t.title = t.textContent;
      t.textContent = s < 60 ? "just now" : n + " " + unit + (n === 1 ? "" : "s") + " ago";
    });
    // Accepted slowdowns (the compare page): accept a stored gate's regressions, or revoke.
    function postAcceptance(body) {
      if (!identity && !token.value) {
        status.textContent = "Give a triage token first.";
        token.focus();
        return;
      }
      if (token.value) sessionStorage.setItem("perfgate.token", token.value);
      status.textContent = "saving…";
      fetch("/api/v1/acceptances", { method: "POST", headers: authHeaders(), body: JSON.stringify(body) })
        .then(function (r) {
          return r.json().then(function (j) {
            if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
            window.location.reload();
          });
        }).catch(function (err) { status.textContent = "not saved: " + err.message; });
    }
    const accept = document.getElementById("accept-form");
    if (accept) {
      accept.addEventListener("submit", function (e) {
        e.preventDefault();
        const reason = accept.elements.reason.value.trim();
        if (!reason) { status.textContent = "Accepting needs a reason."; accept.elements.reason.focus(); return; }
        postAcceptance({ gate_id: Number(accept.getAttribute("data-gate")), reason: reason });
      });
    }
    document.querySelectorAll("button[data-revoke]").forEach(function (b) {
      b.addEventListener("click", function () {
        const reason = window.prompt("Why does this acceptance no longer hold?");
        if (reason === null) return;
        if (!reason.trim()) { status.textContent = "Revoking needs a reason."; return; }
        postAcceptance({ revoke: Number(b.getAttribute("data-revoke")), reason: reason.trim() });
      });
    });

    document.querySelectorAll("td.triage button").forEach(function (b) {
      b.addEventListener("click", function () {
        const row = b.closest("tr");
        const reasonInput = row.querySelector("input[name=reason]");
        const reason = reasonInput ? reasonInput.value.trim() : "";
        const action = b.getAttribute("data-action");
        if (!identity && !token.value) {
          status.textContent = "Give a triage token first.";
          token.focus();
          return;
        }
        if (action === "dismiss" && !reason) {
          status.textContent = "Dismissing needs a reason.";
          if (reasonInput) reasonInput.focus();
          return;
        }
        if (token.value) sessionStorage.setItem("perfgate.token", token.value);
        status.textContent = "saving…";
        fetch("/api/v1/regressions", {
          method: "POST",
          headers: authHeaders(),
          body: JSON.stringify(Object.assign(row.hasAttribute("data-gate") ?
            { gate_id: Number(row.getAttribute("data-gate")) } :
            { series_id: Number(row.getAttribute("data-series")),
              commit: row.getAttribute("data-commit") },
            { action: action, reason: reason }))
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
