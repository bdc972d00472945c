#!/usr/bin/env python3
"""tests/ci/workflow_policy.py catches each way of breaking the policy, and the canonical gate
workflow's head-repository step lets a fork's run through only with an approval.

1. The canonical workflow and perfgate's own workflows pass; each mutation of the canonical file
   (dropping the approval environment, skipping forks with if:, unpinning an action, ...) is
   reported under the rule it breaks.
2. The head-repository step, extracted from the canonical file and run with bash as the runner
   would, against a local HTTP server standing in for GitHub's review-history endpoint
   (GET /repos/OWNER/REPO/actions/runs/RUN_ID/approvals).
Usage: workflow_policy_test.py [REPO_ROOT]   (run by tests/ci/lint_workflows.sh)
"""
import http.server
import json
import os
import pathlib
import subprocess
import sys
import threading

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import workflow_policy as policy  # noqa: E402

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
CANONICAL = (ROOT / policy.CANONICAL).read_text()
failures = []


def check(name, ok, detail=""):
    print(("ok   - " if ok else "FAIL - ") + name + ("" if ok else f"\n       {detail}"))
    if not ok:
        failures.append(name)


def findings_for(text, label="mutated"):
    found = policy.Findings()
    canonical_doc = policy._load(CANONICAL, policy.CANONICAL, policy.Findings())
    policy.check_workflow(text, label, policy._approval_step(canonical_doc), found)
    return found


def between(text, start, end):
    i = text.index(start)
    return text[i:text.index(end, i)]


APPROVAL = between(CANONICAL, "      - name: the head repository is this one",
                   "      - name: the pull request head, to be measured")
ENVIRONMENT = between(CANONICAL, "    environment: >-\n", "    steps:\n")
TOP_CONCURRENCY = between(CANONICAL, "# One gate per pull request", "defaults:")
GATE_IF = "    if: github.event_name == 'pull_request_target'\n"
TREND_IF = between(CANONICAL, "    if: >-\n      github.ref == 'refs/heads/main'", "    runs-on:")
CACHE_STEP = ("      - uses: actions/cache@5a3ec84eff668545956fd18022155c47e93e2684  # v4.2.3\n"
              "        with: {path: measured/.cache, key: x}\n")


def moved_approval(text):
    """The head-repository step moved to the end of the gate job, after the perfgate action."""
    assert "\n\n  trend:\n" in text
    return text.replace(APPROVAL, "", 1).replace("\n\n  trend:\n", "\n" + APPROVAL + "\n  trend:\n", 1)


# (what the mutation does, the rule that must catch it, a function of the canonical text)
def sub(old, new):
    def apply(text):
        assert old in text, f"the canonical workflow no longer contains {old!r}"
        return text.replace(old, new, 1)
    return apply


