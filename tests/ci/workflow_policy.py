#!/usr/bin/env python3
"""perfgate's policy for every workflow it ships, and the one canonical gate workflow.

Usage:
  workflow_policy.py [--root DIR] WORKFLOW...   check these workflow files, the copy-paste
                                                workflows of README.md and docs/OPERATORS.md, and
                                                that those copies are the canonical file
  workflow_policy.py [--root DIR] --write       copy the canonical file into README.md and
                                                docs/OPERATORS.md (after editing it)

The canonical gate workflow is examples/own-model/.github/workflows/perfgate.yml. README.md and
docs/OPERATORS.md show it, byte for byte, as the ```yaml block after the line
`<!-- lint: copy-paste workflow -->`; `--write` regenerates those blocks from the file.

Rules (docs/OPERATORS.md, "The trust model", explains why each holds):
  triggers            only push (of branches or tags), workflow_dispatch, schedule, pull_request,
                      pull_request_target
  permissions         `permissions: {}` at the top; every job names its own, none of them write
                      (but a release's, below); a pull_request_target job gets contents: read
                      (and actions: read) only
  release             a workflow whose only trigger is a push of tags (a release) may give a job
                      contents, packages, id-token or attestations: write (publishing a release,
                      its image and its provenance), and only a job on a GitHub-hosted runner in
                      a fixed environment (required reviewers, deployment tags v*)
  concurrency         a workflow-level group; with pull request triggers the group holds the
                      pull request's number and cancel-in-progress is true for pull request
                      events (one gate per pull request); never true for a push that runs a
                      self-hosted job (each commit of main keeps its trend run)
  pinned              every `uses:` is a local path or pinned by a full 40-hex commit SHA
                      (docker:// by sha256 digest)
  checkout            every actions/checkout sets persist-credentials: false
  self-hosted         a job on a self-hosted runner has timeout-minutes, and no pull_request event
                      can run it: that event runs the pull request's own copy of the workflow
  pull-request-job    a job a pull_request event runs has no secret and no environment
  secrets             a job that reads secrets names a fixed environment (deployment branches:
                      main) and no pull request event of either kind can run it
  gate                a job pull_request_target runs (the gate):
    gate-if             is skipped only by event name: a skipped required job reports success,
                        so a fork's pull request must never be skipped into a green check
    gate-environment    runs in an environment chosen by the head repository, which is
                        perfgate-fork-pr (required reviewers) for any head repository but this
                        one (also when it is deleted): a fork waits for approval
    gate-approval-step  runs the canonical head-repository step (a fork's run must show an
                        approval in perfgate-fork-pr, or it fails) before the perfgate action
    gate-concurrency    is in no job concurrency group: a job waiting for approval holds its
                        group, so one unapproved fork would stall every other benchmark (a
                        runner takes one job at a time, which is what keeps benchmarks apart)
    gate-secrets        reads no secret
    gate-cache          uses no actions/cache
    gate-measured-path  checks the pull request head out into a path of its own, and no local
                        action or run step comes from that path
  copies              README.md's and docs/OPERATORS.md's copy-paste workflows are the canonical
                      file
"""
import argparse
import difflib
import pathlib
import re
import sys

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gh_expr  # noqa: E402  (next to this file)

CANONICAL = "examples/own-model/.github/workflows/perfgate.yml"
DOC_COPIES = ("README.md", "docs/OPERATORS.md")
MARKER = "<!-- lint: copy-paste workflow -->"
FORK_ENV = "perfgate-fork-pr"
KNOWN_EVENTS = {"push", "workflow_dispatch", "schedule", "pull_request", "pull_request_target"}
UNTRUSTED_EVENTS = ("pull_request",)  # the pull request's own copy of the workflow runs
PR_EVENTS = ("pull_request", "pull_request_target")
# What a release job (a workflow run only by pushed tags) may write: the release and its assets,
# the image, and the provenance (an OIDC token to sign it, and the attestation).
RELEASE_WRITE_SCOPES = {"contents", "packages", "id-token", "attestations"}
SHA = re.compile(r"^[0-9a-f]{40}$")
DIGEST = re.compile(r"^docker://[^@]+@sha256:[0-9a-f]{64}$")
PERFGATE_ACTION = re.compile(r"(^|/)ci/action(@[0-9a-f]{40})?$")
HEAD_REF = "github.event.pull_request.head"


