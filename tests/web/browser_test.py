#!/usr/bin/env python3
"""Browser test of the perfgate dashboard: Debian's chromium driven by playwright, against a real
`perfgate serve` on loopback over a database written by web_seed.

Checks: the trend chart draws one point per main-branch commit (feature branches are a filter);
hovering a point shows its SHA; clicking a point opens the compare of its commit with its parent,
whose cells lead back to the trend; the zoom lands in the URL; the compare table sorts on a header
click; a regression is acknowledged from the regressions page; every badge and button reaches
WCAG AA contrast in dark mode (ratios computed from the computed styles), and every chart line
(grid, axes, data, whiskers, change points) reaches 3:1 there; a 1,000-commit series
draws with thinned tick labels; hostile subjects stay text; no page logs a console error. Load
times are printed (docs/PERFORMANCE.md). Screenshots go to --out (phone, desktop and 4K), and with
--publish DIR also to DIR (docs/screenshots).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

from chart_contrast import chart_line_contrast
from browser_checks import FAILURES, browser_test_args, check, get_json
from serve_process import start_server

TIMINGS = {}


# Contrast of every badge and button against its own background (WCAG relative luminance).
CONTRAST_JS = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = c => { const v = c.slice(0, 3).map(x => { x /= 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const bgOf = el => { for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c; }
    return rgb(getComputedStyle(document.body).backgroundColor); };
  return Array.from(document.querySelectorAll('.badge, button, .button, .seg a.active'))
    .filter(el => el.offsetParent !== null && el.textContent.trim() !== '').map(el => {
      const f = lum(rgb(getComputedStyle(el).color)), b = lum(bgOf(el));
      return { what: (el.className + ' ' + el.textContent.trim()).slice(0, 40),
               ratio: (Math.max(f, b) + 0.05) / (Math.min(f, b) + 0.05) }; });
}"""


