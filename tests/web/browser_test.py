#!/usr/bin/env python3
"""Browser test of the perfgate dashboard: Debian's chromium driven by playwright, against a real
`perfgate serve` on loopback over a database written by web_seed.

Checks: the trend chart draws one point per stored commit; hovering a point shows its SHA;
clicking a point opens its run; the compare table sorts on a header click; hostile subjects stay
text; no page logs a console error. Screenshots go to --out (phone, desktop and 4K), and with
--publish DIR also to DIR (docs/screenshots).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from playwright.sync_api import sync_playwright

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def start_server(perfgate, db, log_path):
    log = open(log_path, "w")
    proc = subprocess.Popen([perfgate, "serve", "--db", db, "--port", "0"], stderr=log,
                            stdout=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(log_path) as f:
            m = re.search(r"listening on http://[^ ]*:(\d+)/", f.read())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("perfgate serve did not start:\n" + open(log_path).read())


def get_json(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfgate", required=True)
    ap.add_argument("--seed", required=True, help="web_seed binary")
    ap.add_argument("--out", required=True, help="directory for screenshots")
    ap.add_argument("--publish", help="also copy the final screenshots here")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    tmp = tempfile.mkdtemp(prefix="perfgate-browser-")
    db = os.path.join(tmp, "web.db")
    commits = 24
    step = 18  # tiny gets 30% slower here; gpt2 stays put
    subprocess.run([args.seed, "--db", db, "--commits", str(commits), "--step-at", str(step),
                    "--step-models", "tiny",
                    "--hostile", "--envs", "1", "--models", "tiny,gpt2", "--batch-sizes", "1,8",
                    "--seq-lens", "64,256", "--gen-tokens", "16", "--reps", "7"], check=True,
                   stdout=subprocess.DEVNULL)
    server, port = start_server(args.perfgate, db, os.path.join(tmp, "serve.log"))
    base = f"http://127.0.0.1:{port}"
    shots = {}
    try:
        series = get_json(base, "/api/v1/series")["series"]
        sid = next(s["id"] for s in series
                   if s["key"]["model"] == "tiny" and s["key"]["batch_size"] == 1
                   and s["key"]["seq_len"] == 64 and s["env"]["device"] == "Seed GPU 0")
        detail = get_json(base, f"/api/v1/series/{sid}")
        points = detail["points"]
        check(len(points) == commits, f"API: series {sid} has one point per commit ({len(points)})")

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
            check(drawn == commits, f"trend: {drawn} points drawn for {commits} stored commits")
            per_trace = page.evaluate(
                "Array.from(document.querySelectorAll('#chart .scatterlayer .trace'))"
                ".map(t => t.querySelectorAll('path.point').length)")
            check(commits in per_trace,
                  f"trend: the median trace has one marker per commit (markers per trace {per_trace})")
            median_trace = per_trace.index(commits)
            markers = page.locator("#chart .scatterlayer .trace").nth(median_trace).locator("path.point")
            for idx in (2, 3, step):  # the hostile subjects, and the first slow commit
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
                if idx == 2:
                    check("<script>alert(1)</script>" in text,
                          "trend: the <script> subject is shown as text in the hover")
                    shoot(page, "trend-hover", full=False)
            check(page.evaluate("document.querySelectorAll('#chart script, #chart img').length") == 0,
                  "trend: no element injected into the chart")
            page.mouse.move(5, 5)
            shoot(page, "trend-desktop")
            box = markers.nth(step).bounding_box()
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.wait_for_url(re.compile(r".*/runs/\d+$"), timeout=10000)
            check(page.url.endswith(f"/runs/{points[step]['run_id']}"),
                  f"trend: clicking point {step} opens its run ({page.url})")
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

            # --- overlay of two series.
            other = next(s["id"] for s in series if s["id"] != sid and s["key"]["model"] == "tiny"
                         and s["key"]["batch_size"] == 8 and s["key"]["seq_len"] == 64)
            page.goto(f"{base}/trend?ids={sid},{other}")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            check(page.evaluate("perfgate.trend.series") == 2, "overlay: two series drawn")
            shoot(page, "trend-overlay")

            # --- compare: the table sorts on a header click.
            shas = [p_["commit"] for p_ in points]
            page.goto(f"{base}/compare?base={shas[step - 1]}&head={shas[step]}")
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
                     "trend-hover", "trend-overlay", "trend-phone", "compare-desktop", "run-desktop"):
            if name in shots:
                shutil.copy(shots[name], os.path.join(args.publish, name + ".png"))
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