class Findings:
    def __init__(self):
        self.items = []

    def add(self, label, rule, message):
        self.items.append((label, rule, message))

    def rules(self):
        return {rule for _, rule, _ in self.items}


def _load(text, label, findings):
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        findings.add(label, "parse", f"not YAML: {e}")
        return None
    if not isinstance(doc, dict):
        findings.add(label, "parse", "not a workflow (a mapping with on: and jobs:)")
        return None
    if True in doc and "on" not in doc:  # YAML 1.1 reads the key `on` as a boolean
        doc["on"] = doc.pop(True)
    if not isinstance(doc.get("jobs"), dict) or "on" not in doc:
        findings.add(label, "parse", "not a workflow (a mapping with on: and jobs:)")
        return None
    return doc


def _events(on):
    if isinstance(on, str):
        return [on]
    if isinstance(on, list):
        return list(on)
    return list(on or {})


def _runs_on_labels(job):
    runs_on = job.get("runs-on", [])
    if isinstance(runs_on, dict):
        labels = runs_on.get("labels", [])
        labels = [labels] if isinstance(labels, str) else list(labels)
        return labels + (["self-hosted"] if "group" in runs_on else [])
    return [runs_on] if isinstance(runs_on, str) else list(runs_on)


def _is_self_hosted(job):
    return "self-hosted" in _runs_on_labels(job)


def _reachable(job, event):
    """False only when the job's `if:` is false for this event whatever else is unknown."""
    if "if" not in job:
        return True
    try:
        result = gh_expr.evaluate(gh_expr.condition(job["if"]), {"github.event_name": event})
    except ValueError:
        return True
    return gh_expr.truthy(result) is not False


def _dump(value):
    return yaml.safe_dump(value, default_flow_style=False, sort_keys=False)


def _steps(job):
    steps = job.get("steps") or []
    return [s for s in steps if isinstance(s, dict)]


def _is_checkout(step):
    return str(step.get("uses", "")).split("@")[0] == "actions/checkout"


def _is_perfgate_action(step):
    return bool(PERFGATE_ACTION.search(str(step.get("uses", "")).strip()))


def _check_pinned(label, doc, findings):
    uses = []
    for name, job in doc["jobs"].items():
        if isinstance(job, dict) and "uses" in job:
            uses.append((name, job["uses"]))
        for step in _steps(job if isinstance(job, dict) else {}):
            if "uses" in step:
                uses.append((name, step["uses"]))
    for name, ref in uses:
        ref = str(ref).strip()
        if ref.startswith("./"):
            continue
        if ref.startswith("docker://"):
            if not DIGEST.match(ref):
                findings.add(label, "pinned", f"job {name}: {ref} is not pinned by a sha256 digest")
            continue
        if "@" not in ref or not SHA.match(ref.rsplit("@", 1)[1]):
            findings.add(label, "pinned", f"job {name}: {ref} is not pinned by a full commit SHA")


def _is_tag_release(doc):
    """True when the workflow runs only on pushed tags (no branch, no other event)."""
    on = doc["on"]
    if not isinstance(on, dict) or set(on) != {"push"} or not isinstance(on["push"], dict):
        return False
    push = on["push"]
    return bool(push.get("tags")) and not any(k in push for k in ("branches", "branches-ignore"))


def _fixed_environment(job):
    env = job.get("environment")
    env_name = env.get("name") if isinstance(env, dict) else env
    return env_name if isinstance(env_name, str) and env_name and "${{" not in env_name else None


