#!/usr/bin/env python3
"""web/ keeps to its floors (docs/CONTRIBUTING.md, "Layout and layering").

From the bottom: http/ (reading requests, limits, compression, assets) -> views/ (shared state,
caches, view models) -> pages/ (HTML) -> routes/ (handlers) -> server.{h,cpp} on top. Fails when a
file includes a web header of a higher floor, when views/ or pages/ include <httplib.h> or name
httplib:: or HttpError (they know no HTTP: a view throws ViewError, the routes answer it), when
anything under web/ calls SQLite (the store does, store/), or when a source file sits in web/
outside the floors. Usage: floors_test.py /path/to/repo
"""
import pathlib
import re
import sys

FLOORS = ["http", "views", "pages", "routes", "server"]  # bottom first
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
NO_HTTP = re.compile(r"<httplib\.h>|\bhttplib::|\bHttpError\b")
SQLITE = re.compile(r"sqlite3", re.I)


def floor_of(rel):
    """The floor of a path relative to web/ ("views/models.h" -> "views", "server.h" -> server)."""
    parts = pathlib.PurePosixPath(rel).parts
    if len(parts) == 1:
        return "server" if parts[0].startswith("server.") else None
    return parts[0] if parts[0] in FLOORS[:-1] else None


def main():
    repo = pathlib.Path(sys.argv[1])
    web = repo / "web"
    bad = []
    files = sorted(p for p in web.rglob("*") if p.suffix in (".h", ".cpp") and p.is_file())
    for f in files:
        rel = f.relative_to(web).as_posix()
        text = f.read_text(errors="replace")
        floor = floor_of(rel)
        if floor is None:
            where = ", ".join(f + "/" for f in FLOORS[:-1])
            bad.append(f"web/{rel}: outside the floors ({where}, server.*)")
            continue
        if SQLITE.search(text):
            bad.append(f"web/{rel}: names sqlite3 (only store/ calls SQLite; ask the Store)")
        if floor in ("views", "pages"):
            for m in NO_HTTP.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"web/{rel}:{line}: {m.group(0)} in {floor}/ (no HTTP types below "
                           "routes/)")
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            if not inc.startswith("web/"):
                continue
            target = floor_of(inc[len("web/"):])
            line = text.count("\n", 0, m.start()) + 1
            if target is None:
                bad.append(f"web/{rel}:{line}: includes {inc}, which is in no floor")
            elif FLOORS.index(target) > FLOORS.index(floor):
                bad.append(f"web/{rel}:{line}: {floor}/ includes {inc} of the higher floor "
                           f"{target}")
    if len(files) < 40:
        bad.append(f"found only {len(files)} files under {web}: wrong repository path?")
    for b in bad:
        print("FLOORS:", b)
    print(f"{len(files)} files, {len(bad)} breaks of the floors")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
