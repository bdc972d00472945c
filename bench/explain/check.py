#!/usr/bin/env python3
"""bench/explain_gpu.sh's verdict: from each `perfgate compare --format json` document, per cell,
what the explanation says and whether it says what the head changed.

    check.py [--cpu] PATH:HEAD:COMPARE.json ...

Checks, per cell of decode latency (tpot_ms):
  extra_op   the decode phase names a row with "sigmoid" in its name (appeared, grew, or a changed
             ops/kernels count), and what the explanation accounts for is within 15% of the tpot
             change: the profiled kernels' time (busy on the device's timeline; the rows' sum
             without one) plus the gaps that come with the kernels the head added, at the base's
             mean gap per kernel in the timed runs (the `timed` object of the explain JSON)
  item_sync  one more host-device sync per decode step
With --cpu (explain_gpu.sh --tiny) the timing check is shown, not enforced (a CPU's host-op times
under the profiler are not a GPU's device time), and so is the naming on the aoti path (an
AOTInductor package's CPU code is generated C++, not ATen ops the profiler sees).
Prints a markdown table (the kernels' delta, the added kernels' gaps, their sum and its share of
the tpot change, and the kernels' share alone); exits 1 when a check fails, 2 when a
document is missing or malformed.
"""
import json
import sys

TOLERANCE = 0.15


def listed_delta_ms(decode):
    """(the kernels' time, the added kernels' gaps or None, their sum) per decode step, as the
    explanation's lines list them: from the `timed` object where there is one (the kernels' busy
    time, and the gaps the changed kernel count brings at the base's gap per kernel in the timed
    runs), else the rows alone (the kernels that grew plus the other kernels' line)."""
    t = decode.get("timed")
    if t:
        kernels = t["head_kernel_ms"] - t["base_kernel_ms"]
        return kernels, t["launch_gaps_delta_ms"], t["listed_delta_ms"]
    rows = sum(r["delta_ms"] for r in decode.get("grew", [])) + decode.get("other_delta_ms", 0.0)
    return rows, None, rows


def counter(decode, name):
    for c in decode.get("counters", []):
        if c["counter"] == name:
            return c
    return None


def names_sigmoid(decode):
    rows = decode.get("appeared", []) + decode.get("grew", [])
    for name in ("ops", "kernels"):
        c = counter(decode, name)
        if c:
            rows += c.get("by_name", [])
    hits = [r for r in rows if "sigmoid" in r["name"].lower()]
    return hits[0] if hits else None


def short(name, n=48):
    name = " ".join(name.split())
    return name if len(name) <= n else name[:n - 3] + "..."


def main(argv):
    cpu = "--cpu" in argv
    time_enforced = not cpu
    specs = [a for a in argv if not a.startswith("--")]
    if not specs:
        print(__doc__, file=sys.stderr)
        return 2
    failures, rows = [], []
    for spec in specs:
        path, head, file = spec.split(":", 2)
        try:
            with open(file) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print("cannot read %s: %s" % (file, e), file=sys.stderr)
            return 2
        cells = [c for c in doc.get("cells", []) if c.get("metric") == "tpot_ms"]
        if not cells:
            failures.append("%s %s: no tpot cell compared" % (path, head))
        for c in cells:
            label = "%s %s P%s" % (path, head, c["key"]["seq_len"])
            e = c.get("explain") or {}
            if not e.get("available"):
                failures.append("%s: no explanation (%s)" % (label, e.get("missing")))
                rows.append([label, c.get("verdict")] + ["-"] * 7 + ["no explanation"])
                continue
            d = e.get("decode") or {}
            tpot = e.get("tpot_change_ms")
            rows_ms, gap_ms, listed = listed_delta_ms(d)
            ratio = listed / tpot if tpot else None
            rows_ratio = rows_ms / tpot if tpot else None
            syncs = counter(d, "syncs")
            sync_text = "%g -> %g" % (syncs["base"], syncs["head"]) if syncs else "="
            named = ""
            ok = True
            if head == "extra_op":
                hit = names_sigmoid(d)
                named = ("%s %g -> %g/step" % (short(hit["name"]), hit["base_count"],
                                               hit["head_count"]) if hit else "NOT NAMED")
                if not hit and not (cpu and path == "aoti"):
                    ok = False
                    failures.append("%s: the explanation names no sigmoid row" % label)
                if time_enforced and gap_ms is None:
                    ok = False
                    failures.append("%s: the explanation has no timed gaps (a median or a "
                                    "kernel count is missing)" % label)
                if time_enforced and (ratio is None or abs(ratio - 1) > TOLERANCE):
                    ok = False
                    failures.append("%s: listed deltas (kernels and the added kernels' gaps) "
                                    "%.4f ms vs tpot change %s ms"
                                    % (label, listed, "%.4f" % tpot if tpot else "n/a"))
            elif head == "item_sync":
                if not syncs or syncs["head"] - syncs["base"] < 1 - 1e-9:
                    ok = False
                    failures.append("%s: no added host-device sync per decode step" % label)
                d2h = counter(d, "d2h_copies")
                named = "d2h %g -> %g" % (d2h["base"], d2h["head"]) if d2h else "d2h ="
            fmt = lambda v, f="%.4f": f % v if v is not None else "n/a"  # noqa: E731
            rows.append([label, c.get("verdict"), e.get("kind"), fmt(tpot), fmt(rows_ms),
                         fmt(gap_ms), fmt(listed), fmt(ratio, "%.2f"), fmt(rows_ratio, "%.2f"),
                         "%s; syncs %s; %s" % (named, sync_text, "ok" if ok else "FAIL")])
    print("| cell | verdict | rows | tpot change ms | kernels delta ms | added kernels' gaps "
          "ms | listed delta ms | listed / tpot | kernels / tpot | "
          "named; syncs; check |")
    print("| --- | --- | --- | --: | --: | --: | --: | --: | --: | --- |")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print()
    print("timing check (within %d%%): %s" % (TOLERANCE * 100,
                                              "enforced" if time_enforced else "reported only"))
    for f in failures:
        print("- FAIL " + f)
    if not failures:
        print("all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