def _check_permissions(label, doc, events, findings):
    if doc.get("permissions", "absent") != {}:
        findings.add(label, "permissions", "the workflow must start from `permissions: {}`")
    release = _is_tag_release(doc)
    for name, job in doc["jobs"].items():
        perms = job.get("permissions")
        if not isinstance(perms, dict):
            findings.add(label, "permissions",
                         f"job {name}: names no permissions of its own (a mapping, never read-all/write-all)")
            continue
        for scope, level in perms.items():
            if level in ("read", "none"):
                continue
            if not release:
                findings.add(label, "permissions", f"job {name}: {scope}: {level} (nothing may write)")
            elif level != "write" or scope not in RELEASE_WRITE_SCOPES:
                findings.add(label, "release", f"job {name}: {scope}: {level} (a release writes only"
                             f" {', '.join(sorted(RELEASE_WRITE_SCOPES))})")
            elif _is_self_hosted(job):
                findings.add(label, "release", f"job {name}: writes {scope} on a self-hosted runner")
            elif _fixed_environment(job) is None:
                findings.add(label, "release",
                             f"job {name}: writes {scope} outside a fixed environment (required reviewers)")
        if "pull_request_target" in events and _reachable(job, "pull_request_target"):
            extra = {k: v for k, v in perms.items() if v != "none" and (k, v) not in
                     (("contents", "read"), ("actions", "read"))}
            if extra:
                findings.add(label, "permissions",
                             f"job {name}: a pull_request_target job gets contents: read and actions: read"
                             f" only, not {extra}")


def _check_concurrency(label, doc, events, findings):
    conc = doc.get("concurrency")
    if isinstance(conc, str):
        conc = {"group": conc}
    if not isinstance(conc, dict) or not conc.get("group"):
        findings.add(label, "concurrency", "no workflow-level `concurrency:` group")
        return
    pr_events = [e for e in events if e in PR_EVENTS]
    if pr_events and "github.event.pull_request.number" not in gh_expr.template_paths(str(conc["group"])):
        findings.add(label, "concurrency",
                     "the concurrency group does not hold github.event.pull_request.number (one run per pull request)")
    cancel = conc.get("cancel-in-progress", False)
    for event in pr_events:
        value = gh_expr.template(cancel, {"github.event_name": event})
        if gh_expr.truthy(value) is not True:
            findings.add(label, "concurrency",
                         f"cancel-in-progress is not true on {event}: a new push must cancel the gate of the commit before")
    if "push" in events and any(_is_self_hosted(j) and _reachable(j, "push") for j in doc["jobs"].values()):
        value = gh_expr.template(cancel, {"github.event_name": "push"})
        if gh_expr.truthy(value) is not False:
            findings.add(label, "concurrency",
                         "cancel-in-progress may be true on push: a push to main would cancel the trend run of the one before")


def _check_checkouts(label, doc, findings):
    for name, job in doc["jobs"].items():
        for step in _steps(job):
            if _is_checkout(step):
                keep = (step.get("with") or {}).get("persist-credentials", True)
                if keep is not False and str(keep).lower() != "false":
                    findings.add(label, "checkout",
                                 f"job {name}: actions/checkout without persist-credentials: false")


def _check_self_hosted(label, name, job, events, findings):
    if not _is_self_hosted(job):
        return
    if "timeout-minutes" not in job:
        findings.add(label, "self-hosted", f"job {name}: no timeout-minutes on a self-hosted runner")
    for event in events:
        if event in UNTRUSTED_EVENTS and _reachable(job, event):
            findings.add(label, "self-hosted",
                         f"job {name}: a {event} event runs it on a self-hosted runner with the pull request's own workflow")


def _approval_step(doc):
    """The canonical gate job's head-repository step: the one whose env reads the head repository."""
    for job in doc["jobs"].values():
        for step in _steps(job):
            env = step.get("env") or {}
            if "run" in step and HEAD_REF + ".repo.full_name" in str(env.get("HEAD_REPO", "")):
                return {"env": env, "run": step["run"]}
    return None


