"""Per rung (of this folder's per-gate tables): gates that ended while nothing else ran (context.log time >= 16:10:00Z) vs before."""
import math
import os
import re

from scipy.stats import beta

HERE = os.path.dirname(os.path.abspath(__file__))
t = {}
for line in open(os.path.join(HERE, 'context.log')):
    p = line.split()
    t[(p[1], int(p[2]))] = p[0]
def cp(k, n):
    lo = beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return lo, hi
for name, kind in (('aa', 'aa'), ('ab_160', 'ab-160'), ('ab_40', 'ab-40'), ('ab_25', 'ab-25')):
    rows = [l for l in open(os.path.join(HERE, f'{name}_shipped.md')) if l.startswith('| ') and '.db' in l]
    groups = {'quiet': [], 'shared': []}
    for l in rows:
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        i = int(re.search(r'-(\d+)\.db', c[0]).group(1))
        g = 'quiet' if t.get((kind, i), '') >= '2026-12-01T16:10:00Z' else 'shared'
        groups[g].append((int(c[1]), float(c[3])))
    for g, v in groups.items():
        if not v: continue
        k = sum(1 for e, _ in v if e == 1); n = len(v)
        r = sorted(x for _, x in v)
        lo, hi = cp(k, n)
        print(f"{kind:7s} {g:6s} n={n:3d} exit1={k:3d} ({100*k/n:.1f}%, 95% CI {100*lo:.1f}-{100*hi:.1f}%, one-sided lower {100*beta.ppf(0.05,k,n-k+1) if k else 0:.1f}%) worst ratio median {r[len(r)//2]:.3f} min {r[0]:.3f}")
