"""The population trainer on the Triton kernels (CUDA; the CPU only in
Triton's interpreter), and the choice of a GPU run's trainer.

:class:`TritonTrainer` is a :class:`PopulationTrainer` whose epoch is one
launch per width class of ``skpmlp._kernels._triton_step``: each model runs
every step of its fold's batches (forward, loss gradient, backward, L2 and
the optimizer update) in one program, reading and writing the same flat
parameter and optimizer-state buffers as the torch path. Everything around
the epoch (monitoring, early stopping, halving, compaction, export) is the
torch trainer's, as for the native CPU kernel (:mod:`skpmlp._engine._backends._native`).

A launch holds the models of one width class: their widest hidden layer
padded to a power of two (16, 32, ... :data:`MAX_WIDTH`), so that the
``tl.dot`` tiles stay dense whatever the models' own widths; one-hidden-layer
models with a small enough first layer go to the kernel that keeps every
tile on chip, the others to the layer-by-layer kernel. Every launch is
loaded before any trains, its batch tile halved where the GPU has not the
shared memory it asks for, and a run whose kernels do not fit at all
trains on torch.

``device="cuda"`` trains on these kernels where triton is installed and the
run fits them (:func:`triton_unsupported`), else on torch's CUDA ops, the
reference and fallback (:func:`gpu_trainer`). Triton is imported only when
a run trains on it.
"""

import dataclasses
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from importlib.util import find_spec

import numpy as np
import torch

from ..._kernels import kernel_code
from ..._kernels._tables import HYPER_FIELDS, LOSS_CODES, MAX_DEPTH, META_FIELDS
from ._kernel_tables import kernel_tables
from ._torch import PopulationTrainer

#: Widest padded hidden layer the kernels take: a 256-wide weight tile
#: alone asks for more shared memory than any GPU has per program (272 KB
#: measured for sm_90 in float32); wider populations train on torch.
MAX_WIDTH = 128
#: Most outputs (classes, targets or labels) the kernels take.
MAX_OUTPUTS = 256
#: Programs per streaming multiprocessor of a launch; a program trains its
#: models one after another (the layer-by-layer kernel's reuse one scratch).
PROGRAMS_PER_SM = 8
#: Programs of a launch where set (tests set it to run several models per
#: program); None: one per model, capped by :data:`PROGRAMS_PER_SM` on a GPU.
max_programs = None

_LOSS_OF_TASK = {"classification": "softmax", "regression": "squared", "multilabel": "logistic"}




def triton_installed():
    """Whether triton can be imported (without importing it)."""
    return find_spec("triton") is not None


