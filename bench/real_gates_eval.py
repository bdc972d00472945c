#!/usr/bin/env python3
"""Judges kept gate databases (bench/real_gates_collect.sh, bench/gpu_gate_calib.sh) with
`perfgate compare`, and measures their variance components independently of perfgate.

  real_gates_eval.py gates --perfgate BIN [--rounds K] [--sequential M] [--jobs J] DB...
                     [-- COMPARE_ARGS...]
      One line per database, then a summary per kind (aa-*/ab-*): exit codes, false alarms or
      detections, worst ratio, the gate's minimum detectable effect and its cost. --rounds K
      judges only the first K rounds (2K runs) of each database, on a copy. --sequential M
      replays ci/scripts/pr_more_rounds.sh on databases of M or more rounds: look 1 on the first
      K rounds, one more round per look while the gate says "continue", at most M - K + 1 looks.
      --jobs J judges J databases at a time.
  real_gates_eval.py context LOG
      From bench/real_calib_interleave.sh's context.log: per kind and level, the gates, the
      time span, the 1-minute load average after each gate (min/median/max) and the processes
      most often among the five busiest beside the gates (niceness/name).
  real_gates_eval.py variance DB...
      Per cell, pooled over the databases: the sd of log tpot within a run (repetitions) and of
      a run's mean around its commit's mean (runs), and the head/base ratio of A/B databases.

A database's base is the commit of its first run (every round starts or ends with the base, and
round 1 starts with it), or PERFGATE_EVAL_BASE when set; its head is the other commit.
"""
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor


BASE = os.environ.get("PERFGATE_EVAL_BASE")  # the base commit, where rounds alternate their order


def commits(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT id, git_commit FROM runs ORDER BY id").fetchall()
    con.close()
    base = BASE if BASE else rows[0][1]
    head = next(c for _, c in rows if c != base)
    return base, head, len(rows)


def first_rounds(db, rounds, tmp):
    out = os.path.join(tmp, os.path.basename(db))
    shutil.copy(db, out)
    os.chmod(out, 0o644)
    con = sqlite3.connect(out)
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY id LIMIT ?)",
                (2 * rounds,))
    con.commit()
    con.close()
    return out


def judge(pg, db, extra):
    base, head, _ = commits(db)
    p = subprocess.run([pg, "compare", "--db", db, "--base", base, "--head", head,
                        "--format", "json"] + extra, capture_output=True, text=True)
    if p.returncode not in (0, 1, 3):
        sys.exit(f"{db}: perfgate compare exit {p.returncode}: {p.stderr.strip()}")
    return p.returncode, json.loads(p.stdout)


def binom_cdf(k, n, p):
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def clopper_pearson(k, n, level=0.95):
    """Exact (Clopper-Pearson) interval for k successes in n: each end leaves (1 - level) / 2."""
    tail = (1 - level) / 2

    def solve(j, target):  # the p where the decreasing P(X <= j | p) equals target, by bisection
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if binom_cdf(j, n, mid) > target else (lo, mid)
        return (lo + hi) / 2

    lower = 0.0 if k == 0 else solve(k - 1, 1 - tail)  # P(X >= k | lower) = tail
    upper = 1.0 if k == n else solve(k, tail)          # P(X <= k | upper) = tail
    return lower, upper


def gate_wall(db):
    """Seconds of the whole gate (all its runs), from bench/real_gates_collect.sh's .done file."""
    try:
        return float(open(db + ".done").read().split()[2].rstrip("s"))
    except (OSError, IndexError, ValueError):
        return float("nan")


def variance_sources(j):
    """Where the cells' t tests took their run variance: "pooled x12 (history df 21)"."""
    count = defaultdict(int)
    dfs = [c["history_df"] for c in j["cells"] if c.get("history_df") is not None]
    for c in j["cells"]:
        count[c.get("variance_source") or "-"] += 1
    text = ", ".join(f"{k} x{n}" for k, n in sorted(count.items()))
    return text + (f" (history df {min(dfs):g}-{max(dfs):g})" if dfs else "")


