#!/usr/bin/env python3
"""Side by side, the GPU kernels of one decode step in two kernel_breakdown.py outputs, and the
time between them (step time minus the kernels' sum: launch gaps and idle in the graph).

    kernel_compare.py A.json B.json
"""
import json
import sys


def load(path):
    d = json.load(open(path))
    rows = {}
    for r in d["kernels"]:  # names are cut at 160 characters: same-prefix kernels add up
        k = r["kernel"][:90]
        us, n = rows.get(k, (0.0, 0.0))
        rows[k] = (us + r["us_per_step"], n + r["calls_per_step"])
    return d, rows


(da, a), (db, b) = load(sys.argv[1]), load(sys.argv[2])
print(f"| kernel (first 90 characters) | {sys.argv[1]} µs/step (calls) | {sys.argv[2]} µs/step (calls) |")
print("| --- | --: | --: |")
for k in sorted(set(a) | set(b), key=lambda k: -max(a.get(k, (0, 0))[0], b.get(k, (0, 0))[0])):
    ua, na = a.get(k, (0.0, 0.0))
    ub, nb = b.get(k, (0.0, 0.0))
    if max(ua, ub) >= 5:
        print(f"| `{k}` | {ua:.1f} ({na:g}) | {ub:.1f} ({nb:g}) |")
for name, d, rows in ((sys.argv[1], da, a), (sys.argv[2], db, b)):
    step = d["graphs"]["tpot_ms_median"] * 1000
    kern = sum(us for us, _ in rows.values())
    print(f"\n{name}: step {step:.1f} µs, kernels {kern:.1f} µs, between kernels {step - kern:.1f} µs")
