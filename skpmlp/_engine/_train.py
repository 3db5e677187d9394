"""A training call: the runs of its flat plan, trained one after another or rung by rung.

:func:`train_population` is the engine's one entry. It plans the call's
runs once (:func:`~._runs.plan_runs`: solver family, batch size, memory
chunk) and trains them without recursion: a minibatch run epoch by epoch
(:class:`~skpmlp._engine._minibatch._run.FusedRun`, adaptive ones with the
hook of :mod:`skpmlp._engine._minibatch._refill`),
an L-BFGS run round by round (:class:`~skpmlp._engine._lbfgs._task.LbfgsTask`).

Without halving each run trains to its end, one after another. With
``pruning="halving"`` every run stops at each rung, its state suspended to
the host when another run must train meanwhile; once every run of a batch
size has reached the rung, one decision ranks all their models
(:func:`~._halving.decide`) and they go on. Halving's survivors are thus
those of one run, whatever the memory chunks; a call that is one shard of
a search (``rungs`` given) returns at the rung instead
(:class:`PausedTraining`), and the search decides over its shards.

The call's state (the plan, the finished runs' results, the others'
states, the decisions taken) can be saved at any epoch's end
(``checkpoint``) and a call resumed from it (``resume``) goes on bit for bit.

Per step: one gather of the minibatch rows (the data lives on the device;
each epoch's row permutation is drawn on the host and copied over once),
one forward per group, one backward of the summed per-model losses and one
fused optimizer update. Nothing in a step synchronises with the host;
per-model bookkeeping (loss curves, stopping rules, divergence) happens once
per epoch.
"""

import contextlib
import dataclasses
import gc
import warnings

import numpy as np
import torch

from ._backends._choice import run_device
from ._chunks import merge_results
from ._halving import decide
from ._init import population_initial_weights
from ._lbfgs._task import LbfgsTask
from ._memory import is_out_of_memory
from ._minibatch._epoch import past
from ._minibatch._run import FusedRun
from ._run_state import restore_result, result_state
from ._runs import RunOptions, plan_runs, restore_runs
from ._spec import TrainResult


class ResumeError(ValueError):
    """A saved state (a checkpoint's) that does not fit the training call
    resumed from it."""


def _restored_runs(resume, config, folds, options, n_models):
    """The runs of a saved call's plan, which must cover every model of the
    call once.

    Raises
    ------
    ResumeError
        For a plan that is not the call's.
    """
    with _resume_errors("plan"):
        runs = restore_runs([run["run"] for run in resume["runs"]], config, folds, options)
        models = np.sort(np.concatenate([run.models for run in runs]))
        if not np.array_equal(models, np.arange(n_models)):
            raise ValueError(f"the saved runs do not train the call's {n_models} models once each")
    return runs


@contextlib.contextmanager
def _resume_errors(what):
    """Whatever restoring a saved ``what`` fails with, as a :class:`ResumeError`."""
    try:
        yield
    except ResumeError:
        raise
    except Exception as error:  # noqa: BLE001  (any failure: the state is not this call's)
        raise ResumeError(f"the saved {what} does not fit this training call "
                          f"({type(error).__name__}: {error})") from error


def _check_result(result, n_models, n_folds):
    """A saved run's result must hold its models on every fold."""
    if result.n_iter.shape != (n_models, n_folds) or len(result.coefs) != n_folds:
        raise ValueError(f"a finished run's result holds {result.n_iter.shape} replicas, not "
                         f"{(n_models, n_folds)}")


@dataclasses.dataclass(frozen=True)
class PausedTraining:
    """A call stopped at halving rungs, waiting for decisions taken over
    other calls (the shards of a search).

    Attributes
    ----------
    state : dict
        The call's state: ``train_population(..., resume=state)`` goes on.
    rungs : list of (int, int, ndarray of int, ndarray of float)
        ``(family, epoch, models, scores)`` of each run waiting: its batch
        size, the rung, its models still in the race (indices into the
        call's spec) and their scores.
    """

    state: dict
    rungs: list


