#!/usr/bin/env python3
"""Pull request, optional: the gate's summary as one comment on the pull request, edited on every
re-run instead of adding another (ci/comment/action.yml).

It runs in a job of its own (docs/OPERATORS.md, "A pull-request comment"): on a GitHub-hosted
runner, after the gate job, with only the gate's uploaded report and a token that may write
pull-request comments. No measured code runs in that job, so no measured code ever sees the token.

    pr_comment.py REPORT.md

Environment: GITHUB_TOKEN (required), GITHUB_API_URL (default https://api.github.com),
GITHUB_REPOSITORY, the pull request's number from GITHUB_EVENT_PATH (or PERFGATE_PR_NUMBER),
GITHUB_SERVER_URL and GITHUB_RUN_ID for the link to the run, PERFGATE_COMMENT_AUTHOR (the login
the token posts as; default github-actions[bot]): only a comment of that author that starts with
the marker is ever edited. A failure is a warning, never a failed check. Standard library only.
"""

import json
import os
import re
import sys
import urllib.error
import urllib.request

MARKER = "<!-- perfgate: gate summary -->"
MAX_BODY = 65536  # GitHub refuses longer comment bodies
TRUNCATED = "\n\n… (the report was cut to fit a comment; the job summary has all of it)\n"


class ApiError(Exception):
    pass


def log(msg):
    print(f"perfgate-ci: {msg}", file=sys.stderr)


def warn(msg):
    # One line, no workflow-command characters from the server's answer.
    print("::warning title=perfgate::" + re.sub(r"[\r\n%]", " ", msg))


def request(method, url, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"null"), resp.headers.get("Link", "")
    except urllib.error.HTTPError as e:
        raise ApiError(f"{method} {url}: HTTP {e.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise ApiError(f"{method} {url}: {e}") from None


def next_link(link_header):
    for part in link_header.split(","):
        m = re.match(r'\s*<([^>]+)>\s*;\s*rel="next"', part)
        if m:
            return m.group(1)
    return None


def comments(api, repo, number, token):
    url = f"{api}/repos/{repo}/issues/{number}/comments?per_page=100"
    while url:
        page, link = request("GET", url, token)
        yield from page
        url = next_link(link)


def pr_number():
    if os.environ.get("PERFGATE_PR_NUMBER"):
        return int(os.environ["PERFGATE_PR_NUMBER"])
    path = os.environ.get("GITHUB_EVENT_PATH")
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            pr = json.load(f).get("pull_request") or {}
        if isinstance(pr.get("number"), int):
            return pr["number"]
    return None


def body_of(report_path):
    try:
        with open(report_path, encoding="utf-8", errors="replace") as f:
            report = f.read()
    except OSError:
        report = "### 💥 perfgate: the gate left no report\n\nThe gate job ended before it wrote one."
    run = ""
    if os.environ.get("GITHUB_RUN_ID"):
        server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
        repo = os.environ.get("GITHUB_REPOSITORY", "")
        run = f"\n\n[The gate's run]({server}/{repo}/actions/runs/{os.environ['GITHUB_RUN_ID']})\n"
    head = MARKER + "\n"
    room = MAX_BODY - len(head) - len(run) - len(TRUNCATED)
    if len(report) > room:
        report = report[:room] + TRUNCATED
    return head + report + run


def main(argv):
    if len(argv) != 2:
        print("usage: pr_comment.py REPORT.md", file=sys.stderr)
        return 2
    token = os.environ.get("GITHUB_TOKEN", "")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    author = os.environ.get("PERFGATE_COMMENT_AUTHOR", "github-actions[bot]")
    number = pr_number()
    if not token or not repo or number is None:
        warn("no pull-request comment: GITHUB_TOKEN, GITHUB_REPOSITORY or the pull request's number is missing")
        return 0
    body = body_of(argv[1])
    try:
        mine = [c for c in comments(api, repo, number, token)
                if (c.get("user") or {}).get("login") == author
                and str(c.get("body", "")).startswith(MARKER)]
        if mine:
            comment, _ = request("PATCH", f"{api}/repos/{repo}/issues/comments/{mine[0]['id']}",
                                 token, {"body": body})
            log(f"updated the perfgate comment {comment['id']} on #{number}")
        else:
            comment, _ = request("POST", f"{api}/repos/{repo}/issues/{number}/comments", token,
                                 {"body": body})
            log(f"posted the perfgate comment {comment['id']} on #{number}")
    except ApiError as e:
        warn(f"the pull-request comment failed: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
