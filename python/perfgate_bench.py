"""Time your own model for `perfgate run --exec`, in about ten lines.

    import perfgate_bench as pb

    cell = pb.cell()                       # the sweep cell perfgate asks for (batch, prompt, ...)
    model = build_my_model(cell.device, cell.dtype)
    prompt = pb.random_prompt(cell, vocab=model.vocab)

    def prefill():                         # a new sequence: reset the cache, run the prompt
        model.reset(); model(prompt, pos=0)
    def decode_step(i):                    # one generated token at position prompt_len + i
        model(next_token, pos=cell.prompt_len + i)

    pb.run(cell, prefill, decode_step, engine="my-model", model_info={"param_bytes": ...})

`run` does `cell.warmup` untimed and `cell.reps` timed repetitions of prefill followed by
`cell.gen_tokens - 1` decode steps, and prints docs/PROTOCOL.md's JSON lines. Under `perfgate ab`
the same script is a worker (protocol 3, docs/PROTOCOL.md "Version 3: worker mode"): `cell()`
reads only the cell's line, and `run` does the warm-up, prints `ready`, then runs one timed
repetition per request perfgate writes on stdin, and the profile and `end` when asked for the
end; the repetition is the same code in both modes. On CUDA it times
with CUDA events recorded between the calls (one synchronisation per repetition, none between
steps); on the CPU with time.perf_counter_ns. It imports nothing outside the standard library;
torch is only touched when the cell's device is CUDA or a profile is asked for (and then it is
already imported by you; without torch the profile says so in its note).

When perfgate asks for a profile (the cell's `profile`, PERFGATE_PROFILE=on; `perfgate run
--profile off` asks for none), `run` then runs one more, untimed prefill + decode sequence, each
step under its own torch.profiler session, and prints docs/PROTOCOL.md's `profile` line: per step
the ATen ops (calls, host self time) and CUDA kernels (launches, device time) by name, and the
counters of perfgate's own profile (docs/METRICS.md, "The profile"). No timed repetition ever runs
under the profiler.

While the benchmark runs, file descriptor 1 is pointed at stderr, so a stray print() (or a C
library writing to stdout) cannot corrupt the protocol; the protocol lines go to the original
stdout. An out-of-memory error is reported as an `oom` line, any other exception as an `error`
line (and re-raised, so its traceback reaches stderr, which perfgate keeps in the cell's reason).
"""

import hashlib
import json
import math
import os
import platform
import random
import sys
import time
import warnings

PROTOCOL = 3  # the newest protocol this helper speaks; it answers perfgate's own version
OLDEST_PROTOCOL = 1
WORKER_PROTOCOL = 3  # the first version with a worker mode

_proto_fd = None


def _protocol_fd():
    """The original stdout for protocol lines; fd 1 becomes stderr for everything else."""
    global _proto_fd
    if _proto_fd is None:
        sys.stdout.flush()
        _proto_fd = os.dup(1)
        os.dup2(2, 1)
    return _proto_fd


def _emit(obj):
    line = json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n"
    data = line.encode("utf-8")
    fd = _protocol_fd()
    while data:
        data = data[os.write(fd, data):]


