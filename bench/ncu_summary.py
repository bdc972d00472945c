"""Summarise Nsight Compute's kernel list of one decode step (bench/gpu_profile.sh's ncu_*.csv).

Prints Markdown: kernels grouped by what they do, with count and summed duration, then the top
kernels by name. ncu runs each kernel alone (serialised, caches not flushed, clocks unlocked), so
the sum is the step's kernel time without launch gaps or overlap.
Usage: python3 bench/ncu_summary.py FILE.csv [FILE.csv ...]
"""
import collections
import csv
import io
import re
import sys

# First match wins; the patterns are the ATen / cuBLAS / flash kernel names seen on the H200.
GROUPS = [
    ("attention (SDPA: cuDNN, flash, mem-efficient)", r"fmha|flash|sdpa|attention|efficient|cudnn"),
    ("matrix products (cuBLAS / cuBLASLt)", r"nvjet|gemm|gemv|xmma|cutlass|cublas|splitKreduce"),
    ("layer norm", r"layer_norm|LayerNorm"),
    ("KV-cache write (index_copy_ / copy_)", r"index_copy|indexCopy|index_put"),
    ("argmax and other reductions", r"reduce_kernel|argmax"),
    ("GELU", r"gelu|GeluCUDA"),
    ("copies and casts", r"copy|Copy"),
    ("adds, fills, masks (elementwise)", r"elementwise|Functor|fill"),
]


def rows(path):
    text = open(path, errors="replace").read()
    start = text.find('"ID","Process ID"')
    if start < 0:
        return [], "ns"
    reader = csv.DictReader(io.StringIO(text[start:]))
    out, unit = [], "ns"
    for r in reader:
        if not r["ID"].isdigit():
            unit = r.get("gpu__time_duration.sum") or unit  # the units row
            continue
        out.append(r)
    return out, unit


def group(name):
    for label, pattern in GROUPS:
        if re.search(pattern, name):
            return label
    return "other"


def summarise(path, top=25):
    """Markdown for one ncu CSV: grouped kernel time, then the top kernels by name."""
    rs, unit = rows(path)
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}.get(unit, 1e-3)
    dur = lambda r: float(r["gpu__time_duration.sum"].replace(",", "")) * scale
    total = sum(dur(r) for r in rs) or float("nan")
    lines = [f"{len(rs)} kernels, {total:.1f} µs of kernel time (each kernel timed alone).", "",
             "| kernels | count | µs | share |", "|---|--:|--:|--:|"]
    groups = collections.defaultdict(lambda: [0, 0.0])
    for r in rs:
        g = groups[group(r["Kernel Name"])]
        g[0] += 1
        g[1] += dur(r)
    for label, (n, us) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"| {label} | {n} | {us:.1f} | {us / total:.0%} |")
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for r in rs:
        b = by_name[re.sub(r"\(.*", "", r["Kernel Name"])[:90]]
        b[0] += 1
        b[1] += dur(r)
    lines += ["", "<details><summary>Kernels by name</summary>", "",
              "| kernel | count | µs | µs each |", "|---|--:|--:|--:|"]
    for name, (n, us) in sorted(by_name.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"| `{name.replace('|', '/')}` | {n} | {us:.1f} | {us / n:.2f} |")
    lines += ["", "</details>"]
    return "\n".join(lines)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(f"\n#### {path.split('/')[-1]}\n")
        print(summarise(path))
