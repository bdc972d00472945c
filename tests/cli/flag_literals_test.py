#!/usr/bin/env python3
"""Only cli/ spells a command-line flag (docs/CONTRIBUTING.md, "Settings are named once").

Below cli/ a layer names a setting through common/errors.h's setting mark and each front end
spells it: the CLI as `--flag`, the sweep file as its key, the web as the query parameter. This
test fails, in a source file of a layer below cli/ outside the allow-list below, for a C++ string
literal that starts with `--` and a letter ("--kv-cache off: ..."), that is `--` alone (a flag
being built), or that has such a flag after a space or bracket ("... (use --kv-cache on)"), unless
it quotes a command for the user to run (`perfgate serve --db X`, `git config --global`).
Adjacent literals are read as one. Comments are not code and are skipped; test folders
(runner/lm/tests/) drive the CLI and are not scanned.
Usage: flag_literals_test.py /path/to/repo
"""
import pathlib
import re
import sys

LAYERS = ["common", "core", "store", "remote", "stats", "runner", "gate", "app", "web"]
FLAG = re.compile(r"(?:^|(?<=[\s(\[]))--[A-Za-z]")
# A command quoted for the user: its flags are that command's, in its own words. The program may
# be a placeholder ("{} serve --db {}": the binary as it was started).
SUBCOMMAND = r"(?:run|compare|changes|serve|export|runs|import|init)"
COMMAND = re.compile(r"(?:\bperfgate(?:-[a-z]+)? [a-z]+|\bgit [a-z-]+|\{\} " + SUBCOMMAND + r")\b")

# What may stay, and why: a file and the flags it may spell ("*": all of them).
ALLOWED = {
    # perfgate-sim's own main(): the command line of a developer tool beside perfgate
    # (docs/STATISTICS.md), a front end like cli/ that no layer includes.
    "gate/sim/main.cpp": {"*"},
    # A cell's stored reason, not a message: the same text wherever it is shown, and a stored
    # behaviour that ExecRunner.AHangPastTheTimeoutIsAnError pins. Naming it as the setting
    # changes stored data; left to a change that means to.
    "runner/exec/exec_runner.cpp": {"--exec-timeout"},
}


def literals(text):
    """Yields (line, content, start, end) of every string literal of C++ source `text`."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "'" and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            j = i + 1  # a character literal ('"' must not open a string); 1'000 is a number
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            raw = re.search(r"(?:u8|[uUL])?R$", text[max(0, i - 3):i])
            if raw:
                delim = text[i + 1:text.index("(", i)]
                start = i + len(delim) + 2
                end = text.index(")" + delim + '"', start)
                yield line, text[start:end], i, end + len(delim) + 2
                line += text.count("\n", i, end)
                i = end + len(delim) + 2
            else:
                j = i + 1
                while j < n and text[j] != '"' and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                yield line, text[i + 1:j], i, j + 1
                i = j + 1
        else:
            i += 1


def string_literals(text):
    """Yields (line, content) of every string, adjacent literals ("a " "b") joined."""
    pending = None
    for line, content, start, end in literals(text):
        if pending and not text[pending[3]:start].strip():
            pending = (pending[0], pending[1] + content, pending[2], end)
            continue
        if pending:
            yield pending[0], pending[1]
        pending = (line, content, start, end)
    if pending:
        yield pending[0], pending[1]


def flags_named(literal):
    """The flags `literal` spells for the user, outside a command it quotes."""
    if literal == "--":
        return ["--"]
    return [re.match(r"--[A-Za-z0-9-]*", literal[m.start():]).group(0)
            for m in FLAG.finditer(literal) if not COMMAND.search(literal, 0, m.start())]


def main():
    repo = pathlib.Path(sys.argv[1])
    bad = []
    for layer in LAYERS:
        for f in sorted((repo / layer).rglob("*")):
            rel = f.relative_to(repo).as_posix()
            if f.suffix not in (".cpp", ".h") or "tests" in f.relative_to(repo).parts:
                continue
            allowed = ALLOWED.get(rel, set())
            if "*" in allowed:
                continue
            for line, literal in string_literals(f.read_text(errors="replace")):
                if any(flag not in allowed for flag in flags_named(literal)):
                    bad.append(f"{rel}:{line}: \"{literal[:60]}\"")
    for b in bad:
        print("FLAG BELOW cli/:", b)
    print(f"{len(bad)} flag literals below cli/ (name the setting: SettingError::setting)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
