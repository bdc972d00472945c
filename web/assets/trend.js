// The trend chart: one or several series over commits, drawn with the embedded plotly.js.
// Every string here came from git or a client: it is escaped before plotly renders it, because
// plotly interprets a subset of HTML in hover labels and tick text.
"use strict";
(function () {
  const DARK = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  // Every line at >= 3:1 against its background (WCAG AA for graphics): a lighter set in dark mode.
  const PALETTE = DARK
    ? ["#74a7ff", "#ff8c5a", "#5fd17a", "#d08bf0", "#ff7aa8", "#3fc8dc", "#a3d65c", "#ffb347",
       "#9aa8ff", "#ff6b8e", "#4fd1a5", "#ced4da", "#e599f7", "#74c0fc", "#ff8787", "#8ce99a"]
    : ["#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#5c940d", "#b35c00",
       "#364fc7", "#a61e4d", "#087f5b", "#495057", "#9c36b5", "#1864ab", "#c92a2a", "#2f9e44"];
  const BAD = DARK ? "#ff8a80" : "#c62828", GOOD = DARK ? "#69db7c" : "#2e7d32";
  const NEUTRAL = DARK ? "#adb5bd" : "#5c6670";
  const params = new URLSearchParams(window.location.search);
  function esc(s) {
    return String(s == null ? "" : s).replace(/&/g, "&amp;").replace(/</g, "&lt;")
      .replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function alpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }
  function fmt(v) {
    if (v == null || !isFinite(v)) return "–";
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(2) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return v.toFixed(0);
    if (a >= 100) return v.toFixed(1);
    if (a >= 1) return v.toFixed(3);
    return v.toPrecision(3);
  }

  // Memory in binary units: the values are scaled to the largest unit that keeps them >= 1.
  function byteScale(data) {
    if (data.unit !== "bytes") return { div: 1, unit: data.unit };
    let max = 0;
    data.series.forEach(function (s) {
      s.points.forEach(function (p) { max = Math.max(max, Math.abs(p.spread.max)); });
    });
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let u = 0;
    while (u < units.length - 1 && max >= Math.pow(1024, u + 1)) u++;
    return { div: Math.pow(1024, u), unit: units[u] };
  }
  function scaled(data, div) {
    if (div === 1) return data;
    data.series.forEach(function (s) {
      s.points.forEach(function (p) {
        p.median /= div;
        ["min", "q1", "q3", "max"].forEach(function (k) { p.spread[k] /= div; });
      });
      s.change_points.forEach(function (c) { c.before /= div; c.after /= div; });
    });
    return data;
  }
  // The y-axis fits the medians and their IQR band over the x window [a, b] (category indices),
  // with a margin; whiskers beyond it are clipped by the axis and marked at its edge (docs/WEB.md,
  // "The chart"). A min-max axis would squeeze a 3x step of the median into the bottom of the
  // plot whenever one repetition was slow.
  function yRange(data, a, b) {
    let lo = Infinity, hi = -Infinity;
    data.series.forEach(function (s) {
      s.points.forEach(function (p, i) {
        const xi = s.x[i];
        if (xi < a || xi > b) return;
        lo = Math.min(lo, p.median, p.spread.q1);
        hi = Math.max(hi, p.median, p.spread.q3);
      });
    });
    if (!isFinite(lo)) return null;
    const pad = Math.max(0.08 * (hi - lo), 0.01 * Math.max(Math.abs(hi), Math.abs(lo)), 1e-12);
    return [lo - pad, hi + pad];
  }
  // Markers at the axis edges for the whiskers the range clips: one trace per edge.
  function clippedTraces(data, labels, r) {
    const up = { x: [], y: [] }, down = { x: [], y: [] };
    data.series.forEach(function (s) {
      s.points.forEach(function (p, i) {
        if (p.spread.max > r[1]) { up.x.push(labels[s.x[i]]); up.y.push(r[1]); }
        if (p.spread.min < r[0]) { down.x.push(labels[s.x[i]]); down.y.push(r[0]); }
      });
    });
    const mk = function (pts, symbol) {
      return { x: pts.x, y: pts.y, mode: "markers", name: "whisker beyond the axis",
               legendgroup: "clipped", showlegend: false, hoverinfo: "skip", cliponaxis: false,
               marker: { symbol: symbol, size: 8, color: NEUTRAL } };
    };
    const out = [];
    if (up.x.length) out.push(mk(up, "triangle-up-open"));
    if (down.x.length) out.push(mk(down, "triangle-down-open"));
    if (out.length) out[0].showlegend = true;
    return out;
  }

  // The category index of commit `sha` (a full SHA or a prefix) in the drawn axis, -1 if absent.
  function atIndex(data, labels, sha) {
    if (!sha) return -1;
    for (let si = 0; si < data.series.length; si++) {
      const s = data.series[si];
      for (let i = 0; i < s.points.length; i++)
        if (s.points[i].commit && s.points[i].commit.indexOf(sha) === 0) return s.x[i];
    }
    return -1;
  }

  // The URL keeps the view: ?from=SHA&to=SHA (zoom), ?last=N (window), besides metric, branch, ids.
  function setParams(changes) {
    const q = new URLSearchParams(window.location.search);
    Object.keys(changes).forEach(function (k) {
      if (changes[k] == null) q.delete(k); else q.set(k, changes[k]);
    });
    const url = window.location.pathname + (q.toString() ? "?" + q.toString() : "");
    window.history.replaceState(null, "", url);
    // Links to other metrics and branches carry the zoom along.
    document.querySelectorAll("a[data-keep-view]").forEach(function (a) {
      const u = new URL(a.href, window.location.href);
      ["from", "to", "last"].forEach(function (k) {
        if (q.has(k)) u.searchParams.set(k, q.get(k)); else u.searchParams.delete(k);
      });
      a.href = u.pathname + u.search;
    });
  }

  function draw(data) {
    const el = document.getElementById("chart");
    const scale = byteScale(data);
    data = scaled(data, scale.div);
    data.unit = scale.unit;
    const labels = data.axis.map(function (a) { return a.label; });
    const traces = [];
    const shapes = [];
    const annotations = [];
    const single = data.series.length === 1;
    let drawn = 0;
    data.series.forEach(function (s, si) {
      const color = PALETTE[si % PALETTE.length];
      const x = s.x.map(function (i) { return labels[i]; });
      const med = s.points.map(function (p) { return p.median; });
      const name = esc(s.name);
      // IQR band: q3 then q1 filled up to it.
      traces.push({ x: x, y: s.points.map(function (p) { return p.spread.q3; }), mode: "lines",
                    line: { width: 0, color: color }, hoverinfo: "skip", showlegend: false,
                    legendgroup: "s" + si, name: name + " q3" });
      traces.push({ x: x, y: s.points.map(function (p) { return p.spread.q1; }), mode: "lines",
                    line: { width: 0, color: color }, fill: "tonexty",
                    fillcolor: alpha(color, 0.18), hoverinfo: "skip", showlegend: false,
                    legendgroup: "s" + si, name: name + " IQR" });
      const device = s.env && s.env.device ? s.env.device : "";
      const custom = s.points.map(function (p, i) {
        const parent = i > 0 ? s.points[i - 1].commit : null;
        return [esc(p.commit ? p.commit.slice(0, 12) : "(no commit)"), esc(p.subject),
                esc(p.time), p.run_id, fmt(p.spread.q1), fmt(p.spread.q3), fmt(p.spread.min),
                fmt(p.spread.max), p.spread.n, fmt(p.median),
                p.commit && parent ? "/compare?base=" + encodeURIComponent(parent) + "&head=" +
                  encodeURIComponent(p.commit) + (device ? "&device=" + encodeURIComponent(device) : "")
                  : "/runs/" + p.run_id];
      });
      traces.push({
        x: x, y: med, mode: "lines+markers", name: name, legendgroup: "s" + si,
        line: { color: color, width: 2 }, marker: { color: color, size: 7 },
        error_y: { type: "data", symmetric: false, thickness: 1, width: 0,
                   // Faded, yet >= 3:1 against the dark card too.
                   color: alpha(color, DARK ? 0.75 : 0.45),
                   array: s.points.map(function (p) { return p.spread.max - p.median; }),
                   arrayminus: s.points.map(function (p) { return p.median - p.spread.min; }) },
        customdata: custom,
        hovertemplate: "<b>%{customdata[0]}</b> %{customdata[1]}<br>%{customdata[2]}<br>" +
          "median %{customdata[9]} " + esc(data.unit) + "  IQR %{customdata[4]}–%{customdata[5]}" +
          "  range %{customdata[6]}–%{customdata[7]}  n=%{customdata[8]}<br>run %{customdata[3]}" +
          "<br>" + esc(s.env_text) + "<br><i>click: compare with the commit before</i>" +
          "<extra>" + (single ? "" : name) + "</extra>"
      });
      drawn += s.points.length;
      ["regression", "improvement"].forEach(function (kind) {
        const idx = [];
        s.points.forEach(function (p, i) { if (p.flag === kind) idx.push(i); });
        if (!idx.length) return;
        traces.push({ x: idx.map(function (i) { return x[i]; }),
                      y: idx.map(function (i) { return med[i]; }), mode: "markers",
                      name: kind === "regression" ? "flagged regression" : "flagged improvement",
                      legendgroup: kind, showlegend: true, hoverinfo: "skip",
                      marker: { symbol: kind === "regression" ? "triangle-up" : "triangle-down",
                                size: 15, color: kind === "regression" ? BAD : GOOD,
                                line: { width: 1, color: DARK ? "#111418" : "#fff" } } });
      });
      // Each alert's triage state under its first bad commit, with who and why on hover.
      (s.alerts || []).forEach(function (a) {
        const i = s.points.findIndex(function (p) { return p.commit === a.commit; });
        if (i < 0) return;
        const last = a.events.length ? a.events[a.events.length - 1] : null;
        const why = a.fixed_by ? "detected: back to its old level from " + a.fixed_by.slice(0, 10)
          : last ? last.author + (last.reason ? ": " + last.reason : "") : "not triaged yet";
        const open = a.state === "open" || a.state === "acknowledged";
        annotations.push({ x: x[i], xref: "x", y: med[i], yref: "y", ax: 0, ay: 30,
                           showarrow: true, arrowhead: 0, arrowcolor: open ? BAD : NEUTRAL,
                           font: { size: 11, color: open ? BAD : NEUTRAL },
                           text: "alert: " + esc(a.state), hovertext: esc(a.state + " — " + why) });
      });
      s.change_points.forEach(function (c, ci) {
        const xi = s.x[c.index];
        const bad = c.direction === "regression";
        const col = c.flagged ? (bad ? BAD : GOOD) : NEUTRAL;
        shapes.push({ type: "line", xref: "x", yref: "paper", x0: xi - 0.5, x1: xi - 0.5, y0: 0,
                      y1: 1, line: { color: col, width: 1.5, dash: "dash" } });
        // Labels of overlaid series stack instead of overprinting.
        annotations.push({ x: xi - 0.5, xref: "x", y: 1 + 0.06 * (si % 4), yref: "paper",
                           yanchor: "bottom", showarrow: false, font: { color: col, size: 11 },
                           text: (c.relative >= 0 ? "+" : "") + (100 * c.relative).toFixed(1) + "%",
                           hovertext: esc("change point at " + (c.commit || "").slice(0, 12) +
                                          ": " + fmt(c.before) + " → " + fmt(c.after) +
                                          " (p=" + c.p_value.toPrecision(2) + ")") });
      });
    });
    // Environment changes (driver, CUDA, LibTorch...): the same cell continues in another series.
    (data.env_changes || []).forEach(function (e) {
      if (!single || !data.series[0].points.length) return;
      const n = data.series[0].points.length;
      const xi = data.series[0].x[Math.min(e.at_index, n - 1)] + (e.at_index >= n ? 0.5 : -0.5);
      shapes.push({ type: "line", xref: "x", yref: "paper", x0: xi, x1: xi, y0: 0, y1: 1,
                    line: { color: NEUTRAL, width: 1, dash: "dot" } });
      annotations.push({ x: xi, xref: "x", y: 0, yref: "paper", yanchor: "bottom",
                         xanchor: "left", showarrow: false, font: { color: NEUTRAL, size: 11 },
                         text: esc("environment: " + e.what),
                         hovertext: esc((e.before ? "earlier" : "later") + " history in series " +
                                        e.series_id) });
    });
    const n = labels.length;
    const last = Number(params.get("last")) || 200;
    let range = n > last ? [n - last - 0.5, n - 0.5] : undefined;
    const from = labels.indexOf(params.get("from")), to = labels.indexOf(params.get("to"));
    if (from >= 0 && to >= from) range = [from - 0.5, to + 0.5];
    // ?at=SHA (an alert's link): the window always holds that commit, with some history before it.
    const at = atIndex(data, labels, params.get("at"));
    if (at >= 0 && range && (at < range[0] || at > range[1]))
      range = [Math.max(0, at - 20) - 0.5, range[1] < at ? Math.min(n - 1, at + 20) + 0.5 : range[1]];
    if (at >= 0) {
      shapes.push({ type: "rect", xref: "x", yref: "paper", x0: at - 0.5, x1: at + 0.5, y0: 0,
                    y1: 1, line: { width: 0 }, fillcolor: alpha(NEUTRAL, 0.15), layer: "below" });
      perfgate.trend.at = at;
    }
    const yr = yRange(data, range ? range[0] : -1, range ? range[1] : n);
    if (yr) clippedTraces(data, labels, yr).forEach(function (t) { traces.push(t); });
    perfgate.trend.window = range ? [range[0] + 0.5, range[1] - 0.5] : [0, n - 1];
    perfgate.trend.yRange = yr;
    // Grid lines at >= 3:1 against the card in dark mode (WCAG AA for graphics; the browser test
    // measures them). Light mode keeps faint lines: there the data lines carry the contrast.
    const grid = DARK ? "#66707c" : "#e1e5ea";
    const layout = {
      margin: { l: 60, r: 20, t: 30 + 14 * Math.min(3, data.series.length - 1), b: 60 },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { color: DARK ? "#e6e9ed" : "#1b1f24" },
      xaxis: { type: "category", categoryorder: "array", categoryarray: labels, range: range,
               title: { text: "commit (history order)" }, tickangle: -45, automargin: true,
               // Thinned: about one label per 40 px of width, so SHAs never overprint.
               nticks: Math.max(4, Math.floor((el.clientWidth || 800) / 40)),
               gridcolor: grid, linecolor: NEUTRAL },
      yaxis: { title: { text: esc(data.label + " (" + data.unit + ")") }, zeroline: false,
               automargin: true, gridcolor: grid, linecolor: NEUTRAL,
               range: yr || undefined, autorange: yr ? false : true },
      hovermode: "closest", dragmode: "zoom", showlegend: !single || traces.length > 3,
      legend: { orientation: "h", y: -0.25 }, shapes: shapes, annotations: annotations,
      hoverlabel: DARK ? { bgcolor: "#1c2127", font: { color: "#e6e9ed" } } : undefined,
      modebar: { bgcolor: "rgba(0,0,0,0)", color: NEUTRAL, activecolor: DARK ? "#e6e9ed" : "#1b1f24" }
    };
    // The modebar keeps what works offline: zoom, pan, reset, PNG download. No sharing (it would
    // post the figure to an outside service), no lasso or box select (nothing uses a selection).
    Plotly.newPlot(el, traces, layout, {
      responsive: true, displaylogo: false, scrollZoom: true, showSendToCloud: false,
      showEditInChartStudio: false, showLink: false,
      modeBarButtonsToRemove: ["sendDataToCloud", "lasso2d", "select2d", "autoScale2d",
                               "hoverClosestCartesian", "hoverCompareCartesian",
                               "toggleSpikelines"] });
    el.on("plotly_click", function (ev) {
      const p = ev.points && ev.points[0];
      if (p && p.customdata && p.customdata[10]) window.location.href = p.customdata[10];
    });
    el.on("plotly_relayout", function (ev) {
      if (ev["xaxis.autorange"]) { setParams({ from: null, to: null, last: "all" }); return; }
      const r0 = ev["xaxis.range[0]"], r1 = ev["xaxis.range[1]"];
      if (r0 == null || r1 == null) return;
      const a = Math.max(0, Math.ceil(r0)), b = Math.min(n - 1, Math.floor(r1));
      if (b >= a) setParams({ from: labels[a], to: labels[b] });
      // A zoom in x fits y to the medians and IQR of what is now shown (not to the whiskers).
      const fit = yRange(data, a, b);
      if (fit && ev["yaxis.range[0]"] == null) Plotly.relayout(el, { "yaxis.range": fit });
    });
    perfgate.trend.pointsDrawn = drawn;
    perfgate.trend.series = data.series.length;
    document.body.setAttribute("data-chart-ready", "1");
  }

  // plotly.js is loaded here, not from the page head: after the first paint, and only once the
  // chart is (about to be) on screen. The page's text and tables never wait for the 4.8 MB bundle.
  function loadPlotly(src) {
    return new Promise(function (resolve, reject) {
      if (window.Plotly) { resolve(); return; }
      const s = document.createElement("script");
      s.src = src;
      s.async = true;
      s.onload = resolve;
      s.onerror = function () { reject(new Error("cannot load " + src)); };
      document.head.appendChild(s);
    });
  }
  function whenVisible(el, then) {
    if (!("IntersectionObserver" in window)) { then(); return; }
    const io = new IntersectionObserver(function (entries) {
      if (!entries.some(function (e) { return e.isIntersecting; })) return;
      io.disconnect();
      then();
    }, { rootMargin: "300px" });
    io.observe(el);
  }
  document.addEventListener("DOMContentLoaded", function () {
    const data = perfgate.data("trend-data");
    const el = document.getElementById("chart");
    if (!data || !el) return;
    perfgate.trend = { requested: false };
    // Two frames: the first paint happens before the bundle is even requested.
    requestAnimationFrame(function () {
      setTimeout(function () {
        whenVisible(el, function () {
          perfgate.trend.requested = true;
          loadPlotly(el.getAttribute("data-plotly")).then(function () {
            el.textContent = "";
            draw(data);
          }, function (e) {
            el.textContent = "The chart library could not be loaded (" + e.message + "); the " +
              "tables below and the JSON twin hold the same data.";
          });
        });
      }, 0);
    });
  });
})();
