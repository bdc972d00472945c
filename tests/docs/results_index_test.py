#!/usr/bin/env python3
"""bench/results/README.md indexes every folder of stored results.

Each top-level folder under bench/results/ has its own heading in the index, linked to the folder,
with what it measured, the command, the machine and the date; each folder inside one is linked
from its entry. A folder the index names must exist (a heading without its folder fails too);
docs.links_resolve checks the index's links and anchors. Usage: results_index_test.py /path/to/repo
"""
import pathlib
import re
import sys

import doc_files

FIELDS = ("Measured", "Command", "Machine", "Date")
ENTRY = re.compile(r"^### \[`([^`/]+)/`\]\(\1/\)\s*$", re.M)


def main():
    repo = pathlib.Path(sys.argv[1]).resolve()
    results = repo / "bench" / "results"
    index = (results / "README.md").read_text()
    bad = []
    entries = {}
    starts = [(m.group(1), m.start()) for m in ENTRY.finditer(index)]
    for i, (name, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(index)
        section = index[start:end].split("\n## ", 1)[0]
        entries[name] = section
    folders = sorted(p for p in results.iterdir() if p.is_dir())
    for folder in folders:
        name = folder.name
        if name not in entries:
            bad.append(f"bench/results/{name}/ has no entry in bench/results/README.md "
                       f"(a heading ### [`{name}/`]({name}/) with {', '.join(FIELDS)})")
            continue
        for field in FIELDS:
            if not re.search(r"\*\*%ss?:\*\*" % field, entries[name]):
                bad.append(f"bench/results/README.md: the entry of {name}/ does not say "
                           f"**{field}:**")
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            if f"]({name}/{sub.name}/)" not in entries[name]:
                bad.append(f"bench/results/README.md: the entry of {name}/ does not link its "
                           f"folder {name}/{sub.name}/")
    for name in entries:
        if not (results / name).is_dir():
            bad.append(f"bench/results/README.md indexes {name}/, which is not a folder there")
    return doc_files.report("RESULTS", bad, f"{len(folders)} folders, {len(entries)} entries, "
                            f"{len(bad)} problems")


if __name__ == "__main__":
    sys.exit(main())
