#!/usr/bin/env python3
"""Every flag of every subcommand is documented in docs/CLI.md, and every API route in docs/API.md.

The flags come from the binary itself (`perfgate SUBCOMMAND --help`), the routes from the
server's route registrations (web/**/*.cpp), so a new flag or route without its row fails here.
Usage: docs_test.py /path/to/perfgate /path/to/repo
"""
import pathlib
import re
import subprocess
import sys


def help_text(perfgate, *args):
    out = subprocess.run([perfgate, *args, "--help"], capture_output=True, text=True, check=True)
    return out.stdout


def subcommands(perfgate):
    text = help_text(perfgate)
    section = text.split("Subcommands:", 1)[1]
    return re.findall(r"^\s{2}([a-z][a-z-]*)\s", section, re.M)


def flags_of(perfgate, cmd):
    text = help_text(perfgate, cmd)
    # Option names start a help line: "  -h,--help", "  --db TEXT", "  --quiet".
    flags = set()
    for line in text.splitlines():
        m = re.match(r"^\s+((?:-[a-zA-Z],)?--[a-z0-9-]+)", line)
        if m:
            flags.add(m.group(1).split(",")[-1])
    flags.discard("--help")
    return flags


def doc_section(doc, cmd):
    m = re.search(r"^## `perfgate " + re.escape(cmd) + r"`\n(.*?)(?=^## |\Z)", doc, re.M | re.S)
    return m.group(1) if m else None


def routes(repo):
    out = set()
    for src in sorted((repo / "web").rglob("*.cpp")):
        for method, raw in re.findall(r'http\.(Get|Post|Put|Patch|Delete)\((R"\(.*?\)"|".*?")',
                                      src.read_text()):
            path = raw[3:-2] if raw.startswith('R"(') else raw[1:-1]
            if not (path.startswith("/api/") or path == "/healthz"):
                continue  # pages are documented in docs/WEB.md
            out.add((method.upper(), re.sub(r"\(.*?\)", "{", path)))
    return out


def main():
    perfgate, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    cli_doc = (repo / "docs" / "CLI.md").read_text()
    api_doc = (repo / "docs" / "API.md").read_text()
    missing = []
    cmds = subcommands(perfgate)
    if len(cmds) < 5:
        missing.append(f"could not read the subcommands from `perfgate --help`: {cmds}")
    for cmd in cmds:
        section = doc_section(cli_doc, cmd)
        if section is None:
            missing.append(f"docs/CLI.md has no section \"## `perfgate {cmd}`\"")
            continue
        for flag in sorted(flags_of(perfgate, cmd)):
            if not re.search("`" + re.escape(flag) + r"[` ]", section):
                missing.append(f"docs/CLI.md, perfgate {cmd}: no row for {flag}")
    found = routes(repo)
    if len(found) < 5:
        missing.append(f"could not read the API routes from web/**/*.cpp: {sorted(found)}")
    for method, path in sorted(found):
        if f"{method} {path}" not in api_doc:
            missing.append(f"docs/API.md: route {method} {path} is not documented")
    for m in missing:
        print("MISSING:", m)
    print(f"{len(cmds)} subcommands, {len(found)} routes checked; {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