def train_population(spec, config, X, y, folds, *, resume=None, rungs=None, options=None,
                     **fields):
    """Train every model of ``spec`` on every fold as fused networks.

    A population whose estimated needs exceed ``max_memory`` or 80% of the
    device's free memory trains as chunks, one fused run after another; a
    chunk that still runs out of memory is split in two and retried, with a
    warning. Models are independent, so chunks give the results of one run,
    successive halving included: it ranks the models of every chunk
    together (see the module docstring).

    Parameters
    ----------
    spec : PopulationSpec
    config : TrainConfig
        Its ``device`` (``"auto"`` included) is resolved here, on the
        machine that trains.
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Class indices in ``[0, n_outputs)`` or regression targets.
    folds : list of (train_rows, eval_rows)
        Row indices per fold; ``eval_rows`` may be None (no monitoring).
    resume : dict, optional
        A state saved by ``options["checkpoint"]`` or returned in a
        :class:`PausedTraining`: the call goes on from it (its plan, its
        finished runs' results, the others' states), re-training nothing.
    rungs : dict, optional
        Halving decided outside the call (a shard of a search): ``{(family,
        epoch): models pruned}`` (indices into ``spec``). The call then
        returns a :class:`PausedTraining` at a rung not decided yet.
    options : RunOptions, optional
        What every run of the call gets (:class:`~._runs.RunOptions`:
        ``sample_weight``, ``monitor``, ``epoch_callback``, ``max_memory``,
        ``deadline``, ``always_start``, ``data_parallel``,
        ``refill_source``, ``checkpoint``).
    **fields :
        Fields of :class:`~._runs.RunOptions` set on ``options`` (or on
        the defaults).

    Returns
    -------
    TrainResult or PausedTraining
        ``halted="interrupted"`` when a KeyboardInterrupt ended training
        after at least one epoch (one before that propagates).
    """
    config = dataclasses.replace(config, device=run_device(spec, config, X, folds))
    options = dataclasses.replace(RunOptions() if options is None else options, **fields)
    if resume is None:
        runs = plan_runs(spec, config, X, folds, options)
    else:
        runs = _restored_runs(resume, config, folds, options, spec.n_models)
    call = _Call(runs, spec, X, y, folds, options)
    if resume is not None:
        call.restore(resume)
    if rungs is not None:
        call.cuts.update({key: np.asarray(pruned) for key, pruned in rungs.items()})
        call.external = True
    return call.train()


class _Entry:
    """A run of the call: not begun (no ``task``), training (``task``) or
    finished (``result``)."""

    def __init__(self, run, task=None, result=None):
        self.run, self.task, self.result = run, task, result

    @property
    def open(self):
        return self.result is None

    def state(self):
        """The entry as a checkpoint holds it."""
        state = {"run": self.run.state(), "result": None, "state": None}
        if self.result is not None:
            state["result"] = result_state(self.result)
        elif self.task is not None and self.task.started:
            state["state"] = self.task.host_state()
        return state


