"""A fused run's state as plain host arrays: taken at an epoch's end, put back bit for bit.

What a minibatch run needs to go on from the end of an epoch exactly as if
it had never stopped, as numpy arrays, numbers, strings and lists in
dicts with string keys (what a checkpoint file holds, see
``skpmlp._persistence._checkpoint``): the fused network's layout (its groups, which
compaction changes) and weights, the optimizer's state and step counts,
the frozen slots and best weights (:meth:`PopulationTrainer.host_state
<._trainer.PopulationTrainer.host_state>`), the batch order's generators,
the stopping rule's counters and flags, the learning rates, the curves and
the weights of the replicas already compacted away (this module).

Every value is copied exactly (float32 step counts included), and a
restored network has the groups, slots and padding of the one saved, so
the fused ops that follow run on the same shapes in the same order.
"""

import dataclasses

import numpy as np
import torch

from ._halving import Rung
from ._layout import Group
from ._network import FusedNetwork
from ._spec import OptimizerSettings, PopulationSpec, TrainResult


def network_state(net):
    """A :class:`FusedNetwork`'s layout and weights, as host arrays."""
    return {
        "groups": [
            {"models": np.asarray(g.models, dtype=np.int64), "widths": list(g.widths),
             "slices": [[name, int(a), int(b)] for name, a, b in g.activation_slices],
             "scaled": bool(g.scaled)}
            for g in net.groups
        ],
        "arch_models": np.array(sorted(net.archs), dtype=np.int64),
        "archs": [list(net.archs[m]) for m in sorted(net.archs)],
        "flat": net.flat.detach().cpu().numpy().copy(),
        "n_features": int(net.n_features), "n_outputs": int(net.n_outputs),
    }


def network_from_state(state, *, dtype, device):
    """The :class:`FusedNetwork` saved by :func:`network_state`.

    Raises
    ------
    ValueError
        For a group whose activation slices do not cut its models in order.
    """
    for g in state["groups"]:
        bounds = [0] + [int(b) for _, a, b in g["slices"]]
        starts = [int(a) for _, a, _ in g["slices"]]
        if starts != bounds[:-1] or bounds[-1] != len(g["models"]) or sorted(bounds) != bounds:
            raise ValueError("a group's activation slices do not cut its models in order")
    groups = [
        Group(np.asarray(g["models"], dtype=np.int64), tuple(int(w) for w in g["widths"]),
              tuple((str(name), int(a), int(b)) for name, a, b in g["slices"]),
              bool(g.get("scaled", False)))  # a state saved before diagonal_scaling has none
        for g in state["groups"]
    ]
    archs = {int(m): tuple(int(w) for w in arch)
             for m, arch in zip(state["arch_models"], state["archs"])}
    flat = torch.from_numpy(np.array(state["flat"])).to(device=device, dtype=dtype)
    return FusedNetwork(groups, flat, archs, int(state["n_features"]), int(state["n_outputs"]))


def tensor_state(tensor):
    """A copy of ``tensor`` on the host (None stays None)."""
    return None if tensor is None else tensor.detach().cpu().numpy().copy()


def to_device(array, like):
    """A host array back on ``like``'s device, in ``like``'s dtype."""
    return torch.from_numpy(np.array(array)).to(device=like.device, dtype=like.dtype)


def planner_state(planner):
    """The batch order's generators (one per fold), as byte arrays."""
    return [g.get_state().numpy().copy() for g in planner.generators]


def restore_planner(planner, state):
    """Put the generators saved by :func:`planner_state` back."""
    for generator, saved in zip(planner.generators, state):
        generator.set_state(torch.from_numpy(np.array(saved, dtype=np.uint8)))


_STATUS_ARRAYS = ("active", "converged", "diverged", "pruned", "n_iter")


def status_state(status):
    """A :class:`~skpmlp._engine._minibatch._stopping.ReplicaStatus` as host arrays: its flags,
    epochs, the stopping rule's bests and counters and a pending rung."""
    state = {name: getattr(status, name).copy() for name in _STATUS_ARRAYS}
    state.update(best=status.rule.best.copy(), count=status.rule.count.copy(), rung=None)
    if status.best is not None:  # restore_best_weights: every replica's own best epoch
        state["best_epochs"] = {"loss": status.best.loss.copy(),
                                "epoch": status.best.epoch.copy()}
    rung = status.rung
    if rung is not None:
        state["rung"] = {"epoch": int(rung.epoch), "models": rung.models.copy(),
                         "scores": rung.scores.copy(), "candidates": rung.candidates.copy()}
    return state


