#!/usr/bin/env python3
"""Reference values for perfgate's stats/ routines, computed with scipy.

Usage: gen_scipy_refs.py [OUTPUT]   (stdout without OUTPUT)

The committed output is tests/stats/fixtures/scipy_refs.txt; ctest also re-runs this script live
and checks the C++ implementation against the fresh values, so a divergence between scipy and
perfgate fails the suite. One case per line, fields separated by ' | ', numbers as repr():
  mwu ALTERNATIVE METHOD | x,... | y,... | U | p       scipy.stats.mannwhitneyu(x, y, ...)
  hl LEVEL | x,... | y,... | estimate | low | high       Hodges-Lehmann shift of y - x, interval by
                                                        inverting scipy's exact one-sided MWU test
  holm | p,... | adjusted,...                          Holm 1979, written out from the definition
  bh | p,... | adjusted,...                            scipy.stats.false_discovery_control
  norm_sf | z | p                                      scipy.stats.norm.sf
  norm_ppf | p | z                                     scipy.stats.norm.ppf
  mwu_min_p | n1 | n2 | p                              scipy exact p when all of x > all of y
  t_sf | t | df | p                                    scipy.stats.t.sf
  t_ppf | p | df | t                                   scipy.stats.t.ppf
  twolevel | base | head | log_ratio | se | df | p_slower | p_faster | ci_low | ci_high |
    rep_sd | run_sd                                    base/head: runs separated by ';', repetitions
                                                        by ','. The t test on run means of log
                                                        values by scipy.stats.ttest_ind (pooled
                                                        variance) and its confidence_interval;
                                                        variance components written out in numpy
  f_cdf | f | d1 | d2 | p                              scipy.stats.f.cdf
  historyt | history | base | head | variance | df | log_ratio | se | p_slower | p_faster |
    ci_low | ci_high | check_p                         the t test on run means with a run
                                                        variance from trusted history: history's
                                                        commits separated by '/'; its variance
                                                        pooled with the gate's unless a one-sided
                                                        F check at 0.05 finds the gate's larger
                                                        (scipy.stats.f); one run a side takes
                                                        the history's run-mean variance plus the
                                                        gate's excess within-run variance / n;
                                                        t by scipy
  mde | se | df | alpha | power | effect               exact: the slowdown whose one-sided t test
                                                        has this power, by the noncentral t
                                                        (scipy.stats.nct) and brentq
"""
import sys

import numpy as np
import scipy
from scipy import optimize, stats


def fmt(values):
    return ",".join(repr(float(v)) for v in values)


def mwu_cases(rng):
    cases = []
    # scipy's own documentation example (Shier 2004): males vs females, U = 17.
    males, females = [19, 22, 16, 29, 24], [20, 11, 17, 12]
    cases.append(("greater", "exact", males, females))
    cases.append(("less", "exact", females, males))
    cases.append(("greater", "asymptotic", males, females))
    # Continuous data (no ties): exact and asymptotic, both alternatives, shifted and not.
    for n1, n2, shift in [(3, 4, 0.0), (5, 5, 1.0), (8, 8, 0.5), (10, 10, 0.0), (10, 10, 1.5),
                          (7, 12, -0.8), (20, 30, 0.4), (50, 50, 0.3)]:
        x = np.round(rng.lognormal(shift, 1.0, n1), 9)
        y = np.round(rng.lognormal(0.0, 1.0, n2), 9)
        for alt in ("greater", "less"):
            cases.append((alt, "exact", x, y))
            cases.append((alt, "asymptotic", x, y))
    # Ties (integer data): the normal approximation with tie correction.
    for n1, n2, hi in [(10, 10, 6), (15, 20, 8), (30, 40, 10), (60, 50, 5)]:
        x = rng.integers(0, hi, n1) + rng.integers(0, 2, n1)
        y = rng.integers(0, hi, n2)
        for alt in ("greater", "less"):
            cases.append((alt, "asymptotic", x, y))
    lines = []
    for alt, method, x, y in cases:
        r = stats.mannwhitneyu(x, y, alternative=alt, method=method)
        lines.append(f"mwu {alt} {method} | {fmt(x)} | {fmt(y)} | {float(r.statistic)!r} | "
                     f"{float(r.pvalue)!r}")
    return lines


