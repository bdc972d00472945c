"""Starts `perfgate serve` on a free loopback port for the browser test and the page benchmark."""

import re
import subprocess
import time


def start_server(perfgate, db, log_path, extra=(), timeout_s=60):
    """Returns (process, port) once serve logs the address it listens on."""
    log = open(log_path, "w")
    proc = subprocess.Popen([perfgate, "serve", "--db", db, "--port", "0", *extra], stderr=log,
                            stdout=subprocess.DEVNULL)
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        with open(log_path) as f:
            m = re.search(r"listening on http://[^ ]*:(\d+)/", f.read())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("perfgate serve did not start:\n" + open(log_path).read())
