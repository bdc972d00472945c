#!/usr/bin/env python3
"""Every arrow between folders points down: each source file includes only the folders that
docs/CONTRIBUTING.md's "may include" table allows its own folder (the table is the rule, so the
doc and the code cannot drift apart). Usage: layers_test.py /path/to/repo
"""
import pathlib
import re
import sys

ROW = re.compile(r"^\| `([a-z]+)/`[^|]*\| (.*) \|$")
FOLDER = re.compile(r"`([a-z]+(?:/[a-z]+)?)/`")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z]+)/([^"]+)"', re.M)


def allowed_table(contributing):
    """{folder: (folders it may include, sub-folders it may not)}, from the table's rows."""
    table, above, lines = {}, [], contributing.read_text().splitlines()
    start = lines.index("| folder | may include |")
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        m = ROW.match(line)
        if not m:
            continue
        folder, rule, excluded = m.group(1), m.group(2), set()
        if rule.startswith("everything"):
            allowed = {"*"}
        elif rule.startswith("all of the above"):
            excluded = set(FOLDER.findall(rule))
            allowed = {f for f in above if f not in excluded}
        else:
            allowed = {f for f in FOLDER.findall(rule.split(":")[0]) if "/" not in f}
        table[folder] = (allowed | {folder}, excluded)
        above.append(folder)
    return table


def main():
    repo = pathlib.Path(sys.argv[1])
    table = allowed_table(repo / "docs" / "CONTRIBUTING.md")
    if len(table) < 8:
        print(f"layers: docs/CONTRIBUTING.md's table lists {len(table)} folders; expected the "
              "may-include table")
        return 1
    bad, files = [], 0
    for folder, (allowed, excluded) in table.items():
        for f in sorted((repo / folder).rglob("*")):
            # A folder's own test suites (runner/lm/tests/) may include the tests' helpers.
            if f.suffix not in (".cpp", ".h") or "*" in allowed or "tests" in f.parts:
                continue
            files += 1
            for top, rest in INCLUDE.findall(f.read_text(errors="replace")):
                path = f"{top}/{rest}"
                if not (repo / top).is_dir() or (
                        top in allowed and not any(path.startswith(e + "/") for e in excluded)):
                    continue
                bad.append(f"{f.relative_to(repo)}: includes {path}, but {folder}/ may "
                           f"include only {', '.join(sorted(allowed))}"
                           f"{' but ' + ', '.join(sorted(excluded)) if excluded else ''} "
                           "(docs/CONTRIBUTING.md)")
    for line in bad:
        print("layers:", line)
    print(f"layers: {files} files of {len(table)} folders, {len(bad)} includes upward")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