def hl_case(x, y, level):
    """HL estimate and the interval by test inversion with scipy's exact one-sided MWU."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    d = np.sort(np.subtract.outer(y, x).ravel())
    tail = (1 - level) / 2

    def p_greater(delta):  # H0: shift = delta against "y - delta greater than x"
        return stats.mannwhitneyu(y - delta, x, alternative="greater", method="exact").pvalue

    def p_less(delta):
        return stats.mannwhitneyu(y - delta, x, alternative="less", method="exact").pvalue

    mids = (d[:-1] + d[1:]) / 2
    # Lower bound: the first difference above which "greater" is no longer rejected.
    low = next((d[k] for k in range(len(mids)) if p_greater(mids[k]) > tail), None)
    # Upper bound: the last difference below which "less" is no longer rejected.
    high = next((d[k + 1] for k in reversed(range(len(mids))) if p_less(mids[k]) > tail), None)
    est = float(np.median(d))
    return f"hl {level!r} | {fmt(x)} | {fmt(y)} | {est!r} | {float(low)!r} | {float(high)!r}"


def holm(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def groups_text(groups):
    return ";".join(fmt(g) for g in groups)


def two_level_case(base, head):
    """The gate's two-level estimate, independently: scipy's pooled t test on run means."""
    mb = np.array([np.mean(np.log(g)) for g in base])
    mh = np.array([np.mean(np.log(g)) for g in head])
    greater = stats.ttest_ind(mh, mb, equal_var=True, alternative="greater")
    less = stats.ttest_ind(mh, mb, equal_var=True, alternative="less")
    ci = stats.ttest_ind(mh, mb, equal_var=True).confidence_interval(0.95)
    diff = float(mh.mean() - mb.mean())
    se = diff / float(greater.statistic)
    df = len(mb) + len(mh) - 2
    logs = [np.log(g) for g in base + head]
    within_ss = sum(float(np.sum((g - g.mean()) ** 2)) for g in logs)
    within_df = sum(len(g) - 1 for g in logs)
    msw = within_ss / within_df
    s2 = (np.var(mb, ddof=0) * len(mb) + np.var(mh, ddof=0) * len(mh)) / df
    run_var = s2 - msw * np.mean([1.0 / len(g) for g in logs])
    return (f"twolevel | {groups_text(base)} | {groups_text(head)} | {diff!r} | {se!r} | "
            f"{float(df)!r} | {float(greater.pvalue)!r} | {float(less.pvalue)!r} | "
            f"{float(np.exp(ci.low))!r} | {float(np.exp(ci.high))!r} | "
            f"{float(np.sqrt(msw))!r} | {float(np.sqrt(max(0.0, run_var)))!r}")


def history_case(history, base, head):
    """The t test on run means with trusted history, written out from docs/STATISTICS.md."""
    reps = len(base[0])
    h_between, h_df, h_within, h_rep_df = 0.0, 0, 0.0, 0
    for runs in history:
        means = np.array([np.mean(np.log(r)) for r in runs if len(r) == reps])
        if len(means) < 2:
            continue
        h_between += float(np.var(means, ddof=1)) * (len(means) - 1)
        h_df += len(means) - 1
        h_within += sum(float(np.sum((np.log(r) - np.mean(np.log(r))) ** 2)) for r in runs
                        if len(r) == reps)
        h_rep_df += len(means) * (reps - 1)
    h_var, h_rep_var = h_between / h_df, h_within / h_rep_df
    mb = np.array([np.mean(np.log(g)) for g in base])
    mh = np.array([np.mean(np.log(g)) for g in head])
    logs = [np.log(g) for g in base + head]
    within_df = sum(len(g) - 1 for g in logs)
    msw = sum(float(np.sum((g - g.mean()) ** 2)) for g in logs) / within_df
    gate_df = len(mb) + len(mh) - 2

    if gate_df >= 1:
        s2 = (float(np.var(mb, ddof=0)) * len(mb) + float(np.var(mh, ddof=0)) * len(mh)) / gate_df
        check = float(stats.f.sf(s2 / h_var, gate_df, h_df))  # one-sided: is the gate's larger?
        used = check >= 0.05
        variance = "pooled" if used else "runs"
        df = gate_df + h_df if used else gate_df
        s2 = (gate_df * s2 + h_df * h_var) / df if used else s2
    else:  # one run a side: the history's run-mean variance, plus the gate's excess within-run noise
        check = None
        variance, df = "history", h_df
        s2 = h_var + max(msw - h_rep_var, 0.0) / reps
    diff = float(mh.mean() - mb.mean())
    fields = [groups_text_commits(history), groups_text(base), groups_text(head), variance,
              repr(float(df)), repr(diff)]
    se = float(np.sqrt(s2 * (1.0 / len(mb) + 1.0 / len(mh))))
    q = float(stats.t.ppf(0.975, df))
    fields += [repr(se), repr(float(stats.t.sf(diff / se, df))),
               repr(float(stats.t.sf(-diff / se, df))), repr(float(np.exp(diff - q * se))),
               repr(float(np.exp(diff + q * se)))]
    fields.append("-" if check is None else repr(float(check)))
    return "historyt | " + " | ".join(fields)


def groups_text_commits(history):
    return "/".join(groups_text(runs) for runs in history)


def history_cases():
    rng = np.random.default_rng(20261202)

    def runs(k, reps, mu, run_sd, rep_sd):
        return [np.round(np.exp(mu + rng.normal(0, run_sd) + rng.normal(0, rep_sd, reps)), 12)
                for _ in range(k)]

    lines = []
    for kb, kh, reps, run_sd, rep_sd, shift, h_run_sd, commits in [
            (3, 3, 8, 0.004, 0.002, 0.006, 0.004, 10),   # agrees: pooled, df 4 + 10
            (2, 2, 8, 0.004, 0.002, 0.0, 0.004, 6),      # agrees, no change
            (3, 3, 8, 0.02, 0.002, 0.0, 0.0005, 12),     # the gate is 40x noisier: its own
            (1, 1, 8, 0.004, 0.002, 0.01, 0.004, 8),     # one run a side: history's alone
            (1, 1, 8, 0.004, 0.03, 0.0, 0.004, 8)]:      # within-run noise is the gate's
        history = [runs(2 + c % 2, reps, 0.01 * c, h_run_sd, 0.002) for c in range(commits)]
        history[0].append(runs(1, reps - 1, 0.0, h_run_sd, 0.002)[0])  # another size: left out
        base, head = runs(kb, reps, 0.0, run_sd, rep_sd), runs(kh, reps, shift, run_sd, rep_sd)
        lines.append(history_case(history, base, head))
    # One run a side whose history's within-run part (every run's first repetition 0.8% slow)
    # exceeds its run-mean variance, against quiet repetitions in the gate: a 0.3% difference.
    def slow_first(m):
        return np.array([m * 1.008, m, m * 1.0001])

    shifts = [0.003, -0.002, 0.0025, -0.003, 0.0015, -0.0025]
    history = [[slow_first(0.6 * (1 + 0.01 * c)), slow_first(0.6 * (1 + 0.01 * c) * (1 + d))]
               for c, d in enumerate(shifts)]
    quiet = np.array([1.0, 1.0001, 0.9999])
    lines.append(history_case(history, [0.6 * quiet], [0.6 * 1.003 * quiet]))
    for f, d1, d2 in [(0.5, 4.0, 10.0), (1.0, 1.0, 1.0), (3.2, 4.0, 40.0), (40.0, 4.0, 12.0),
                      (0.01, 27.0, 300.0), (1.7, 14.0, 112.0)]:
        lines.append(f"f_cdf | {f!r} | {d1!r} | {d2!r} | {float(stats.f.cdf(f, d1, d2))!r}")
    return lines


def mde_case(se, df, alpha, power):
    crit = stats.t.ppf(1 - alpha, df)
    delta = optimize.brentq(lambda d: stats.nct.sf(crit, df, d / se) - power, 0.0, 100 * se + 1)
    return f"mde | {se!r} | {float(df)!r} | {alpha!r} | {power!r} | {float(np.expm1(delta))!r}"


def main():
    rng = np.random.default_rng(20240601)
    lines = [f"# generated by tests/stats/gen_scipy_refs.py with scipy {scipy.__version__}, "
             f"numpy {np.__version__}"]
    lines += mwu_cases(rng)
    for n1, n2, level in [(5, 5, 0.9), (6, 8, 0.95), (10, 10, 0.95), (12, 9, 0.99)]:
        x = np.round(rng.normal(0.0, 1.0, n1), 9)
        y = np.round(rng.normal(0.7, 1.0, n2), 9)
        lines.append(hl_case(x, y, level))
    p_sets = [[0.01, 0.04, 0.03, 0.005],
              [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216, 0.222,
               0.251, 0.269, 0.275, 0.34, 0.341, 0.384, 0.569, 0.594, 0.696, 0.762, 0.94,
               0.942, 0.975, 0.986],
              list(np.round(rng.uniform(0, 0.05, 12), 6)),
              [0.5, 0.5, 0.5], [1e-12, 0.9, 0.2, 0.2]]
    for p in p_sets:
        lines.append(f"holm | {fmt(p)} | {fmt(holm(p))}")
        lines.append(f"bh | {fmt(p)} | {fmt(stats.false_discovery_control(p, method='bh'))}")
    for z in [0.0, 1.0, 1.959963984540054, 3.5, 8.0, -2.0]:
        lines.append(f"norm_sf | {z!r} | {float(stats.norm.sf(z))!r}")
    for p in [1e-12, 1e-6, 0.001, 0.025, 0.3, 0.5, 0.975, 0.999999]:
        lines.append(f"norm_ppf | {p!r} | {float(stats.norm.ppf(p))!r}")
    for n1, n2 in [(2, 2), (3, 3), (5, 5), (6, 6), (7, 7), (10, 10), (8, 12), (50, 50)]:
        x, y = np.arange(n1) + 1000.0, np.arange(n2) + 0.0
        p = stats.mannwhitneyu(x, y, alternative="greater", method="exact").pvalue
        lines.append(f"mwu_min_p | {n1} | {n2} | {float(p)!r}")
    for t, df in [(0.0, 3.0), (1.5, 1.0), (2.2, 4.0), (-3.1, 7.0), (8.0, 4.0), (25.0, 10.0),
                  (4.0, 58.0), (0.3, 0.5)]:
        lines.append(f"t_sf | {t!r} | {df!r} | {float(stats.t.sf(t, df))!r}")
    for p, df in [(0.975, 4.0), (0.95, 1.0), (0.999, 4.0), (0.9999167, 4.0), (0.5, 3.0),
                  (0.025, 10.0), (0.99999, 28.0), (0.9, 2.0)]:
        lines.append(f"t_ppf | {p!r} | {df!r} | {float(stats.t.ppf(p, df))!r}")
    # Two-level cases: a run effect of sd run_sd and repetition noise of sd rep_sd (log scale).
    for kb, kh, reps, run_sd, rep_sd, shift in [(3, 3, 10, 0.02, 0.03, 0.0), (3, 3, 10, 0.005,
                                                  0.001, 0.01), (2, 3, 7, 0.05, 0.02, 0.1),
                                                 (5, 4, 4, 0.0, 0.05, -0.03), (2, 2, 30, 0.1,
                                                  0.1, 0.5)]:
        def side(k, mu):
            return [np.round(np.exp(mu + rng.normal(0, run_sd) + rng.normal(0, rep_sd, reps)) *
                             rng.uniform(0.5, 2.0) ** 0, 12) for _ in range(k)]
        base, head = side(kb, 0.0), side(kh, shift)
        if kb == 5:  # unequal run sizes
            base[0] = base[0][:2]
        lines.append(two_level_case(base, head))
    for se, df, alpha in [(0.001, 4.0, 0.01 / 12), (0.01, 10.0, 0.01), (0.003, 28.0, 0.001),
                          (0.05, 2.0, 0.01)]:
        lines.append(mde_case(se, df, alpha, 0.95))
    lines += history_cases()
    text = "\n".join(lines) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
