"""The population trainer on the native kernel (CPU).

:class:`NativeTrainer` is a :class:`PopulationTrainer` whose epoch is one
call of the per-model kernel (``skpmlp._kernels``): each model runs every
step of its fold's batches (forward, loss gradient, backward, L2 and the
optimizer update) in one native pass, reading and writing the same flat
parameter and optimizer-state buffers as the torch path. Everything around
the epoch (monitoring, early stopping, halving, compaction, export) is the
torch trainer's, so both paths share one layout and one set of invariants.

The kernel loops over each model's own widths: the padding of a group
costs memory, never time. It draws the dropout masks of
:mod:`~.._dropout` itself (the same bits as the torch path's), from each
model's key, the epoch and the step; a data-parallel run's epochs with
dropout run on torch's ops (:data:`DATA_PARALLEL_DROPOUT`).
"""

import time

import numpy as np
import torch

from ... import _kernels
from .._losses import MONITOR_SCORES, accuracy, output_activation, r2, subset_accuracy
from ._kernel_tables import kernel_tables
from ._torch import PopulationTrainer

_LOSS_OF_TASK = {"classification": "softmax", "regression": "squared", "multilabel": "logistic"}
#: the monitored scores the kernel computes in its call, by the engine's
#: function of the outputs
_KERNEL_SCORES = {accuracy: "accuracy", r2: "r2", subset_accuracy: "subset_accuracy"}

#: why a data-parallel run's epochs with dropout run on torch: the
#: kernel's masks hash a row's lane in the call's batch, not its position
#: in the global batch that a rank holds a share of
DATA_PARALLEL_DROPOUT = ("dropout in a data-parallel run (the native kernel's masks know "
                         "no rank's row offset; torch draws them)")


def native_supported(config, spec):
    """Why the kernel cannot train this run, or None when it can."""
    if torch.device(config.device).type != "cpu":
        return "the native kernel runs on the CPU only"
    if config.dtype not in ("float32", "float64"):
        return f"dtype {config.dtype!r}"
    if max(len(arch) for arch in spec.hidden_layer_sizes) > _kernels.MAX_DEPTH:
        return f"networks deeper than {_kernels.MAX_DEPTH} hidden layers"
    if config.task == "regression" and config.loss != "squared_error":
        # the kernel's regression loss is squared error: such runs train on torch
        return f"loss={config.loss!r} (the kernel has squared error only)"
    if any(o.diagonal_scaling for o in spec.optimizers_of(config)):
        # the scale's gradient needs the first layer's input gradient, which
        # the kernel's backward never forms
        return "diagonal_scaling=True (the kernel has no first scaling layer)"
    return None


def epoch_batches(X, y, plan, task):
    """The kernel's per-epoch batch tensors: every fold's batches gathered
    once and transposed so that samples lie along the vector lanes.

    Returns
    -------
    dict
        ``X`` (n_steps, K, F, B_pad), ``Y`` (n_steps, K, B_pad) or
        (n_steps, K, C, B_pad), ``W`` (n_steps, K, B_pad); zero in the
        padding columns.
    """
    return _gathered(X, y, plan.rows, plan.weights, task)


def kernel_batches(X, y, plans, task):
    """The kernel's batches of the consecutive epochs ``plans``, their
    steps one after the other: :func:`epoch_batches`' tensors and the
    per-step host tables ``counts``, ``weight_sums`` and ``stepping``."""
    def joined(name, cat):
        values = [getattr(plan, name) for plan in plans]
        return values[0] if len(values) == 1 else cat(values)

    batches = _gathered(X, y, joined("rows", torch.cat), joined("weights", torch.cat), task)
    batches.update(counts=joined("counts", torch.cat).cpu().numpy(),
                   weight_sums=joined("weight_sums", np.concatenate),
                   stepping=joined("stepping", np.concatenate))
    return batches


