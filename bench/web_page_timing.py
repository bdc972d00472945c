#!/usr/bin/env python3
"""Benchmark (not a test) of the trend page in a real browser: Debian's chromium through
Playwright against `perfgate serve` on loopback, over a 1,000-commit series written by web_seed.

For each of N tries in a fresh browser context (cold: nothing cached) and then again in the same
context (warm: assets from the browser cache), it reports the first contentful paint,
DOMContentLoaded and the time from navigation to the chart drawn (body[data-chart-ready]), as the
median of the tries -- for the page as served (plotly.js requested by trend.js after the first
paint) and, in the same run and alternating with it, for the same page with plotly.js put back
into its head as a deferred script (how it was loaded before: trend.js then finds window.Plotly
and loads nothing). Both variants pass through the same request interception, so they pay the
same overhead.

Usage: .venv/bin/python bench/web_page_timing.py --perfgate build/perfgate \
         --seed build/tests/web/web_seed [--tries 5] [--commits 1000]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "web"))
from serve_process import start_server  # noqa: E402


def measure(page, url):
    t0 = time.time()
    page.goto(url)
    page.wait_for_selector("body[data-chart-ready]", timeout=120000)
    chart_ms = (time.time() - t0) * 1000
    fcp = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
    dcl = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    return fcp, dcl, chart_ms


def page_variant(ctx, eager):
    """A page whose trend HTML passes through an interception; eager: plotly.js in the head."""
    def handle(route):
        resp = route.fetch()
        body = resp.text()
        if eager:
            src = re.search(r'data-plotly="([^"]+)"', body).group(1)
            body = body.replace("</head>", f'<script defer src="{src}"></script></head>', 1)
        route.fulfill(response=resp, body=body)
    ctx.route(re.compile(r".*/series/\d+$"), handle)
    return ctx.new_page()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfgate", required=True)
    ap.add_argument("--seed", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--commits", type=int, default=1000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="perfgate-page-timing-")
    db = os.path.join(tmp, "big.db")
    subprocess.run([args.seed, "--db", db, "--commits", str(args.commits), "--step-at",
                    str(args.commits * 7 // 10), "--models", "tiny", "--batch-sizes", "1",
                    "--seq-lens", "64", "--gen-tokens", "16", "--reps", "5"], check=True,
                   stdout=subprocess.DEVNULL)
    server, port = start_server(args.perfgate, db, os.path.join(tmp, "serve.log"))
    base = f"http://127.0.0.1:{port}"
    variants = {"lazy": False, "eager": True}
    results = {(v, c): [] for v in variants for c in ("cold", "warm")}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            url = f"{base}/series/1"
            # One throw-away load so serve's caches are warm: the browser is what is measured.
            ctx = browser.new_context(viewport={"width": 1440, "height": 900})
            measure(ctx.new_page(), url)
            ctx.close()
            for i in range(args.tries):
                order = list(variants) if i % 2 == 0 else list(reversed(variants))
                for v in order:
                    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
                    results[(v, "cold")].append(measure(page_variant(ctx, variants[v]), url))
                    results[(v, "warm")].append(measure(page_variant(ctx, variants[v]), url))
                    ctx.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=15)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"trend page of a {args.commits}-commit series, median of {args.tries} tries, "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
    print("| plotly.js | browser cache | first contentful paint (ms) | DOMContentLoaded (ms) "
          "| chart drawn (ms) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (v, c), r in results.items():
        fcp = statistics.median(x[0] for x in r if x[0] is not None)
        dcl = statistics.median(x[1] for x in r)
        chart = statistics.median(x[2] for x in r)
        where = "lazy (after first paint)" if v == "lazy" else "eager (deferred, in the head)"
        print(f"| {where} | {c} | {fcp:.0f} | {dcl:.0f} | {chart:.0f} |")


if __name__ == "__main__":
    main()
