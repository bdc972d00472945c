"""Reading the repository's Markdown for the docs tests: the documents, their links, headings and
the repository paths they name. Shared by links_test.py, results_index_test.py and
claims_test.py; not a test itself."""
import glob
import itertools
import pathlib
import re
import subprocess

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def documents(repo):
    """README.md and docs/*.md, the documents users read, as paths relative to the repository."""
    docs = sorted(p.relative_to(repo) for p in (repo / "docs").glob("*.md"))
    return [pathlib.Path("README.md")] + docs


def tracked_files(repo):
    """Every file git tracks (the filesystem, less build folders, without a .git)."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True,
                             check=True).stdout
        return [pathlib.Path(p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        return [p.relative_to(repo) for p in repo.rglob("*") if p.is_file()
                and not any(part.startswith((".", "build")) for part in p.relative_to(repo).parts)]


def top_folders(repo):
    """The repository's own top-level folders: the first part of a tracked path (not .github/,
    which documents name for the user's repository)."""
    return sorted({f.parts[0] for f in tracked_files(repo)
                   if len(f.parts) > 1 and not f.parts[0].startswith(".")})


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(2)[0]
            elif m.group(2)[0] == fence:
                fence = None
            continue
        if fence is None:
            yield n, line


def without_code_spans(line):
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def links(text):
    """(line number, target) of every Markdown link or image outside code."""
    for n, line in prose_lines(text):
        for m in LINK.finditer(without_code_spans(line)):
            yield n, m.group(2)


def slug(heading):
    """GitHub's anchor for a heading: the rendered text, lower case, punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor a document defines: its headings' slugs (GitHub numbers repeats -1, -2, ...)
    and explicit <a id> / <a name> anchors."""
    seen = {}
    out = set(HTML_ANCHOR.findall(text))
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(2))
        if s in seen:
            seen[s] += 1
            out.add(f"{s}-{seen[s]}")
        else:
            seen[s] = 0
            out.add(s)
    return out


def expand_braces(pattern):
    """`a_{x,y}.md` -> [`a_x.md`, `a_y.md`]."""
    parts = re.split(r"\{([^{}]*)\}", pattern)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def path_exists(repo, path):
    """A path a document names: a file or folder, or a glob that matches one."""
    for p in expand_braces(path):
        if any(c in p for c in "*?["):
            if glob.glob(str(repo / p)):
                continue
            return False
        if not (repo / p).exists():
            return False
    return True


def repo_paths(text, roots):
    """(line number, path) of every repository path named in a text: a word that starts with one
    of the repository's top-level folders and a slash (`bench/render_gpu.py`, `docs/CLI.md`,
    `bench/results/x/*.md`), in prose and in code alike."""
    word = re.compile(r"(?<![\w./~$-])((?:%s)/(?:[\w./*-]|\{[^{}\s]*\})*)"
                      % "|".join(map(re.escape, roots)))
    for n, line in enumerate(text.splitlines(), 1):
        for m in word.finditer(line):
            yield n, m.group(1).rstrip(".")


def report(prefix, problems, summary):
    """Print each problem and the summary line; the exit status of a test: 1 if any problem."""
    for p in problems:
        print(f"{prefix}: {p}")
    print(summary)
    return 1 if problems else 0
