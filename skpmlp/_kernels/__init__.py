"""Native kernels: the whole training step of each model in one pass.

Below the engine: buffers and offsets in, buffers out; nothing here knows
populations, folds or scikit-learn. :func:`run_models` is the one entry
point of the step kernel, :func:`lbfgs_step` that of the fused L-BFGS's
per-model bookkeeping; :func:`kernel_available` says whether the kernel could be built on
this machine (else the engine keeps its torch path).
"""

from ._build import (
    KernelBuildWarning,
    build_info,
    cache_dir,
    executable_targets,
    kernel_target,
    load_library,
)
from ._evaluation import EvalBlocks, eval_blocks
from ._lbfgs import HISTORY, STATE_FIELDS, STATE_WIDTH, lbfgs_step, pack_stride
from ._solvers import SOLVERS, Solver, kernel_code, n_state_buffers
from ._step import forward_models, kernel_available, lanes, run_models
from ._tables import (
    HYPER_FIELDS,
    HYPER_WIDTH,
    LOSS_CODES,
    MAX_DEPTH,
    META_FIELDS,
    META_WIDTH,
    SCORE_CODES,
)

__all__ = [
    "EvalBlocks",
    "HISTORY",
    "HYPER_FIELDS",
    "HYPER_WIDTH",
    "KernelBuildWarning",
    "LOSS_CODES",
    "MAX_DEPTH",
    "META_FIELDS",
    "META_WIDTH",
    "SCORE_CODES",
    "SOLVERS",
    "STATE_FIELDS",
    "STATE_WIDTH",
    "Solver",
    "build_info",
    "cache_dir",
    "eval_blocks",
    "executable_targets",
    "forward_models",
    "kernel_available",
    "kernel_code",
    "kernel_target",
    "lanes",
    "lbfgs_step",
    "pack_stride",
    "load_library",
    "n_state_buffers",
    "run_models",
]
