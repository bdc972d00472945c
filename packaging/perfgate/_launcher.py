"""The `perfgate` command of the wheel: starts bin/perfgate with the same arguments.

`perfgate run` loads the LibTorch inside the installed torch wheel (perfgate-runner's RPATH names
../../torch/lib beside this package). The runner was linked against one torch release, so a run
with another torch would fail at load time or crash: it is refused here, before anything starts,
with both versions named. Every other command links no LibTorch and starts whatever torch is
installed.
"""
import os
import sys
from importlib import metadata

from ._build import TORCH_BUILT, TORCH_CUDA, TORCH_SERIES, VERSION

HERE = os.path.dirname(os.path.abspath(__file__))


def _torch_dist():
    try:
        return metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        return None


def torch_problem(dist):
    """Why this environment's torch cannot run perfgate-runner, or None."""
    want = f"torch=={TORCH_SERIES}.*"
    if dist is None:
        return (f"perfgate {VERSION} runs its benchmarks on the LibTorch inside torch {TORCH_SERIES}, and this"
                f" environment ({sys.prefix}) has no torch: pip install '{want}'")
    have = dist.version
    public = have.split("+")[0]
    if public != TORCH_SERIES and not public.startswith(TORCH_SERIES + "."):
        return (f"perfgate {VERSION} was built against torch {TORCH_BUILT} and runs on its LibTorch, but this"
                f" environment has torch {have}: install '{want}' (pip install '{want}'), or a perfgate"
                f" built for torch {public}")
    lib = str(dist.locate_file("torch/lib"))
    if not os.path.isfile(os.path.join(lib, "libtorch_cpu.so")):
        return f"torch {have} has no LibTorch at {lib} (libtorch_cpu.so): reinstall it (pip install '{want}')"
    if TORCH_CUDA and not os.path.isfile(os.path.join(lib, "libtorch_cuda.so")):
        return (f"perfgate {VERSION} links the CUDA build of torch {TORCH_SERIES} (PyPI's default; it runs on the"
                f" CPU as well), but this environment has torch {have}, a CPU-only build: pip install"
                f" '{want}' from PyPI")
    return None


def _library_path(dist):
    """LD_LIBRARY_PATH for perfgate-runner when torch lives in another site-packages than this
    package (a venv with --system-site-packages, pip install --user, a .pth file): the runner's
    RPATH names only the torch beside it."""
    torch_lib = os.path.realpath(str(dist.locate_file("torch/lib")))
    if torch_lib == os.path.realpath(os.path.join(HERE, "..", "torch", "lib")):
        return None
    site = os.path.dirname(os.path.dirname(torch_lib))
    dirs = [torch_lib] + [os.path.join(site, "nvidia", sub, "lib") for sub in ("cu13",)
                          if os.path.isdir(os.path.join(site, "nvidia", sub, "lib"))]
    old = os.environ.get("LD_LIBRARY_PATH")
    return ":".join(dirs + ([old] if old else []))


def main():
    args = sys.argv[1:]
    exe = os.path.join(HERE, "bin", "perfgate")
    env = None
    if args[:1] == ["run"]:
        dist = _torch_dist()
        problem = torch_problem(dist)
        if problem:
            # Exit 4, as for a perfgate without its runner (docs/CLI.md): the installation is wrong.
            print(f"perfgate: failure: {problem}", file=sys.stderr)
            sys.exit(4)
        library_path = _library_path(dist)
        if library_path:
            env = dict(os.environ, LD_LIBRARY_PATH=library_path)
    # argv[0] "perfgate": the commands perfgate prints for you name the one on PATH.
    try:
        if env is None:
            os.execv(exe, ["perfgate"] + args)
        os.execve(exe, ["perfgate"] + args, env)
    except OSError as e:
        print(f"perfgate: failure: cannot start {exe}: {e}", file=sys.stderr)
        sys.exit(4)


if __name__ == "__main__":
    main()