def _check_gate(label, name, job, approval, findings):
    if job.get("continue-on-error"):
        findings.add(label, "gate-if", f"job {name}: continue-on-error would turn a failed gate green")
    if "if" in job:
        try:
            read = gh_expr.paths(gh_expr.condition(job["if"]))
        except ValueError as e:
            read = {f"(unparsable: {e})"}
        other = sorted(read - {"github.event_name"})
        if other:
            findings.add(label, "gate-if",
                         f"job {name}: its if: reads {', '.join(other)}; a pull request it skips gets a"
                         " green required check (choose the environment by head repository instead)")
    env = job.get("environment")
    env_name = env.get("name") if isinstance(env, dict) else env
    if env_name is None:
        findings.add(label, "gate-environment", f"job {name}: no environment (a fork's run must wait for approval)")
    else:
        head = HEAD_REF + ".repo.full_name"
        for case, value in (("a fork", "someone/fork"), ("a deleted head repository", None)):
            chosen = gh_expr.template(env_name, {head: value, "github.repository": "owner/repo"})
            if chosen != FORK_ENV:
                findings.add(label, "gate-environment",
                             f"job {name}: the environment for {case} is {chosen!r}, not {FORK_ENV}")
        same = gh_expr.template(env_name, {head: "owner/repo", "github.repository": "owner/repo"})
        if not isinstance(same, str) or not same:
            findings.add(label, "gate-environment",
                         f"job {name}: no environment name for a branch of this repository ({same!r})")
    steps = _steps(job)
    first_action = next((i for i, s in enumerate(steps) if _is_perfgate_action(s)), len(steps))
    matches = [i for i, s in enumerate(steps)
               if approval is not None and "run" in s and s.get("run") == approval["run"]
               and (s.get("env") or {}) == approval["env"]]
    if approval is None:
        findings.add(label, "gate-approval-step", f"{CANONICAL} has no head-repository step to compare with")
    elif not matches:
        findings.add(label, "gate-approval-step",
                     f"job {name}: no copy of {CANONICAL}'s head-repository step (env HEAD_REPO, same run:)")
    elif matches[0] > first_action:
        findings.add(label, "gate-approval-step", f"job {name}: the head-repository step comes after the perfgate action")
    if job.get("concurrency"):
        findings.add(label, "gate-concurrency",
                     f"job {name}: a job concurrency group is held while the job waits for approval,"
                     " stalling every other job of the group")
    text = _dump(job)
    if re.search(r"\bsecrets\.", text):
        findings.add(label, "gate-secrets", f"job {name}: reads a secret in a pull_request_target job")
    if re.search(r"actions/cache", text):
        findings.add(label, "gate-cache", f"job {name}: actions/cache in a pull_request_target job")
    measured, trusted = [], []
    for step in steps:
        if not _is_checkout(step):
            continue
        with_ = step.get("with") or {}
        path = str(with_.get("path", ".")).strip().rstrip("/") or "."
        if HEAD_REF in str(with_.get("ref", "")) or "github.head_ref" in str(with_.get("ref", "")):
            measured.append(path)
        else:
            trusted.append(path)
    for path in measured:
        if path in (".", "") or path in trusted:
            findings.add(label, "gate-measured-path",
                         f"job {name}: the pull request head is checked out over the workspace or a trusted tree")
    for step in steps:
        uses = str(step.get("uses", "")).strip()
        if uses.startswith("./"):
            local = uses[2:]
            if any(local == p or local.startswith(p + "/") for p in measured if p != "."):
                findings.add(label, "gate-measured-path", f"job {name}: {uses} comes from the pull request's checkout")
        run = str(step.get("run", ""))
        for path in measured:
            if path != "." and re.search(rf"(^|[\s\"'=/.]){re.escape(path)}(/|\b)", run):
                findings.add(label, "gate-measured-path",
                             f"job {name}: a run: step reads the pull request's checkout ({path})")


