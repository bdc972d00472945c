"""Contrast of every line the trend chart draws (grid lines, axes, data lines, whiskers, change
point markers) against the card behind it, composited as the browser would: WCAG 2.1 asks
>= 3:1 for graphics that carry meaning (1.4.11). Used by browser_test.py in dark mode."""

CHART_LINES_JS = """() => {
  const rgba = s => { const m = (s.match(/[\\d.]+/g) || []).map(Number);
    return m.length >= 3 ? [m[0], m[1], m[2], m.length > 3 ? m[3] : 1] : null; };
  const lum = c => { const v = c.slice(0, 3).map(x => { x /= 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const card = rgba(getComputedStyle(document.getElementById('chart').closest('.card')).backgroundColor);
  const groups = { grid: '.gridlayer path', axis: '.xlines-above, .ylines-above, .zl',
                   lines: '.scatterlayer .js-line', whiskers: '.errorbar path',
                   shapes: '.shapelayer path' };
  const out = [];
  for (const [what, sel] of Object.entries(groups)) {
    document.querySelectorAll('#chart ' + sel).forEach(el => {
      const st = getComputedStyle(el);
      const c = rgba(st.stroke);
      if (!c || st.stroke === 'none' || parseFloat(st.strokeWidth) === 0) return;
      const a = c[3] * parseFloat(st.strokeOpacity || 1);
      if (a === 0) return;
      const mixed = [0, 1, 2].map(i => c[i] * a + card[i] * (1 - a));
      const f = lum(mixed), b = lum(card);
      out.push({ what: what + ' ' + st.stroke, ratio: (Math.max(f, b) + 0.05) / (Math.min(f, b) + 0.05) });
    });
  }
  return out;
}"""


def chart_line_contrast(page):
    """[(what, ratio)] of every stroked line in #chart; the caller checks >= 3."""
    return [(r["what"], r["ratio"]) for r in page.evaluate(CHART_LINES_JS)]
