"""What decides an AOTInductor package's speed besides the model's code: the kernels Inductor
generated and the launch configuration its autotuner chose for each of them.

With tuned options (coordinate_descent_tuning, max_autotune) two exports of one model choose
different configurations (tile sizes, warps) for the same kernel sources and decode several
percent apart, so a gate that exports base and head separately compares two tuning results,
not two versions of the code. This module makes the export reproducible:

- Every export compiles in a fresh Inductor cache of its own (never a cache another export, or
  measured code, left behind), and afterwards records, beside the package, the choices it made:
  PATH.tuning.json, one entry per kernel, keyed by where Inductor looks for it (a hash of the
  kernel's source, of the torch build and of the cache tag).
- An export given the choices of another (replay_from: the base's PATH.tuning.json, or a folder
  holding it under the same file name) seeds its fresh cache with them before compiling. Inductor
  then uses the recorded configuration for every kernel whose source is unchanged and tunes only
  the kernels the change made new.
- The sidecar's "export" object says what was generated and chosen (docs/OWN_MODEL_AOTI.md,
  "Exports that do not decide the verdict"): digests of the exported programs, of the kernel
  sources and of the choices, how many kernels were tuned, how many replayed and from which file.
  perfgate compare reads them on both sides: it says when base and head differ only in their
  export, and refuses a tuned gate whose head did not replay the base's choices.
"""
import contextlib
import glob
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile

# Options under which Inductor benchmarks candidate configurations and keeps the fastest: the
# outcome varies from export to export.
TUNED_OPTIONS = ("coordinate_descent_tuning", "max_autotune", "max_autotune_pointwise",
                 "max_autotune_gemm")
REPLAY_ENV = "PERFGATE_TUNING_FROM"
FORMAT = 1
# Where Inductor keeps a choice, relative to its cache: <2 characters>/<sha256>.best_config.
CHOICE_PATH = re.compile(r"[a-z0-9]{2}/[0-9a-f]{64}\.best_config")
# A choice's timing differs between two tunings that chose alike; it decides nothing.
UNSTABLE_FIELDS = ("time_taken_ms",)
MAX_FILE_BYTES = 8 << 20


class TuningError(SystemExit):
    """A choices file that cannot be replayed: named, with what is wrong."""


def tuned(configs):
    """Whether these Inductor options make the export tune (the options are from --inductor-config)."""
    return any(bool(configs.get(k)) for k in TUNED_OPTIONS)


def tuning_path(package):
    return package[:-len(".pt2")] + ".tuning.json"


def replay_file(replay_from, package):
    """The choices file to replay for `package`: replay_from itself, or, for a folder, the file in
    it named like the package's own (the action hands the head the base's folder of them)."""
    if not replay_from:
        return None
    if os.path.isdir(replay_from):
        path = os.path.join(replay_from, os.path.basename(tuning_path(package)))
        return path if os.path.isfile(path) else None
    return replay_from


