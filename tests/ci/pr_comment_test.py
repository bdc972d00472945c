"""ci/scripts/pr_comment.py against a local HTTP server that plays GitHub's REST API on loopback:
one comment per pull request, posted once and edited on every re-run; only the token's own
marked comment is ever edited (not a marked comment of somebody else); the issue's comments are
paged through (Link headers) to find it; a refused token is a warning and exit 0; a report too
long for a comment is cut to GitHub's limit.

    python3 pr_comment_test.py
"""

import http.server
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import urllib.parse

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "ci" / "scripts" / "pr_comment.py"
REPO, NUMBER, TOKEN, BOT = "octo/model", 7, "test-token", "github-actions[bot]"
MARKER = "<!-- perfgate: gate summary -->"


class FakeGitHub(http.server.BaseHTTPRequestHandler):
    """Issue comments of one repository, as GitHub's REST API serves them."""

    comments = []  # [{"id", "body", "user": {"login"}}], the comments in order
    requests = []  # (method, path) of every request, for the assertions

    def log_message(self, *args):
        pass

    def answer(self, code, obj=None, headers=()):
        data = json.dumps(obj).encode() if obj is not None else b""
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorised(self):
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.answer(401, {"message": "Bad credentials"})
            return False
        return True

    def body(self):
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def do_GET(self):
        FakeGitHub.requests.append(("GET", self.path))
        if not self.authorised():
            return
        url = urllib.parse.urlparse(self.path)
        if url.path != f"/repos/{REPO}/issues/{NUMBER}/comments":
            return self.answer(404, {"message": "Not Found"})
        q = urllib.parse.parse_qs(url.query)
        per_page, page = int(q.get("per_page", ["30"])[0]), int(q.get("page", ["1"])[0])
        chunk = self.comments[(page - 1) * per_page:page * per_page]
        headers = []
        if page * per_page < len(self.comments):
            nxt = f"http://{self.headers['Host']}{url.path}?per_page={per_page}&page={page + 1}"
            headers.append(("Link", f'<{nxt}>; rel="next"'))
        self.answer(200, chunk, headers)

    def do_POST(self):
        FakeGitHub.requests.append(("POST", self.path))
        if not self.authorised():
            return
        if self.path != f"/repos/{REPO}/issues/{NUMBER}/comments":
            return self.answer(404, {"message": "Not Found"})
        body = self.body()["body"]
        if len(body) > 65536:
            return self.answer(422, {"message": "body is too long (maximum is 65536 characters)"})
        comment = {"id": 1000 + len(self.comments), "body": body, "user": {"login": BOT}}
        self.comments.append(comment)
        self.answer(201, comment)

    def do_PATCH(self):
        FakeGitHub.requests.append(("PATCH", self.path))
        if not self.authorised():
            return
        m = re.fullmatch(rf"/repos/{REPO}/issues/comments/(\d+)", self.path)
        found = [c for c in self.comments if m and c["id"] == int(m.group(1))]
        if not found:
            return self.answer(404, {"message": "Not Found"})
        found[0]["body"] = self.body()["body"]
        self.answer(200, found[0])


def run(api, report, token=TOKEN):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_TOKEN=token, GITHUB_API_URL=api, GITHUB_REPOSITORY=REPO,
               PERFGATE_PR_NUMBER=str(NUMBER), GITHUB_RUN_ID="42",
               GITHUB_SERVER_URL="https://github.example")
    return subprocess.run([sys.executable, str(SCRIPT), str(report)], env=env,
                          capture_output=True, text=True, timeout=60)


def main():
    passed = failed = 0

    def check(what, ok, detail=""):
        nonlocal passed, failed
        print(("ok   - " if ok else "FAIL - ") + what + ("" if ok else f": {detail}"))
        passed, failed = passed + ok, failed + (not ok)

    # 150 comments of other people before ours: the first page (100) does not hold the answer.
    FakeGitHub.comments = [{"id": i, "body": f"comment {i}", "user": {"login": f"user{i}"}}
                           for i in range(1, 150)]
    # Somebody quoting the marker: never edited.
    FakeGitHub.comments.append({"id": 150, "body": MARKER + "\nmine, not the bot's",
                                "user": {"login": "mallory"}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "perfgate-report.md"
        report.write_text("### ❌ perfgate: 1 regression in decode latency\n\n+224.4%\n")
        r = run(api, report)
        ours = [c for c in FakeGitHub.comments if c["user"]["login"] == BOT]
        check("first run: exit 0", r.returncode == 0, r.stderr)
        check("first run: one comment, posted by the token's user", len(ours) == 1, ours)
        check("... it starts with the marker and holds the report",
              ours and ours[0]["body"].startswith(MARKER) and "+224.4%" in ours[0]["body"])
        check("... and links the run", ours and
              "https://github.example/octo/model/actions/runs/42" in ours[0]["body"])
        gets = [p for m, p in FakeGitHub.requests if m == "GET"]
        check("the comments were paged through (2 pages)", len(gets) == 2, gets)

        report.write_text("### ✅ perfgate: no regression in decode latency\n")
        FakeGitHub.requests.clear()
        r = run(api, report)
        ours2 = [c for c in FakeGitHub.comments if c["user"]["login"] == BOT]
        check("re-run: exit 0", r.returncode == 0, r.stderr)
        check("re-run: still one comment, the same one, edited",
              len(ours2) == 1 and ours2[0]["id"] == ours[0]["id"]
              and "no regression" in ours2[0]["body"] and "+224.4%" not in ours2[0]["body"], ours2)
        check("re-run: a PATCH of that comment, no POST",
              [m for m, _ in FakeGitHub.requests if m != "GET"] == ["PATCH"], FakeGitHub.requests)
        check("somebody else's marked comment is untouched",
              FakeGitHub.comments[149]["body"] == MARKER + "\nmine, not the bot's")

        report.write_text("x" * 100000)
        r = run(api, report)
        ours3 = [c for c in FakeGitHub.comments if c["user"]["login"] == BOT]
        check("a report longer than a comment is cut to GitHub's 65536 characters",
              r.returncode == 0 and len(ours3) == 1 and len(ours3[0]["body"]) <= 65536
              and "cut to fit" in ours3[0]["body"], (r.stderr, len(ours3[0]["body"])))

        before = [dict(c) for c in FakeGitHub.comments]
        r = run(api, report, token="wrong")
        check("a refused token: exit 0 with a warning, nothing changed",
              r.returncode == 0 and "::warning" in r.stdout and "HTTP 401" in r.stdout
              and FakeGitHub.comments == before, (r.stdout, r.stderr))

        r = run(api, pathlib.Path(tmp) / "missing.md")
        check("no report (the gate job ended early): the comment says so",
              r.returncode == 0 and "left no report" in
              [c for c in FakeGitHub.comments if c["user"]["login"] == BOT][0]["body"])
    server.shutdown()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
