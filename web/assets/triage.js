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
    // One write with this tab's credential, then the page again (it is rendered from the store).
    function post(url, body) {
      if (!identity && !token.value) {
        status.textContent = "Give a triage token first.";
        token.focus();
        return;
      }
      if (token.value) sessionStorage.setItem("perfgate.token", token.value);
      status.textContent = "saving…";
      fetch(url, { method: "POST", headers: authHeaders(), body: JSON.stringify(body) })
        .then(function (r) {
          return r.json().then(function (j) {
            if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
            window.location.reload();
          });
        }).catch(function (err) { status.textContent = "not saved: " + err.message; });
    }
    // Accepted slowdowns (the compare page): accept a stored gate's regressions, or revoke.
    function postAcceptance(body) { post("/api/v1/acceptances", body); }
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

    // A dismissal needs a reason: false (and the reason box focused) when it has none.
    function reasonGiven(action, reason, input) {
      if (action !== "dismiss" || reason) return true;
      status.textContent = "Dismissing needs a reason.";
      if (input) input.focus();
      return false;
    }
    document.querySelectorAll("td.triage button").forEach(function (b) {
      b.addEventListener("click", function () {
        const row = b.closest("tr");
        const reasonInput = row.querySelector("input[name=reason]");
        const reason = reasonInput ? reasonInput.value.trim() : "";
        const action = b.getAttribute("data-action");
        if (!reasonGiven(action, reason, reasonInput)) return;
        if (row.hasAttribute("data-group"))  // every member of the group, in one write
          return post("/api/v1/regression-groups",
                      { commits: [row.getAttribute("data-group")], action: action, reason: reason });
        post("/api/v1/regressions", Object.assign(row.hasAttribute("data-gate") ?
          { gate_id: Number(row.getAttribute("data-gate")) } :
          { series_id: Number(row.getAttribute("data-series")),
            commit: row.getAttribute("data-commit") },
          { action: action, reason: reason }));
      });
    });

    // Alert groups: filters and sort (kept in the URL's hash), and the bulk bar on a selection.
    const groups = document.getElementById("alert-groups");
    const controls = document.getElementById("group-controls");
    if (groups && controls) {
      const body = groups.tBodies[0];
      const rows = Array.from(body.rows);
      function apply() {
        const f = controls.elements;
        const minSize = parseFloat(f.min_size.value), minCells = parseInt(f.min_cells.value, 10);
        const maxAge = f.max_age_days.value === "" ? -1 : parseFloat(f.max_age_days.value);
        rows.forEach(function (r) {
          const st = r.getAttribute("data-state"), open = st === "open" || st === "acknowledged";
          let show = f.state.value === "all" || (f.state.value === "open") === open;
          if (f.device.value && r.getAttribute("data-devices").split("|").indexOf(f.device.value) < 0)
            show = false;
          if (f.branch.value && r.getAttribute("data-branches").split("|").indexOf(f.branch.value) < 0)
            show = false;
          if (minSize > 0 && 100 * Number(r.getAttribute("data-worst")) < minSize) show = false;
          if (minCells > 0 && Number(r.getAttribute("data-cells")) < minCells) show = false;
          if (maxAge >= 0 && Date.now() - Date.parse(r.getAttribute("data-time")) > maxAge * 864e5)
            show = false;
          r.hidden = !show;
          if (!show) r.querySelector("input.pick").checked = false;
        });
        const key = { worst: "data-worst", cells: "data-cells", age: "data-time" }[f.sort.value];
        const sorted = rows.slice().sort(function (a, b) {
          const x = a.getAttribute(key), y = b.getAttribute(key);
          return key === "data-time" ? (y < x ? -1 : y > x ? 1 : 0) : Number(y) - Number(x);
        });
        // Rows move only when the order changes: a row taken out of the page between a button's
        // mousedown and mouseup (a filter's change event fires as the click blurs it) loses the
        // click.
        if (sorted.some(function (r, i) { return body.rows[i] !== r; }))
          sorted.forEach(function (r) { body.appendChild(r); });
        const shown = rows.filter(function (r) { return !r.hidden; }).length;
        document.getElementById("groups-shown").textContent = shown + " of " + rows.length;
        const params = new URLSearchParams();
        ["state", "device", "branch", "min_size", "min_cells", "max_age_days", "sort"].forEach(function (n) {
          if (f[n].value && f[n].value !== f[n].getAttribute("data-default")) params.set(n, f[n].value);
        });
        history.replaceState(null, "", params.toString() ? "#" + params.toString() : location.pathname);
      }
      const start = new URLSearchParams(location.hash.slice(1));
      start.forEach(function (v, n) { if (controls.elements[n]) controls.elements[n].value = v; });
      controls.addEventListener("input", apply);
      controls.addEventListener("change", apply);
      controls.addEventListener("submit", function (e) { e.preventDefault(); });
      apply();
      document.querySelectorAll("button[data-bulk]").forEach(function (b) {
        b.addEventListener("click", function () {
          const picked = rows.filter(function (r) { return !r.hidden && r.querySelector("input.pick").checked; });
          if (!picked.length) { status.textContent = "Select a group first."; return; }
          const input = document.getElementById("bulk-reason");
          const action = b.getAttribute("data-bulk"), reason = input.value.trim();
          if (!reasonGiven(action, reason, input)) return;
          post("/api/v1/regression-groups", {
            commits: picked.map(function (r) { return r.getAttribute("data-group"); }),
            action: action, reason: reason });
        });
      });
    }
  });
})();
