"""Shared by the browser tests: their command line, ok/FAIL lines with the failures collected,
JSON from the API, and a page whose console errors are collected."""

import argparse
import json
import os
import urllib.request

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def get_json(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.load(r)


def browser_test_args(add=None):
    """--perfgate, --seed (web_seed), --out (screenshots, created) and --chromium; `add` may add
    a test's own flags to the parser."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfgate", required=True)
    ap.add_argument("--seed", required=True, help="web_seed binary")
    ap.add_argument("--out", required=True, help="directory for screenshots")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    if add:
        add(ap)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    return args


def new_page(browser, errors, width=1440, height=900, headers=None, **context):
    """A page in a fresh context whose console errors and uncaught exceptions go to `errors`."""
    page = browser.new_context(viewport={"width": width, "height": height},
                               extra_http_headers=headers or {}, **context).new_page()
    page.on("console", lambda m: errors.append(f"{page.url}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    return page


def report():
    """Prints the count of failed checks; the test's exit code (1 if any failed)."""
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0
