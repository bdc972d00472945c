"""Shared by the browser tests: ok/FAIL lines with the failures collected, and JSON from the API."""

import json
import urllib.request

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def get_json(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.load(r)