def read_choices(path, torch_version):
    """The choices recorded in `path` and the SHA-256 of its bytes; refuses what is not a choices
    file of this torch release."""
    if os.path.getsize(path) > MAX_FILE_BYTES:
        raise TuningError(f"{REPLAY_ENV} {path}: over {MAX_FILE_BYTES >> 20} MiB, not a choices file")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise TuningError(f"{REPLAY_ENV} {path}: not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or \
            not isinstance(data.get("choices"), dict):
        raise TuningError(f"{REPLAY_ENV} {path}: not a perfgate tuning file (format {FORMAT})")
    if data.get("torch") != torch_version:
        raise TuningError(f"{REPLAY_ENV} {path}: recorded by torch {data.get('torch')}, this "
                          f"export runs torch {torch_version}; choices do not carry across releases")
    for key, choice in data["choices"].items():
        if not CHOICE_PATH.fullmatch(key) or not isinstance(choice, dict):
            raise TuningError(f"{REPLAY_ENV} {path}: entry {key[:80]!r} is not a kernel's choice")
    return data["choices"], hashlib.sha256(raw).hexdigest()


def _kernel_sources(cache):
    # Triton kernels: <cache>/<2 characters>/<hash of the source>.py, one file a kernel, the same
    # file in two exports that generated the same kernel. C++ kernels (CPU): one
    # <hash>/<hash>.kernel.cpp a program, whose name and comment lines carry the cache's path (the
    # small .cpp files under <2 characters>/ are Inductor's probes of the compiler, not kernels).
    return sorted(glob.glob(os.path.join(cache, "??", "*.py")) +
                  glob.glob(os.path.join(cache, "*", "*.kernel.cpp")))


def _source_digest(path, cache):
    with open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    if path.endswith(".kernel.cpp"):
        where = cache.encode()
        lines = [ln for ln in lines if not (ln.lstrip().startswith(b"//") and where in ln)]
    return hashlib.sha256(b"".join(lines)).digest()


def _kernels_sha256(sources, cache):
    """One digest of the set of kernel sources, independent of the cache's path and file names."""
    h = hashlib.sha256()
    for digest in sorted(_source_digest(p, cache) for p in sources):
        h.update(digest)
    return h.hexdigest()


def _choice_key(kernel_source):
    from torch._inductor.runtime.autotune_cache import AutotuneCache
    cache = AutotuneCache.create({"autotune_local_cache": True}, kernel_source, "")
    return os.path.relpath(cache.local_cache[1], os.path.dirname(os.path.dirname(kernel_source)))


def _stable(choice):
    return {k: v for k, v in choice.items() if k not in UNSTABLE_FIELDS}


class Export:
    """One export's Inductor cache: fresh, seeded with the choices to replay, read back after."""

    def __init__(self, package, configs, replay_from=None):
        import torch
        self.package, self.configs, self.torch = package, configs, torch.__version__
        self.replay = replay_file(replay_from, package)
        self.seeded, self.replayed_sha = {}, None
        if self.replay:
            self.seeded, self.replayed_sha = read_choices(self.replay, self.torch)
        self.cache = None

    @contextlib.contextmanager
    def compiling(self):
        with self._fresh_cache(), _replayed_choices_stay():
            yield

    @contextlib.contextmanager
    def _fresh_cache(self):
        """Runs the compile in a fresh cache of its own (TORCHINDUCTOR_CACHE_DIR), seeded."""
        # Inductor also keeps what it compiled in memory: a second export in one process (one
        # package per batch size) would write no kernel of its own to the fresh cache.
        from torch._inductor.utils import clear_caches
        clear_caches()
        old = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        self.cache = tempfile.mkdtemp(prefix="perfgate-inductor-")
        for key, choice in self.seeded.items():
            os.makedirs(os.path.join(self.cache, os.path.dirname(key)), exist_ok=True)
            with open(os.path.join(self.cache, key), "w") as f:
                json.dump(choice, f)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = self.cache
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
            else:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = old
            clear_caches()

    def record(self, graph_sha256):
        """Writes PATH.tuning.json and returns the sidecar's "export" object; removes the cache."""
        try:
            sources = _kernel_sources(self.cache)
            choices, replayed, retuned = {}, 0, 0
            for src in (p for p in sources if p.endswith(".py")):
                key = _choice_key(src)
                path = os.path.join(self.cache, key)
                if not os.path.isfile(path):
                    continue  # a kernel with one candidate configuration: nothing was chosen
                with open(path) as f:
                    choices[key] = _stable(json.load(f))
                if key in self.seeded:
                    same = _stable(self.seeded[key]) == choices[key]
                    replayed, retuned = replayed + same, retuned + (not same)
            kernels_sha256 = _kernels_sha256(sources, self.cache)
        finally:
            shutil.rmtree(self.cache, ignore_errors=True)
        body = json.dumps({"format": FORMAT, "torch": self.torch, "choices": choices},
                          indent=1, sort_keys=True) + "\n"
        with open(tuning_path(self.package), "w") as f:
            f.write(body)
        facts = {
            "graph_sha256": graph_sha256,
            "kernels": len(sources),
            "kernels_sha256": kernels_sha256,
            "tuned_options": tuned(self.configs),
            "tuned_kernels": len(choices),
            "tuning_sha256": hashlib.sha256(body.encode()).hexdigest(),
            "replayed_kernels": replayed,
            "retuned_kernels": retuned,
        }
        if self.replayed_sha:
            facts["replayed_from"] = self.replayed_sha
        return facts


@contextlib.contextmanager
def _replayed_choices_stay():
    """A kernel whose configuration came from the cache keeps it.

    With coordinate_descent_tuning, Inductor (torch 2.11) starts its descent again from a cached
    choice in some compiles instead of taking it as found (on the H200, 5 of 13 replayed choices
    moved in one export), so the noise of that descent would still decide the package. Here the
    descent is skipped for a kernel whose choice was a cache hit; kernels the change made new are
    tuned as before. Where Inductor has no such hook this does nothing, and the sidecar's
    retuned_kernels counts what moved (perfgate compare refuses such a gate)."""
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:  # a torch without Triton support: nothing is tuned on the device
        yield
        return
    original = getattr(CachingAutotuner, "coordinate_descent_tuning", None)
    if original is None:
        yield
        return

    def keep_a_replayed_choice(self, launcher, *args, **kwargs):
        info = getattr(self, "autotune_cache_info", None) or {}
        if info.get("autotune_cache_state") == "hit":
            return launcher
        return original(self, launcher, *args, **kwargs)

    CachingAutotuner.coordinate_descent_tuning = keep_a_replayed_choice
    try:
        yield
    finally:
        CachingAutotuner.coordinate_descent_tuning = original


def graph_sha256(programs, weights_sha256):
    """A digest of what Inductor compiles: each exported program's graph code and signature, and
    the weights. Equal on both sides means the model did not change, only (maybe) its export."""
    h = hashlib.sha256(weights_sha256.encode())
    for key in sorted(programs):
        ep = programs[key]
        h.update(key.encode() + b"\0" + ep.graph_module.code.encode() + b"\0" +
                 str(ep.graph_signature).encode())
    return h.hexdigest()


# What two exports of one commit must share for its export not to decide a gate: the same
# programs and weights, the same kernel sources and the same choices for them.
EXPORT_FACTS = ("graph_sha256", "kernels_sha256", "tuning_sha256")


def _sidecar_export(path):
    """The "export" object of the sidecar PATH.json of package PATH.pt2, or None without one."""
    sidecar = path[:-len(".pt2")] + ".json"
    if os.path.islink(sidecar) or not os.path.isfile(sidecar):
        return None
    if os.path.getsize(sidecar) > MAX_FILE_BYTES:
        raise TuningError(f"{sidecar}: larger than {MAX_FILE_BYTES} bytes: not a sidecar")
    try:
        with open(sidecar) as f:
            facts = json.load(f).get("export")
    except (ValueError, AttributeError) as e:
        raise TuningError(f"{sidecar}: not a sidecar ({e})")
    return facts if isinstance(facts, dict) else None


def _packages(root):
    """The AOTInductor packages under ROOT (not in .git, no symlinks), relative to it, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in filenames:
            path = os.path.join(dirpath, name)
            if name.endswith(".pt2") and not os.path.islink(path):
                found.append(os.path.relpath(path, root))
    return sorted(found)


def compare_exports(first, second):
    """The packages that prepare left in two checkouts of one commit, compared by their sidecars'
    export facts (the export A/A check, docs/OWN_MODEL_AOTI.md). Returns (alike, lines): alike is
    True when every package has facts on both sides and they agree, False when any differ, None
    when there was no package with facts to compare; one line per package says which."""
    lines, verdicts = [], []
    for rel in _packages(first):
        a = _sidecar_export(os.path.join(first, rel))
        b = _sidecar_export(os.path.join(second, rel)) if os.path.isfile(
            os.path.join(second, rel)) else None
        if a is None:
            lines.append(f"not compared: {rel}: its sidecar has no export facts")
            continue
        if b is None:
            lines.append(f"differs: {rel}: the second prepare left no package with export facts")
            verdicts.append(False)
            continue
        moved = [f"{k} {str(a.get(k))[:12]} vs {str(b.get(k))[:12]}" for k in EXPORT_FACTS
                 if a.get(k) != b.get(k)]
        if b.get("retuned_kernels"):
            moved.append(f"{b['retuned_kernels']} replayed choices moved (retuned_kernels)")
        if moved:
            lines.append(f"differs: {rel}: " + "; ".join(moved))
        else:
            lines.append(f"alike: {rel}: the same {a.get('kernels')} kernels and "
                         f"{a.get('tuned_kernels')} tuning choices")
        verdicts.append(not moved)
    for rel in _packages(second):
        if not os.path.isfile(os.path.join(first, rel)):
            lines.append(f"differs: {rel}: only the second prepare left it")
            verdicts.append(False)
    if not verdicts:
        return None, lines or ["not compared: prepare left no AOTInductor package (*.pt2)"]
    return all(verdicts), lines


def main(argv):
    """python3 perfgate_tuning.py compare-exports FIRST SECOND: one line per package; exit 0
    when every package is alike, 1 when any differs, 2 when there was nothing to compare."""
    if len(argv) != 3 or argv[0] != "compare-exports":
        print("usage: perfgate_tuning.py compare-exports FIRST_CHECKOUT SECOND_CHECKOUT",
              file=sys.stderr)
        return 2
    for d in argv[1:]:
        if not os.path.isdir(d):
            print(f"perfgate_tuning.py: {d}: not a directory", file=sys.stderr)
            return 2
    try:
        alike, lines = compare_exports(argv[1], argv[2])
    except TuningError as e:
        print(f"perfgate_tuning.py: {e.code}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return {True: 0, False: 1, None: 2}[alike]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
