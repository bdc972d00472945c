#!/usr/bin/env python3
"""Reference values for perfgate's paired test of A/B runs (stats/paired.h), computed with scipy.

Usage: gen_paired_refs.py [OUTPUT]   (stdout without OUTPUT)

The committed output is tests/stats/fixtures/paired_refs.txt; ctest also re-runs this script live
(stats.paired_refs_live). The rule is written out here from docs/STATISTICS.md "Paired A/B runs",
independently of the C++: pairs 2j and 2j+1 of an A/B run form ABBA block j, whose unit is the mean
of the two pairs' log(head/base); an odd last pair is dropped. One A/B run: scipy.stats.ttest_1samp
on the block log ratios (df = blocks - 1) and its confidence_interval. Several: ttest_1samp on the
A/B runs' mean block log ratios (df = runs - 1). One case per line, fields separated by ' | ', numbers as repr():
  paired | base | head | head_position | log_ratio | se | df | p_slower | p_faster | ci_low |
    ci_high | upper_95 | mde
      base/head/head_position: A/B runs separated by ';', pairs by ','. upper_95: the one-sided
      95% upper bound exp(d + t.ppf(0.95, df) se); mde: the slowdown detected with power 0.95 by
      the one-sided t test at alpha 0.01/12: the noncentral t's power as an integral over the
      chi distribution (scipy.integrate.quad), solved by brentq, and checked against
      scipy.stats.nct (to 1e-6; 1e-3 at df 1, where nct's far tail loses digits).
  clopper_pearson | k | n | level | low | high    scipy.stats.binomtest(k, n).proportion_ci(level,
                                                  method='exact'), for perfgate-sim's rates
"""
import sys

import numpy as np
import scipy
from scipy import integrate, optimize, stats

ALPHA, POWER = 0.01 / 12, 0.95


def fmt(values):
    return ",".join(repr(float(v)) for v in values)


def blocks(base, head, pos):
    n = len(base) - len(base) % 2
    lr = np.log(np.asarray(head[:n]) / np.asarray(base[:n]))
    return 0.5 * (lr[0::2] + lr[1::2])


def power(crit, df, lam):
    """The one-sided t test's power at noncentrality lam: the noncentral t's tail beyond crit,
    written as an integral over the chi distribution of the variance estimate (scipy.integrate.quad,
    with the normal tail's step at u = lam sqrt(df) / crit as a breakpoint)."""
    f = lambda u: stats.chi.pdf(u, df) * stats.norm.sf(crit * u / np.sqrt(df) - lam)
    edge, top = lam * np.sqrt(df) / crit, np.sqrt(df) + 15.0  # chi mass beyond top: < 1e-40
    return integrate.quad(f, 0.0, top, points=[edge] if edge < top else None, limit=500,
                          epsabs=1e-15, epsrel=1e-13)[0]


def mde(se, df):
    crit = stats.t.ppf(1 - ALPHA, df)
    hi = crit + 4.0
    while power(crit, df, hi) < POWER:
        hi *= 2.0
    lam = optimize.brentq(lambda d: power(crit, df, d) - POWER, 0.0, hi, xtol=1e-13)
    # scipy.stats.nct agrees to 1e-3 even at df 1, where its tail loses digits (748.65 against
    # the integral's 749.05 standard errors); elsewhere to 1e-9.
    lam_nct = optimize.brentq(lambda d: stats.nct.sf(crit, df, d) - POWER, 0.0, 2 * hi)
    assert abs(lam_nct / lam - 1) < (1e-3 if df < 2 else 1e-6), (df, lam, lam_nct)
    return float(np.expm1(lam * se))


def case(runs):
    units = [blocks(*r) for r in runs]
    if len(units) == 1:
        u = units[0]
        res = stats.ttest_1samp(u, 0.0, alternative="greater")
        less = stats.ttest_1samp(u, 0.0, alternative="less")
        two = stats.ttest_1samp(u, 0.0)
        ci = two.confidence_interval(0.95)
        d, df = float(np.mean(u)), len(u) - 1
        se = float(stats.sem(u))
        p_slower, p_faster, lo, hi = res.pvalue, less.pvalue, ci.low, ci.high
    else:
        means = np.array([np.mean(u) for u in units])
        res = stats.ttest_1samp(means, 0.0, alternative="greater")
        less = stats.ttest_1samp(means, 0.0, alternative="less")
        ci = stats.ttest_1samp(means, 0.0).confidence_interval(0.95)
        d, df, se = float(np.mean(means)), len(means) - 1, float(stats.sem(means))
        p_slower, p_faster, lo, hi = res.pvalue, less.pvalue, ci.low, ci.high
    upper = np.exp(d + stats.t.ppf(POWER, df) * se)
    fields = [";".join(fmt(r[i]) for r in runs) for i in range(3)]
    nums = [d, se, float(df), p_slower, p_faster, np.exp(lo), np.exp(hi), upper, mde(se, df)]
    return "paired | " + " | ".join(fields) + " | " + " | ".join(repr(float(v)) for v in nums)


def ab_run(rng, pairs, shift, noise, run_effect=0.0, drift=0.0):
    """One A/B run: a shared run effect and a linear drift that pairing cancels, ABBA order."""
    base, head, pos = [], [], []
    t = 0
    for j in range(pairs):
        if j % 2 == 0:
            head_first = bool(rng.random() < 0.5)  # the block's coin: AB,BA or BA,AB
        else:
            head_first = not head_first
        order = [("h", 0), ("b", 1)] if head_first else [("b", 0), ("h", 1)]
        vals = {}
        for side, _ in order:
            level = run_effect + drift * t + (shift if side == "h" else 0.0)
            vals[side] = float(np.round(np.exp(level + rng.normal(0.0, noise)), 12))
            t += 1
        base.append(vals["b"])
        head.append(vals["h"])
        pos.append(0 if head_first else 1)
    return base, head, pos


def main():
    rng = np.random.default_rng(20261202)
    lines = [f"# generated by tests/stats/gen_paired_refs.py with scipy {scipy.__version__}, "
             f"numpy {np.__version__}"]
    for pairs, shift, noise in [(4, 0.0, 0.01), (6, 0.01, 0.002), (20, 0.003, 0.001),
                                (21, -0.02, 0.01), (30, 0.0, 0.001), (40, 0.05, 0.03),
                                (9, 0.001, 0.0005)]:
        lines.append(case([ab_run(rng, pairs, shift, noise, rng.normal(0, 0.1), 0.001)]))
    for k, pairs, shift, noise, tau in [(2, 10, 0.01, 0.002, 0.004), (2, 10, 0.0, 0.01, 0.0),
                                        (3, 8, 0.002, 0.001, 0.001), (5, 7, 0.02, 0.02, 0.0),
                                        (4, 12, -0.005, 0.003, 0.01)]:
        runs = []
        for _ in range(k):
            offset = rng.normal(0.0, tau)  # a worker-process difference: does not cancel
            runs.append(ab_run(rng, pairs, shift + offset, noise, rng.normal(0, 0.1)))
        lines.append(case(runs))
    for k, n, level in [(0, 20, 0.95), (20, 20, 0.95), (1, 20, 0.95), (19, 20, 0.95),
                        (0, 2000, 0.95), (13, 2000, 0.95), (5, 1000, 0.99), (500, 1000, 0.95),
                        (3, 7, 0.9)]:
        ci = stats.binomtest(k, n).proportion_ci(level, method="exact")
        lines.append(f"clopper_pearson | {k} | {n} | {level!r} | {float(ci.low)!r} | "
                     f"{float(ci.high)!r}")
    text = "\n".join(lines) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