def check_workflow(text, label, approval, findings):
    doc = _load(text, label, findings)
    if doc is None:
        return
    events = _events(doc["on"])
    for event in events:
        if event not in KNOWN_EVENTS:
            findings.add(label, "triggers", f"trigger {event} is not covered by this policy")
    _check_pinned(label, doc, findings)
    _check_permissions(label, doc, events, findings)
    _check_concurrency(label, doc, events, findings)
    _check_checkouts(label, doc, findings)
    for name, job in doc["jobs"].items():
        if not isinstance(job, dict):
            findings.add(label, "parse", f"job {name} is not a mapping")
            continue
        _check_self_hosted(label, name, job, events, findings)
        reads_secrets = bool(re.search(r"\bsecrets\.", _dump(job)))
        for event in events:
            if event in UNTRUSTED_EVENTS and _reachable(job, event):
                if reads_secrets or "environment" in job:
                    findings.add(label, "pull-request-job",
                                 f"job {name}: a {event} event runs it with a secret or an environment")
        if reads_secrets:
            env = job.get("environment")
            env_name = env.get("name") if isinstance(env, dict) else env
            if not isinstance(env_name, str) or "${{" in env_name:
                findings.add(label, "secrets", f"job {name}: reads a secret outside a fixed environment")
            for event in PR_EVENTS:
                if event in events and _reachable(job, event):
                    findings.add(label, "secrets", f"job {name}: reads a secret and a {event} event can run it")
        if "pull_request_target" in events and _reachable(job, "pull_request_target"):
            _check_gate(label, name, job, approval, findings)


def doc_block(path):
    """The ```yaml block after the marker line of a Markdown file, or None."""
    lines = pathlib.Path(path).read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == MARKER:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```yaml"):
                j += 1
            start = j + 1
            end = start
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            if start < len(lines) and end < len(lines):
                return start, end, "".join(lines[start:end])
    return None


def check_copy(canonical_text, copy_text, label, findings):
    if copy_text == canonical_text:
        return
    diff = list(difflib.unified_diff(canonical_text.splitlines(), copy_text.splitlines(), CANONICAL, label,
                                     lineterm="", n=1))
    shown = "\n      ".join(diff[:16]) + ("\n      ..." if len(diff) > 16 else "")
    findings.add(label, "copies",
                 f"is not {CANONICAL} (run tests/ci/workflow_policy.py --write):\n      {shown}")


def write_copies(root):
    canonical_text = (root / CANONICAL).read_text()
    for rel in DOC_COPIES:
        path = root / rel
        block = doc_block(path)
        if block is None:
            sys.exit(f"workflow-policy: {rel} has no ```yaml block after '{MARKER}'")
        start, end, _ = block
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(lines[:start]) + canonical_text + "".join(lines[end:]))
        print(f"workflow-policy: wrote {CANONICAL} into {rel}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[2]))
    ap.add_argument("--write", action="store_true")
    ap.add_argument("workflows", nargs="*")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    if args.write:
        write_copies(root)
        return 0
    findings = Findings()
    canonical_text = (root / CANONICAL).read_text()
    canonical_doc = _load(canonical_text, CANONICAL, Findings())
    approval = _approval_step(canonical_doc) if canonical_doc else None
    targets = [(w, pathlib.Path(w if pathlib.Path(w).is_absolute() else root / w).read_text())
               for w in args.workflows]
    for rel in DOC_COPIES:
        block = doc_block(root / rel)
        label = f"{rel} (copy-paste workflow)"
        if block is None:
            findings.add(label, "copies", f"no ```yaml block after '{MARKER}'")
            continue
        targets.append((label, block[2]))
        check_copy(canonical_text, block[2], label, findings)
    for label, text in targets:
        check_workflow(text, label, approval, findings)
    for label, rule, message in findings.items:
        print(f"workflow-policy: {label}: [{rule}] {message}", file=sys.stderr)
    print(f"workflow-policy: {len(targets)} workflows, {len(findings.items)} problems")
    return 1 if findings.items else 0


if __name__ == "__main__":
    sys.exit(main())