MUTATIONS = [
    ("the gate has no environment", "gate-environment", sub(ENVIRONMENT, "")),
    ("a fork runs in the unprotected environment", "gate-environment",
     sub("&& 'perfgate-pr' || 'perfgate-fork-pr' }}", "&& 'perfgate-pr' || 'perfgate-pr' }}")),
    ("every pull request runs in perfgate-pr", "gate-environment", sub(ENVIRONMENT, "    environment: perfgate-pr\n")),
    ("forks are skipped by the job's if: (skipped = green)", "gate-if",
     sub(GATE_IF, "    if: >-\n      github.event_name == 'pull_request_target' &&\n"
                  "      github.event.pull_request.head.repo.full_name == github.repository\n")),
    ("the gate may fail and still pass", "gate-if", sub(GATE_IF, GATE_IF + "    continue-on-error: true\n")),
    ("no workflow-level concurrency", "concurrency", sub(TOP_CONCURRENCY, "")),
    ("the group is not per pull request", "concurrency",
     sub("group: perfgate-${{ github.event.pull_request.number || github.ref }}", "group: perfgate-${{ github.ref }}")),
    ("a new push does not cancel the old gate", "concurrency",
     sub("cancel-in-progress: ${{ github.event_name == 'pull_request_target' }}", "cancel-in-progress: false")),
    ("a push to main cancels the trend run before it", "concurrency",
     sub("cancel-in-progress: ${{ github.event_name == 'pull_request_target' }}", "cancel-in-progress: true")),
    ("actions/checkout by tag", "pinned",
     sub("actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", "actions/checkout@v4")),
    ("the perfgate action by branch", "pinned",
     sub("OWNER/perfgate/ci/action@0123456789abcdef0123456789abcdef01234567", "OWNER/perfgate/ci/action@main")),
    ("a checkout keeps its credentials", "checkout", sub("persist-credentials: false", "persist-credentials: true")),
    ("a checkout without persist-credentials", "checkout", sub("          persist-credentials: false\n", "")),
    ("read-all at the top", "permissions", sub("permissions: {}\n", "permissions: read-all\n")),
    ("no permissions at the top", "permissions", sub("permissions: {}\n", "")),
    ("the gate may write pull requests", "permissions",
     sub("      actions: read ", "      pull-requests: write\n      actions: read ")),
    ("the trend names no permissions", "permissions",
     sub("    timeout-minutes: 60\n    permissions:\n      contents: read\n    environment: perfgate-trend",
         "    timeout-minutes: 60\n    environment: perfgate-trend")),
    ("the gate reads a secret", "gate-secrets",
     sub("          main-branch: ${{ github.event.pull_request.base.ref }}\n",
         "          main-branch: ${{ github.event.pull_request.base.ref }}\n"
         "          token: ${{ secrets.PERFGATE_TOKEN }}\n")),
    ("the gate uses actions/cache", "gate-cache",
     sub("      - name: perfgate gate\n", CACHE_STEP + "      - name: perfgate gate\n")),
    ("no head-repository step", "gate-approval-step", sub(APPROVAL, "")),
    ("the head-repository step comes after the action", "gate-approval-step", moved_approval),
    ("the head-repository step lets a rejection through", "gate-approval-step",
     sub('r["state"] == "approved"', 'r["state"] != "pending"')),
    ("the pull request head is checked out over the workspace", "gate-measured-path",
     sub("          path: measured\n          fetch-depth: 0", "          fetch-depth: 0")),
    ("a run: step executes the pull request's code", "gate-measured-path",
     sub("      - name: perfgate gate\n", "      - run: bash measured/ci/build.sh\n      - name: perfgate gate\n")),
    ("a local action from the pull request's checkout", "gate-measured-path",
     sub("uses: OWNER/perfgate/ci/action@0123456789abcdef0123456789abcdef01234567\n        with:\n          checkout",
         "uses: ./measured/ci/action\n        with:\n          checkout")),
    ("a pull_request event runs the gate on the self-hosted runner", "self-hosted",
     lambda t: sub(GATE_IF, "    if: startsWith(github.event_name, 'pull_request')\n")(
         sub("  pull_request_target:\n", "  pull_request:\n  pull_request_target:\n")(t))),
    ("the gate has no timeout", "self-hosted", sub("    timeout-minutes: 60\n", "")),
    ("the gate joins a job concurrency group (held while waiting for approval)", "gate-concurrency",
     sub("    steps:\n", "    concurrency:\n      group: perfgate-gpu\n      cancel-in-progress: false\n    steps:\n")),
    ("the trend reads its secret outside an environment", "secrets",
     sub("    environment: perfgate-trend                # deployment branch main; holds PERFGATE_TOKEN\n", "")),
    ("a pull_request_target event can run the trend and its secret", "secrets",
     sub(TREND_IF, "    if: github.ref == 'refs/heads/main'\n")),
    ("an event the policy does not cover", "triggers", sub("  workflow_dispatch:\n", "  workflow_dispatch:\n  issue_comment:\n")),
]


RELEASE = (ROOT / ".github/workflows/release.yml").read_text()
PUBLISH_PERMS = "    permissions:\n      contents: write                          # the GitHub release and its files\n"
# (what the mutation does, the rule that must catch it, a function of release.yml's text)
RELEASE_MUTATIONS = [
    ("a release that pull requests also run writes", "permissions",
     sub('    tags: ["v[0-9]+.[0-9]+.[0-9]+*"]\n', '    tags: ["v[0-9]+.[0-9]+.[0-9]+*"]\n  pull_request:\n')),
    ("a release that a push to a branch also runs writes", "permissions",
     sub('    tags: ["v[0-9]+.[0-9]+.[0-9]+*"]\n', '    tags: ["v[0-9]+.[0-9]+.[0-9]+*"]\n    branches: [main]\n')),
    ("a release job writes outside an environment", "release",
     sub("      attestations: write\n    environment: release\n    steps:",
         "      attestations: write\n    steps:")),
    ("a release job writes pull requests", "release",
     sub(PUBLISH_PERMS, PUBLISH_PERMS + "      pull-requests: write\n")),
    ("a release job writes on a self-hosted runner", "release",
     sub("    needs: [packages, image]\n    runs-on: ubuntu-latest\n",
         "    needs: [packages, image]\n    runs-on: [self-hosted, gpu]\n")),
    ("a release's build job writes", "release",
     sub("    timeout-minutes: 90\n    permissions:\n      contents: read\n",
         "    timeout-minutes: 90\n    permissions:\n      contents: write\n")),
]