def gates(argv):
    pg, rounds, seq, dbs, extra, jobs = None, None, None, [], [], 1
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--perfgate":
            pg, i = argv[i + 1], i + 2
        elif a == "--rounds":
            rounds, i = int(argv[i + 1]), i + 2
        elif a == "--sequential":
            seq, i = int(argv[i + 1]), i + 2
        elif a == "--jobs":
            jobs, i = int(argv[i + 1]), i + 2
        elif a == "--":
            extra, i = argv[i + 1:], len(argv)
        else:
            dbs.append(a)
            i += 1
    tmp = tempfile.mkdtemp()
    by_kind = defaultdict(list)
    if seq and not rounds:
        sys.exit("--sequential needs --rounds (the first rounds)")
    print("| gate | exit | verdict | worst ratio | min p adj | MDE one cell | MDE all cells | "
          "min effect | measured s | run s | rounds | run variance |")
    print("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    def judge_gate(db):  # the gate's last look: (exit code, JSON report, rounds per side used)
        own = tempfile.mkdtemp(dir=tmp)  # copies of databases of one name from several dirs
        looks = seq - rounds + 1 if seq else 1
        for look in range(1, looks + 1):
            used = rounds + look - 1 if rounds else commits(db)[2] // 2
            path = first_rounds(db, used, own) if rounds else db
            flags = ["--look", str(look), "--max-looks", str(looks)] if seq else []
            rc, j = judge(pg, path, extra + flags)
            if j.get("sequential", {}).get("next") != "continue":
                break
        return rc, j, used

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        judged = list(pool.map(judge_gate, dbs))
    for db, (rc, j, used) in zip(dbs, judged):
        ratios = [c["ratio"] for c in j["cells"] if c["ratio"] is not None]
        ps = [c["p_adjusted"] for c in j["cells"] if c["p_adjusted"] is not None]
        kind = os.path.basename(db).split("-")[0]
        runs_ratios = [c["runs_ratio"] for c in j["cells"] if c.get("runs_ratio") is not None]
        by_kind[kind].append((rc, j, max(ratios) if ratios else float("nan"), used,
                              max(runs_ratios) if runs_ratios else float("nan"), gate_wall(db)))
        fmt_e = lambda v: "-" if v is None else f"{100 * v:+.2f}%"
        print(f"| {os.path.relpath(db)} | {rc} | {j['verdict']} | {max(ratios):.4f} | "
              f"{min(ps):.3g} | {fmt_e(j.get('mde'))} | {fmt_e(j.get('mde_all_cells'))} | "
              f"{100 * j['min_effect']:.2f}% | {j.get('measured_seconds', 0):.1f} | "
              f"{j.get('run_seconds', 0):.0f} | {used} | {variance_sources(j)} |")
    shutil.rmtree(tmp)
    print()
    for kind, rows in sorted(by_kind.items()):
        n = len(rows)
        reg = sum(1 for r in rows if r[0] == 1)
        inc = sum(1 for r in rows if r[0] == 3)
        under = sum(1 for r in rows if r[1].get("underpowered"))
        mdes = sorted(r[1]["mde"] for r in rows if r[1].get("mde") is not None)
        worst = sorted(r[2] for r in rows)
        med = lambda v: v[len(v) // 2] if v else float("nan")
        what = "false alarms" if kind == "aa" else "detected"
        lo, hi = clopper_pearson(reg, n)
        lo90, hi90 = clopper_pearson(reg, n, 0.90)  # their ends are the one-sided 95% bounds
        runs = sorted(r[4] for r in rows)
        walls = sorted(r[5] for r in rows)
        print(f"{kind}: {n} gates; exit 1 ({what}) {reg}/{n} = {reg / n:.1%} "
              f"(exact 95% interval {lo:.1%}-{hi:.1%}; one-sided 95% bounds {lo90:.1%} / "
              f"{hi90:.1%}); exit 3 {inc}; underpowered {under}; "
              f"worst-cell ratio min/median/max {worst[0]:.3f}/{med(worst):.3f}/{worst[-1]:.3f}; "
              f"run-means ratio min/median/max {runs[0]:.3f}/{med(runs):.3f}/{runs[-1]:.3f}; "
              f"gate MDE median {100 * med(mdes):.2f}%; "
              f"measured s median {med(sorted(r[1].get('measured_seconds', 0) for r in rows)):.1f}; "
              f"run s median {med(sorted(r[1].get('run_seconds', 0) for r in rows)):.0f}; "
              f"gate wall s min/median/max {walls[0]:.0f}/{med(walls):.0f}/{walls[-1]:.0f}; "
              f"rounds per side mean {sum(r[3] for r in rows) / n:.2f}")


def variance(dbs):
    within = defaultdict(lambda: [0.0, 0])   # cell -> [sum sq, df]
    between = defaultdict(lambda: [0.0, 0])  # cell -> [sum sq of run means around commit, df]
    ratios = defaultdict(list)               # cell -> head/base ratio of mean run means (A/B)
    for db in dbs:
        base, head, _ = commits(db)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = con.execute(
            "SELECT r.git_commit, r.id, c.batch_size, c.seq_len, c.gen_tokens, p.decode_total_ms "
            "FROM repetitions p JOIN cells c ON c.id = p.cell_id JOIN runs r ON r.id = c.run_id "
            "WHERE c.status = 'ok'").fetchall()
        con.close()
        runs = defaultdict(list)
        for commit, run, b, s, g, dec in rows:
            if dec > 0:
                runs[(b, s, commit, run)].append(math.log(dec / (g - 1)))
        means = defaultdict(list)
        for (b, s, commit, run), v in runs.items():
            m = sum(v) / len(v)
            within[(b, s)][0] += sum((x - m) ** 2 for x in v)
            within[(b, s)][1] += len(v) - 1
            means[(b, s, commit)].append(m)
        for (b, s, commit), v in means.items():
            m = sum(v) / len(v)
            between[(b, s)][0] += sum((x - m) ** 2 for x in v)
            between[(b, s)][1] += len(v) - 1
        if os.path.basename(db).startswith("ab"):
            for (b, s, commit), v in means.items():
                if commit == head:
                    mb = means[(b, s, base)]
                    ratios[(b, s)].append(math.exp(sum(v) / len(v) - sum(mb) / len(mb)))
    print("| batch | prompt | sd within a run (reps) | sd of a run mean | df (runs) | "
          "A/B head/base ratios |")
    print("|--:|--:|--:|--:|--:|---|")
    for cell in sorted(within):
        w, b = within[cell], between[cell]
        rs = ", ".join(f"{r:.4f}" for r in ratios.get(cell, []))
        print(f"| {cell[0]} | {cell[1]} | {100 * math.sqrt(w[0] / w[1]):.3f}% | "
              f"{100 * math.sqrt(b[0] / b[1]) if b[1] else float('nan'):.3f}% | {b[1]} | "
              f"{rs or '-'} |")


def context(argv):
    by_sub, seen, first, last = defaultdict(list), defaultdict(lambda: defaultdict(int)), {}, {}
    for line in open(argv[0]):
        f = line.split()
        if len(f) < 7 or f[3] != "load":
            continue
        by_sub[f[1]].append(float(f[4]))
        first.setdefault(f[1], f[0])
        last[f[1]] = f[0]
        for proc in {f"{p.split('/')[0]}/{p.split('/', 2)[2]}" for p in f[8:]}:
            seen[f[1]][proc] += 1
    print("| gates | n | from | to | load after a gate, min / median / max | busiest beside "
          "(niceness/name: gates where among the top 5) |")
    print("|---|--:|---|---|---|---|")
    for sub in sorted(by_sub):
        v = sorted(by_sub[sub])
        top = sorted(seen[sub].items(), key=lambda kv: -kv[1])[:4]
        print(f"| {sub} | {len(v)} | {first[sub]} | {last[sub]} | {v[0]:.2f} / "
              f"{v[len(v) // 2]:.2f} / {v[-1]:.2f} | {', '.join(f'{k}: {c}' for k, c in top)} |")


if __name__ == "__main__":
    commands = {"gates": gates, "variance": variance, "context": context}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](sys.argv[2:])
