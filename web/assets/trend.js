// The trend chart: one or several series over commits, drawn with the embedded plotly.js.
// Every string here came from git or a client: it is escaped before plotly renders it, because
// plotly interprets a subset of HTML in hover labels and tick text.
"use strict";
(function () {
  const PALETTE = ["#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#5c940d",
                   "#e67700", "#364fc7", "#a61e4d", "#087f5b", "#495057", "#9c36b5", "#1864ab",
                   "#c92a2a", "#2f9e44"];
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

  function draw(data) {
    const el = document.getElementById("chart");
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
      const custom = s.points.map(function (p) {
        return [esc(p.commit ? p.commit.slice(0, 12) : "(no commit)"), esc(p.subject),
                esc(p.time), p.run_id, fmt(p.spread.q1), fmt(p.spread.q3), fmt(p.spread.min),
                fmt(p.spread.max), p.spread.n, fmt(p.median)];
      });
      traces.push({
        x: x, y: med, mode: "lines+markers", name: name, legendgroup: "s" + si,
        line: { color: color, width: 2 }, marker: { color: color, size: 7 },
        error_y: { type: "data", symmetric: false, thickness: 1, width: 0, color: alpha(color, 0.45),
                   array: s.points.map(function (p) { return p.spread.max - p.median; }),
                   arrayminus: s.points.map(function (p) { return p.median - p.spread.min; }) },
        customdata: custom,
        hovertemplate: "<b>%{customdata[0]}</b> %{customdata[1]}<br>%{customdata[2]}<br>" +
          "median %{customdata[9]} " + esc(data.unit) + "  IQR %{customdata[4]}–%{customdata[5]}" +
          "  range %{customdata[6]}–%{customdata[7]}  n=%{customdata[8]}<br>run %{customdata[3]}" +
          "<br>" + esc(s.env_text) + "<extra>" + (single ? "" : name) + "</extra>"
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
                                size: 15, color: kind === "regression" ? "#c62828" : "#2e7d32",
                                line: { width: 1, color: "#fff" } } });
      });
      s.change_points.forEach(function (c) {
        const xi = s.x[c.index];
        const bad = c.direction === "regression";
        const col = c.flagged ? (bad ? "#c62828" : "#2e7d32") : "#868e96";
        shapes.push({ type: "line", xref: "x", yref: "paper", x0: xi - 0.5, x1: xi - 0.5, y0: 0,
                      y1: 1, line: { color: col, width: 1.5, dash: "dash" } });
        annotations.push({ x: xi - 0.5, xref: "x", y: 1, yref: "paper", yanchor: "bottom",
                           showarrow: false, font: { color: col, size: 11 },
                           text: (c.relative >= 0 ? "+" : "") + (100 * c.relative).toFixed(1) + "%",
                           hovertext: esc("change point at " + (c.commit || "").slice(0, 12) +
                                          ": " + fmt(c.before) + " → " + fmt(c.after) +
                                          " (p=" + c.p_value.toPrecision(2) + ")") });
      });
    });
    const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    const layout = {
      margin: { l: 60, r: 20, t: 30, b: 60 },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { color: dark ? "#e6e9ed" : "#1b1f24" },
      xaxis: { type: "category", categoryorder: "array", categoryarray: labels,
               title: { text: "commit (history order)" }, tickangle: -45, automargin: true },
      yaxis: { title: { text: esc(data.label + " (" + data.unit + ")") }, zeroline: false,
               automargin: true },
      hovermode: "closest", dragmode: "zoom", showlegend: !single || traces.length > 3,
      legend: { orientation: "h", y: -0.25 }, shapes: shapes, annotations: annotations
    };
    Plotly.newPlot(el, traces, layout, { responsive: true, displaylogo: false, scrollZoom: true });
    el.on("plotly_click", function (ev) {
      const p = ev.points && ev.points[0];
      if (p && p.customdata && p.customdata[3] != null) window.location.href = "/runs/" + p.customdata[3];
    });
    perfgate.trend = { pointsDrawn: drawn, series: data.series.length };
    document.body.setAttribute("data-chart-ready", "1");
  }

  document.addEventListener("DOMContentLoaded", function () {
    const data = perfgate.data("trend-data");
    if (data) draw(data);
  });
})();