class _Call:
    """The runs of a call and the halving decisions taken so far."""

    def __init__(self, runs, spec, X, y, folds, options):
        self.spec, self.X, self.y, self.folds, self.options = spec, X, y, folds, options
        self.entries = [_Entry(run) for run in runs]
        self.cuts = {}  # (family, epoch) -> models pruned, indices into spec
        self.external = False
        self.halted = None
        self._began = False  # a run trained in this call

    # ------------------------------------------------------------ state
    def state(self):
        """The call's state: what ``train_population(resume=...)`` takes."""
        return {
            "runs": [entry.state() for entry in self.entries],
            "cuts": [[int(family), int(epoch), np.asarray(pruned, dtype=np.int64)]
                     for (family, epoch), pruned in sorted(self.cuts.items())],
        }

    def restore(self, state):
        """Go on from :meth:`state`: finished runs keep their results, the
        others their states, each rebuilt once to check that it fits.

        Raises
        ------
        ResumeError
            For a state that does not fit the call (another layout, arrays
            of other shapes, missing fields), whatever it fails with.
        """
        with _resume_errors("state"):
            if len(state["runs"]) != len(self.entries):
                raise ValueError(f"{len(state['runs'])} runs saved, the plan has "
                                 f"{len(self.entries)}")
            for entry, saved in zip(self.entries, state["runs"]):
                if saved["result"] is not None:
                    entry.result = restore_result(saved["result"])
                    _check_result(entry.result, len(entry.run.models), len(self.folds))
                elif saved["state"] is not None:
                    entry.task = self._task(entry.run, saved["state"])
                    entry.task.validate()
            self.cuts = {(int(f), int(e)): np.asarray(p, dtype=np.int64)
                         for f, e, p in state["cuts"]}

    def _save(self):
        if self.options.checkpoint is not None:
            self.options.checkpoint.save(self.state())

    def _tick(self):
        """After every epoch or round: a checkpoint when one is due."""
        checkpoint = self.options.checkpoint
        if checkpoint is not None and checkpoint.due():
            checkpoint.save(self.state())

    # --------------------------------------------------------- training
    def train(self):
        while True:
            self._pass()
            waiting = [e for e in self.entries if e.open and e.task is not None
                       and e.task.rung is not None and self.halted is None]
            if not waiting:
                break
            if self.external:
                self._save()  # every rung
                return self._paused(waiting)
            self._decide(waiting)
            self._save()  # every rung
        self._save()  # the end, or where training halted
        return self._result()

    def _pass(self):
        """Advance every open run until it finishes, halts (the call then
        halts) or waits at a rung not decided yet."""
        i = 0
        while i < len(self.entries) and self.halted is None:
            entry = self.entries[i]
            if not entry.open or (entry.task is not None and self._waits(entry)):
                i += 1
                continue
            fresh = entry.task is None or not entry.task.started
            options = self.options
            if past(options.deadline, options.data_parallel) and (
                    self._began or not options.always_start):
                self.halted = "max_time"
                break
            outcome = self._advance(entry, fresh)
            if outcome == "split":  # out of memory: its halves take its place
                self.entries[i:i + 1] = [_Entry(half) for half in entry.run.halves()]
                continue
            self._began = True
            if outcome == "finished":
                entry.result, entry.task = entry.task.result(), None
            elif outcome == "halted":
                self.halted = entry.task.halted
            elif sum(e.open for e in self.entries) > 1:  # paused: others train meanwhile
                entry.task.suspend()
            i += 1

    def _waits(self, entry):
        """Whether the entry waits at a rung not decided yet."""
        rung = entry.task.rung
        return rung is not None and (entry.run.family, rung.epoch) not in self.cuts

    def _advance(self, entry, fresh):
        """Advance one entry (see :meth:`_pass`); ``"split"`` when a fresh
        run ran out of memory and is to be retried as two halves."""
        try:
            if entry.task is None:
                entry.task = self._task(entry.run, None)
            return entry.task.advance(lambda epoch: self._decision(entry, epoch), self._tick)
        except Exception as error:
            entry.task = None
            if not is_out_of_memory(error):
                raise
            if not _retried(entry.run, fresh):
                replacement = _out_of_memory_error(entry.run, error)
                if replacement is error:
                    raise
                raise replacement from error
        # out of the except block: the exception and its traceback, whose
        # frames held the failed run's tensors, are gone; collecting now frees them
        _release_device_memory(entry.run.config.device)
        n, half = len(entry.run.models), len(entry.run.models) // 2
        warnings.warn(
            f"Out of memory training {n} models on {entry.run.config.device}; retrying them "
            f"as two chunks of {half} and {n - half} models.",
            ResourceWarning, stacklevel=5,
        )
        return "split"

    def _task(self, run, state):
        """The object that trains ``run`` (from ``state``, if given)."""
        sub = self.spec.subset(run.models)
        if run.solver == "lbfgs":
            return LbfgsTask(run, sub, self.X, self.y, self.folds, state)
        return FusedRun(run, sub, self.X, self.y, self.folds, state)

    def _decision(self, entry, epoch):
        """The entry's models (indices into its run) pruned at the rung at
        ``epoch``, or None while undecided."""
        pruned = self.cuts.get((entry.run.family, epoch))
        if pruned is None:
            return None
        return np.flatnonzero(np.isin(entry.run.models, pruned))

    def _decide(self, waiting):
        """Decide every rung the ``waiting`` entries wait at, over all of
        them (per batch size)."""
        config = waiting[0].run.config
        for key, group in _by_rung(waiting).items():
            reports = [(entry.run.models, entry.task.rung) for entry in group]
            pruned = decide(reports, config.halving_factor, config.min_survivors)
            self.cuts[key] = np.sort(np.concatenate(
                [entry.run.models[local] for entry, local in zip(group, pruned)]
            ))

    def _paused(self, waiting):
        """The :class:`PausedTraining` of a call whose runs wait at rungs."""
        rungs = []
        for (family, epoch), group in _by_rung(waiting).items():
            for entry in group:
                rung = entry.task.rung
                rungs.append((family, epoch, entry.run.models[rung.models], rung.scores))
        return PausedTraining(self.state(), rungs)

    def _result(self):
        """The merged result of every run (a run never begun: untrained)."""
        parts = []
        for entry in self.entries:
            run = entry.run
            if entry.result is not None:
                result = entry.result
            elif entry.task is not None and entry.task.started:
                if entry.task.rung is not None:  # halted after a rung's decision
                    entry.task.settle(lambda epoch, entry=entry: self._decision(entry, epoch))
                result = entry.task.result()
            else:
                sub = self.spec.subset(run.models)
                result = _untrained(sub, run.config, self.X.shape[1], len(self.folds),
                                    run.options.monitor, self.halted)
            parts.append((run.models, result))
        return merge_results(parts, self.spec.n_models)


