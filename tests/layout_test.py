#!/usr/bin/env python3
"""The test tree follows docs/CONTRIBUTING.md's naming and location rule.

A GoogleTest file (one that defines TEST/TEST_F/TEST_P) is tests/<folder>/<concern>_test.cpp
(runner/lm/tests/ for LibTorch suites); nothing under tests/ starts with test_; a *_test.* file
holds tests. Usage: layout_test.py /path/to/repo
"""
import pathlib
import re
import sys

GTEST = re.compile(r"^\s*TEST(_F|_P)?\(", re.M)


def main():
    repo = pathlib.Path(sys.argv[1])
    bad = []
    roots = [repo / "tests", repo / "runner" / "lm" / "tests"]
    for root in roots:
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = f.relative_to(repo)
            if "fixtures" in rel.parts or "corpus" in rel.parts:
                continue
            if f.name.startswith("test_") and f.stem != "test_util":
                bad.append(f"{rel}: starts with test_ (suites are <concern>_test.*)")
            if f.suffix == ".cpp":
                text = f.read_text(errors="replace")
                has_tests = bool(GTEST.search(text))
                if has_tests and not f.stem.endswith("_test"):
                    bad.append(f"{rel}: defines tests but is not named <concern>_test.cpp")
                if f.stem.endswith("_test") and not has_tests:
                    bad.append(f"{rel}: named *_test.cpp but defines no test")
            if root == repo / "tests" and f.parent == root and f.suffix in (".cpp", ".h"):
                bad.append(f"{rel}: C++ suites live in tests/<folder>/")
    for b in bad:
        print("LAYOUT:", b)
    print(f"{len(bad)} files break the rule")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
