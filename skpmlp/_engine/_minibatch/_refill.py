"""Adaptive runs: slots freed by halving or a stopping rule take new models.

With ``config.refill`` a fused run never leaves its network half empty.
Every model of the first population holds a *seat*: its replicas' slots,
one per fold, in one group of the network. When every replica of a model
has stopped (pruned, converged or diverged), its seat is free, and at the
end of that epoch it takes a new model, which trains from the next epoch on
(all its fold replicas at once, as the search layer ranks configurations by
their fold mean):

- ``refill="sample"``: a configuration drawn from the search space (by the
  *refill source*, see :class:`RefillSource`), with fresh initial weights
  and fresh optimizer state. Its architecture must fit the seat's group
  (same depth, widths within the group's padded ones, the seat's
  activation): draws that fit no free seat are rejected, so a refill is a
  draw from the space conditioned on the shapes freed.
- ``refill="perturb"`` (population-based training): a copy of the weights
  and optimizer state of a surviving model that fits the seat, chosen among
  the best quarter of such survivors by validation score, whose continuous
  hyperparameters the source perturbs; where no survivor fits, a draw as
  ``"sample"``.

Nothing of another slot changes when a seat is refilled: the new model's
parameters, optimizer state and per-slot settings are written into the
seat's slots only, and Adam's bias correction counts each model's own steps
(a *step offset* per replica, read by the fused optimizer and the kernel).
A newcomer sees the batches of the epochs it trains in, so it equals the
same model trained alone from the same epoch of the run's batch order.

Budget: the run lasts at most ``max_iter`` epochs; a seat is refilled only
while at least ``min_iter`` epochs are left, and while fewer than
``config.max_models`` models have trained. Once refilling is over, stopped
slots are compacted away as in a plain run.

Model numbering: model ``j`` is the j-th model to train (the first
population, then refills in order); its replica on fold k is
``k * capacity + j``, ``capacity`` bounding the models a run can train, so
that the stopping rule's per-model arrays
(:class:`~skpmlp._engine._minibatch._stopping.ReplicaStatus`) keep their
fold-major layout.

An adaptive run is a :class:`~skpmlp._engine._minibatch._run.FusedRun` like any other, with
:class:`Refills` as its hook: the same epoch loop (Ctrl-C held back to an
epoch's end, the deadline, suspension to host arrays and checkpoints), the
hook counting free seats, refilling them after the epoch's retirements and
holding back compaction while it refills. It is always its call's only run
(``n_jobs``, a searched batch size and memory chunks are refused with
``refill``), so it decides its halving rungs on its own models.
"""

import dataclasses
import math

import numpy as np

from .._init import population_initial_weights
from .._run_state import spec_from_state, spec_state
from .._spec import PopulationSpec, TrainResult
from ._slots import Newcomer
from ._stopping import fold_mean

#: Draws of a configuration tried per free seat before ``"sample"`` leaves
#: the remaining free seats empty for this epoch.
MAX_DRAWS_PER_SEAT = 50


class RefillSource:
    """What an adaptive run asks of the search layer (the interface; the
    search layer's implementation is ``skpmlp._search._adaptive.SpaceRefills``).

    Attributes
    ----------
    initial_rows : list
        One opaque record per model of the first population (handed back
        to :meth:`perturb` when that model is a parent).
    """

    initial_rows = ()

    def sample(self):
        """One configuration drawn from the search space.

        Returns
        -------
        spec : PopulationSpec
            One model, with its own initial-weight seed.
        row : object
            Its record (the search layer's ``cv_results_`` row).
        """
        raise NotImplementedError

    def perturb(self, row):
        """The configuration of a copy of the model recorded as ``row``,
        its continuous hyperparameters perturbed; architecture and
        activation unchanged. Returns ``(spec, row)`` as :meth:`sample`."""
        raise NotImplementedError

    def state(self):
        """Its random stream as host data (a checkpoint holds it)."""
        raise NotImplementedError

    def restore(self, state):
        """Go on drawing from :meth:`state`."""
        raise NotImplementedError

    def row_state(self, row):
        """A record as host data (dicts, lists, numbers, strings)."""
        raise NotImplementedError

    def row_from_state(self, state):
        """The record saved by :meth:`row_state`."""
        raise NotImplementedError


