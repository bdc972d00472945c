#!/usr/bin/env python3
"""Splits the databases of bench/gpu_gate_calib.sh into one gate each, for
bench/real_gates_eval.py:

    gpu_gates_split.py [--shas FILE] OUTDIR g-1.db g-2.db ...

g-N.db holds three commits, run A B C, C B A, A B C: A the base, B the same code (A/A head), C
the slowed build (A/B head). OUTDIR/aa-N.db keeps the runs of A and B, OUTDIR/ab-N.db those of A
and C; the other commit's runs are deleted (with their cells and samples), so that each copy is
exactly one gate's runs in the shipped protocol and `--min-effect auto` sees only them.
--shas FILE names A, B and C (one line, bench/gpu_history_gates.sh's shas.txt), for databases
whose rounds do not all start with A B C; g-N.db may then be g-CALL-N.db.
"""
import os
import re
import shutil
import sqlite3
import sys


def keep_only(src, dst, commits):
    shutil.copy(src, dst)
    os.chmod(dst, 0o644)
    con = sqlite3.connect(dst)
    con.execute("PRAGMA foreign_keys = ON")
    marks = ",".join("?" * len(commits))
    con.execute(f"DELETE FROM runs WHERE git_commit NOT IN ({marks})", commits)
    con.commit()
    con.execute("VACUUM")
    con.close()


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    shas = None
    if argv[0] == "--shas":
        shas, argv = open(argv[1]).read().split(), argv[2:]
    out, dbs = argv[0], argv[1:]
    os.makedirs(out, exist_ok=True)
    for db in dbs:
        n = re.search(r"g-([\d-]+)\.db$", db)
        if not n:
            sys.exit(f"{db}: expected a name g-N.db")
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        order = [c for (c,) in con.execute("SELECT git_commit FROM runs ORDER BY id")]
        con.close()
        if len(order) < 3 or len(set(order)) != 3:
            print(f"{db}: fewer than three commits ({len(order)} runs), skipped", file=sys.stderr)
            continue
        a, b, c = shas if shas else order[:3]
        keep_only(db, os.path.join(out, f"aa-{n.group(1)}.db"), [a, b])
        keep_only(db, os.path.join(out, f"ab-{n.group(1)}.db"), [a, c])
        print(f"{db}: {len(order)} runs -> aa-{n.group(1)}.db, ab-{n.group(1)}.db")


if __name__ == "__main__":
    main(sys.argv[1:])