class Cell:
    """One sweep cell: what perfgate wants measured (docs/PROTOCOL.md, "The cell")."""

    def __init__(self, d):
        self.raw = dict(d)
        self.model = str(d.get("model", "model"))
        self.batch_size = int(d["batch_size"])
        self.prompt_len = int(d["prompt_len"])
        self.gen_tokens = int(d["gen_tokens"])
        self.warmup = int(d.get("warmup", 0))
        self.reps = int(d["reps"])
        self.device = str(d.get("device", "cpu"))
        self.dtype = str(d.get("dtype", "fp32"))
        self.seed = int(d.get("seed", 0))
        self.kv_cache = bool(d.get("kv_cache", True))
        self.attention = str(d.get("attention", "sdpa"))
        self.cuda_graphs = bool(d.get("cuda_graphs", False))
        self.repo = str(d.get("repo", os.getcwd()))
        # The version both ends speak, and whether perfgate asked for a profile (protocol 2).
        self.protocol = min(int(d.get("protocol", PROTOCOL)), PROTOCOL)
        self.profile = self.protocol >= 2 and bool(d.get("profile", False))
        # A worker of `perfgate ab` (protocol 3): stdin stays open for perfgate's requests, and
        # `reps` is the most it may ask for.
        self.worker = bool(d.get("worker", False))
        if self.worker and self.protocol < WORKER_PROTOCOL:
            raise ValueError("perfgate_bench: a worker cell needs protocol %d, the cell says %r"
                             % (WORKER_PROTOCOL, d.get("protocol")))
        if self.gen_tokens < 1 or self.reps < 1 or self.batch_size < 1 or self.prompt_len < 1:
            raise ValueError("perfgate_bench: the cell has a non-positive size: %r" % (d,))

    @property
    def decode_steps(self):
        return self.gen_tokens - 1

    @property
    def torch_dtype_name(self):
        return {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}.get(self.dtype, self.dtype)

    def __repr__(self):
        return "Cell(%s)" % ", ".join("%s=%r" % kv for kv in sorted(self.raw.items()))


def _env_int(name, default=None):
    v = os.environ.get(name)
    if v is None or v == "":
        if default is None:
            raise KeyError(name)
        return default
    return int(v)


def cell(argv=None):
    """The cell perfgate asks for: the JSON object on stdin, else the PERFGATE_* variables.

    Outside perfgate (a developer trying the script) every variable may be given by hand; the
    defaults then are batch 1, prompt 16, 8 tokens, 1 warm-up, 3 repetitions, cpu, fp32.
    A worker (PERFGATE_WORKER=on) reads only the cell's line: stdin stays open for requests.
    """
    _protocol_fd()
    text = ""
    worker_env = os.environ.get("PERFGATE_WORKER", "off") == "on"
    if not sys.stdin.isatty():
        text = sys.stdin.readline() if worker_env else sys.stdin.read()
    if text.strip():
        d = json.loads(text)
    else:
        e = os.environ
        d = {
            "model": e.get("PERFGATE_MODEL", "model"),
            "batch_size": _env_int("PERFGATE_BATCH", 1),
            "prompt_len": _env_int("PERFGATE_PROMPT_LEN", 16),
            "gen_tokens": _env_int("PERFGATE_GEN_TOKENS", 8),
            "warmup": _env_int("PERFGATE_WARMUP", 1),
            "reps": _env_int("PERFGATE_REPS", 3),
            "device": e.get("PERFGATE_DEVICE", "cpu"),
            "dtype": e.get("PERFGATE_DTYPE", "fp32"),
            "seed": _env_int("PERFGATE_SEED", 0),
            "kv_cache": e.get("PERFGATE_KV_CACHE", "on") == "on",
            "attention": e.get("PERFGATE_ATTENTION", "sdpa"),
            "cuda_graphs": e.get("PERFGATE_CUDA_GRAPHS", "off") == "on",
            "repo": e.get("PERFGATE_REPO", os.getcwd()),
            "protocol": _env_int("PERFGATE_PROTOCOL", PROTOCOL),
            "profile": e.get("PERFGATE_PROFILE", "off") == "on",
            "worker": worker_env,
        }
    proto = int(d.get("protocol", PROTOCOL))
    if proto > PROTOCOL or proto < OLDEST_PROTOCOL:
        raise SystemExit("perfgate_bench: perfgate speaks protocol %d, this helper %d to %d"
                         % (proto, OLDEST_PROTOCOL, PROTOCOL))
    return Cell(d)


def random_prompt(c, vocab):
    """A [batch][prompt_len] list of token ids drawn from the cell's seed (no torch needed)."""
    rng = random.Random(c.seed)
    return [[rng.randrange(vocab) for _ in range(c.prompt_len)] for _ in range(c.batch_size)]