def capacity(config, n_models):
    """Most models a run of ``n_models`` seats can train: ``max_models``,
    else one refill of every seat at every epoch that may refill."""
    bound = n_models * (1 + max(0, config.max_iter - config.min_iter + 1))
    return bound if config.max_models is None else max(n_models, min(bound, config.max_models))


def concat_specs(specs):
    """One :class:`PopulationSpec` of the models of ``specs``, in order
    (every per-model field: a field some spec leaves None is None)."""
    merged = {}
    for f in dataclasses.fields(PopulationSpec):
        values = [getattr(s, f.name) for s in specs]
        if any(v is None for v in values):
            merged[f.name] = None
        elif isinstance(values[0], np.ndarray):
            merged[f.name] = np.concatenate(values)
        else:
            merged[f.name] = [item for v in values for item in v]
    return PopulationSpec(**merged)


class Seats:
    """The seats of a run, the models in them and the records of every
    model trained: which model a freed seat takes next.

    The slots themselves change only through the trainer's public API
    (:meth:`~skpmlp._engine._backends._torch.PopulationTrainer.reserve`,
    :meth:`~skpmlp._engine._backends._torch.PopulationTrainer.replace_slots`).

    Parameters
    ----------
    trainer : PopulationTrainer
        Built for the first population (replica ``k * n_models + i``); its
        replicas are renumbered here to ``k * capacity + i``.
    spec : PopulationSpec
        The first population, with every model's optimizer settings.
    config : TrainConfig
    n_folds : int
    source : RefillSource
    """

    def __init__(self, trainer, spec, config, n_folds, source):
        K, M = n_folds, spec.n_models
        spec = dataclasses.replace(spec, optimizers=spec.optimizers_of(config),
                                   initial_weights=None)
        self.trainer, self.config, self.source = trainer, config, source
        self.K, self.M = K, M
        self.capacity = capacity(config, M)
        self.specs = [spec]
        self.rows = list(source.initial_rows)
        assert len(self.rows) == M
        self.n_models = M
        self.start_iter = [0] * M
        self.parent = [-1] * M
        self.seat = list(range(M))  # the seat every model trained in
        self.seat_model = np.arange(M)
        self.rejected = 0
        self._rng = np.random.default_rng([int(config.shuffle_seed), 16])
        trainer.reserve(self.capacity)
        net = trainer.net
        # slots of every seat, fold by fold (replicas of one model share
        # their architecture and activation, hence their group)
        slot_of = {int(r): s for s, r in enumerate(net.slot_models)}
        self.seat_slots = np.array(
            [[slot_of[k * self.capacity + i] for k in range(K)] for i in range(M)]
        )
        self.seat_group = np.searchsorted(net.group_offsets, self.seat_slots[:, 0],
                                          side="right") - 1
        self.seat_activation = [
            net.groups[g].activation_of(int(s - net.group_offsets[g]))
            for g, s in zip(self.seat_group, self.seat_slots[:, 0])
        ]

    _LISTS = ("start_iter", "parent", "seat")
    _ARRAYS = ("seat_model", "seat_slots", "seat_group")

    def state(self):
        """Everything but the trainer, as host data (see :mod:`._run_state`)."""
        bits = self._rng.bit_generator.state
        return {
            "capacity": int(self.capacity), "n_models": int(self.n_models),
            "rejected": int(self.rejected), "spec": spec_state(self.all_specs()),
            "rows": [self.source.row_state(row) for row in self.rows],
            **{name: np.asarray(getattr(self, name), dtype=np.int64) for name in self._LISTS},
            **{name: np.asarray(getattr(self, name), dtype=np.int64).copy()
               for name in self._ARRAYS},
            "seat_activation": list(self.seat_activation),
            # PCG64's 128-bit words, as decimal strings
            "rng": {"state": str(bits["state"]["state"]), "inc": str(bits["state"]["inc"]),
                    "has_uint32": int(bits["has_uint32"]), "uinteger": int(bits["uinteger"])},
        }

    @classmethod
    def restored(cls, trainer, config, n_folds, source, state):
        """The seats of :meth:`state`, around a trainer restored with them
        (its replicas already laid out for the capacity)."""
        seats = cls.__new__(cls)
        seats.trainer, seats.config, seats.source, seats.K = trainer, config, source, n_folds
        seats.capacity, seats.n_models = int(state["capacity"]), int(state["n_models"])
        seats.rejected = int(state["rejected"])
        seats.specs = [spec_from_state(state["spec"])]
        seats.rows = [source.row_from_state(row) for row in state["rows"]]
        for name in cls._LISTS:
            setattr(seats, name, [int(v) for v in state[name]])
        for name in cls._ARRAYS:
            setattr(seats, name, np.array(state[name], dtype=np.int64))
        seats.M = len(seats.seat_model)
        seats.seat_activation = [str(a) for a in state["seat_activation"]]
        seats._rng = np.random.default_rng()
        rng = state["rng"]
        seats._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int(rng["state"]), "inc": int(rng["inc"])},
            "has_uint32": int(rng["has_uint32"]), "uinteger": int(rng["uinteger"]),
        }
        return seats

    # ------------------------------------------------------------- seats
    def free_seats(self, active):
        """Seats whose model has no replica training any more."""
        alive = active.reshape(self.K, self.capacity).any(0)
        return [s for s in range(self.M) if not alive[self.seat_model[s]]]

    def can_refill(self, epoch):
        """Whether a seat freed after ``epoch`` may take a new model."""
        left = self.config.max_iter - (epoch + 1)
        return left >= self.config.min_iter and self.n_models < self.capacity

    def fits(self, seat, arch, activation):
        """Whether a model of ``arch`` and ``activation`` fits ``seat``'s slots."""
        widths = self.trainer.net.groups[self.seat_group[seat]].widths
        return (
            activation == self.seat_activation[seat]
            and len(arch) == len(widths)
            and all(a <= w for a, w in zip(arch, widths))
        )

    def refill(self, seats, epoch, active, score):
        """Put new models in the free ``seats`` after ``epoch``; return the
        new model indices (the caller admits them to the stopping rule)."""
        seats = list(seats)
        newcomers = []
        if self.config.refill == "perturb":
            for seat in list(seats):
                if self.n_models >= self.capacity:
                    break
                parent = self._parent(seat, active, score)
                if parent is None:
                    continue
                spec, row = self.source.perturb(self.rows[parent])
                newcomers.append(self._seat(seat, spec, row, epoch, parent=parent))
                seats.remove(seat)
        draws = 0
        while seats and self.n_models < self.capacity and draws < MAX_DRAWS_PER_SEAT * len(seats):
            spec, row = self.source.sample()
            draws += 1
            arch, activation = spec.hidden_layer_sizes[0], spec.activations[0]
            seat = next((s for s in seats if self.fits(s, arch, activation)), None)
            if seat is None:
                self.rejected += 1
                continue
            newcomers.append(self._seat(seat, spec, row, epoch))
            seats.remove(seat)
        if newcomers:
            # parents are surviving models: no newcomer's slots are a parent's
            self.trainer.replace_slots(newcomers)
        return [int(n.replicas[0]) for n in newcomers]

    def _parent(self, seat, active, score):
        """A surviving model whose architecture and activation fit ``seat``,
        drawn among the best quarter of such models by their fold mean
        score (None if none fits)."""
        alive = active.reshape(self.K, self.capacity).any(0)
        spec = self.all_specs()
        candidates = [
            m for m in self.seat_model
            if alive[m] and self.fits(seat, spec.hidden_layer_sizes[m], spec.activations[m])
        ]
        if not candidates:
            return None
        if score is not None:
            means = fold_mean(score, active, self.K)[candidates]
            order = np.argsort(-np.where(np.isnan(means), -np.inf, means), kind="stable")
            candidates = [candidates[i] for i in order[: max(1, math.ceil(len(candidates) / 4))]]
        return int(candidates[self._rng.integers(len(candidates))])

    def all_specs(self):
        """The :class:`PopulationSpec` of every model trained so far."""
        if len(self.specs) > 1:
            self.specs = [concat_specs(self.specs)]
        return self.specs[0]

    def _seat(self, seat, spec, row, epoch, *, parent=None):
        """Record model ``spec`` (one model) as the next model, in ``seat``
        after ``epoch``: its :class:`~skpmlp._engine._minibatch._slots.Newcomer`,
        with fresh weights or ``parent``'s copied."""
        net, C, j = self.trainer.net, self.capacity, self.n_models
        arch, activation = spec.hidden_layer_sizes[0], spec.activations[0]
        assert self.fits(seat, arch, activation)
        weights = None
        if parent is None:
            coefs, intercepts = population_initial_weights(spec, net.n_features, net.n_outputs)
            weights = (coefs[0], intercepts[0])
        folds = np.arange(self.K)
        newcomer = Newcomer(
            slots=self.seat_slots[seat], replicas=folds * C + j, arch=tuple(arch),
            learning_rate=float(spec.learning_rates[0]), alpha=float(spec.alphas[0]),
            optimizer=spec.optimizers[0], weights=weights,
            parents=None if parent is None else folds * C + parent,
            seed=tuple(spec.init_seeds[0]),
        )
        self.specs.append(spec)
        self.rows.append(row)
        self.start_iter.append(epoch + 1)
        self.parent.append(-1 if parent is None else int(parent))
        self.seat.append(int(seat))
        self.seat_model[seat] = j
        self.n_models += 1
        return newcomer