def _by_rung(entries):
    """``{(family, epoch): entries}`` of entries waiting at rungs."""
    groups = {}
    for entry in entries:
        groups.setdefault((entry.run.family, entry.task.rung.epoch), []).append(entry)
    return groups


def _retried(run, fresh):
    """Whether a run that ran out of memory is retried as two halves: one
    that had not trained before this call's attempt (halves start afresh),
    of several models, outside a data-parallel fit (the other ranks did
    not run out) and not adaptive (one run by design)."""
    return (fresh and len(run.models) > 1 and run.options.data_parallel is None
            and not run.config.refill)


def _out_of_memory_error(run, error):
    """The error a run that runs out of memory raises when it is not
    retried: ``error`` itself, or a :class:`MemoryError` saying why."""
    if len(run.models) == 1 or run.options.data_parallel is not None:
        return error
    why = ("an adaptive run (refill) is one fused run by design" if run.config.refill else
           "it had trained epochs already (resumed, or past a halving rung) and a run's state "
           "cannot be split")
    return MemoryError(
        f"Out of memory training {len(run.models)} models on {run.config.device}; the run is "
        f"not split and retried because {why}. Set or lower max_memory (bytes) to train the "
        f"population as smaller chunks, or use fewer models, a smaller batch_size or "
        f"dtype='float32'."
    )


def _release_device_memory(device):
    """Free what unreachable tensors hold (reference cycles included) and,
    on CUDA, give the allocator's cached blocks back to the device."""
    gc.collect()
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()


def _fold_replicas(spec, K):
    """Every fold's replicas of ``spec``'s models, fold after fold (a
    resumed search's differ between folds)."""
    M = spec.n_models
    replicas = spec.replicate(K)
    return [replicas.subset(range(k * M, (k + 1) * M)) for k in range(K)]


def _untrained(spec, config, n_features, K, monitor, halted):
    """The result of a chunk that never trained (``halted`` says why):
    initial weights, 0 epochs."""
    M = spec.n_models
    # each fold's replicas (a resumed search's differ between folds)
    weights = [population_initial_weights(replica, n_features, config.n_outputs)
               for replica in _fold_replicas(spec, K)]
    empty = np.zeros((M, K, 0))
    false = np.zeros((M, K), dtype=bool)
    return TrainResult(
        coefs=[coefs for coefs, _ in weights],
        intercepts=[intercepts for _, intercepts in weights],
        loss_curves=empty, validation_scores=empty.copy() if monitor else None,
        n_iter=np.zeros((M, K), dtype=int), converged=false, diverged=false.copy(),
        pruned=false.copy(), halted=halted,
        best_epoch=np.zeros((M, K), dtype=int) if monitor and config.restore_best_weights
        else None,
    )