def triton_version():
    """The installed triton's ``(major, minor)`` (without importing it)."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return tuple(int(part) for part in version("triton").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return (0, 0)


def interpreter_requested():
    """Whether ``TRITON_INTERPRET`` asks Triton to run kernels on the CPU
    through its numpy interpreter."""
    return os.environ.get("TRITON_INTERPRET", "").strip().lower() in ("1", "true", "yes", "on")


def _pow2(n, least=16):
    """The smallest power of two ``>= max(n, least)``."""
    return max(least, 1 << (max(int(n), 1) - 1).bit_length())


def triton_unsupported(config, spec=None):
    """Why the Triton kernels cannot train this run, or None when they can.

    ``spec`` (optional) adds the population's own limits: depth, widths
    and outputs."""
    if not triton_installed():
        return "triton is not installed (pip install skpmlp[gpu])"
    # compiled for sm_80 / sm_90 from 3.2 in float32; tl.dot takes float64 from 3.5
    version = triton_version()
    if version < (3, 2):
        return f"triton {'.'.join(map(str, version))} is older than 3.2"
    if config.dtype == "float64" and version < (3, 5):
        found = ".".join(map(str, version))
        return f"dtype='float64' needs triton 3.5 or later (float64 tl.dot), not {found}"
    device = torch.device(config.device)
    if device.type == "cpu" and not interpreter_requested():
        return "Triton runs on the CPU only in its interpreter (TRITON_INTERPRET=1)"
    if device.type not in ("cpu", "cuda"):
        return f"device {config.device!r}"
    if config.dtype not in ("float32", "float64"):
        return f"dtype {config.dtype!r}"
    if config.task == "regression" and config.loss != "squared_error":
        return f"loss={config.loss!r} (the kernels have squared error only)"
    if config.n_outputs > MAX_OUTPUTS:
        return f"more than {MAX_OUTPUTS} outputs"
    settings = [config.optimizer_settings()] if spec is None else spec.optimizers_of(config)
    from ..._kernels._triton_step import UPDATE_CODES  # noqa: PLC0415 (imports triton)

    for o in settings:
        code = kernel_code(o.solver, o.amsgrad)
        if code is not None and code not in UPDATE_CODES:  # None: L-BFGS, trained apart
            variant = " with amsgrad=True" if o.amsgrad else ""
            return f"solver={o.solver!r}{variant} (the Triton kernels lack its update)"
        if o.diagonal_scaling:
            return "diagonal_scaling=True (the Triton kernels have no first scaling layer)"
    if spec is not None:
        if max(len(arch) for arch in spec.hidden_layer_sizes) > MAX_DEPTH:
            return f"networks deeper than {MAX_DEPTH} hidden layers"
        if max(max(arch) for arch in spec.hidden_layer_sizes) > MAX_WIDTH:
            return f"hidden layers wider than {MAX_WIDTH} units"
    return None


def gpu_trainer(spec, config):
    """The trainer class of a run that Triton may train, or None where the
    choice is not this module's (a CPU run that does not ask for Triton).

    ``backend="triton"`` trains on the kernels or raises with the reason;
    ``backend="auto"`` on CUDA trains on them where it can, else on torch.
    """
    if config.backend == "triton":
        reason = triton_unsupported(config, spec)
        if reason is not None:
            raise ValueError(f"backend='triton' cannot train this run: {reason}.")
        return TritonTrainer
    if config.backend == "auto" and torch.device(config.device).type == "cuda":
        if triton_installed() and triton_unsupported(config, spec) is None:
            return TritonTrainer
        return PopulationTrainer
    return None


def describe_gpu_backend(config):
    """One line saying how a CUDA run trains: on the Triton kernels, or on
    torch and why."""
    if config.device == "auto":  # announced where CUDA is there: the run resolves it so
        config = dataclasses.replace(config, device="cuda")
    if config.backend == "torch":
        return f"[skpmlp] training on {config.device} with torch (backend='torch')"
    reason = triton_unsupported(config)
    if reason is None:
        return (
            f"[skpmlp] training on {config.device} with the Triton kernels (populations deeper "
            f"than {MAX_DEPTH} hidden layers or wider than {MAX_WIDTH} units train on torch); "
            f"a process's first fit of a shape compiles them (17-50 s measured on an H100 "
            f"host), later fits and processes reuse Triton's cache"
        )
    return f"[skpmlp] training on {config.device} with torch: {reason}"


def triton_tables(net, slots, *, slot_fold, slot_lr, slot_alpha, slot_optimizer, slot_step_offset,
                  slot_dropout_key):
    """The kernels' ``meta`` and ``hyper`` rows of ``slots`` of ``net``, and
    each row's widest hidden layer.

    Parameters
    ----------
    net : FusedNetwork
    slots : ndarray of int
        Slots to train (the frozen ones are left out).
    slot_fold, slot_lr, slot_alpha, slot_step_offset : ndarray of shape (n_slots,)
    slot_optimizer : sequence of OptimizerSettings, one per slot
    slot_dropout_key : ndarray of int64 of shape (n_slots,)
        Each slot's dropout key: the kernels draw the torch path's masks.

    Returns
    -------
    meta : ndarray of int64 of shape (len(slots), META_WIDTH)
    hyper : ndarray of float64 of shape (len(slots), HYPER_WIDTH)
    widest : ndarray of int of shape (len(slots),)
    """
    # the C++ kernel's tables (one layout, _kernels/_tables.py), with
    # Nesterov off where there is no momentum, as the Triton update expects
    meta, hyper = kernel_tables(net, slots, slot_fold=slot_fold, slot_lr=slot_lr,
                                slot_alpha=slot_alpha, slot_optimizer=slot_optimizer,
                                slot_step_offset=slot_step_offset,
                                slot_dropout_key=slot_dropout_key)
    meta[:, META_FIELDS["nesterov"]] &= hyper[:, HYPER_FIELDS["momentum"]] > 0
    sizes = META_FIELDS["sizes"]
    hidden = meta[:, sizes + 1 : sizes + 1 + MAX_DEPTH]
    is_hidden = np.arange(MAX_DEPTH) < meta[:, [META_FIELDS["depth"]]]
    widest = np.where(is_hidden, hidden, 0).max(1)
    return meta, hyper, widest


def one_hidden_fits(width, n_features, itemsize):
    """Whether one-hidden-layer models of width class ``width`` take the
    kernel that keeps every tile in registers: its first layer's weights
    (``F_PAD x width``) at most 32 KB, which keeps the kernel's shared
    memory under about 100 KB (measured for sm_90: 72 KB for 64 x 128 float32
    tiles and 32-row batch tiles); the others go layer by layer."""
    return _pow2(n_features) * width * itemsize <= 32 * 1024


def launch_settings(width, n_features, n_outputs, batch):
    """Tile sizes, warps and stages of a launch of hidden width class ``width``.

    32-row batch tiles (16 at 128 units), four warps up to 64 units and
    eight above, and no software pipelining (each stage would be another
    copy of the tiles in shared memory). First choices, to be tuned where a
    GPU is at hand; a launch halves its batch tile where the GPU has not the
    shared memory it asks for (:meth:`TritonTrainer._fit_launches`)."""
    return {
        "H": width,
        "C_PAD": _pow2(n_outputs),
        "BB": min(_pow2(batch), 32 if width <= 64 else 16),
        "F_PAD": _pow2(n_features),
        "BF": min(_pow2(n_features), 64),
        "num_warps": 4 if width <= 64 else 8,
        "num_stages": 1,
    }


class TritonTrainer(PopulationTrainer):
    """:class:`PopulationTrainer` whose epochs run on the Triton kernels.

    A data-parallel run (its gradients summed over ranks at every step)
    trains on the torch path: the kernels fuse the update into the step."""

    backend = "triton"

    def _slots_changed(self):
        # the kernels step every unfrozen slot themselves: their tables are
        # rebuilt at the next epoch; the torch partitions only if a
        # data-parallel epoch needs them
        self._launches = None
        self._torch_partitions = False

    def _plan_launches(self, batch):
        """One launch per (kernel, width class): its tables on the device
        and its settings."""
        net = self.net
        slots = np.flatnonzero(~self.frozen)
        replica = net.slot_models
        meta, hyper, widest = triton_tables(
            net,
            slots,
            slot_fold=self.slot_fold,
            slot_lr=self._replica_lr[replica],
            slot_alpha=self._replica_alpha[replica],
            slot_optimizer=[self._replica_optimizer[r] for r in replica],
            slot_step_offset=self._replica_step_offset[replica],
            slot_dropout_key=self._replica_key[replica],
        )
        depth = meta[:, META_FIELDS["depth"]]
        classes = np.array([_pow2(w) for w in widest], dtype=np.int64)
        itemsize = net.flat.element_size()
        one_hidden = (depth == 1) & np.array(
            [one_hidden_fits(c, net.n_features, itemsize) for c in classes], dtype=bool
        )
        launches = []
        for kernel, chosen in (("one_hidden", one_hidden), ("deep", ~one_hidden)):
            for width in np.unique(classes[chosen]):
                rows = np.flatnonzero(chosen & (classes == width))
                settings = launch_settings(int(width), net.n_features, net.n_outputs, batch)
                to = lambda a: torch.as_tensor(np.ascontiguousarray(a), device=net.device)  # noqa: E731
                launches.append(
                    {
                        "kernel": kernel,
                        "meta": to(meta[rows]),
                        "hyper": to(hyper[rows]),
                        "n_models": len(rows),
                        "max_depth": int(depth[rows].max()),
                        **settings,
                    }
                )
        return launches

    def _n_programs(self, n_models):
        if max_programs is not None:
            return max(1, min(n_models, max_programs))
        if self.net.device.type == "cuda":
            sms = torch.cuda.get_device_properties(self.net.device).multi_processor_count
            return max(1, min(n_models, PROGRAMS_PER_SM * sms))
        return n_models

    def run_epoch(self, X, y, plan):
        if self.data_parallel is not None or self.fallback is not None:
            return self._torch_epoch(X, y, plan)
        self.loss_sums.zero_()
        S, K, B = plan.rows.shape
        args = self._epoch_args(X, y, plan)
        if self._launches is None or self._launches_batch != B:
            self._launches, self._launches_batch = self._plan_launches(B), B
            if not self._fit_launches(args):
                return self._torch_epoch(X, y, plan)
        for launch in self._launches:
            self._launch(launch, args, self._n_programs(launch["n_models"]), launch["n_models"])
        self.optimizer.step_counts += torch.as_tensor(
            plan.stepping.sum(0), dtype=self.optimizer.step_counts.dtype, device=self.net.device
        )

    #: why this trainer's epochs run on torch after all (the kernels did not
    #: fit the GPU), or None
    fallback = None

    def describe(self):
        """Which path trains, in words (``verbose`` shows it)."""
        device = self.net.device
        if self.fallback is not None:
            return f"torch ({device}): {self.fallback}"
        if self.data_parallel is not None:
            return f"torch ({device}): the Triton kernels do not run data-parallel"
        return f"Triton kernels ({device}{', interpreted' if device.type == 'cpu' else ''})"

    def _torch_epoch(self, X, y, plan):
        """An epoch of torch's ops (data-parallel runs, and the fallback):
        the same flat buffers, optimizer state and step counts."""
        if not self._torch_partitions:
            PopulationTrainer._slots_changed(self)
            self._torch_partitions = True
        return super().run_epoch(X, y, plan)

    def _epoch_args(self, X, y, plan):
        """The kernels' arguments that every launch of an epoch shares."""
        S, K, B = plan.rows.shape
        device, state = self.net.device, self.optimizer.state
        return dict(
            X_ptr=X.contiguous(),
            y_ptr=y.contiguous(),
            rows_ptr=plan.rows.contiguous(),
            weights_ptr=plan.weights.contiguous(),
            counts_ptr=plan.counts.contiguous(),
            wsum_ptr=torch.as_tensor(plan.weight_sums, dtype=torch.float64).to(device),
            stepping_ptr=torch.as_tensor(plan.stepping, dtype=torch.int8).to(device),
            step0_ptr=self.optimizer.step_counts,
            params_ptr=self.net.flat.detach(),
            state1_ptr=state[0],
            state2_ptr=state[-1],
            loss_ptr=self.loss_sums,
            n_steps=S,
            n_folds=K,
            B=B,
            epoch=plan.epoch,
            F=X.shape[1],
            C=self.net.n_outputs,
            LOSS=LOSS_CODES[_LOSS_OF_TASK[self.config.task]],
            enable_fp_fusion=True,
        )

    def _launch(self, launch, args, n_programs, n_models, warmup=False):
        """Run ``launch``'s kernel on ``n_programs`` programs over its first
        ``n_models`` models (0: compile and load it, train nothing). With
        ``warmup``, only compile it (triton's ``warmup``: nothing runs on
        the GPU; under :meth:`_compile_launches` the compile goes to a thread)."""
        from ..._kernels import _triton_step as k  # noqa: PLC0415 (imports triton)

        tiles = {name: launch[name] for name in ("H", "C_PAD", "BB", "num_warps", "num_stages")}
        arguments = dict(meta_ptr=launch["meta"], hyper_ptr=launch["hyper"], n_models=n_models,
                         **args, **tiles)
        if launch["kernel"] == "one_hidden":
            kernel = k.epoch_one_hidden
            arguments.update(F_PAD=launch["F_PAD"])
        else:
            kernel = k.epoch_deep
            dw = max(launch["H"], launch["C_PAD"])
            b_pad = -(-args["B"] // launch["BB"]) * launch["BB"]
            stride = b_pad * (2 * launch["max_depth"] * launch["H"] + 2 * dw)
            arguments.update(scratch_ptr=self._scratch(n_programs * stride),
                             max_depth=launch["max_depth"], scratch_stride=stride,
                             BF=launch["BF"], DW=dw)
        if warmup:
            kernel.warmup(grid=(n_programs,), **arguments)
        else:
            kernel[(n_programs,)](**arguments)

    def _compile_launches(self, args):
        """Compile every launch's kernel at once, a thread each, before
        :meth:`_fit_launches` loads them one by one.

        A compile is seconds of LLVM and ptxas (5-15 s each for sm_90,
        measured without a GPU), most of it outside the GIL: the six kernels
        of a 400-model narrow search took 48 s one after another and 27 s on
        two threads of a 2-core machine. On CUDA only (the interpreter
        compiles nothing), and with a triton that has ``AsyncCompileMode``
        (3.4 and later; an older one compiles each kernel at its first
        launch, as before). Any error is left to that first launch, which
        raises it where it always did."""
        if self.net.device.type != "cuda" or len(self._launches) < 2:
            return
        try:
            from triton.runtime._async_compile import AsyncCompileMode  # noqa: PLC0415
        except ImportError:
            return
        workers = min(len(self._launches), os.cpu_count() or 1)
        try:
            with ThreadPoolExecutor(workers) as pool, AsyncCompileMode(pool):
                for launch in self._launches:
                    self._launch(launch, args, 1, 0, warmup=True)
        except Exception:  # noqa: BLE001 (the sequential compile below raises it again)
            pass

    def _fit_launches(self, args):
        """Compile and load every launch's kernel before any of them trains
        (a launch over no model), halving the batch tile of one that asks
        for more shared memory or registers than the GPU has. Where even 16
        rows do not fit, the run trains on torch from here on, with a
        warning, and this returns False."""
        from triton.runtime.errors import OutOfResources  # noqa: PLC0415

        self._compile_launches(args)
        for launch in self._launches:
            while True:
                try:
                    self._launch(launch, args, 1, 0)
                    break
                except OutOfResources as error:
                    if launch["BB"] > 16:
                        launch["BB"] //= 2
                        continue
                    self.fallback = (f"the {launch['kernel']} kernel of width {launch['H']} "
                                     f"does not fit: {error}")
                    warnings.warn(
                        f"The Triton kernels do not fit this GPU ({self.fallback}); the run "
                        f"trains on torch's CUDA ops.",
                        UserWarning,
                        stacklevel=2,
                    )
                    return False
        return True

    def _scratch(self, n):
        """The layer-by-layer kernel's working memory: at least ``n``
        values, kept between epochs."""
        scratch = getattr(self, "_scratch_buffer", None)
        if scratch is None or scratch.numel() < n:
            scratch = self._scratch_buffer = torch.empty(
                n, dtype=self.net.dtype, device=self.net.device
            )
        return scratch