def restore_status(status, state):
    """Put the state saved by :func:`status_state` back into ``status``."""
    for name in _STATUS_ARRAYS:
        getattr(status, name)[:] = state[name]
    status.rule.best[:] = state["best"]
    status.rule.count[:] = state["count"]
    status.rung = None if state["rung"] is None else saved_rung(state["rung"])
    if status.best is not None:
        if state.get("best_epochs") is None:
            raise ValueError("the saved run kept no best epochs (restore_best_weights)")
        status.best.loss[:] = state["best_epochs"]["loss"]
        status.best.epoch[:] = state["best_epochs"]["epoch"]


def saved_rung(state):
    """The :class:`~._halving.Rung` of a saved status."""
    return Rung(int(state["epoch"]), np.asarray(state["models"], dtype=np.int64),
                np.asarray(state["scores"], dtype=float),
                np.asarray(state["candidates"], dtype=bool))


def kept_state(kept):
    """``{replica: (coefs, intercepts)}`` as lists."""
    replicas = sorted(kept)
    return {
        "replicas": np.array(replicas, dtype=np.int64),
        "coefs": [list(kept[r][0]) for r in replicas],
        "intercepts": [list(kept[r][1]) for r in replicas],
    }


def restore_kept(state):
    """The dict saved by :func:`kept_state`."""
    return {
        int(r): ([np.array(c) for c in coefs], [np.array(b) for b in intercepts])
        for r, coefs, intercepts in zip(state["replicas"], state["coefs"], state["intercepts"])
    }


_RESULT_ARRAYS = ("loss_curves", "validation_scores", "n_iter", "converged", "diverged", "pruned",
                  "best_epoch")


def result_state(result):
    """A finished run's :class:`~._spec.TrainResult` as host arrays (its
    ``extra`` diagnostics left out)."""
    state = {name: getattr(result, name) for name in _RESULT_ARRAYS}
    state.update(
        coefs=[[list(model) for model in fold] for fold in result.coefs],
        intercepts=[[list(model) for model in fold] for fold in result.intercepts],
        train_time=float(result.train_time), halted=result.halted,
    )
    return state


def restore_result(state):
    """The :class:`~._spec.TrainResult` saved by :func:`result_state`."""
    # best_epoch: absent from the files of a version without it
    arrays = {name: None if state.get(name) is None else np.array(state[name])
              for name in _RESULT_ARRAYS}
    for name in ("converged", "diverged", "pruned"):
        arrays[name] = arrays[name].astype(bool)
    return TrainResult(
        coefs=[[[np.array(a) for a in model] for model in fold] for fold in state["coefs"]],
        intercepts=[[[np.array(a) for a in model] for model in fold]
                    for fold in state["intercepts"]],
        train_time=float(state["train_time"]), halted=state["halted"], **arrays,
    )


def spec_state(spec):
    """A :class:`~._spec.PopulationSpec` without weights (an adaptive run's
    models: fresh or copied weights live in the network) as host data."""
    assert spec.initial_weights is None and spec.fold_initial_weights is None
    return {
        "hidden_layer_sizes": [list(arch) for arch in spec.hidden_layer_sizes],
        "activations": list(spec.activations),
        "learning_rates": np.asarray(spec.learning_rates, dtype=float).copy(),
        "alphas": np.asarray(spec.alphas, dtype=float).copy(),
        "init_seeds": [[int(v) for v in seed] for seed in spec.init_seeds],
        "optimizers": None if spec.optimizers is None else [
            dataclasses.asdict(settings) for settings in spec.optimizers],
        "batch_sizes": None if spec.batch_sizes is None else np.asarray(spec.batch_sizes).copy(),
    }


def spec_from_state(state):
    """The :class:`~._spec.PopulationSpec` saved by :func:`spec_state`."""
    optimizers = state["optimizers"]
    return PopulationSpec(
        hidden_layer_sizes=[tuple(int(w) for w in arch) for arch in state["hidden_layer_sizes"]],
        activations=[str(a) for a in state["activations"]],
        learning_rates=np.array(state["learning_rates"], dtype=float),
        alphas=np.array(state["alphas"], dtype=float),
        init_seeds=[tuple(int(v) for v in seed) for seed in state["init_seeds"]],
        optimizers=None if optimizers is None else [OptimizerSettings(**o) for o in optimizers],
        batch_sizes=None if state["batch_sizes"] is None else np.array(
            state["batch_sizes"], dtype=np.int64),
    )