def _is_cuda(device):
    return device == "cuda" or device.startswith("cuda:")


class _CpuClock:
    """Wall-clock stamps; the calls are synchronous on the CPU."""

    def __init__(self, marks):
        self.t = [0] * marks

    def mark(self, i):
        self.t[i] = time.perf_counter_ns()

    def intervals_ms(self):
        return [(b - a) / 1e6 for a, b in zip(self.t, self.t[1:])]


class _CudaClock:
    """CUDA events recorded on the current stream between the calls; one wait per repetition."""

    def __init__(self, marks, torch):
        self.torch = torch
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(marks)]

    def mark(self, i):
        self.events[i].record()

    def intervals_ms(self):
        self.events[-1].synchronize()
        ev = self.events
        return [ev[i].elapsed_time(ev[i + 1]) for i in range(len(ev) - 1)]


def _harness():
    """This file's SHA-256 (first 16 hex digits) and path: which timing harness produced the
    samples, stored in the run's fingerprint as engine.perfgate_bench. In CI the action puts the
    pinned perfgate's copy first on PYTHONPATH (docs/OPERATORS.md)."""
    path = os.path.abspath(__file__)
    try:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        digest = "unreadable"
    return f"{digest} {path}"


def _versions(extra):
    v = {"python": platform.python_version(), "perfgate_bench": _harness()}
    torch = sys.modules.get("torch")
    if torch is not None:
        v["torch"] = str(torch.__version__)
        if getattr(torch.version, "cuda", None):
            v["torch.cuda"] = str(torch.version.cuda)
    for name in ("transformers", "vllm", "triton"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__version__", None):
            v[name] = str(mod.__version__)
    v.update({str(k): str(val) for k, val in (extra or {}).items()})
    return v


def _is_oom(exc):
    name = type(exc).__name__
    return isinstance(exc, MemoryError) or name == "OutOfMemoryError" or "out of memory" in str(exc)


class _Repetition:
    """One repetition, timed: `setup()` untimed (when given), the prefill, then each decode step,
    with the clock marked between the calls. The one-shot and the worker mode both time through
    `once()`, so a sample means the same whichever mode produced it."""

    def __init__(self, c, prefill, decode_step, setup=None):
        self.steps = c.gen_tokens - 1
        if _is_cuda(c.device):
            torch = sys.modules.get("torch")
            if torch is None:
                import torch  # noqa: F811  (only on CUDA; the CPU path needs no torch)
            self.clock = _CudaClock(self.steps + 2, torch)
        else:
            self.clock = _CpuClock(self.steps + 2)
        self.prefill, self.decode_step, self.setup = prefill, decode_step, setup

    def once(self):
        """(prefill_ms, [decode_ms, ...]) of one repetition."""
        if self.setup is not None:
            self.setup()
        mark, decode_step = self.clock.mark, self.decode_step
        mark(0)
        self.prefill()
        mark(1)
        for i in range(self.steps):
            decode_step(i)
            mark(i + 2)
        iv = self.clock.intervals_ms()
        return iv[0], iv[1:]


def measure(c, prefill, decode_step, setup=None):
    """The timed repetitions as [(prefill_ms, [decode_ms, ...]), ...] (no output).

    `setup()`, when given, runs untimed before every repetition (e.g. a fresh prompt).
    """
    rep = _Repetition(c, prefill, decode_step, setup)
    for _ in range(c.warmup):
        rep.once()
    return [rep.once() for _ in range(c.reps)]


def _rep_line(i, sample):
    p, d = sample
    bad = [x for x in [p] + d if not (math.isfinite(x) and x > 0)]
    if bad:
        raise RuntimeError("repetition %d has a non-positive or non-finite time %r" % (i, bad[0]))
    return {"type": "rep", "rep": i, "prefill_ms": p, "decode_ms": d}


def _request():
    """perfgate's next request on stdin (worker mode), or None when stdin ended: perfgate went
    away, or gave up on this worker."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        if line.strip():
            break
    try:
        req = json.loads(line)
    except ValueError:
        raise RuntimeError("perfgate_bench: a request that is not JSON: %r" % line[:80])
    if not isinstance(req, dict):
        raise RuntimeError("perfgate_bench: a request that is not a JSON object: %r" % line[:80])
    return req


def _serve(c, rep):
    """Worker mode after the warm-up: one timed repetition per `rep` request, in order, until the
    `end` request (True) or the end of stdin (False)."""
    done = 0
    while True:
        req = _request()
        if req is None:
            return False
        op = req.get("op")
        if op == "end" and set(req) == {"op"}:
            return True
        if op != "rep" or set(req) != {"op", "rep"}:
            raise RuntimeError("perfgate_bench: an unknown request %s" % json.dumps(req)[:200])
        if req["rep"] != done or done >= c.reps:
            raise RuntimeError("perfgate_bench: asked for repetition %r, expected %d (of at most "
                               "%d)" % (req["rep"], done, c.reps))
        _emit(_rep_line(done, rep.once()))
        done += 1


def run(c, prefill, decode_step, engine, versions=None, model_info=None, setup=None,
        peak_alloc_bytes=None):
    """Measures the cell and prints the protocol: hello, one `rep` line per repetition, `end`.

    engine: your engine's name (e.g. "pytorch-eager", "torch.compile"); versions: extra
    {package: version} beside the ones found automatically (python, torch, transformers...);
    model_info: optional facts for MBU/MFU and the table: display_name, param_bytes,
    flops_per_token, kv_bytes_per_token, vocab, context. peak_alloc_bytes: a callable giving the
    peak device memory of the timed repetitions; on CUDA torch.cuda.max_memory_allocated is used.

    A worker cell (`perfgate ab`) is served the same way, one repetition per request: warm-up,
    `ready`, then the requests; when stdin ends before the end request (perfgate went away), the
    process exits at once.
    """
    hello = {"type": "hello", "protocol": c.protocol, "engine": engine,
             "versions": _versions(versions)}
    if model_info:
        hello["model"] = {k: v for k, v in model_info.items() if v is not None}
    _emit(hello)
    torch = sys.modules.get("torch") if _is_cuda(c.device) else None
    try:
        if torch is not None:
            torch.cuda.reset_peak_memory_stats()
        if c.worker:
            rep = _Repetition(c, prefill, decode_step, setup)
            for _ in range(c.warmup):
                rep.once()
            _emit({"type": "ready"})
            if not _serve(c, rep):
                raise SystemExit("perfgate_bench: stdin ended before the end request (perfgate "
                                 "went away); exiting")
        else:
            for i, sample in enumerate(measure(c, prefill, decode_step, setup)):
                _emit(_rep_line(i, sample))
        end = {"type": "end"}
        # Read before the profiled sequence, so that its allocations never count.
        peak = peak_alloc_bytes() if peak_alloc_bytes else (
            torch.cuda.max_memory_allocated() if torch is not None else None)
        if peak:
            end["peak_alloc_bytes"] = int(peak)
        if c.profile:
            _emit(dict({"type": "profile"}, **profile_sequence(c, prefill, decode_step, setup)))
        _emit(end)
    except Exception as exc:  # reported to perfgate, then re-raised for the traceback
        kind = "oom" if _is_oom(exc) else "error"
        _emit({"type": kind, "reason": ("%s: %s" % (type(exc).__name__, exc)).splitlines()[0][:500]})
        if kind == "oom":
            return
        raise


# --- the profile (docs/PROTOCOL.md, "The profile line"; docs/METRICS.md, "The profile") --------
# The same events, read the same way, as perfgate's built-in profile (runner/lm/profile.cpp):
# Kineto's events of one step, host ops with their self time, kernels with their device time.

_SYNC_CALLS = frozenset(("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                         "cudaMemcpy", "cudaMemcpy2D"))
MAX_ROWS_PER_STEP = 4096  # perfgate's bounds on the profile line (runner/exec/exec_profile.h)
MAX_NAME_BYTES = 1024


def _first_line(exc):
    return ("%s: %s" % (type(exc).__name__, exc)).splitlines()[0][:300]


def _row_name(name):
    """A name as perfgate accepts it: no control characters, at most MAX_NAME_BYTES of UTF-8."""
    name = "".join("?" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in str(name)) or "?"
    data = name.encode("utf-8", "replace")
    if len(data) <= MAX_NAME_BYTES:
        return name
    return data[:MAX_NAME_BYTES - 3].decode("utf-8", "ignore") + "..."


def _is_runtime_call(name):
    """A CUDA runtime or driver call (cudaLaunchKernel, cuLaunchKernel), which Kineto records on
    the host beside the ATen ops; never an op."""
    return name.startswith("cuda") or (name.startswith("cu") and name[2:3].isupper())


def _is_profiler_overhead(name):
    """Kineto's records of its own work on the host (buffer requests, CUPTI overhead)."""
    return name == "Activity Buffer Request" or "Overhead" in name


def _summarise(events, cuda, step):
    """One step's Kineto events -> its by_name rows and counters (the built-in's rules)."""
    rows = {}

    def row(kind, name):
        key = (kind, _row_name(name))
        if key not in rows:
            rows[key] = {"kind": kind, "name": key[1], "count": 0, "total_ms": 0.0}
        return rows[key]

    spans, allocs, kernel_spans, copy_spans = [], [], [], []
    device = "cuda" if cuda else "cpu"
    for e in events:
        name = e.name()
        # record_function ranges (on the host and the device) and the profiler's own work
        if e.is_user_annotation() or _is_profiler_overhead(name):
            continue
        where = str(e.device_type()).split(".")[-1].lower()  # DeviceType.CUDA -> cuda
        on_device = where != "cpu"
        if name == "[memory]":
            if where == device:
                allocs.append((e.start_ns(), e.nbytes()))
        elif on_device:
            if name.startswith("Memcpy") or name.startswith("Memset"):
                if "DtoH" in name:
                    step["d2h_copies"] += 1
                copy_spans.append((e.start_ns(), e.start_ns() + e.duration_ns()))
            else:
                r = row("kernel", name)
                r["count"] += 1
                r["total_ms"] += e.duration_ns() / 1e6
                step["kernels"] += 1
                kernel_spans.append((e.start_ns(), e.start_ns() + e.duration_ns()))
        elif _is_runtime_call(name):
            if name in _SYNC_CALLS:
                step["syncs"] += 1
        else:
            spans.append((e.start_thread_id(), e.start_ns(), -e.end_ns(), name))
            if name == "aten::_local_scalar_dense" and not cuda:
                step["syncs"] += 1
    spans.sort()
    open_ = []  # [end_ns, start_ns, name, children_ns]

    def close():
        end, start, name, children = open_.pop()
        dur = end - start
        r = row("op", name)
        r["count"] += 1
        r["total_ms"] += max(0, dur - children) / 1e6
        if open_:
            open_[-1][3] += dur

    thread = None
    for tid, start, neg_end, name in spans:
        while open_ and (tid != thread or open_[-1][0] <= start):
            close()
        thread = tid
        open_.append([-neg_end, start, name, 0])
    while open_:
        close()
    step["ops"] = len(spans)
    if cuda:
        _timeline(kernel_spans, copy_spans, step)
    else:
        _timeline([(start, max(start, -neg_end)) for _, start, neg_end, _ in spans], [], step)
    held = peak = 0
    for _, nbytes in sorted(allocs, key=lambda a: a[0]):
        if nbytes > 0:
            step["alloc_bytes"] += nbytes
        held += nbytes
        peak = max(peak, held)
    step["peak_bytes"] = peak
    by_name = sorted(rows.values(), key=lambda r: -r["total_ms"])
    step["by_name"] = by_name[:MAX_ROWS_PER_STEP]


def _covered_ns(intervals):
    """The time at least one of the [start, end) intervals covers (their union), ns."""
    covered = end = 0
    for s, e in sorted(intervals):
        if e > end:
            covered += e - max(s, end)
            end = e
    return covered


def _timeline(rows, others, step):
    """span_ms and busy_ms (docs/PROTOCOL.md): the step on its device's timeline, from its first
    kernel (or copy; ATen op on a CPU) to the end of its last, and the time a kernel ran in it."""
    if not rows:
        return
    first = min(s for s, _ in rows + others)
    last = max(e for _, e in rows + others)
    step["span_ms"] = (last - first) / 1e6
    step["busy_ms"] = min(step["span_ms"], _covered_ns(rows) / 1e6)


def _new_step(index):
    return {"step": index, "wall_ms": 0.0, "ops": 0, "kernels": 0, "syncs": 0, "d2h_copies": 0,
            "alloc_bytes": 0, "peak_bytes": None, "by_name": []}


def profile_sequence(c, prefill, decode_step, setup=None):
    """One untimed prefill + decode sequence, each step in its own torch.profiler session (ended
    after waiting for the device, so every kernel of the step is in it): the `profile` object of
    docs/PROTOCOL.md. Where the profiler cannot start, `profiler` is "none", `note` says why and
    the steps keep their wall times; if the sequence itself fails, the steps are dropped."""
    t0 = time.perf_counter_ns()
    cuda = _is_cuda(c.device)
    out = {"profiler": "torch.profiler", "wall_ms": 0.0, "note": None, "steps": []}
    if not cuda:  # Kineto probes for GPUs even for CPU activity only, and logs an ERROR line
        os.environ.setdefault("KINETO_LOG_LEVEL", "5")
    torch = tp = None
    try:
        import torch
        import torch.profiler as tp
        activities = [tp.ProfilerActivity.CPU] + ([tp.ProfilerActivity.CUDA] if cuda else [])
    except Exception as exc:
        out["profiler"], out["note"] = "none", "torch.profiler is unusable: " + _first_line(exc)
    sync = (lambda: torch.cuda.synchronize()) if cuda and torch is not None else (lambda: None)
    calls = [prefill] + [(lambda i: lambda: decode_step(i))(i) for i in range(c.gen_tokens - 1)]
    try:
        if setup is not None:
            setup()
        for index, call in enumerate(calls):
            step = _new_step(index - 1)
            prof = None
            if out["profiler"] != "none":
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        prof = tp.profile(activities=activities, profile_memory=True)
                        prof.start()
                except Exception as exc:
                    out["profiler"] = "none"
                    out["note"] = "torch.profiler could not start: " + _first_line(exc)
                    prof = None
            start = time.perf_counter_ns()
            call()
            sync()
            step["wall_ms"] = (time.perf_counter_ns() - start) / 1e6
            if prof is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    prof.stop()
                _summarise(prof.profiler.kineto_results.events(), cuda, step)
                if cuda and step["syncs"] > 0:  # the boundary's own wait for the device
                    step["syncs"] -= 1
            out["steps"].append(step)
    except Exception as exc:  # the timed samples stand; only the profile is lost
        out["profiler"], out["steps"] = "none", []
        out["note"] = "the profiled sequence failed: " + _first_line(exc)
    if cuda and out["profiler"] != "none" and not any(s["kernels"] for s in out["steps"]):
        out["note"] = "no CUDA kernel was recorded: CUPTI is unusable on this machine"
    out["wall_ms"] = (time.perf_counter_ns() - t0) / 1e6
    return out