# ----------------------------------------------------------------- the hook
class Refills:
    """The hook that makes a :class:`~skpmlp._engine._minibatch._run.FusedRun` adaptive.

    The run calls it where an adaptive run differs from a plain one:
    :meth:`start` (only the first population trains), :meth:`count_free`
    (occupancy, before the epoch's retirements), :meth:`after_retire` (the
    free seats take new models; compaction waits until refilling is over),
    :meth:`state` and :meth:`result`.

    Parameters
    ----------
    seats : Seats
    """

    def __init__(self, seats):
        self.seats = seats
        self.refilling = True
        self.free_counts = []  # free seats per epoch run

    @classmethod
    def fresh(cls, trainer, spec, config, n_folds, source):
        """The hook of a run starting now (the trainer's replicas are
        renumbered for the capacity)."""
        return cls(Seats(trainer, spec, config, n_folds, source))

    @classmethod
    def restored(cls, trainer, config, n_folds, source, state):
        """The hook saved by :meth:`state`, source included."""
        source.restore(state["source"])
        hook = cls(Seats.restored(trainer, config, n_folds, source, state["seats"]))
        hook.refilling = bool(state["refilling"])
        hook.free_counts = [int(n) for n in state["free_counts"]]
        return hook

    def state(self):
        """The hook as host data: its seats, its source's stream, its counts."""
        return {"seats": self.seats.state(), "source": self.seats.source.state(),
                "refilling": bool(self.refilling),
                "free_counts": np.asarray(self.free_counts, dtype=np.int64)}

    @property
    def capacity(self):
        """Models per fold in the replica numbering."""
        return self.seats.capacity

    def start(self, status):
        """Only the first population's replicas train at first."""
        K, C, M = self.seats.K, self.capacity, self.seats.M
        status.active[:] = False
        status.active[(np.arange(K)[:, None] * C + np.arange(M)[None, :]).ravel()] = True

    def count_free(self, status):
        """Record the seats without a training model (the epoch just run)."""
        self.free_counts.append(len(self.seats.free_seats(status.active)))

    def after_retire(self, epoch, status, rates, score, kept, out_of_time):
        """After ``epoch``'s retirements: refill the free seats, unless out
        of time; whether the run may compact (refilling is over)."""
        if not self.refilling:
            return True
        if not out_of_time:
            _refill_free_seats(self.seats, status, rates, epoch, score, kept)
        self.refilling = self.seats.can_refill(epoch)
        return False

    def result(self, kept, status, curves, halted, train_time):
        """The :class:`TrainResult` of every model the run trained (see
        :func:`_result`)."""
        K, C = self.seats.K, self.capacity
        loss, score = curves.arrays(K * C)
        per_epoch = lambda a: [a[:, e].reshape(K, C) for e in range(a.shape[1])]  # noqa: E731
        occupancy = 1.0 - np.asarray(self.free_counts, dtype=float) / self.seats.M
        return _result(self.seats, kept, status, per_epoch(loss),
                       per_epoch(score) if score is not None else [], occupancy, halted,
                       train_time)


