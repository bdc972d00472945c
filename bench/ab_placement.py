#!/usr/bin/env python3
"""Does a cell's paired change in an A/B run repeat from one gate to the next? (docs/AB.md,
"Placement")

  bench/ab_placement.py GATE.db [GATE.db ...]

Each GATE.db holds the A/B runs of one `perfgate ab` gate, named ...-CONDITION.db (as
bench/ab_gpu_study.sh and bench/gpu_ab_gates.sh name them). For every A/B run k and cell c of a
gate: d[c][k], the mean over its pairs of log(head tpot / base tpot). Per gate: the spread of d
across the A/B runs (the sd the paired test's unit sees) and the within-run standard error. Per
pair of gates of one condition:
  r(pattern)  the correlation of d[c][k] - mean_k d[c][k] between the two gates: near 1 when the
              k-th opening of a cell lands alike in both gates (placement decided by the
              allocator's history), near 0 when each opening is a fresh draw
  r(means)    the correlation of the cells' means mean_k d[c][k]: near 1 when the per-cell bias
              is the same in both gates, a bias that more A/B runs never average out
  sd(diff)    the sd over (c, k) of the difference of d between the two gates, in percent
Per gate, the sweep: D[k], the mean over the cells of d[c][k], its mean over the A/B runs and the
one-sided p of a t test on the D[k] (df = A/B runs - 1). That is what a test of the whole sweep
with the A/B run as its unit would see; it is not the gate's rule, which tests every cell.
Per condition (3 or more gates): for every cell, the variance of its gate means mean_k d[c][k]
across gates over what the gates' own A/B runs predict for it (the mean of var_k d[c][k] / n).
About 1 when the A/B runs of a gate replicate everything that differs between gates; above 1
when something is shared by the A/B runs of one gate but not by two gates (with
--share-workers: the two worker processes).
"""
import itertools
import math
import re
import sqlite3
import statistics as st
import sys
from collections import defaultdict


def paired_changes(path):
    con = sqlite3.connect(path)
    out = defaultdict(list)  # (batch, prompt) -> [d per A/B run, in run order]
    within = []
    runs = con.execute("SELECT id, ab_uuid FROM runs WHERE ab_side = 'base' ORDER BY id").fetchall()
    for base_id, uuid in runs:
        (head_id,) = con.execute(
            "SELECT id FROM runs WHERE ab_uuid = ? AND ab_side = 'head'", (uuid,)).fetchone()
        cells = con.execute(
            "SELECT id, batch_size, seq_len FROM cells WHERE run_id = ? AND status = 'ok' "
            "ORDER BY ordinal", (base_id,)).fetchall()
        for base_cell, batch, prompt in cells:
            row = con.execute(
                "SELECT id FROM cells WHERE run_id = ? AND batch_size = ? AND seq_len = ? AND "
                "status = 'ok'", (head_id, batch, prompt)).fetchone()
            if not row:
                continue
            tpot = {}
            for side, cell in (("b", base_cell), ("h", row[0])):
                tpot[side] = dict(con.execute(
                    "SELECT rep, decode_total_ms / decode_steps FROM repetitions "
                    "WHERE cell_id = ?", (cell,)))
            logs = [math.log(tpot["h"][r] / tpot["b"][r]) for r in tpot["b"] if r in tpot["h"]]
            out[(batch, prompt)].append(st.mean(logs))
            if len(logs) > 1:
                within.append(st.stdev(logs) / math.sqrt(len(logs)))
    return out, within


def corr(x, y):
    mx, my = st.mean(x), st.mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def main(paths):
    gates = defaultdict(list)
    for path in paths:
        m = re.search(r"g-(?:\d+-)*(\d+)-([a-z0-9-]+)\.db$", path)
        if not m:
            sys.exit(f"{path}: not named ...-N-CONDITION.db")
        d, within = paired_changes(path)
        gates[m.group(2)].append((path, d, within))
    print("| condition | gate | A/B runs | sd of d across A/B runs (median cell, %) | "
          "within-run se (median, %) |")
    print("| --- | --- | --: | --: | --: |")
    for cond, gs in sorted(gates.items()):
        for path, d, within in gs:
            sds = [st.stdev(v) for v in d.values() if len(v) > 1]
            n = max(len(v) for v in d.values())
            print(f"| {cond} | {path.rsplit('/', 1)[-1]} | {n} | "
                  f"{100 * st.median(sds):.3f} | {100 * st.median(within):.3f} |")
    print()
    print("| condition | gate pair | r(pattern) | r(means) | sd(diff) % |")
    print("| --- | --- | --: | --: | --: |")
    for cond, gs in sorted(gates.items()):
        for (pa, da, _), (pb, db, _) in itertools.combinations(gs, 2):
            keys = [c for c in da if c in db and len(da[c]) == len(db[c])]
            pat_a, pat_b, mean_a, mean_b, diff = [], [], [], [], []
            for c in keys:
                ma, mb = st.mean(da[c]), st.mean(db[c])
                mean_a.append(ma)
                mean_b.append(mb)
                pat_a += [v - ma for v in da[c]]
                pat_b += [v - mb for v in db[c]]
                diff += [a - b for a, b in zip(da[c], db[c])]
            name = f"{pa.rsplit('/', 1)[-1]} / {pb.rsplit('/', 1)[-1]}"
            print(f"| {cond} | {name} | {corr(pat_a, pat_b):.2f} | {corr(mean_a, mean_b):.2f} | "
                  f"{100 * st.stdev(diff):.3f} |")
    sweep_table(gates)
    replication_table(gates)


def student_t_sf(t, df):
    try:
        from scipy import stats
        return float(stats.t.sf(t, df))
    except ImportError:  # the table then says so
        return float("nan")


def sweep_table(gates):
    print()
    print("| condition | gate | A/B runs | cells | sweep mean of d (%) | sd of D across A/B runs (%) "
          "| t | one-sided p |")
    print("| --- | --- | --: | --: | --: | --: | --: | --: |")
    for cond, gs in sorted(gates.items()):
        for path, d, _ in gs:
            n = min(len(v) for v in d.values())
            cells = [c for c in d if len(d[c]) >= n]
            runs = [st.mean(d[c][k] for c in cells) for k in range(n)]
            if n < 2:
                continue
            mean, sd = st.mean(runs), st.stdev(runs)
            t = mean / (sd / math.sqrt(n)) if sd > 0 else float("inf")
            print(f"| {cond} | {path.rsplit('/', 1)[-1]} | {n} | {len(cells)} | {100 * mean:+.3f} "
                  f"| {100 * sd:.3f} | {t:+.2f} | {student_t_sf(t, n - 1):.4f} |")


def replication_table(gates):
    print()
    print("| condition | gates | var(gate means) / predicted, median cell | range over cells |")
    print("| --- | --: | --: | --- |")
    for cond, gs in sorted(gates.items()):
        if len(gs) < 3:
            continue
        ratios = []
        for c in gs[0][1]:
            if not all(c in d and len(d[c]) > 1 for _, d, _ in gs):
                continue
            predicted = st.mean(st.variance(d[c]) / len(d[c]) for _, d, _ in gs)
            if predicted > 0:
                ratios.append(st.variance([st.mean(d[c]) for _, d, _ in gs]) / predicted)
        if ratios:
            print(f"| {cond} | {len(gs)} | {st.median(ratios):.2f} | "
                  f"{min(ratios):.2f}-{max(ratios):.2f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
