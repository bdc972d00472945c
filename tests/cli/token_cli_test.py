#!/usr/bin/env python3
"""`perfgate token add|list|revoke` through the real binary on a real database (docs/CLI.md).

The token is printed once on stdout and never stored: the database holds its SHA-256 only. Bad
names, roles, duplicates, unknown names and missing databases exit 2 with a message that says
what was wrong; revoking twice is not an error. Usage: token_cli_test.py /path/to/perfgate
"""
import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


def run(perfgate, *args):
    p = subprocess.run([perfgate, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    perfgate = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="perfgate-token-cli-")
    db = os.path.join(tmp, "central.db")

    rc, out, err = run(perfgate, "token", "add", "ci", "--role", "ingest", "--db", db)
    check(rc == 2 and "no such database" in err and not os.path.exists(db),
          f"add: a missing database is exit 2 and is not created ({rc}: {err.strip()})")
    rc, _, err = run(perfgate, "token", "list", "--db", db)
    check(rc == 2 and not os.path.exists(db), f"list: a missing database is exit 2 ({rc})")
    subprocess.run([perfgate, "init", "--db", db], check=True, capture_output=True)

    rc, out, err = run(perfgate, "token", "list", "--db", db)
    check(rc == 0 and "no tokens" in out, f"list: an empty store says so ({out.strip()})")

    rc, out, err = run(perfgate, "token", "add", "ci-main", "--role", "ingest", "--db", db)
    token = out.strip()
    check(rc == 0 and re.fullmatch(r"pgt_[0-9a-f]{64}", token) is not None,
          f"add: prints the token alone on stdout ({rc}: {out!r})")
    check("shown only this once" in err and token not in err,
          "add: the note goes to stderr, without the token")
    rc, out2, _ = run(perfgate, "token", "add", "ana", "--role", "triage", "--db", db)
    check(rc == 0 and out2.strip() != token, "add: every token is new")
    rc, _, _ = run(perfgate, "token", "add", "ops", "--role", "admin", "--db", db)
    check(rc == 0, "add: role admin")

    # The database and anything beside it hold the hash, never the token.
    for name in os.listdir(tmp):
        with open(os.path.join(tmp, name), "rb") as f:
            data = f.read()
        check(token.encode() not in data and token[4:].encode() not in data,
              f"{name}: the token's text is not in the file")
    con = sqlite3.connect(db)
    hashes = [r[0] for r in con.execute("SELECT token_sha256 FROM credentials WHERE name = 'ci-main'")]
    con.close()
    check(hashes == [hashlib.sha256(token.encode()).hexdigest()],
          "the store keeps the token's SHA-256")

    rc, out, _ = run(perfgate, "token", "list", "--db", db)
    lines = out.splitlines()
    check(rc == 0 and lines[0].split() == ["name", "role", "created", "last", "used", "revoked"],
          f"list: header ({lines[:1]})")
    rows = {l.split()[0]: l.split() for l in lines[1:]}
    check(set(rows) == {"ci-main", "ana", "ops"}, f"list: every token ({sorted(rows)})")
    check(rows["ana"][1] == "triage" and rows["ana"][3] == "never" and rows["ana"][4] == "no",
          f"list: role, never used, not revoked ({rows.get('ana')})")
    check(token not in out, "list: never shows a token")

    for bad, what in [("", "empty"), ("-x", "starts with a dash"), ("a b", "space"),
                      ("x" * 65, "65 characters"), ("caf\u00e9", "non-ASCII"), ("a;b", "semicolon")]:
        # After "--", so that CLI11 passes "-x" on as the name rather than as a flag.
        rc, out, err = run(perfgate, "token", "add", "--role", "triage", "--db", db, "--", bad)
        check(rc == 2 and out == "" and "token name" in err, f"add: name {what} is exit 2 ({err.strip()})")
    rc, out, err = run(perfgate, "token", "add", "root", "--role", "root", "--db", db)
    check(rc == 2 and "--role" in err and out == "", f"add: a bad role names --role ({err.strip()})")
    rc, out, err = run(perfgate, "token", "add", "ana", "--role", "admin", "--db", db)
    check(rc == 2 and "already exists" in err and out == "", f"add: a duplicate is exit 2 ({err.strip()})")
    rc, _, err = run(perfgate, "token", "add", "nobody", "--db", db)
    check(rc == 2, "add: --role is required")
    rc, _, err = run(perfgate, "token", "--db", db)
    check(rc == 2, "token: a subcommand is required")

    rc, out, err = run(perfgate, "token", "revoke", "ana", "--db", db)
    check(rc == 0 and "revoked token 'ana'" in out, f"revoke: says so ({out.strip()})")
    rc, out, err = run(perfgate, "token", "revoke", "ana", "--db", db)
    check(rc == 0 and "already revoked" in out, f"revoke again: exit 0, says so ({out.strip()})")
    rc, out, err = run(perfgate, "token", "revoke", "nobody", "--db", db)
    check(rc == 2 and "no token named 'nobody'" in err, f"revoke: unknown name is exit 2 ({err.strip()})")
    rc, out, _ = run(perfgate, "token", "list", "--db", db)
    ana = next(l.split() for l in out.splitlines() if l.startswith("ana "))
    check(ana[4] != "no", f"list: the revocation time ({ana})")
    rc, out, err = run(perfgate, "token", "add", "ana", "--role", "triage", "--db", db)
    check(rc == 2 and "revoked" in err, f"add: a revoked name is never reused ({err.strip()})")

    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
