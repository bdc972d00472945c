#!/usr/bin/env python3
"""Every document is reachable from the README, and every link and path a document names exists.

- every docs/*.md is linked from README.md;
- every relative link in README.md, docs/*.md and bench/results/README.md resolves to a file or
  folder of the repository, and its #anchor to a heading of the target (GitHub's anchors);
- every repository path those documents name (`bench/render_gpu.py`, docs/CLI.md, a glob such as
  `bench/results/gate-two-level/gpu_*.md`) exists;
- every document under docs/ that code, scripts and build files name exists.
Usage: links_test.py /path/to/repo
"""
import pathlib
import re
import sys

import doc_files

# Documents another change is rewriting, and the names they still use until it lands: each entry
# must still be needed, so it cannot outlive the rewrite.
PENDING = {}
INDEXES = [pathlib.Path("bench/results/README.md")]
DOC_NAME = re.compile(r"(?<![\w/.-])docs/[A-Za-z0-9_]+\.md\b")


def main():
    repo = pathlib.Path(sys.argv[1]).resolve()
    bad = []
    used_pending = set()
    roots = doc_files.top_folders(repo)
    texts = {}

    def text(rel):
        if rel not in texts:
            texts[rel] = (repo / rel).read_text()
        return texts[rel]

    readme_links = {(repo / t.split("#")[0]).resolve() for _, t in doc_files.links(text(pathlib.Path("README.md")))}
    for doc in sorted((repo / "docs").glob("*.md")):
        if doc.resolve() not in readme_links:
            bad.append(f"README.md does not link docs/{doc.name} (add it to the Documentation table)")

    for rel in doc_files.documents(repo) + INDEXES:
        for n, target in doc_files.links(text(rel)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (repo / rel).parent / path if path else repo / rel
            if not dest.exists():
                bad.append(f"{rel}:{n}: link to {target}: no such file")
                continue
            if anchor and dest.is_file() and dest.suffix == ".md":
                if anchor not in doc_files.anchors(dest.read_text()):
                    bad.append(f"{rel}:{n}: link to {target}: {dest.relative_to(repo)} has no "
                               f"heading with the anchor #{anchor}")
        for n, path in doc_files.repo_paths(text(rel), roots):
            if not doc_files.path_exists(repo, path):
                if path in PENDING.get(str(rel), ()):
                    used_pending.add((str(rel), path))
                    continue
                bad.append(f"{rel}:{n}: names {path}, which does not exist")

    documents = {str(p) for p in doc_files.documents(repo)}
    for rel in doc_files.tracked_files(repo):
        # Raw benchmark outputs are kept as written; this folder's tests name missing documents on
        # purpose.
        raw = rel.parts[:2] == ("bench", "results") and rel.name != "README.md"
        if str(rel) in documents or raw or rel.parts[:2] == ("tests", "docs"):
            continue
        try:
            body = (repo / rel).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(body.splitlines(), 1):
            for name in DOC_NAME.findall(line):
                if not (repo / name).is_file():
                    bad.append(f"{rel}:{n}: names {name}, which does not exist")

    for doc, names in PENDING.items():
        for name in names:
            if (doc, name) not in used_pending:
                bad.append(f"tests/docs/links_test.py: PENDING allows {doc} to name {name}, which it "
                           "no longer does: remove the entry")
    return doc_files.report("DOCS", bad, f"{len(bad)} broken links or names")


if __name__ == "__main__":
    sys.exit(main())
