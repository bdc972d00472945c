#!/usr/bin/env python3
"""Browser test of the compare page's explanations: Debian's chromium driven by playwright against
a real `perfgate serve` on loopback, over a store of real runs.

A tiny PyTorch model in a real git repository at two commits, measured by the real binary
(`perfgate run --exec` with python/perfgate_bench.py, profile on, CPU); the head adds an unfused
elementwise op per layer, x * sigmoid(gate)[:32] with a large gate vector, so that its decode step
is certainly slower. The compare page of the pair lists the cell as a regression with a collapsed explanation;
expanded, it names aten::sigmoid among the host ops whose time grew, the changed op count with
the new ops and their calls per step, the ops that appeared, and the time between ops with what
the listed lines add up to. The same cell's explanation in `perfgate compare --format json` names
the same counts. No page may log a console error.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap

from playwright.sync_api import sync_playwright

from browser_checks import browser_test_args, check, new_page, report
from serve_process import start_server

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAYERS = 3

MODEL = textwrap.dedent("""
    import torch

    EXTRA_OP = False  # the head turns this on: an unfused elementwise op per layer


    class Toy(torch.nn.Module):
        def __init__(self, layers={layers}, width=32):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))
            self.register_buffer("gate", torch.randn(1 << 20))  # large: the new op costs ~1 ms

        def forward(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
                if EXTRA_OP:
                    x = x * torch.sigmoid(self.gate)[:32]
            return x
""").format(layers=LAYERS)

BENCH = textwrap.dedent("""
    import sys
    sys.path.insert(0, {helper!r})
    import torch
    import perfgate_bench as pb
    from model import Toy

    cell = pb.cell()
    torch.manual_seed(cell.seed)
    torch.set_num_threads(1)
    model = Toy().eval()
    x = torch.randn(cell.batch_size, cell.prompt_len, 32)

    @torch.inference_mode()
    def prefill():
        model(x)

    @torch.inference_mode()
    def decode_step(i):
        model(x[:, :1])

    pb.run(cell, prefill, decode_step, engine="toy")
""")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def commit(repo, files, message):
    for name, text in files.items():
        with open(os.path.join(repo, name), "w") as f:
            f.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def measure(args, repo, db):
    p = subprocess.run([args.perfgate, "run", "--exec", f"{args.python} bench.py", "--model",
                        "toy", "--device", "cpu", "--batch-sizes", "1", "--seq-lens", "8",
                        "--gen-tokens", "4", "--warmup", "1", "--reps", "5", "--profile", "on",
                        "--db", db, "--repo", repo, "--quiet"],
                       capture_output=True, text=True, timeout=240)
    check(p.returncode == 0, f"perfgate run at {git(repo, 'log', '-1', '--format=%s')!r}: "
                             f"exit {p.returncode} {p.stderr[-400:]!r}")


def main():
    args = browser_test_args(lambda ap: ap.add_argument("--python", default=sys.executable,
                                                        help="a Python with torch"))
    tmp = tempfile.mkdtemp(prefix="perfgate-explain-browser-")
    repo, db = os.path.join(tmp, "project"), os.path.join(tmp, "runs.db")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@perfgate.test")
    git(repo, "config", "user.name", "perfgate ci")
    git(repo, "config", "commit.gpgsign", "false")
    bench = BENCH.format(helper=os.path.join(ROOT, "python"))
    base = commit(repo, {"model.py": MODEL, "bench.py": bench}, "toy model")
    measure(args, repo, db)
    head = commit(repo, {"model.py": MODEL.replace("EXTRA_OP = False", "EXTRA_OP = True")},
                  "model: x * sigmoid(gate) after every layer")
    measure(args, repo, db)

    # What the CLI says of the same cell, for the page to agree with.
    out = subprocess.run([args.perfgate, "compare", "--db", db, "--base", base, "--head", head,
                          "--format", "json"], capture_output=True, text=True, timeout=60)
    doc = json.loads(out.stdout)
    cell = next(c for c in doc["cells"] if c["metric"] == "tpot_ms")
    check(cell["verdict"] == "regression", f"compare: the head's decode step is a regression "
                                           f"({cell['verdict']}, exit {out.returncode})")
    ops = next(c for c in cell["explain"]["decode"]["counters"] if c["counter"] == "ops")
    added = int(round(ops["head"] - ops["base"]))
    check(added == 4 * LAYERS, f"compare JSON: {added} more ops per decode step (sigmoid, slice "
                               "and its as_strided, mul per layer)")

    server, port = start_server(args.perfgate, db, os.path.join(tmp, "serve.log"))
    url = f"http://127.0.0.1:{port}/compare?base={base}&head={head}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            errors = []
            page = new_page(browser, errors)
            page.goto(url)
            details = page.locator("#explanations details.explain")
            check(details.count() == 1, f"compare: {details.count()} explained cell")
            d = details.first
            summary = d.locator("summary").inner_text()
            check("Why toy" in summary and "changed" in summary, f"summary names the cell "
                                                                 f"({summary!r})")
            check(d.get_attribute("open") is None, "the explanation starts collapsed")
            check(not d.locator("table.explain-grew").is_visible(),
                  "collapsed: its table is not shown")
            d.locator("summary").click()
            page.wait_for_function("document.querySelector('#explanations details.explain').open",
                                   timeout=10000)
            grew = d.locator("table.explain-grew")
            check(grew.is_visible(), "expanded: the table of host ops whose time grew is shown")
            names = grew.locator("td.op-name").all_inner_texts()
            check("aten::sigmoid" in names, f"the grown ops name aten::sigmoid ({names})")
            row = grew.locator("tr", has=page.locator("td.op-name", has_text="aten::sigmoid"))
            cells = row.first.locator("td").all_inner_texts() if row.count() else []
            calls = [float(v) for v in re.findall(r"[\d.]+", cells[-1])] if cells else []
            check(calls == [0, LAYERS], f"aten::sigmoid: 0 -> {LAYERS} calls per step ({cells})")
            check(bool(cells) and re.fullmatch(r"\d+%", cells[4] or "") is not None,
                  f"aten::sigmoid: its share of the tpot change ({cells[4:5]})")
            counters = d.locator("ul.explain-counters li").all_inner_texts()
            line = next((c for c in counters if c.startswith("decode step:") and " ops (" in c), "")
            check(f"(+{4 * LAYERS}:" in line and f"aten::sigmoid x{LAYERS}" in line
                  and f"aten::mul x{LAYERS}" in line and f"aten::slice x{LAYERS}" in line,
                  f"the exact counter line names the new ops and their calls ({line!r})")
            appeared = " ".join(d.locator("ul.explain-appeared li").all_inner_texts())
            check("decode step: appeared" in appeared and "aten::sigmoid" in appeared,
                  f"the appeared ops are listed ({appeared!r})")
            accounted = d.locator("ul.explain-accounted li").all_inner_texts()
            check(any(a.startswith("decode step: time between host ops") for a in accounted),
                  f"the time between ops is its own line ({accounted})")
            check(any("add up to" in a and "% of the" in a for a in accounted),
                  "and what the listed lines add up to, as a share of the tpot change")
            page.screenshot(path=os.path.join(args.out, "compare-explain.png"), full_page=True)
            check(not errors, f"no console errors ({errors[:3]})")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return report()


if __name__ == "__main__":
    sys.exit(main())