def _refill_free_seats(seats, status, rates, epoch, score, kept):
    """After ``epoch``, the seats whose models all stopped take new models
    (while the budget lasts): the leaving models' weights go to ``kept``
    first, the newcomers join the stopping rule and the schedules."""
    trainer, K, C = seats.trainer, seats.K, seats.capacity
    free = seats.free_seats(status.active)
    if not free:
        return
    # the leaving models' weights first: their slots are overwritten
    leaving = np.isin(trainer.net.slot_models % C, seats.seat_model[free])
    kept.update(trainer.kept_weights(leaving))
    born = seats.refill(free, epoch, status.active, score) if seats.can_refill(epoch) else []
    if born:
        status.admit(born)
        replicas = (np.arange(K)[:, None] * C + np.asarray(born)[None, :]).ravel()
        rates.admit(replicas, trainer.learning_rates[replicas],
                    [trainer.replica_optimizers[r] for r in replicas], epoch)
        trainer.set_learning_rates(rates.current)  # the newcomers' first epoch


def _own_epochs(rows, start, n_iter, n):
    """Per-epoch values (K, n_models) per global epoch -> (n, K, n_own
    epochs), each model's curve from its own first epoch, NaN-padded."""
    if not rows:
        return np.zeros((n, 0, 0))
    K = rows[0].shape[0]
    width = int(n_iter.max()) if len(n_iter) else 0
    out = np.full((n, K, width), np.nan)
    for e, values in enumerate(rows):
        models = np.flatnonzero((start <= e) & (e < start + n_iter.max(1)))
        models = models[models < values.shape[1]]
        out[models, :, e - start[models]] = values[:, models].T
    return out


