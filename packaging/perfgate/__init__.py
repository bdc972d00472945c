"""perfgate, installed from its wheel: performance-regression CI for language-model inference.

The two executables are in this package's bin/ folder: `perfgate` (links no LibTorch: serve,
compare and the rest) and `perfgate-runner` (`perfgate run`, which links the LibTorch of the
installed torch). The `perfgate` console script (perfgate._launcher) starts them; `bin_dir()`
tells scripts where they are.
"""
import os

from ._build import TORCH_BUILT, TORCH_CUDA, TORCH_SERIES, VERSION

__version__ = VERSION
__all__ = ["__version__", "bin_dir", "torch_problem", "TORCH_SERIES", "TORCH_BUILT", "TORCH_CUDA"]


def bin_dir():
    """The folder holding the `perfgate` and `perfgate-runner` executables."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def torch_problem():
    """Why `perfgate run` cannot run with this environment's torch (another release, a CPU-only
    build, none at all), naming both versions; None when it can."""
    from ._launcher import _torch_dist, torch_problem as problem
    return problem(_torch_dist())
