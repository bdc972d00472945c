#!/usr/bin/env python3
"""Per-step decode time of one benchmark output, the way perfgate's tpot_ms and cv are made:
each repetition's mean decode step, then their median and their CV (sd / mean).

    decode_summary.py NAME FILE

FILE is a `perfgate run --json` export (one line per cell) or the JSON-lines protocol that an
--exec benchmark prints (docs/PROTOCOL.md: its `rep` lines)."""
import json
import statistics
import sys


def per_rep_means(decode_ms):
    return [sum(d) / len(d) for d in decode_ms if d]


def summary(means):
    if not means:
        return "no repetitions"
    cv = statistics.stdev(means) / statistics.mean(means) if len(means) > 1 else float("nan")
    return "decode %.4f ms/step (median of %d repetitions), CV %.3f%%" % (
        statistics.median(means), len(means), 100 * cv)


def main():
    name, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and "runs" in doc:
        for run in doc["runs"]:
            for cell in run["cells"]:
                k = cell["key"]
                label = "graphs=%s" % ("on" if k.get("cuda_graphs") else "off")
                if cell["status"] != "ok":
                    print("%s %s: %s (%s)" % (name, label, cell["status"], cell.get("reason")))
                    continue
                print("%s %s: %s" % (name, label, summary(per_rep_means(cell["samples"]["decode_ms"]))))
        return
    reps = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "rep":
            reps.append(obj["decode_ms"])
        elif isinstance(obj, dict) and obj.get("type") in ("error", "oom"):
            print("%s: %s (%s)" % (name, obj["type"], obj.get("reason")))
    print("%s: %s" % (name, summary(per_rep_means(reps))))


if __name__ == "__main__":
    main()