def _gathered(X, y, rows, weights, task):
    S, K, B = rows.shape
    lanes = _kernels.lanes(X.dtype)
    bp = -(-B // lanes) * lanes
    # Each (step, fold)'s columns in one gather from the transposed data,
    # the padding columns from a zero row appended at index n: half the
    # time of indexing rows and then copying them transposed into zeros
    # (2.2-2.8x on a search's shapes), the same values.
    n = X.shape[0]
    index = rows.new_full((S, K, bp), n)
    index[..., :B] = rows
    Xb = _columns(X, index)
    if task == "classification":
        Yb = torch.cat([y.to(X.dtype), X.new_zeros(1)])[index]
    else:
        Yb = _columns(y.to(X.dtype), index)
    Wb = X.new_zeros((S, K, bp))
    Wb[..., :B] = weights
    return {"X": Xb, "Y": Yb, "W": Wb}


def _columns(values, index):
    """``values`` (n, F)'s rows ``index`` (S, K, bp) as columns, (S, K, F,
    bp); index n gives zeros."""
    S, K, bp = index.shape
    n, F = values.shape
    padded = torch.cat([values.T, values.new_zeros((F, 1))], 1)
    return torch.gather(padded.expand(S, K, F, n + 1), 3, index[:, :, None, :].expand(S, K, F, bp))


def row_multiply_adds(meta):
    """Each model's multiply-adds per row of data (its real widths) of the
    kernel's ``meta`` table."""
    fields = _kernels.META_FIELDS
    sizes = meta[:, fields["sizes"] : fields["sizes"] + _kernels.MAX_DEPTH + 2]
    depth = meta[:, fields["depth"]]
    on = np.arange(_kernels.MAX_DEPTH + 1) <= depth[:, None]
    return (sizes[:, :-1] * sizes[:, 1:] * on).sum(1)


class NativeTrainer(PopulationTrainer):
    """:class:`PopulationTrainer` whose epochs run on the native kernel."""

    backend = "native"
    #: threads of the kernel's epochs (the run sets it; torch's count
    #: where it is not set)
    n_threads = None

    def _slots_changed(self):
        # the kernel steps every unfrozen slot itself, from its tables: no
        # torch optimizer partitions to build; the forward of validation
        # scoring runs every slot. A slot's rows depend on that slot alone,
        # so every slot's are built once and the unfrozen ones taken.
        replica = self.net.slot_models
        self._forward_meta, self._forward_hyper = kernel_tables(
            self.net, np.arange(len(replica)), slot_fold=self.slot_fold,
            slot_lr=self._replica_lr[replica], slot_alpha=self._replica_alpha[replica],
            slot_optimizer=[self._replica_optimizer[r] for r in replica],
            slot_step_offset=self._replica_step_offset[replica],
            slot_dropout_key=self._replica_key[replica],
        )
        self._frozen_changed()

    def _frozen_changed(self):
        # the unfrozen slots' rows of every slot's tables (nothing else changed)
        unfrozen = np.flatnonzero(~self.frozen)
        self._meta, self._hyper = self._forward_meta[unfrozen], self._forward_hyper[unfrozen]
        self._row_macs = row_multiply_adds(self._meta)
        self._torch_partitions = False  # built again if a torch epoch needs them

    @property
    def compaction_pays(self):
        """The kernel trains the unfrozen slots only, and compacting (every
        frozen model exported, every buffer copied) cost 12-15 % of an
        early-stopping fit of iris or diabetes: only a data-parallel run,
        whose ranks sum every slot's gradients each step, drops them (a
        frozen slot keeps the memory it had at the start)."""
        return self.data_parallel is not None

    def _drops_units_now(self):
        """Whether an unfrozen slot's model drops units."""
        return bool((self._meta[:, _kernels.META_FIELDS["dropout_threshold"]] > 0).any())

    def _torch_epoch(self, X, y, plan):
        """An epoch of torch's ops (a data-parallel run with dropout): the
        same flat buffers, optimizer state and step counts."""
        if not self._torch_partitions:
            PopulationTrainer._slots_changed(self)
            self._torch_partitions = True
        self.last_gflops = None
        return PopulationTrainer.run_epoch(self, X, y, plan)

    @torch.no_grad()
    def outputs(self, X):
        """Every slot's outputs for ``X`` by the kernel's forward (a block
        of rows at a time, each model over its own widths)."""
        out = torch.empty((len(self.net.slot_models), X.shape[0], self.net.n_outputs),
                          dtype=self.net.dtype)
        _kernels.forward_models(self._forward_meta, X.contiguous(), self.net.flat.detach(), out,
                                n_threads=self.n_threads or torch.get_num_threads())
        return out

    #: the kernel's GFLOP/s in the last epoch (3 matmuls a layer, real
    #: widths), for ``verbose``
    last_gflops = None

    def describe(self):
        if self.data_parallel is not None and self._drops_units_now():
            return f"torch ({self.net.device}): {DATA_PARALLEL_DROPOUT}"
        info = _kernels.build_info()
        return (f"native kernel ({info['isa']}, {info['vector_bytes']}-byte vectors, "
                f"{self.n_threads or torch.get_num_threads()} threads)")

    #: every slot's loss of the epoch the kernel trained last (float64, NaN
    #: for frozen slots; None after a data-parallel epoch, whose losses sum
    #: over the ranks first)
    _losses = None
    #: the kernel trains several epochs per call (:meth:`run_epochs`)
    trains_epochs = True

    def kernel_score(self, with_loss=False):
        """What the kernel's call makes of the evaluation rows itself: the
        run's monitored score (a key of ``_kernels.SCORE_CODES``; with it,
        the validation loss too, where a run watches one: ``with_loss``),
        or None where the host scores the outputs (``monitor="loss"``)."""
        if self.config.monitor != "score" or output_activation(self.config) == "exp":
            return None
        return _KERNEL_SCORES.get(MONITOR_SCORES[self.config.task])

    def run_epoch(self, X, y, plan, evaluation=None, scored=False, with_loss=False):
        """Train one epoch; with ``evaluation`` (the run's data), return
        what every slot made of its fold's evaluation rows after it, given
        by the same kernel call (NaN for frozen slots): its score (n_slots,)
        where ``scored`` (:meth:`kernel_score`; with ``with_loss``, the pair
        of its score and its validation loss), else its outputs (n_slots,
        n_eval, C)."""
        _, _, evaluated, _ = self.run_epochs(X, y, [plan], evaluation=evaluation, scored=scored,
                                             with_loss=with_loss)
        if evaluated is None:
            return None
        return tuple(values[0] for values in evaluated) if with_loss else evaluated[0]

    def run_epochs(self, X, y, plans, stopping=None, evaluation=None, scored=False,
                   with_loss=False):
        """Train the epochs of ``plans`` in one kernel call, each ending with
        every model's loss and, with ``stopping``, scikit-learn's stopping
        rule: a model it stops trains no further epoch of the call.

        Parameters
        ----------
        X, y : Tensor
            The run's training data.
        plans : list of EpochPlan
            Consecutive epochs (one, data-parallel).
        stopping : dict, optional
            ``best`` and ``count`` (n_slots,), the rule's state per slot, and
            ``tol``, ``patience``; none: no model stops within the call.
            Early stopping: ``model`` (n_slots,), each slot's model, whose
            fold replicas share one rule on their mean score (``scored``
            needed), ``best`` and ``count`` then per model; each keeps its
            best epoch's weights in :attr:`best_flat` (keep_best's).
            ``restore_best_weights``: ``best_loss`` (n_slots,), each slot's
            lowest validation loss so far; it keeps its weights in
            :attr:`best_flat` at each epoch below it (``with_loss``
            needed).
        evaluation : RunData, optional
            The run's data: after every epoch it trains, each model
            evaluates its fold's evaluation rows (``X_eval``).
        scored : bool, default=False
            The kernel scores them (:meth:`kernel_score`), rather than
            giving the outputs.
        with_loss : bool, default=False
            Where ``scored``, the kernel gives each slot's validation loss
            on them too.

        Returns
        -------
        losses : ndarray of shape (len(plans), n_slots)
            Every slot's loss of each epoch, NaN where it did not train it.
        epochs_done : ndarray of int of shape (n_slots,)
            The epochs each slot trained (-1 for frozen slots).
        evaluated : ndarray, Tensor or None
            With ``evaluation``, after each epoch (NaN where a slot did not
            train it): the scores (len(plans), n_slots) where ``scored``
            (with ``with_loss``, the pair of the scores and the validation
            losses, each of that shape), else the outputs (len(plans),
            n_slots, n_eval, n_outputs), zero outside each slot's fold's
            rows.
        kept : ndarray of int of shape (n_slots,) or None
            Where the kernel kept best weights (early stopping,
            ``restore_best_weights``): the last epoch of the call (1-based)
            whose weights each slot kept as its best (0: none, -1: frozen).
        """
        self.loss_sums.zero_()
        n_slots = len(self.net.slot_models)
        self._losses = np.full(n_slots, np.nan)
        if len(self._meta) == 0:
            evaluated = None
            nothing = np.full((len(plans), n_slots), np.nan)
            if evaluation is not None:
                evaluated = nothing if scored else torch.full(
                    (len(plans), n_slots, evaluation.X_eval.shape[0], self.net.n_outputs),
                    float("nan"), dtype=self.net.dtype)
                if scored and with_loss:
                    evaluated = (nothing, nothing.copy())
            keeps = stopping is not None and ("model" in stopping or "best_loss" in stopping)
            kept = np.full(n_slots, -1) if keeps else None
            return nothing.copy(), np.full(n_slots, -1), evaluated, kept
        start = time.perf_counter()
        if self.data_parallel is None:
            blocks = None if evaluation is None else self._eval_blocks(evaluation, scored)
            losses, done, outputs, kept = self._run_epochs(X, y, plans, stopping, blocks,
                                                           with_loss=scored and with_loss)
            self._losses = losses[-1]
        else:
            (plan,) = plans
            self._losses, losses, done, outputs, kept = None, None, np.full(n_slots, 1), None, None
            if self._drops_units_now():
                self._torch_epoch(X, y, plan)
                return losses, done, outputs, kept
            self._run_epoch_stepwise(X, y, plan)
        seconds = max(time.perf_counter() - start, 1e-9)
        # rows each model trained: its fold's, over the epochs it took
        counts = torch.stack([p.counts for p in plans]).cpu().numpy()  # (epochs, steps, folds)
        fold_rows = (counts * np.stack([p.stepping for p in plans])).sum(1)
        trained = np.vstack([np.zeros(fold_rows.shape[1]), fold_rows.cumsum(0)])
        fields = _kernels.META_FIELDS
        slots, folds = self._meta[:, fields["slot"]], self._meta[:, fields["fold"]]
        rows = trained[done[slots], folds]
        self.last_gflops = 6 * float((self._row_macs * rows).sum()) / seconds / 1e9
        return losses, done, outputs, kept

    def epoch_losses(self, fold_sizes, fold_batches):
        # the kernel formed them as the torch trainer does, with its own sum
        # of the squared weights
        if self._losses is None:
            return super().epoch_losses(fold_sizes, fold_batches)
        return self._losses

    def _eval_blocks(self, data, scored):
        """``data``'s evaluation rows in the kernel's fold blocks (built once
        a run)."""
        cached_data, cached_scored, blocks = getattr(self, "_eval_blocks_of", (None, None, None))
        if cached_data is not data or cached_scored != scored:
            blocks = _kernels.eval_blocks(
                data.X_eval, data.eval_first, data.eval_rows,
                score=self.kernel_score() if scored else None, y_eval=data.y_eval,
                eval_weights=data.eval_weights)
            self._eval_blocks_of = (data, scored, blocks)
        return blocks

    def _run_epochs(self, X, y, plans, stopping, evaluation, with_loss=False):
        counts = self.optimizer.step_counts
        stepping = np.concatenate([p.stepping for p in plans])
        batches = kernel_batches(X, y, plans, self.config.task)
        batches.update(step0=counts.cpu().numpy().astype(np.float64))
        n_slots = len(self.net.slot_models)
        ends = np.concatenate([[0], np.cumsum([p.n_steps for p in plans])])
        if stopping is None:  # no model stops within the call
            stopping = {"best": np.full(n_slots, np.inf),
                        "count": np.zeros(n_slots, dtype=np.int64),
                        "tol": 0.0, "patience": np.iinfo(np.int64).max}
        else:
            stopping = self._kept_best(stopping)
        epochs = dict(stopping, ends=ends, first_epoch=plans[0].epoch,
                      fold_sizes=plans[0].fold_sizes, fold_batches=plans[0].fold_batches,
                      loss_alpha=self.alphas.cpu().numpy().astype(np.float64),
                      evaluation=evaluation, with_loss=with_loss)
        result = self._run("epoch", batches, grads=None, epochs=epochs)
        counts += torch.as_tensor(stepping.sum(0), dtype=counts.dtype, device=counts.device)
        return result

    def _kept_best(self, stopping):
        """``stopping`` (see :meth:`run_epochs`) as the kernel's epochs
        read it: early stopping's rule state (per model,
        ``stopping["model"]`` the model of each slot) as its groups, the
        unfrozen slots of one model a group; where the kernel keeps best
        weights, :attr:`best_flat` to keep them in."""
        stopping = dict(stopping)
        if "best_loss" in stopping:
            stopping["best_params"] = self.best_flat
        if "model" not in stopping:
            return stopping
        n_slots = len(self.net.slot_models)
        slot_model = np.asarray(stopping.pop("model"))
        models, groups = np.unique(slot_model[self._meta[:, _kernels.META_FIELDS["slot"]]],
                                   return_inverse=True)
        return dict(
            stopping,
            # the per-slot loss rule's state, not read under early stopping
            best=np.full(n_slots, np.inf), count=np.zeros(n_slots, dtype=np.int64),
            groups=groups, group_best=np.asarray(stopping["best"], np.float64)[models],
            group_count=np.asarray(stopping["count"], np.int64)[models],
            best_params=self.best_flat,
        )

    def _run(self, mode, batches, *, grads, epoch=0, epochs=None):
        """One kernel call in ``mode`` over the unfrozen slots' tables
        (``epoch``: the run's, which dropout masks hash; ``epochs``: see
        :func:`skpmlp._kernels.run_models`)."""
        state = self.optimizer.state
        buffers = {
            "params": self.net.flat.detach(), "grads": grads,
            "state1": state[0] if state else None, "state2": state[1] if len(state) > 1 else None,
            "state3": state[2] if len(state) > 2 else None,
            "loss_sums": self.loss_sums,
        }
        return _kernels.run_models(
            mode, self._meta, self._hyper, batches, buffers, n_outputs=self.net.n_outputs,
            loss=_LOSS_OF_TASK[self.config.task],
            n_threads=self.n_threads or torch.get_num_threads(), epoch=epoch, epochs=epochs,
        )

    def _run_epoch_stepwise(self, X, y, plan):
        """The epoch of a data-parallel run: per step, the kernel writes
        every model's gradients of this rank's rows into the flat gradient
        buffer, the ranks sum it, and the kernel applies the update. Each
        fold's step count moves on with the folds that step."""
        counts = self.optimizer.step_counts
        step0 = counts.cpu().numpy().astype(np.float64)
        batches = kernel_batches(X, y, [plan], self.config.task)
        for s in range(plan.n_steps):
            step = {name: batch[s : s + 1] for name, batch in batches.items()}
            step["step0"] = step0
            # a model whose fold sits the step out writes no gradient: it
            # sums zeros, not the previous step's values
            self.net.grad.zero_()
            self._run("gradients", step, grads=self.net.grad)
            self.data_parallel.all_reduce(self.net.grad)
            self._run("update", step, grads=self.net.grad)
            step0 = step0 + batches["stepping"][s]
        counts += torch.as_tensor(plan.stepping.sum(0), dtype=counts.dtype, device=counts.device)
