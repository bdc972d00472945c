#!/usr/bin/env python3
"""Whole-gate reference verdicts: docs/STATISTICS.md's rule reimplemented with scipy and
statsmodels, independently of perfgate's C++.

Usage: gen_gate_refs.py [OUTPUT]   (stdout without OUTPUT)

The committed output is tests/gate/fixtures/gate_refs.txt; ctest re-runs this script live and
tests/gate/gate_refs_test.cpp checks evaluate_gate against the fresh values. One tested cell and
metric per line, fields separated by ' | ', numbers as repr(), "None" where the gate reports null:

  gate CASE CORRECTION ALPHA POWER | cell | metric | min_effect | base | head | verdict | ratio |
    ci_low | ci_high | p_value | p_adjusted | mann_whitney_p | upper_bound | mde | test |
    mw_p_adjusted

base/head: the runs of one side, separated by ';', repetitions by ','. The rule, per test:
  - 2+ runs in all beyond one a side (df = k_base + k_head - 2 >= 1): the t test on run means of
    log values decides (scipy.stats.ttest_ind, pooled variance); ratio = exp(mean difference),
    its 95% interval (confidence_interval), the one-sided upper bound at level POWER
    (exp(d + t_POWER,df se)), and the MDE by the noncentral t (scipy.stats.nct) at ALPHA / m.
  - one run a side: the pooled Mann-Whitney decides (scipy.stats.mannwhitneyu, exact); ratio =
    the Hodges-Lehmann ratio; no upper bound and no MDE (drift cannot be estimated).
  - the deciding "slower" and "faster" p-values of every test of the case (every cell and metric)
    form one family each, adjusted by statsmodels' multipletests (holm or fdr_bh); the pooled
    Mann-Whitney p is reported as a diagnostic.
  - regression: adjusted slower p <= ALPHA and ratio >= 1 + min_effect; improvement: adjusted
    faster p <= ALPHA and ratio <= 1 / (1 + min_effect); else unchanged.
"""
import sys

import numpy as np
import scipy
import statsmodels
from scipy import optimize, stats
from statsmodels.stats.multitest import multipletests


def fmt(values):
    return ",".join(repr(float(v)) for v in values)


def num(v):
    return "None" if v is None else repr(float(v))


def mde(se, df, alpha, power):
    crit = stats.t.ppf(1 - alpha, df)
    delta = optimize.brentq(lambda d: stats.nct.sf(crit, df, d / se) - power, 0.0, 100 * se + 1)
    return float(np.expm1(delta))


def hodges_lehmann_interval(x, y, d):
    """Bauer's 95% interval, by inverting scipy's exact one-sided tests at 2.5%."""
    def p(delta, alternative):
        return stats.mannwhitneyu(y - delta, x, alternative=alternative, method="exact").pvalue

    mids = (d[:-1] + d[1:]) / 2
    low = next((d[k] for k in range(len(mids)) if p(mids[k], "greater") > 0.025), None)
    high = next((d[k + 1] for k in reversed(range(len(mids))) if p(mids[k], "less") > 0.025),
                None)
    return float(np.exp(low)), float(np.exp(high))


def one_test(base, head, power):
    """The deciding test of one cell and metric, before the correction across tests."""
    pooled_b, pooled_h = np.concatenate(base), np.concatenate(head)
    mw_slow = stats.mannwhitneyu(pooled_h, pooled_b, alternative="greater", method="exact").pvalue
    mw_fast = stats.mannwhitneyu(pooled_h, pooled_b, alternative="less", method="exact").pvalue
    out = {"mw": (float(mw_slow), float(mw_fast))}
    df = len(base) + len(head) - 2
    if df >= 1 and len(base) >= 1 and len(head) >= 1 and not (len(base) == 1 and len(head) == 1):
        mb = np.array([np.mean(np.log(g)) for g in base])
        mh = np.array([np.mean(np.log(g)) for g in head])
        greater = stats.ttest_ind(mh, mb, equal_var=True, alternative="greater")
        less = stats.ttest_ind(mh, mb, equal_var=True, alternative="less")
        ci = stats.ttest_ind(mh, mb, equal_var=True).confidence_interval(0.95)
        d = float(mh.mean() - mb.mean())
        se = d / float(greater.statistic)
        out.update(test="runs-t", p=(float(greater.pvalue), float(less.pvalue)),
                   ratio=float(np.exp(d)), ci=(float(np.exp(ci.low)), float(np.exp(ci.high))),
                   upper=float(np.exp(d + stats.t.ppf(power, df) * se)), se=se, df=df)
    else:
        x, y = np.log(pooled_b), np.log(pooled_h)
        d = np.sort(np.subtract.outer(y, x).ravel())
        out.update(test="mann-whitney", p=out["mw"], ratio=float(np.exp(np.median(d))),
                   ci=hodges_lehmann_interval(x, y, d), upper=None)
    return out