def _result(seats, kept, status, loss_rows, score_rows, occupancy, halted, train_time):
    """The :class:`TrainResult` of every model the run trained."""
    K, C = seats.K, seats.capacity
    # refills placed just before an interruption never trained: no rows
    born = np.r_[seats.start_iter, np.zeros(C - seats.n_models, dtype=int)]
    trained = np.flatnonzero(status.n_iter.reshape(K, C).max(0) > born)
    n = max(seats.M, int(trained.max()) + 1 if len(trained) else 0)
    per_model = lambda a: a.reshape(K, C)[:, :n].T.copy()  # noqa: E731
    start = np.asarray(seats.start_iter[:n])
    # the stopping rule counts the run's epochs; a model's own start after its start
    n_iter = np.where(per_model(status.n_iter) > 0, per_model(status.n_iter) - start[:, None], 0)
    best_epoch = None
    if status.best is not None:  # a model's own epochs, as n_iter
        best = per_model(status.best.epoch)
        best_epoch = np.where(best > 0, best - start[:, None], 0)
    loss = _own_epochs(loss_rows, start, n_iter, n)
    scores = _own_epochs(score_rows, start, n_iter, n) if score_rows else None
    if loss.shape[1] == 0:
        loss = np.zeros((n, K, 0))
    return TrainResult(
        coefs=[[kept[k * C + j][0] for j in range(n)] for k in range(K)],
        intercepts=[[kept[k * C + j][1] for j in range(n)] for k in range(K)],
        loss_curves=loss, validation_scores=scores,
        n_iter=n_iter, converged=per_model(status.converged), diverged=per_model(status.diverged),
        pruned=per_model(status.pruned), best_epoch=best_epoch, train_time=train_time,
        halted=halted,
        extra={
            "spec": seats.all_specs().subset(range(n)), "rows": list(seats.rows[:n]),
            "start_iter": start,
            "parent": np.asarray(seats.parent[:n]), "seat": np.asarray(seats.seat[:n]),
            "occupancy": occupancy, "n_seats": seats.M,
            "rejected": seats.rejected,
        },
    )
