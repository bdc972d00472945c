#!/usr/bin/env python3
"""Judge the GPU rounds of bench/gpu_seq_gates.sh as sequential gates, before and after.

  bench/seq_gates_eval.py TARBALL [TARBALL...] [--max-looks 6] [--min-effect 0.005] [--out FILE]

TARBALL is seq-gates-CALL.tar.gz (log.txt, runs.log, shas.txt: A B C5 C10, history.db,
timing.db, r-CALL-N.db: one round of A, B, C5, C10 each). Several tarballs are the calls of one
machine, call 1 first: the first one's history and timing runs serve them all, and their rounds
follow each other in call order. perfgate is $PERFGATE_BIN or /work/main/build/perfgate.

Conditions: A/A (base A, head B), +0.5% (A vs C5), +1% (A vs C10).

After (the gate as shipped now, with trusted history): disjoint sequential gates from
consecutive rounds. A gate starting at round s judges look k on rounds s..s+k-1 of both sides
(one store made by `perfgate import` of those rounds' exports), with
`compare --history history.db --look k --max-looks M --min-effect E --format json`, and stops at
the first look whose sequential.next is "stop" (or at look M); the next gate starts at the next
round. A gate that runs out of rounds before it stops is reported as unfinished and left out of
the rates.

Before (the action's earlier defaults: `rounds: 3`, `max-rounds` = rounds, no trusted history):
disjoint fixed gates of 3 consecutive rounds, one look at the full alpha, the same min effect.

GPU-seconds of a gate: the wall times (runs.log) of both sides' runs it used, plus the one-off
cost of profiling each side's first round (the action profiles a side's first round only): twice
the difference of timing.db's profile-on and profile-off runs at the rounds' repetitions.
Rates: exact Clopper-Pearson 95% intervals (scipy).
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
from math import exp, log

from scipy.stats import binomtest

PERFGATE = os.environ.get("PERFGATE_BIN", "/work/main/build/perfgate")
CONDITIONS = [("A/A", "B"), ("+0.5%", "C5"), ("+1%", "C10")]


def cp(k, n):
    if n == 0:
        return "-"
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{k} / {n} ({100 * ci.low:.1f}-{100 * ci.high:.1f}%)"


def pg(*args, check=True):
    r = subprocess.run([PERFGATE, *args], capture_output=True, text=True)
    if check and r.returncode not in (0, 1, 3):
        sys.exit(f"perfgate {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r


class Study:
    def __init__(self, tarballs, work):
        self.wall = {}  # (db basename, side) -> seconds
        self.timing = {}  # (reps, profile) -> seconds
        self.rounds = []
        for i, tarball in enumerate(tarballs):
            d = os.path.join(work, f"call-{i + 1}")
            os.makedirs(d)
            with tarfile.open(tarball) as t:
                t.extractall(d, filter="data")
            if i == 0:
                self.dir = d  # history.db, timing.db and shas.txt come from the first call
            self.rounds += self.read_call(d)
        with open(os.path.join(self.dir, "shas.txt")) as f:
            self.sha = dict(zip(["A", "B", "C5", "C10"], f.read().split()))
        self.work = work
        self.exports = {}
        for path in self.rounds:
            out = os.path.join(work, os.path.basename(path) + ".json")
            with open(out, "w") as f:
                f.write(pg("export", "--db", path, "--format", "json").stdout)
            self.exports[path] = out
        self.reps = self.round_reps()

    def read_call(self, d):
        """One call's rounds in order, and its runs' wall times."""
        rounds = sorted(
            (int(m.group(1)), int(m.group(2)), m.group(0))
            for m in (re.fullmatch(r"r-(\d+)-(\d+)\.db", n) for n in os.listdir(d))
            if m
        )
        with open(os.path.join(d, "runs.log")) as f:
            for line in f:
                p = line.split()
                db, side, sec, args = p[0], p[1], float(p[2]), p[3:]
                if db == "timing.db":
                    reps = int(args[args.index("--reps") + 1])
                    self.timing[(reps, args[args.index("--profile") + 1])] = sec
                elif db.startswith("r-"):
                    self.wall[(db, side)] = sec
        return [os.path.join(d, n) for _, _, n in rounds]

    def round_reps(self):
        con = sqlite3.connect(self.rounds[0])
        cfg = json.loads(con.execute("select config from runs limit 1").fetchone()[0])
        return int(cfg.get("reps", 10))

    def profile_cost(self):
        on, off = self.timing.get((self.reps, "on")), self.timing.get((self.reps, "off"))
        return 2 * (on - off) if on is not None and off is not None else 0.0

    def store(self, rounds):
        db = os.path.join(self.work, "look.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        pg("import", "--db", db, *[self.exports[r] for r in rounds])
        return db

    def judge(self, rounds, head, history, look, max_looks, min_effect):
        db = self.store(rounds)
        args = ["compare", "--db", db, "--base", self.sha["A"], "--head", self.sha[head],
                "--min-effect", str(min_effect), "--format", "json",
                "--look", str(look), "--max-looks", str(max_looks)]
        if history:
            args += ["--history", os.path.join(self.dir, "history.db")]
        r = pg(*args)
        d = json.loads(r.stdout)
        d["_exit"] = r.returncode
        return d

    def seconds(self, rounds, head):
        s = 0.0
        for r in rounds:
            b = os.path.basename(r)
            s += self.wall[(b, "A")] + self.wall[(b, head)]
        return s + self.profile_cost()


def worst(d):
    cells = [c for c in d["cells"] if c.get("metric", "tpot_ms") == "tpot_ms" and c.get("ratio")]
    return max(c["ratio"] for c in cells) if cells else float("nan")


def sequential_gates(st, head, max_looks, min_effect, history=True):
    gates, s, n = [], 0, len(st.rounds)
    while s < n:
        looks = []
        for k in range(1, max_looks + 1):
            if s + k > n:
                break
            d = st.judge(st.rounds[s:s + k], head, history, k, max_looks, min_effect)
            seq = d.get("sequential") or {}
            looks.append((k, d["verdict"], seq.get("next"), seq.get("reason"), worst(d), d.get("mde")))
            if seq.get("next") == "stop" or k == max_looks:
                break
        k, verdict, nxt, reason, w, mde = looks[-1]
        done = nxt == "stop" or k == max_looks
        gates.append(dict(start=s + 1, rounds=k, verdict=verdict, reason=reason, done=done,
                          worst=w, mde=mde, seconds=st.seconds(st.rounds[s:s + k], head),
                          looks=looks))
        s += k
    return gates


def fixed_gates(st, head, rounds, min_effect, history=False):
    gates = []
    for s in range(0, len(st.rounds) - rounds + 1, rounds):
        d = st.judge(st.rounds[s:s + rounds], head, history, 1, 1, min_effect)
        gates.append(dict(start=s + 1, rounds=rounds, verdict=d["verdict"], reason="fixed",
                          done=True, worst=worst(d), mde=d.get("mde"),
                          seconds=st.seconds(st.rounds[s:s + rounds], head), looks=[]))
    return gates


def summarize(name, cond, gates):
    done = [g for g in gates if g["done"]]
    n = len(done)
    hits = sum(g["verdict"] == "regression" for g in done)
    inconcl = sum(g["verdict"] == "inconclusive" for g in done)
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    return dict(design=name, cond=cond, n=n, hits=hits, inconclusive=inconcl,
                unfinished=len(gates) - n,
                rounds=mean([g["rounds"] for g in done]), seconds=mean([g["seconds"] for g in done]),
                reasons=", ".join(f"{r} {c}" for r, c in sorted(
                    {g["reason"]: sum(h["reason"] == g["reason"] for h in done) for g in done}.items())))


def effect_sizes(st):
    """Per cell: ratio of the mean run tpot of X to A over all rounds, and the noise of A and B."""
    con_runs = {}
    for path in st.rounds:
        with open(st.exports[path]) as f:
            for run in json.load(f)["runs"]:
                side = next(k for k, v in st.sha.items() if v == run["git"]["commit"])
                for c in run["cells"]:
                    key = (c["key"]["batch_size"], c["key"]["seq_len"])
                    reps = c["samples"]["decode_ms"]
                    rep_means = [sum(r) / len(r) for r in reps]
                    con_runs.setdefault((side, key), []).append(
                        (c["metrics"]["tpot_ms"], sum(rep_means) / len(rep_means),
                         statistics.stdev(rep_means) / len(rep_means) ** 0.5))
    keys = sorted({k for _, k in con_runs})
    rows = []
    for key in keys:
        a = [x[0] for x in con_runs[("A", key)]]
        row = dict(key=key)
        for side in ("B", "C5", "C10"):
            x = [v[0] for v in con_runs[(side, key)]]
            row[side] = statistics.mean(x) / statistics.mean(a)
        logs = {s: [log(v[0]) for v in con_runs[(s, key)]] for s in ("A", "B")}
        row["run_sd"] = statistics.mean(statistics.stdev(v) for v in logs.values())
        row["within_se"] = statistics.mean(
            v[2] / v[1] for s in ("A", "B") for v in con_runs[(s, key)])
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tarballs", nargs="+", metavar="TARBALL")
    ap.add_argument("--max-looks", type=int, default=6)
    ap.add_argument("--min-effect", type=float, default=0.005)
    ap.add_argument("--out", help="also write the per-gate details here (markdown)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="seq-eval-")
    try:
        st = Study(a.tarballs, work)
        pc = st.profile_cost()
        print(f"rounds: {len(st.rounds)}; repetitions a run: {st.reps}; commits A B C5 C10: "
              + " ".join(st.sha[k][:12] for k in ("A", "B", "C5", "C10")))
        walls = [v for (db, s), v in st.wall.items() if db.startswith("r-")]
        print(f"round runs' wall time: mean {statistics.mean(walls):.2f} s over {len(walls)} runs "
              f"(min {min(walls):.2f}, max {max(walls):.2f})")
        print("timing runs (one run of A): " + ", ".join(
            f"reps {r} profile {p}: {v:.2f} s" for (r, p), v in sorted(st.timing.items())))
        print(f"one-off profile cost a gate (both sides' first round, reps {st.reps}): {pc:.2f} s")
        print()

        eff = effect_sizes(st)
        print(f"## Measured effect sizes (all {len(st.rounds)} rounds; ratio of mean run tpot vs A)")
        print()
        print("| cell (batch, prompt) | B / A | C5 / A | C10 / A | run sd (log, A & B) | within-run se |")
        print("|---|--:|--:|--:|--:|--:|")
        for r in eff:
            print(f"| {r['key'][0]} x {r['key'][1]} | {r['B']:.4f} | {r['C5']:.4f} | {r['C10']:.4f} "
                  f"| {100 * r['run_sd']:.3f}% | {100 * r['within_se']:.3f}% |")
        gm = lambda s: exp(statistics.mean(log(r[s]) for r in eff))
        print(f"| geometric mean of the cells | {gm('B'):.4f} | {gm('C5'):.4f} | {gm('C10'):.4f} "
              f"| {100 * statistics.mean(r['run_sd'] for r in eff):.3f}% "
              f"| {100 * statistics.mean(r['within_se'] for r in eff):.3f}% |")
        print()
        for cond, head in CONDITIONS[1:]:
            d = st.judge(st.rounds, head, False, 1, 1, 0.0)
            ratios = sorted(c["ratio"] for c in d["cells"] if c.get("metric") == "tpot_ms")
            print(f"{cond} ({head}), the test's estimate over all rounds (ratio of geometric means "
                  f"of run means, {len(st.rounds)} runs a side): median cell {ratios[len(ratios) // 2]:.4f}, "
                  f"range {ratios[0]:.4f}-{ratios[-1]:.4f}")
        print()

        designs = [
            (f"after: history, sequential, 1 round a look, max looks {a.max_looks}",
             lambda h: sequential_gates(st, h, a.max_looks, a.min_effect, True)),
            ("before: no history, fixed 3 rounds, one look",
             lambda h: fixed_gates(st, h, 3, a.min_effect, False)),
            ("history, fixed 1 round, one look",
             lambda h: fixed_gates(st, h, 1, a.min_effect, True)),
            ("no history, sequential, 1 round a look (for contrast)",
             lambda h: sequential_gates(st, h, a.max_looks, a.min_effect, False)),
        ]
        rows, details = [], []
        for name, fn in designs:
            for cond, head in CONDITIONS:
                gates = fn(head)
                rows.append(summarize(name, cond, gates))
                details.append((name, cond, gates))
        print(f"## Gates at min effect {a.min_effect:g} (alpha 0.01, Holm over 12 cells)")
        print()
        print("| design | condition | gates | regressions (95% CI) | inconclusive | unfinished "
              "| mean rounds a side | mean GPU-s a gate | stop reasons |")
        print("|---|---|--:|---|--:|--:|--:|--:|---|")
        for r in rows:
            print(f"| {r['design']} | {r['cond']} | {r['n']} | {cp(r['hits'], r['n'])} "
                  f"| {r['inconclusive']} | {r['unfinished']} | {r['rounds']:.2f} "
                  f"| {r['seconds']:.1f} | {r['reasons']} |")
        print()
        if a.out:
            with open(a.out, "w") as f:
                f.write("# Every gate, every look\n\n")
                f.write("| design | condition | start round | rounds | verdict | stop | worst ratio "
                        "| gate MDE | GPU-s | looks (k: verdict, next, reason, worst ratio) |\n")
                f.write("|---|---|--:|--:|---|---|--:|--:|--:|---|\n")
                for name, cond, gates in details:
                    for g in gates:
                        looks = "; ".join(f"{k}: {v}, {nx}, {rs}, {w:.4f}"
                                          for k, v, nx, rs, w, _ in g["looks"])
                        mde = f"{100 * g['mde']:.2f}%" if g["mde"] is not None else "none"
                        f.write(f"| {name} | {cond} | {g['start']} | {g['rounds']} | {g['verdict']} "
                                f"| {g['reason'] if g['done'] else 'unfinished'} | {g['worst']:.4f} "
                                f"| {mde} | {g['seconds']:.1f} | {looks} |\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
