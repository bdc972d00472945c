#!/usr/bin/env python3
"""Browser test of alert groups: Debian's chromium driven by playwright against a real `perfgate
serve` on loopback.

One commit slows 120 series (3 models x 5 batch sizes x 8 prompt lengths, two runs a commit) and a
stored gate of a pull request: the regressions page shows them as one group of 121 alerts, its
worst and typical size, filters that hide and show it (state, device, branch, size, count) kept
in the URL, and one click acknowledges every member, each stored under the SSO proxy's user;
selecting the group and "Mark selected fixed" closes them all; reopen brings them back. The
compare page of the pair names both commits, marks the cell the reader came from, draws each
regressed cell's trend around the pair and triages its alert. On a phone the regressions page is
no wider than the screen. On a store of 10,080 runs, one group of 120 alerts is acknowledged in one
click. No page may log a console error.
"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

from browser_checks import browser_test_args, check, get_json, new_page, report
from serve_process import start_server

USER = "sheriff.on.duty"


def complete_regressions(base, timeout_s=120):
    """/api/v1/regressions once every series' view is computed: serve answers at once with what
    it has (docs/API.md), so a fresh server's first answer may be partial."""
    deadline = time.time() + timeout_s
    doc = get_json(base, "/api/v1/regressions")
    while not doc["complete"] and time.time() < deadline:
        time.sleep(0.2)
        doc = get_json(base, "/api/v1/regressions")
    return doc


def ten_thousand_runs(args, browser, errors):
    """The grouped page on a store of 10,080 runs: 120 series (12 cells on each of 10 devices), 84
    commits of 12 runs each, every series 30% slower from commit 70: one group, one click."""
    tmp = tempfile.mkdtemp(prefix="perfgate-groups-10k-")
    db = os.path.join(tmp, "big.db")
    subprocess.run([args.seed, "--db", db, "--commits", "84", "--step-at", "70", "--envs", "10",
                    "--models", "tiny,small,medium", "--batch-sizes", "1,2", "--seq-lens", "16,32",
                    "--gen-tokens", "8", "--reps", "5", "--runs-per-commit", "12"], check=True,
                   stdout=subprocess.DEVNULL)
    server, port = start_server(args.perfgate, db, os.path.join(tmp, "serve.log"),
                                ["--auth-header", "X-Forwarded-User", "--trusted-proxy", "127.0.0.1"])
    base = f"http://127.0.0.1:{port}"
    try:
        with sqlite3.connect(db) as con:
            runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        doc = complete_regressions(base)
        check(runs == 10080 and doc["complete"] and [g["cells"] for g in doc["groups"]] == [120],
              f"10k store ({runs} runs): one group of 120 alerts ({[g['cells'] for g in doc['groups']]})")
        page = new_page(browser, errors, headers={"X-Forwarded-User": USER})
        page.goto(base + "/regressions")
        page.locator("#triage-who", has_text=USER).wait_for(timeout=10000)
        check(page.locator("#alert-groups tbody tr").count() == 1, "10k store: one group row")
        check("Seed GPU 9" in page.inner_text("#alert-groups"), "10k store: the group names its devices")
        page.locator("#alert-groups tbody tr button[data-action=acknowledge]").click()
        page.wait_for_selector("#alert-groups tr[data-state=acknowledged]", timeout=30000)
        doc = get_json(base, "/api/v1/regressions")
        check(doc["acknowledged"] == 120 and doc["open"] == 0,
              f"10k store: one click acknowledged all 120 ({doc['acknowledged']})")
        page.context.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