def test_policy():
    clean = findings_for(CANONICAL, policy.CANONICAL)
    check("the canonical workflow keeps the policy", not clean.items, clean.items)
    for name, rule, mutate in RELEASE_MUTATIONS:
        text = mutate(RELEASE)
        yaml.safe_load(text)
        found = findings_for(text)
        check(f"[{rule}] {name}", rule in found.rules(), f"found only {sorted(found.rules()) or 'nothing'}")
    for rel in (".github/workflows/perfgate.yml", ".github/workflows/lint.yml", ".github/workflows/release.yml"):
        found = findings_for((ROOT / rel).read_text(), rel)
        check(f"{rel} keeps the policy", not found.items, found.items)
    for name, rule, mutate in MUTATIONS:
        text = mutate(CANONICAL)
        yaml.safe_load(text)  # every mutation is still a valid workflow
        found = findings_for(text)
        check(f"[{rule}] {name}", rule in found.rules(), f"found only {sorted(found.rules()) or 'nothing'}")
    found = policy.Findings()
    policy.check_copy(CANONICAL, CANONICAL.replace("min-effect: \"0.05\"", "min-effect: \"0.5\""), "README.md", found)
    check("[copies] a doc copy that differs from the canonical file", found.rules() == {"copies"}, found.items)


class _Api(http.server.BaseHTTPRequestHandler):
    reply = (200, [])
    requests = []

    def do_GET(self):
        _Api.requests.append((self.path, self.headers.get("Authorization")))
        status, body = _Api.reply
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def review(state, env, login="maintainer"):
    return {"state": state, "comment": "", "user": {"login": login}, "environments": [{"id": 1, "name": env}]}


def test_approval_step():
    doc = yaml.safe_load(CANONICAL)
    step = next(s for s in doc["jobs"]["gate"]["steps"] if "HEAD_REPO" in (s.get("env") or {}))
    server = http.server.HTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_env = {"PATH": os.environ["PATH"], "GITHUB_REPOSITORY": "owner/repo", "GITHUB_RUN_ID": "42",
                "GITHUB_API_URL": f"http://127.0.0.1:{server.server_port}", "GH_TOKEN": "the-token"}
    cases = [
        ("a branch of this repository runs without asking the API", "owner/repo", (200, []), 0, "is this repository"),
        ("a fork approved in perfgate-fork-pr runs", "someone/fork",
         (200, [review("approved", "perfgate-fork-pr", "alice")]), 0, "approved by alice"),
        ("a fork with no review fails", "someone/fork", (200, []), 1, "::error title=perfgate::"),
        ("a fork approved only in perfgate-pr fails", "someone/fork", (200, [review("approved", "perfgate-pr")]), 1,
         "::error"),
        ("a rejected fork fails", "someone/fork", (200, [review("rejected", "perfgate-fork-pr")]), 1, "::error"),
        ("a deleted fork with no review fails", "", (200, []), 1, "a deleted fork"),
        ("an API that refuses the token fails", "someone/fork", (403, {"message": "Resource not accessible"}), None, ""),
    ]
    for name, head, reply, want_rc, want_text in cases:
        _Api.reply, _Api.requests = reply, []
        proc = subprocess.run(["bash", "-c", step["run"]], env=dict(base_env, HEAD_REPO=head),
                              capture_output=True, text=True, timeout=60)
        out = proc.stdout + proc.stderr
        rc_ok = proc.returncode != 0 if want_rc is None else proc.returncode == want_rc
        check(f"head-repository step: {name}", rc_ok and want_text in out, f"exit {proc.returncode}: {out.strip()}")
        if head and head != "owner/repo":
            check(f"head-repository step: ... asked for run 42's approvals with the job's token",
                  _Api.requests == [("/repos/owner/repo/actions/runs/42/approvals", "Bearer the-token")],
                  _Api.requests)
    server.shutdown()


test_policy()
test_approval_step()
print(f"{len(failures)} failed" if failures else "workflow-policy-test: all passed")
sys.exit(1 if failures else 0)