def main():
    args = browser_test_args(
        lambda ap: ap.add_argument("--publish", help="also copy the final screenshots here"))

    tmp = tempfile.mkdtemp(prefix="perfgate-browser-")
    db = os.path.join(tmp, "web.db")
    commits = 24
    step = 18  # tiny gets 30% slower here; gpt2 stays put
    subprocess.run([args.seed, "--db", db, "--commits", str(commits), "--step-at", str(step),
                    "--step-models", "tiny",
                    "--hostile", "--envs", "1", "--models", "tiny,gpt2", "--batch-sizes", "1,8",
                    "--seq-lens", "64,256", "--gen-tokens", "16", "--reps", "7"], check=True,
                   stdout=subprocess.DEVNULL)
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w") as f:
        f.write("browser-test-token-0123456789\n")
    os.chmod(token_file, 0o600)  # serve refuses a token file others may read
    # A named triage token, as an operator gives one to a person (docs/CLI.md, "perfgate token").
    triage_token = subprocess.run([args.perfgate, "token", "add", "browser", "--role", "triage",
                                   "--db", db], check=True, capture_output=True,
                                  text=True).stdout.strip()
    server, port = start_server(args.perfgate, db, os.path.join(tmp, "serve.log"),
                                ["--token-file", token_file])
    base = f"http://127.0.0.1:{port}"
    shots = {}
    try:
        series = get_json(base, "/api/v1/series")["series"]
        sid = next(s["id"] for s in series
                   if s["key"]["model"] == "tiny" and s["key"]["batch_size"] == 1
                   and s["key"]["seq_len"] == 64 and s["env"]["device"] == "Seed GPU 0")
        detail = get_json(base, f"/api/v1/series/{sid}")
        points = detail["points"]
        main_commits = len([c for c in range(commits) if c % 4 != 1])  # the seed's branch rule
        check(len(points) == main_commits,
              f"API: series {sid} has one point per main-branch commit ({len(points)})")
        step_idx = next(i for i, p_ in enumerate(points) if p_["flag"] == "regression")

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            console_errors, dialogs = [], []

            def new_page(width, height, scale=1):
                ctx = browser.new_context(viewport={"width": width, "height": height},
                                          device_scale_factor=scale)
                page = ctx.new_page()
                page.on("console", lambda m: console_errors.append(f"{page.url}: {m.text}")
                        if m.type == "error" else None)
                page.on("pageerror", lambda e: console_errors.append(f"{page.url}: {e}"))
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                return page

            def shoot(page, name, full=True):
                path = os.path.join(args.out, name + ".png")
                page.screenshot(path=path, full_page=full)
                shots[name] = path

            # --- trend: one point per commit, hover shows the SHA, click opens the run.
            page = new_page(1440, 900)
            page.goto(f"{base}/series/{sid}")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            drawn = page.evaluate("perfgate.trend.pointsDrawn")
            check(drawn == main_commits, f"trend: {drawn} points drawn for {main_commits} commits")
            per_trace = page.evaluate(
                "Array.from(document.querySelectorAll('#chart .scatterlayer .trace'))"
                ".map(t => t.querySelectorAll('path.point').length)")
            check(main_commits in per_trace,
                  f"trend: the median trace has one marker per commit (markers per trace {per_trace})")
            median_trace = per_trace.index(main_commits)
            markers = page.locator("#chart .scatterlayer .trace").nth(median_trace).locator("path.point")
            for idx in (1, 2, step_idx):  # the hostile subjects (commits 2, 3), the first slow one
                box = markers.nth(idx).bounding_box()
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                sha = points[idx]["commit"][:12]
                try:
                    page.wait_for_function(
                        "sha => Array.from(document.querySelectorAll('#chart .hoverlayer .hovertext'))"
                        ".some(e => e.textContent.includes(sha))", arg=sha, timeout=5000)
                    shown = True
                except Exception:
                    shown = False
                text = page.evaluate("Array.from(document.querySelectorAll('#chart .hoverlayer "
                                     ".hovertext')).map(e => e.textContent).join(' | ')")
                check(shown, f"trend: hovering point {idx} shows its SHA {sha} (hover: {text[:160]!r})")
                if idx == 1:
                    check("<script>alert(1)</script>" in text,
                          "trend: the <script> subject is shown as text in the hover")
                    shoot(page, "trend-hover", full=False)
            check(page.evaluate("document.querySelectorAll('#chart script, #chart img').length") == 0,
                  "trend: no element injected into the chart")
            page.mouse.move(5, 5)
            shoot(page, "trend-desktop")
            # --- point -> compare of its commit with its parent -> the cell's trend.
            box = markers.nth(step_idx).bounding_box()
            t0 = time.time()
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.wait_for_url(re.compile(r".*/compare\?.*"), timeout=10000)
            check(f"base={points[step_idx - 1]['commit']}" in page.url
                  and f"head={points[step_idx]['commit']}" in page.url and "device=" in page.url,
                  f"trend: clicking point {step_idx} opens compare with its parent ({page.url})")
            verdict = page.text_content("#verdict")
            check(verdict == "regression", f"point -> compare: verdict {verdict}")
            summary = page.text_content("#verdict-summary")
            check("regressed" in summary and "worst" in summary, f"compare states its answer: {summary!r}")
            width = page.evaluate("document.querySelector('#compare-table').getBoundingClientRect().right")
            check(width <= 1440, f"compare: the table fits 1,440 px (right edge {width:.0f})")
            shoot(page, "compare-from-point")
            page.click("#compare-table tbody tr >> nth=0 >> a[href^='/series/']")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            check("/series/" in page.url, f"compare -> trend: a cell opens its trend ({page.url})")
            page.goto(f"{base}/runs/{points[step_idx]['run_id']}")
            page.click("#compare-parent")
            page.wait_for_url(re.compile(r".*/compare\?.*"), timeout=10000)
            check(points[step_idx - 1]["commit"] in page.url,
                  f"run -> compare with the commit before ({page.url})")
            page.goto(f"{base}/series/{sid}")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            page.click("table.change-points a.cp-parent")
            page.wait_for_url(re.compile(r".*/compare\?.*"), timeout=10000)
            check(points[step_idx]["commit"] in page.url, "change point -> compare with its parent")
            page.goto(f"{base}/runs/{points[step_idx]['run_id']}")
            shoot(page, "run-desktop")

            # --- zoom: a drag on the plot area changes the x range.
            page.goto(f"{base}/series/{sid}?metric=decode_tok_s")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            before = page.evaluate("document.getElementById('chart').layout.xaxis.range.slice()")
            drag = page.locator("#chart .nsewdrag").first.bounding_box()
            y = drag["y"] + drag["height"] / 2
            page.mouse.move(drag["x"] + drag["width"] * 0.3, y)
            page.mouse.down()
            page.mouse.move(drag["x"] + drag["width"] * 0.6, y, steps=8)
            page.mouse.up()
            page.wait_for_timeout(300)
            after = page.evaluate("document.getElementById('chart').layout.xaxis.range.slice()")
            check(after[1] - after[0] < before[1] - before[0], f"trend: drag zooms x {before} -> {after}")
            check("from=" in page.url and "to=" in page.url, f"trend: the zoom is in the URL ({page.url})")
            zoomed_url = page.url
            page.goto(zoomed_url)
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            again = page.evaluate("document.getElementById('chart').layout.xaxis.range.slice()")
            check(abs((again[1] - again[0]) - (after[1] - after[0])) <= 1.01,
                  f"trend: the zoomed URL reopens zoomed ({again})")
            check(page.evaluate("document.querySelectorAll('.modebar-btn[data-title*=\"Lasso\"],"
                                ".modebar-btn[data-title*=\"Box Select\"],"
                                ".modebar-btn[data-title*=\"Edit\"]').length") == 0,
                  "trend: no lasso, box-select or sharing button in the modebar")

            # --- overlay of two series.
            other = next(s["id"] for s in series if s["id"] != sid and s["key"]["model"] == "tiny"
                         and s["key"]["batch_size"] == 8 and s["key"]["seq_len"] == 64)
            page.goto(f"{base}/trend?ids={sid},{other}")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            check(page.evaluate("perfgate.trend.series") == 2, "overlay: two series drawn")
            shoot(page, "trend-overlay")

            # --- compare: the table sorts on a header click.
            shas = [p_["commit"] for p_ in points]
            page.goto(f"{base}/compare?base={shas[step_idx - 1]}&head={shas[step_idx]}&device=Seed%20GPU%200")
            verdict = page.text_content("#verdict")
            check(verdict == "regression", f"compare: verdict across the step is {verdict}")
            col = page.evaluate("Array.from(document.querySelectorAll('#compare-table thead th'))"
                                ".findIndex(th => th.textContent.trim() === 'head median')")

            def column():
                return page.evaluate(
                    "c => Array.from(document.querySelectorAll('#compare-table tbody tr'))"
                    ".map(r => Number(r.cells[c].getAttribute('data-v')))", col)

            original = column()
            page.click("#compare-table thead th >> nth=%d" % col)
            asc = column()
            check(asc == sorted(original), f"compare: one click sorts ascending {asc}")
            page.click("#compare-table thead th >> nth=%d" % col)
            desc = column()
            check(desc == sorted(original, reverse=True), "compare: a second click sorts descending")
            shoot(page, "compare-desktop")

            # --- overview at three sizes; filters live in the URL.
            for name, (w, h, scale) in {"phone": (390, 844, 2), "desktop": (1440, 900, 1),
                                         "4k": (3840, 2160, 1)}.items():
                pg_ = new_page(w, h, scale)
                pg_.goto(base + "/")
                shoot(pg_, f"overview-{name}")
                overflow = pg_.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                check(overflow <= 1, f"overview-{name}: no horizontal page overflow ({overflow}px)")
            pg_ = new_page(390, 844, 2)
            pg_.goto(f"{base}/compare?base={shas[step_idx - 1]}&head={shas[step_idx]}&device=Seed%20GPU%200")
            shoot(pg_, "compare-phone")
            overflow = pg_.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            check(overflow <= 1, f"compare-phone: no horizontal page overflow ({overflow}px)")
            pg_ = new_page(390, 844, 2)
            pg_.goto(f"{base}/series/{sid}")
            pg_.wait_for_selector("body[data-chart-ready]", timeout=30000)
            shoot(pg_, "trend-phone", full=False)
            pg_ = new_page(1440, 900)
            pg_.goto(base + "/")
            pg_.select_option("select[name=batch]", "8")
            pg_.wait_for_url(re.compile(r".*batch=8.*"), timeout=10000)
            check("batch=8" in pg_.url and "model=" not in pg_.url,
                  f"overview: a filter lands in the URL ({pg_.url})")
            rows = pg_.evaluate("document.querySelectorAll('section.group tbody tr').length")
            check(rows == len([s for s in series if s["key"]["batch_size"] == 8]),
                  f"overview: the batch filter shows {rows} rows")

            # --- acknowledge a regression on the regressions page.
            pg_ = new_page(1440, 900)
            pg_.goto(base + "/regressions")
            open_before = int(pg_.text_content("#open-count"))
            check(open_before > 0, f"regressions: {open_before} open")
            shoot(pg_, "regressions-desktop")
            check(pg_.locator("#triage-auth input[name=author]").count() == 0,
                  "regressions: no name to type: the server records the token's")
            pg_.fill("#triage-auth input[name=token]", triage_token)
            row = pg_.locator("#regressions tbody tr[data-state=open]").first
            series_of_row = row.get_attribute("data-series")
            row.locator("button[data-action=acknowledge]").click()
            pg_.wait_for_selector(f"#regressions tr[data-series='{series_of_row}'][data-state=acknowledged]",
                                  timeout=10000)
            check(True, "regressions: acknowledged from the page")
            regs = get_json(base, "/api/v1/regressions")["regressions"]
            acked = [r for r in regs if str(r["series_id"]) == series_of_row]
            check(acked and acked[0]["events"][-1]["author"] == "browser"
                  and acked[0]["events"][-1]["via"] == "token",
                  "regressions: the acknowledgement is stored under the token's name")
            pg_.wait_for_function(
                "document.getElementById('triage-who').textContent === 'browser'", timeout=10000)
            check(True, "regressions: after the reload the page shows whom it triages as")

            # --- dark mode: every badge and button at >= 4.5:1 (WCAG AA), from computed styles.
            ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
            dark = ctx.new_page()
            dark.on("pageerror", lambda e: console_errors.append(f"{dark.url}: {e}"))
            worst = []
            for path in ["/", "/regressions", f"/series/{sid}",
                         f"/compare?base={shas[step_idx - 1]}&head={shas[step_idx]}"]:
                dark.goto(base + path)
                ratios = dark.evaluate(CONTRAST_JS)
                for r in ratios:
                    if r["ratio"] < 4.5:
                        worst.append(f"{path} {r['what']} {r['ratio']:.2f}")
                check(len(ratios) > 0, f"dark {path}: {len(ratios)} badges/buttons measured, "
                      f"lowest {min(r['ratio'] for r in ratios):.2f}:1")
                if path.startswith("/series"):
                    dark.wait_for_selector("body[data-chart-ready]", timeout=30000)
                    lines = chart_line_contrast(dark)
                    kinds = {w.split()[0] for w, _ in lines}
                    low = sorted({f"{w} {r:.2f}" for w, r in lines if r < 3.0})
                    check({"grid", "lines", "whiskers", "shapes"} <= kinds and not low,
                          f"dark chart: {len(lines)} lines ({sorted(kinds)}) all >= 3:1; below: {low[:6]}")
                    shoot(dark, "trend-dark")
                if path == "/":
                    shoot(dark, "overview-dark")
            check(not worst, "dark mode: every badge and button >= 4.5:1 " + "; ".join(worst[:6]))

            # --- a 1,000-commit series: draws, thinned tick labels, the default window; timed.
            big_db = os.path.join(tmp, "big.db")
            subprocess.run([args.seed, "--db", big_db, "--commits", "1000", "--step-at", "700",
                            "--models", "tiny", "--batch-sizes", "1", "--seq-lens", "64",
                            "--gen-tokens", "16", "--reps", "5"], check=True,
                           stdout=subprocess.DEVNULL)
            big, big_port = start_server(args.perfgate, big_db, os.path.join(tmp, "big.log"))
            try:
                big_base = f"http://127.0.0.1:{big_port}"
                big_id = get_json(big_base, "/api/v1/series")["series"][0]["id"]
                pg_ = new_page(1440, 900)
                for attempt in ("cold", "warm"):
                    t0 = time.time()
                    pg_.goto(f"{big_base}/series/{big_id}")
                    pg_.wait_for_selector("body[data-chart-ready]", timeout=60000)
                    TIMINGS[f"1,000-commit trend page to chart drawn ({attempt})"] = time.time() - t0
                check(pg_.evaluate("perfgate.trend.pointsDrawn") == 1000, "1,000 commits: every point drawn")
                ticks = pg_.evaluate("document.querySelectorAll('#chart .xtick text').length")
                check(0 < ticks <= 40, f"1,000 commits: {ticks} x tick labels (thinned)")
                rng = pg_.evaluate("document.getElementById('chart').layout.xaxis.range")
                check(rng and round(rng[1] - rng[0]) == 200, f"1,000 commits: default window of 200 ({rng})")
                shoot(pg_, "trend-1000", full=False)
                t0 = time.time()
                pg_.goto(f"{big_base}/")
                TIMINGS["1,000-commit overview page (load event)"] = time.time() - t0
            finally:
                big.terminate()
                big.wait(timeout=15)

            check(not dialogs, f"no dialog opened (alerts: {dialogs})")
            check(not console_errors, "no console errors: " + "; ".join(console_errors[:5]))
            browser.close()
    finally:
        server.terminate()
        try:
            rc = server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            rc = None
        check(rc == 0, f"perfgate serve exits 0 on SIGTERM (got {rc})")
        shutil.rmtree(tmp, ignore_errors=True)

    if args.publish:
        os.makedirs(args.publish, exist_ok=True)
        for name in ("overview-desktop", "overview-phone", "overview-4k", "trend-desktop",
                     "trend-hover", "trend-overlay", "trend-phone", "compare-desktop", "run-desktop",
                     "compare-from-point", "regressions-desktop", "trend-dark", "overview-dark",
                     "trend-1000", "compare-phone"):
            if name in shots:
                shutil.copy(shots[name], os.path.join(args.publish, name + ".png"))
    for what, seconds in TIMINGS.items():
        print(f"time {what}: {seconds * 1000:.0f} ms")
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
