#!/usr/bin/env python3
"""What the documents say about the code, checked against the code.

- docs/METRICS.md's table of environment fields marks as "identifies the series" exactly the
  fields of comparable_env_fields(), and as "must match to compare" exactly those and the fields
  of timing_env_fields(), as the C++ defines them (wherever they live), and lists every one;
- every test the documents cite exists: a ctest `<folder>.<concern>` is registered by an
  add_test(NAME ...) of some CMakeLists.txt, a GoogleTest `Suite.Test` is defined by a
  TEST/TEST_F/TEST_P of the test trees.
Usage: claims_test.py /path/to/repo
"""
import pathlib
import re
import sys

import doc_files

# Names that are examples of the form, not tests.
EXAMPLES = {"Suite.Test"}


def cpp_field_list(repo, function):
    """The strings of `static const std::vector<std::string> f = {...}` in `function`'s body."""
    pattern = re.compile(re.escape(function) + r"\(\)\s*\{\s*static const std::vector<std::string>"
                         r"\s+\w+\s*=\s*\{([^}]*)\}", re.S)
    found = []
    for f in sorted(repo.glob("**/*.cpp")):
        if any(part.startswith((".", "build")) for part in f.relative_to(repo).parts):
            continue
        m = pattern.search(f.read_text(errors="replace"))
        if m:
            found.append((f.relative_to(repo), re.findall(r'"([^"]+)"', m.group(1))))
    if len(found) != 1:
        sys.exit(f"CLAIMS: expected one definition of {function}(), found {len(found)}: {found}")
    return found[0]


def env_table(metrics):
    """{field: (identifies the series, must match to compare)} from METRICS.md's env table."""
    lines = metrics.splitlines()
    start = next(i for i, l in enumerate(lines)
                 if l.startswith("| field |") and "must match to compare" in l)
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    series, compare = header.index("identifies the series"), header.index("must match to compare")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        yes = lambda c: c.replace("*", "") == "yes"
        for field in re.findall(r"`([^`]+)`", cells[0]):
            rows[field] = (yes(cells[series]), yes(cells[compare]))
    return rows


def main():
    repo = pathlib.Path(sys.argv[1]).resolve()
    bad = []

    comparable_file, comparable = cpp_field_list(repo, "comparable_env_fields")
    timing_file, timing = cpp_field_list(repo, "timing_env_fields")
    table = env_table((repo / "docs" / "METRICS.md").read_text())
    for field in comparable + timing:
        if field not in table:
            bad.append(f"docs/METRICS.md's environment table lacks `{field}` "
                       f"({comparable_file if field in comparable else timing_file})")
    for field, (series, compare) in sorted(table.items()):
        if series != (field in comparable):
            bad.append(f"docs/METRICS.md says `{field}` {'identifies' if series else 'does not identify'}"
                       f" the series; comparable_env_fields() in {comparable_file} says otherwise")
        if compare != (field in comparable or field in timing):
            bad.append(f"docs/METRICS.md says `{field}` {'must' if compare else 'need not'} match to "
                       f"compare; comparable_env_fields() and timing_env_fields() say otherwise")

    cmake = "\n".join(p.read_text() for p in repo.glob("**/CMakeLists.txt")
                      if not any(s.startswith((".", "build")) for s in p.relative_to(repo).parts))
    ctests = set(re.findall(r"add_test\(\s*NAME\s+([\w.]+)", cmake))
    gtest_sources = "\n".join(p.read_text(errors="replace")
                              for root in ("tests", "runner/lm/tests")
                              for p in (repo / root).glob("**/*.cpp"))
    gtests = set("%s.%s" % m for m in re.findall(r"\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)",
                                                    gtest_sources))
    folders = "|".join(map(re.escape, doc_files.top_folders(repo) + ["tests", "docs"]))
    ctest_name = re.compile(r"^(?:%s)\.[a-z0-9_]+$" % folders)
    gtest_name = re.compile(r"^[A-Z]\w*\.[A-Z]\w*$")
    for rel in doc_files.documents(repo):
        for n, line in enumerate((repo / rel).read_text().splitlines(), 1):
            for name in re.findall(r"`([^`\s]+)`", line) + re.findall(r"ctest [^`\n]*?-R '?([\w.]+)", line):
                name = name.strip("'\"")
                if name in EXAMPLES:
                    continue
                if ctest_name.match(name) and not re.search(r"\.(h|cpp|py|sh|md|json|toml|txt|yml)$", name):
                    if name not in ctests:
                        bad.append(f"{rel}:{n}: cites the ctest {name}, which no CMakeLists.txt adds")
                elif gtest_name.match(name) and name not in gtests:
                    bad.append(f"{rel}:{n}: cites the test {name}, which no TEST() defines")
    return doc_files.report("CLAIMS", bad, f"{len(table)} environment fields, {len(bad)} claims "
                            "the code does not bear out")


if __name__ == "__main__":
    sys.exit(main())