def main():
    args = browser_test_args()

    tmp = tempfile.mkdtemp(prefix="perfgate-groups-browser-")
    db = os.path.join(tmp, "groups.db")
    subprocess.run([args.seed, "--db", db, "--commits", "12", "--step-at", "6", "--envs", "1",
                    "--models", "tiny,small,medium", "--batch-sizes", "1,2,4,8,16",
                    "--seq-lens", "16,32,64,128,256,512,1024,2048", "--gen-tokens", "8", "--reps", "5",
                    "--runs-per-commit", "2"], check=True, stdout=subprocess.DEVNULL)
    server, port = start_server(args.perfgate, db, os.path.join(tmp, "serve.log"),
                                ["--auth-header", "X-Forwarded-User", "--trusted-proxy", "127.0.0.1"])
    base = f"http://127.0.0.1:{port}"
    try:
        doc = complete_regressions(base)
        check(doc["complete"] and len(doc["regressions"]) == 120,
              f"API: 120 series alerts ({len(doc['regressions'])})")
        bad = doc["regressions"][0]["commit"]
        good = doc["regressions"][0]["parent"]
        gate = subprocess.run([args.perfgate, "compare", "--db", db, "--base", good, "--head", bad,
                               "--record", "--ref", "refs/pull/7/merge", "--submitted-by", "Gate Bot",
                               "--min-effect", "0.1"], capture_output=True, text=True)
        check(gate.returncode == 1, f"compare --record: exit {gate.returncode} (regression)")
        groups = get_json(base, "/api/v1/regressions")["groups"]
        check(len(groups) == 1 and groups[0]["commit"] == bad and groups[0]["cells"] == 121
              and len(groups[0]["series"]) == 120 and len(groups[0]["gates"]) == 1,
              f"API: one group of 120 series and the gate ({[(g['commit'][:8], g['cells']) for g in groups]})")
        check(groups and groups[0]["state"] == "open" and 0.2 < groups[0]["typical"] <= groups[0]["worst"],
              f"API: the group is open, typical <= worst ({groups[:1] and (groups[0]['typical'], groups[0]['worst'])})")

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            errors = []
            page = new_page(browser, errors, headers={"X-Forwarded-User": USER})

            page.goto(base + "/regressions")
            page.locator("#triage-who", has_text=USER).wait_for(timeout=10000)
            rows = page.locator("#alert-groups tbody tr")
            check(rows.count() == 1, f"page: one group row ({rows.count()})")
            text = rows.first.inner_text()
            check("120 series · 1 gate" in text and bad[:10] in text,
                  f"group row: its first bad commit and members ({text[:120]!r})")
            check("refs/pull/7/merge" in text, "group row: the gate's ref")
            page.screenshot(path=os.path.join(args.out, "alert-groups.png"), full_page=False)

            # Filters hide and show it; they are kept in the URL.
            def shown():
                return page.locator("#alert-groups tbody tr:not([hidden])").count()
            page.fill("#group-controls input[name=min_cells]", "200")
            check(shown() == 0, "filter: at least 200 alerts hides the group of 121")
            check("min_cells=200" in page.url, f"filter: kept in the URL ({page.url})")
            page.goto(page.url)  # a link to the filtered page
            page.locator("#triage-who", has_text=USER).wait_for(timeout=10000)
            check(shown() == 0 and page.input_value("#group-controls input[name=min_cells]") == "200",
                  "filter: the link keeps it")
            page.fill("#group-controls input[name=min_cells]", "")
            page.fill("#group-controls input[name=min_size]", "90")
            check(shown() == 0, "filter: at least 90% hides a 30% group")
            page.fill("#group-controls input[name=min_size]", "20")
            check(shown() == 1, "filter: at least 20% shows it")
            page.fill("#group-controls input[name=max_age_days]", "30")
            check(shown() == 0, "filter: at most 30 days old hides a group whose commit is of 2024")
            page.fill("#group-controls input[name=max_age_days]", "")
            check(shown() == 1, "filter: without an age limit it is back")
            page.select_option("#group-controls select[name=branch]", "refs/pull/7/merge")
            check(shown() == 1, "filter: the gate's ref shows it")
            page.select_option("#group-controls select[name=branch]", "")
            page.select_option("#group-controls select[name=state]", "closed")
            check(shown() == 0, "filter: closed hides an open group")
            page.select_option("#group-controls select[name=state]", "open")

            # One click acknowledges all 121.
            page.locator("#alert-groups tbody tr button[data-action=acknowledge]").click()
            page.wait_for_selector("#alert-groups tr[data-state=acknowledged]", timeout=20000)
            doc = get_json(base, "/api/v1/regressions")
            acked = [a for a in doc["regressions"] if a["state"] == "acknowledged"]
            check(len(acked) == 120 and all(a["events"][-1]["author"] == USER for a in acked),
                  f"one click: 120 series alerts acknowledged as {USER} ({len(acked)})")
            check(doc["gate_regressions"][0]["state"] == "acknowledged",
                  "one click: the gate's alert too")

            # A selection and the bulk bar.
            page.locator("#alert-groups tbody tr input.pick").check()
            page.click("#bulk-bar button[data-bulk=fix]")
            page.wait_for_selector("#alert-groups tr[data-state=fixed]", state="attached",
                                   timeout=20000)
            doc = get_json(base, "/api/v1/regressions")
            check(doc["open"] == 0 and doc["acknowledged"] == 0 and doc["closed"] == 121,
                  f"bulk bar: every member fixed ({doc['open']}, {doc['acknowledged']}, {doc['closed']})")
            page.select_option("#group-controls select[name=state]", "closed")
            page.locator("#alert-groups tbody tr button[data-action=reopen]").click()
            page.wait_for_selector("#alert-groups tr[data-state=open]", state="attached",
                                   timeout=20000)
            check(get_json(base, "/api/v1/regressions")["groups"][0]["state"] == "open",
                  "reopen: the group is open again")

            # The compare page as the triage page: subjects, the cell you came from, each
            # regressed cell's trend around the pair, and its alert's triage.
            sid = doc["regressions"][0]["series_id"]
            page.goto(f"{base}/compare?base={good}&head={bad}&series={sid}")
            subjects = page.inner_text("#commit-subjects")
            check("Commit 5" in subjects and "Commit 6" in subjects,
                  f"compare: both commits' subjects ({subjects!r})")
            came = page.locator("#compare-table tr.from")
            check(came.count() >= 1 and came.first.locator(f"a[href='/series/{sid}']").count() == 1,
                  f"compare: the cell you came from is marked ({came.count()} rows)")
            cells = page.locator("#regressed-cells tbody tr")
            check(cells.count() >= 120, f"compare: every regressed cell on its trend ({cells.count()})")
            mine = page.locator(f"#regressed-cells tbody tr[data-series='{sid}']")
            check(mine.locator("svg circle.base").count() == 1
                  and mine.locator("svg circle.head").count() == 1,
                  "compare: the cell's trend marks base and head")
            check(page.locator("#triage-auth").count() == 1, "compare: one triage form")
            page.locator("#triage-who", has_text=USER).wait_for(timeout=10000)
            mine.locator("input[name=reason]").fill("expected: new sampler")
            mine.locator("button[data-action=acknowledge]").click()
            page.wait_for_selector(f"#regressed-cells tr[data-series='{sid}'][data-state=acknowledged]",
                                   timeout=20000)
            mine_api = [a for a in get_json(base, "/api/v1/regressions")["regressions"]
                        if a["series_id"] == sid]
            check(mine_api and mine_api[0]["state"] == "acknowledged"
                  and mine_api[0]["events"][-1]["reason"] == "expected: new sampler",
                  "compare: the cell's alert acknowledged from the compare page")
            page.screenshot(path=os.path.join(args.out, "compare-triage.png"), full_page=False)

            # The regressions page on a phone: nothing wider than the screen, the group's buttons
            # on screen.
            phone = new_page(browser, errors, 390, 844, {"X-Forwarded-User": USER}, is_mobile=True)
            phone.goto(base + "/regressions")
            width = phone.evaluate("document.documentElement.scrollWidth")
            check(width <= 390, f"phone: the page is no wider than the screen ({width} px)")
            button = phone.locator("#alert-groups tbody tr button[data-action=dismiss]").first
            box = button.bounding_box()
            check(box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390,
                  f"phone: the group's buttons are on screen ({box})")
            phone.screenshot(path=os.path.join(args.out, "regressions-phone.png"), full_page=False)
            ten_thousand_runs(args, browser, errors)
            check(not errors, f"no console errors ({errors[:3]})")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return report()


if __name__ == "__main__":
    sys.exit(main())
