#!/usr/bin/env python3
"""Browser test of stored gate results as alerts: Debian's chromium driven by playwright against a
real `perfgate serve` on loopback.

`perfgate compare --record` stores a failing gate in the served database; the regressions page
lists it beside the change points with its size, first bad commit and settings; it is
acknowledged from the page as the SSO proxy's user (stored under that name, nothing typed); its
compare link shows the stored verdict; its slowdown is accepted from the compare page (the next
gate of the ref passes) and the acceptance revoked (it fails again); the compare page's blind-gate
box appears when the MDE exceeds the min effect and not otherwise; the trend's y-axis fits the
medians and IQR (a 10x whisker clipped and marked) and an alert's link keeps its commit in view.
No page may log a console error.
"""
import os
import re
import subprocess
import sys
import tempfile

from playwright.sync_api import sync_playwright

from browser_checks import browser_test_args, check, get_json, new_page, report
from serve_process import start_server

TOKEN = "gate-browser-token-0123456789"


def main():
    args = browser_test_args()

    tmp = tempfile.mkdtemp(prefix="perfgate-gate-browser-")
    db = os.path.join(tmp, "gates.db")
    subprocess.run([args.seed, "--db", db, "--commits", "16", "--step-at", "8", "--envs", "1",
                    "--models", "tiny", "--batch-sizes", "1,4", "--seq-lens", "16",
                    "--gen-tokens", "8", "--reps", "5", "--runs-per-commit", "2",
                    "--outlier-at", "3", "--outlier-factor", "10"], check=True,
                   stdout=subprocess.DEVNULL)
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    # The legacy token ingests; people triage as the user an SSO proxy on this host names
    # (docs/WEB.md, "Credentials"). The browser plays the proxy by sending its header.
    server, port = start_server(args.perfgate, db, os.path.join(tmp, "serve.log"),
                                ["--token-file", token_file, "--auth-header", "X-Forwarded-User",
                                 "--trusted-proxy", "127.0.0.1"])
    base = f"http://127.0.0.1:{port}"
    try:
        sid = get_json(base, "/api/v1/series")["series"][0]["id"]
        points = get_json(base, f"/api/v1/series/{sid}")["points"]
        step = next(i for i, p in enumerate(points) if p["flag"] == "regression")
        good, bad = points[step - 1]["commit"], points[step]["commit"]

        # A failing gate, recorded where serve reads it.
        gate = subprocess.run([args.perfgate, "compare", "--db", db, "--base", good, "--head", bad,
                               "--record", "--ref", "refs/pull/42/merge", "--submitted-by",
                               "Gate Bot", "--min-effect", "0.1"], capture_output=True, text=True)
        check(gate.returncode == 1, f"compare --record: exit {gate.returncode} (regression)")
        check("recorded gate result" in gate.stderr, f"compare --record says so: {gate.stderr!r}")
        alerts = get_json(base, "/api/v1/regressions")["gate_regressions"]
        check(len(alerts) == 1 and alerts[0]["state"] == "open", "API: one open gate alert")
        open_before = get_json(base, "/api/v1/overview")["open_regressions"]

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            errors = []
            page = new_page(browser, errors, headers={"X-Forwarded-User": "gate.tester"})

            # --- the regressions page lists the gate beside the change points.
            page.goto(base + "/regressions")
            row = page.locator("#gate-regressions tbody tr[data-state=open]")
            check(row.count() == 1, f"regressions: {row.count()} open gate row")
            text = row.first.inner_text()
            check(bad[:10] in text, "gate row: the first bad commit is the gate's head")
            check("min effect 10% (fixed)" in text and "holm" in text,
                  "gate row: the settings it was decided under")
            check(re.search(r"\+\d+\.\d%", text) is not None, f"gate row: its size ({text!r})")
            check(re.search(r"just now|\d+ (minute|hour|day)s? ago", text) is not None,
                  "gate row: its age in words")
            right = page.evaluate("document.querySelector('#gate-regressions')"
                                  ".getBoundingClientRect().right")
            check(right <= 1440, f"gate table fits 1,440 px (right edge {right:.0f})")
            check(page.locator("#regressions tbody tr").count() > 0,
                  "regressions: the change-point alerts are still listed")
            page.screenshot(path=os.path.join(args.out, "gate-alerts.png"), full_page=True)

            # --- acknowledge it from the page.
            page.wait_for_function(
                "document.getElementById('triage-who').textContent === 'gate.tester'",
                timeout=10000)
            check(not page.is_visible("#triage-auth input[name=token]"),
                  "signed in by the proxy: no token to type")
            gate_id = row.first.get_attribute("data-gate")
            row.first.locator("button[data-action=acknowledge]").click()
            page.wait_for_selector(
                f"#gate-regressions tr[data-gate='{gate_id}'][data-state=acknowledged]",
                timeout=10000)
            alert = get_json(base, "/api/v1/regressions")["gate_regressions"][0]
            check(alert["state"] == "acknowledged"
                  and alert["events"][-1]["author"] == "gate.tester"
                  and alert["events"][-1]["via"] == "header",
                  "acknowledged from the page, stored under the proxy's user")
            check(get_json(base, "/api/v1/overview")["open_regressions"] == open_before,
                  "overview: an acknowledged gate alert is still open")

            # --- its compare link shows the stored verdict and why the page's may differ.
            page.click(f"#gate-regressions tr[data-gate='{gate_id}'] a[href^='/compare']")
            page.wait_for_url(re.compile(r".*/compare\?.*"), timeout=10000)
            stored = page.locator("#stored-verdict").inner_text()
            check(stored == "regression", f"compare: the stored verdict is shown ({stored})")
            check(page.locator("#settings-differ").is_visible(),
                  "compare: says the page's min effect differs from the gate's")

            # --- accept the slowdown from the compare page: the next gate of the ref passes.
            page.wait_for_function(
                "document.getElementById('triage-who').textContent === 'gate.tester'",
                timeout=10000)
            page.fill("#accept-form input[name=reason]", "the new sampler is worth it")
            page.click("#accept-form button[type=submit]")
            page.wait_for_selector("#acceptance-list li[data-acceptance]", timeout=10000)
            accepted = get_json(base, "/api/v1/acceptances?ref=refs/pull/42/merge")["acceptances"]
            check(len(accepted) == 1 and accepted[0]["author"] == "gate.tester"
                  and accepted[0]["via"] == "header" and accepted[0]["gate_id"] == int(gate_id),
                  f"accepted from the page, stored under the proxy's user ({accepted})")
            verdicts = page.locator("#compare-table tbody td[data-v] .badge").all_inner_texts()
            check("accepted" in verdicts and "regression" not in verdicts,
                  f"compare: the page judges with the acceptance in force ({verdicts})")
            page.screenshot(path=os.path.join(args.out, "gate-accepted.png"), full_page=True)
            again = subprocess.run([args.perfgate, "compare", "--db", db, "--base", good, "--head",
                                    bad, "--min-effect", "0.1", "--acceptances", base, "--ref",
                                    "refs/pull/42/merge"], capture_output=True, text=True)
            check(again.returncode == 0 and "gate.tester" in again.stdout,
                  f"the next gate of the ref passes, naming who accepted (exit {again.returncode})")
            page.once("dialog", lambda d: d.accept("changed our mind"))
            page.click("#acceptance-list button[data-revoke]")
            page.wait_for_selector("#acceptance-list li.revoked", timeout=10000)
            again = subprocess.run([args.perfgate, "compare", "--db", db, "--base", good, "--head",
                                    bad, "--min-effect", "0.1", "--acceptances", base, "--ref",
                                    "refs/pull/42/merge"], capture_output=True, text=True)
            check(again.returncode == 1, f"revoked: the gate fails again (exit {again.returncode})")

            # --- the chart shows the step: the y-axis fits medians and IQR, not one slow
            # repetition's whisker (commit 3's, 10x), which is clipped and marked; ?at= (an
            # alert's link) keeps its commit in the window.
            page.goto(f"{base}/series/{sid}")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            yr = page.evaluate("document.getElementById('chart')._fullLayout.yaxis.range")
            meds = [p_["median"] for p_ in points]
            step_share = (meds[step] - meds[step - 1]) / (yr[1] - yr[0])
            check(step_share > 0.5, f"chart: the 30% step spans {step_share:.0%} of the y-axis {yr}")
            check(yr[1] < max(p_["spread"]["max"] for p_ in points),
                  "chart: the 10x whisker lies beyond the axis")
            legend = page.evaluate("Array.from(document.querySelectorAll('#chart .legendtext'))"
                                   ".map(t => t.textContent)")
            check("whisker beyond the axis" in legend, f"chart: the clipped whisker is marked ({legend})")
            page.goto(f"{base}/series/{sid}?last=4&at={points[2]['commit'][:12]}")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            win = page.evaluate("perfgate.trend.window")
            at = page.evaluate("perfgate.trend.at")
            check(at == 2 and win[0] <= 2 <= win[1],
                  f"chart: ?at= widens the last-4 window to hold its commit (window {win})")
            page.goto(base + "/regressions")
            href = page.locator("#regressions tbody tr a[href^='/series/']").first.get_attribute("href")
            check("?at=" in href, f"regressions: a series alert links to its commit's window ({href})")

            # --- acknowledging a series alert shows where it matters: the series page's alerts
            # table and chart, its API document and the overview's badge.
            row = page.locator(f"#regressions tbody tr[data-series='{sid}'][data-state=open]")
            check(row.count() == 1, f"regressions: {row.count()} open alert of series {sid}")
            row.first.locator("input[name=reason]").fill("the new tokenizer, tracked in #12")
            row.first.locator("button[data-action=acknowledge]").click()
            page.wait_for_selector(
                f"#regressions tr[data-series='{sid}'][data-state=acknowledged]", timeout=10000)
            doc = get_json(base, f"/api/v1/series/{sid}")
            mine = [a for a in doc.get("alerts", []) if a["commit"] == bad]
            check(len(mine) == 1 and mine[0]["state"] == "acknowledged"
                  and mine[0]["events"][-1]["author"] == "gate.tester",
                  f"API: the series document carries its acknowledged alert ({mine})")
            page.goto(f"{base}/series/{sid}")
            page.wait_for_selector("body[data-chart-ready]", timeout=30000)
            cell = page.locator(f"table.series-alerts tr[data-commit='{bad}']")
            text = cell.inner_text() if cell.count() else ""
            check("acknowledged" in text and "gate.tester" in text and "tokenizer" in text,
                  f"series page: the alert's state, who and why ({text!r})")
            notes = page.evaluate("document.getElementById('chart').layout.annotations"
                                  ".map(a => [a.text, a.hovertext || ''])")
            check(any(t == "alert: acknowledged" and "tokenizer" in h for t, h in notes),
                  f"chart: the alert's state under its commit, the reason on hover ({notes[-3:]})")
            ov = get_json(base, "/api/v1/overview")
            shown = [s_ for g in ov.get("groups", []) for s_ in g.get("series", [])
                     if s_.get("id") == sid]
            check(shown and shown[0].get("shown_status") == "acknowledged",
                  f"overview: the series' badge says acknowledged ({shown[:1]})")

            # --- the blind-gate box: shown when the MDE exceeds the min effect, only then.
            page.goto(f"{base}/compare?base={points[1]['commit']}&head={points[2]['commit']}"
                      "&min_effect=0.001")
            check(page.locator("#gate-blind").is_visible(),
                  "compare: the blind-gate box at min effect 0.1%")
            page.goto(f"{base}/compare?base={points[1]['commit']}&head={points[2]['commit']}"
                      "&min_effect=10")
            check(page.locator("#gate-blind").count() == 0,
                  "compare: no blind-gate box when the gate sees its min effect")
            check(not errors, f"no console errors ({errors[:3]})")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return report()


if __name__ == "__main__":
    sys.exit(main())