def gate_case(name, correction, alpha, power, tests):
    """tests: [(cell, metric, min_effect, base, head)]; one line per test."""
    results = [one_test(b, h, power) for _, _, _, b, h in tests]
    method = {"holm": "holm", "bh": "fdr_bh"}[correction]
    adj = [multipletests([r["p"][k] for r in results], method=method)[1] for k in (0, 1)]
    adj_mw = [multipletests([r["mw"][k] for r in results], method=method)[1] for k in (0, 1)]
    m = len(tests)
    lines = []
    for i, ((cell, metric, min_effect, base, head), r) in enumerate(zip(tests, results)):
        faster = r["p"][1] < r["p"][0]
        k = 1 if faster else 0
        if adj[0][i] <= alpha and r["ratio"] >= 1 + min_effect:
            verdict = "regression"
        elif adj[1][i] <= alpha and r["ratio"] <= 1 / (1 + min_effect):
            verdict = "improvement"
        else:
            verdict = "unchanged"
        ci = r.get("ci", (None, None))
        cell_mde = mde(r["se"], r["df"], alpha / m, power) if r["test"] == "runs-t" else None
        lines.append(
            f"gate {name} {correction} {alpha!r} {power!r} | {cell} | {metric} | {min_effect!r} | "
            f"{';'.join(fmt(g) for g in base)} | {';'.join(fmt(g) for g in head)} | {verdict} | "
            f"{num(r['ratio'])} | {num(ci[0])} | {num(ci[1])} | {num(r['p'][k])} | "
            f"{num(adj[k][i])} | {num(r['mw'][k])} | {num(r['upper'])} | {num(cell_mde)} | "
            f"{r['test']} | {num(adj_mw[k][i])}")
    return lines


def side(rng, runs, reps, median, run_sd, rep_sd):
    return [np.round(median * np.exp(rng.normal(0, run_sd) + rng.normal(0, rep_sd, reps)), 12)
            for _ in range(runs)]


def cells(rng, n, runs_b, runs_h, reps, run_sd, rep_sd, shifts, metric="tpot_ms", me=0.05):
    out = []
    for c in range(n):
        median = 1.0 + 0.1 * c
        out.append((c, metric, me, side(rng, runs_b, reps, median, run_sd, rep_sd),
                    side(rng, runs_h, reps, median * shifts.get(c, 1.0), run_sd, rep_sd)))
    return out


def main():
    rng = np.random.default_rng(20261202)
    lines = [f"# generated by tests/gate/gen_gate_refs.py with scipy {scipy.__version__}, "
             f"statsmodels {statsmodels.__version__}, numpy {np.__version__}"]
    # The shipped protocol: 12 cells, 3 runs x 10 repetitions a side, run drift; two cells slowed,
    # one sped up.
    lines += gate_case("shipped", "holm", 0.01, 0.95,
                       cells(rng, 12, 3, 3, 10, 0.004, 0.01, {2: 1.08, 5: 1.2, 9: 0.85}))
    lines += gate_case("shipped-bh", "bh", 0.01, 0.95,
                       cells(rng, 12, 3, 3, 10, 0.004, 0.01, {2: 1.08, 5: 1.2, 9: 0.85}))
    # Many short runs: 5 runs x 1 repetition a side. The t test has df 8; the pooled rank test
    # could never reach alpha / 4 with 5 vs 5 values (smallest p 1/252).
    lines += gate_case("short-runs", "holm", 0.01, 0.95,
                       cells(rng, 4, 5, 5, 1, 0.003, 0.003, {1: 1.10}))
    # Unequal sides and run sizes: 2 base runs, 4 head runs of 6 repetitions.
    unequal = cells(rng, 3, 2, 4, 6, 0.01, 0.02, {0: 1.3})
    unequal[1][3][0] = unequal[1][3][0][:3]
    lines += gate_case("unequal", "holm", 0.05, 0.9, unequal)
    # One run a side: the pooled Mann-Whitney decides, assuming no drift.
    lines += gate_case("one-run", "holm", 0.01, 0.95,
                       cells(rng, 4, 1, 1, 10, 0.0, 0.01, {3: 1.15}))
    # Two tested metrics in one family: decode latency (min effect 5%) and prefill (min effect
    # 10%), 6 cells, 3 runs x 8 repetitions; the run structure is shared, the values are not.
    tpot = cells(rng, 6, 3, 3, 8, 0.003, 0.01, {1: 1.10})
    prefill = cells(rng, 6, 3, 3, 8, 0.003, 0.01, {4: 1.3, 2: 1.06}, "prefill_ms", 0.10)
    lines += gate_case("metrics", "holm", 0.01, 0.95, tpot + prefill)
    text = "\n".join(lines) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
