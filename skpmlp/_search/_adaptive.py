"""Adaptive searches: what refills a freed slot, and the rows they add.

With ``refill`` (``"sample"`` or ``"perturb"``) the engine keeps the fused
network full (see ``skpmlp/_engine/_minibatch/_refill.py``); this module is the search
layer's side of it:

- :class:`SpaceRefills` is the engine's refill source: it draws new
  configurations from the :class:`~skpmlp._search._space.SearchSpace` and perturbs
  a parent's continuous hyperparameters (population-based training);
- :func:`adaptive_population` and :func:`adaptive_columns` turn the models
  the run trained into rows of ``cv_results_`` (first population, then
  refills in order) with their ``parent``, ``start_iter`` and per-epoch
  hyperparameter schedules.
"""

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from .._core._params import PARAMS
from .._core._values import uses_early_stopping
from .._engine import PopulationSpec
from ._population import Population, model_seed
from ._space import PARAMETERS, is_distribution

#: Continuous hyperparameters ``refill="perturb"`` changes (where searched),
#: and how: a learning rate or penalty is multiplied by the factor; a
#: momentum or beta has its distance to 1 multiplied, so it stays below 1.
PERTURBED = {
    "learning_rate_init": "scale",
    "alpha": "scale",
    "momentum": "complement",
    "beta_1": "complement",
    "beta_2": "complement",
}

#: Factors of a perturbation, drawn with equal probability (as Ray Tune's
#: population-based training).
PERTURB_FACTORS = (0.8, 1.25)

#: Probability that a perturbed hyperparameter is drawn afresh from the
#: search space instead of multiplied.
RESAMPLE_PROBABILITY = 0.2


def varied(space, name):
    """Whether the space searches ``name``: a distribution or several
    candidates in some subspace."""
    return any(is_distribution(s[name]) or len(s[name]) > 1 for s in space.subspaces)


class SpaceRefills:
    """The refill source of an adaptive search (the engine's
    :class:`~skpmlp._engine._minibatch._refill.RefillSource`).

    Parameters
    ----------
    space : SearchSpace
    population : Population
        The first population (its rows are the records of its models).
    seed : int
        The search's seed: refills are drawn reproducibly from it.
    """

    def __init__(self, space, population, seed):
        self.space, self.seed = space, int(seed)
        self.shown = population.shown
        # a row: the model's parameters, and those its param_grid subspace
        # left to the estimator (masked in cv_results_)
        unset = list(population.unset) or [frozenset()] * population.n_models
        self.initial_rows = [(dict(p), names) for p, names in zip(population.params, unset)]
        # a stream of its own: the first population's draws are unchanged
        stream = np.random.SeedSequence([self.seed, 16]).generate_state(1)[0]
        self._rng = check_random_state(stream)
        self._draws = 0
        self.perturbed = tuple(name for name in PERTURBED if varied(space, name))

    def state(self):
        """Its random stream and draw count, as host data (a checkpoint's)."""
        _, keys, position, has_gauss, gauss = self._rng.get_state()
        return {"keys": np.asarray(keys, dtype=np.uint32).copy(), "position": int(position),
                "has_gauss": int(has_gauss), "gauss": float(gauss), "draws": int(self._draws)}

    def restore(self, state):
        """Go on drawing from :meth:`state`."""
        self._rng.set_state(("MT19937", np.asarray(state["keys"], dtype=np.uint32),
                             int(state["position"]), int(state["has_gauss"]),
                             float(state["gauss"])))
        self._draws = int(state["draws"])

    @staticmethod
    def row_state(row):
        """A row, ``(params, names left unset)``, as host data."""
        params, unset = row
        return {"params": {name: list(value) if isinstance(value, tuple) else value
                           for name, value in params.items()},
                "unset": sorted(unset)}

    @staticmethod
    def row_from_state(state):
        """The row saved by :meth:`row_state` (tuples, such as layer sizes, back)."""
        params = {name: tuple(value) if isinstance(value, list) else value
                  for name, value in state["params"].items()}
        return params, frozenset(state["unset"])

    def _spec(self, row):
        """The engine's spec of one new model; its initial weights have a
        seed of their own (the draw's index), so two refills of the same
        configuration are two models."""
        self._draws += 1
        spec = Population([row], np.zeros(1, dtype=int), self.shown).spec(self.seed)
        arch, act = spec.hidden_layer_sizes[0], spec.activations[0]
        spec.init_seeds[0] = (*model_seed(self.seed, arch, act, 0), self._draws)
        return spec

    def sample(self):
        """A configuration drawn from the space: ``(spec, row)``."""
        configurations, unset = self.space.draw_unset(1, random_state=self._rng)
        return self._spec(configurations[0]), (configurations[0], unset[0])

    def perturb(self, row):
        """A copy of ``row`` with every searched continuous hyperparameter
        multiplied by a factor of :data:`PERTURB_FACTORS` (a momentum or
        beta: its distance to 1), or drawn afresh with probability
        :data:`RESAMPLE_PROBABILITY`: ``(spec, row)``."""
        row, unset = row
        child = dict(row)
        fresh = None
        for name in self.perturbed:
            value = row[name]
            if self._rng.uniform() < RESAMPLE_PROBABILITY:
                if fresh is None:
                    fresh = self.space.draw(1, random_state=self._rng)[0]
                value = fresh[name]
            else:
                factor = PERTURB_FACTORS[self._rng.randint(len(PERTURB_FACTORS))]
                if PERTURBED[name] == "scale":
                    value = value * factor
                else:
                    value = max(0.0, 1.0 - (1.0 - value) * factor)
            child[name] = PARAMETERS[name].check(value, name)
        # a perturbed value is the model's own: no longer left unset
        return self._spec(child), (child, unset - set(self.perturbed))


def adaptive_population(result, first):
    """The :class:`Population` of every model an adaptive run trained: the
    first population's rows, then the refills' in order (repeat 0)."""
    rows = result.extra["rows"]
    repeats = np.r_[first.repeats, np.zeros(len(rows) - first.n_models, dtype=int)]
    unset = tuple(names for _, names in rows) if any(names for _, names in rows) else ()
    return Population(params=[dict(params) for params, _ in rows], repeats=repeats.astype(int),
                      shown=first.shown, unset=unset)


def hyperparameter_schedules(population, parent, start_iter, n_iter, names):
    """Every row's per-epoch hyperparameters along its lineage.

    Row ``i`` descends from its ``parent`` (-1: none) from epoch
    ``start_iter[i]`` of the run on; its schedule covers the run's epochs
    from its oldest ancestor's start to its own last epoch, each epoch with
    the hyperparameters of the model that trained it.

    Returns
    -------
    list of dict
        ``{"iter": ndarray of the run's epochs (0-based), name: ndarray of
        the values}`` for ``names``.
    """
    schedules = []
    for i in range(population.n_models):
        lineage = [i]
        while parent[lineage[-1]] >= 0:
            lineage.append(int(parent[lineage[-1]]))
        lineage.reverse()
        end = int(start_iter[i] + n_iter[i])
        bounds = [int(start_iter[m]) for m in lineage[1:]] + [end]
        epochs, owner = [], []
        begin = int(start_iter[lineage[0]])
        for model, stop in zip(lineage, bounds):
            epochs.append(np.arange(begin, stop))
            owner += [model] * (stop - begin)
            begin = stop
        schedule = {"iter": np.concatenate(epochs).astype(int)}
        for name in names:
            schedule[name] = np.array([population.params[m][name] for m in owner], dtype=float)
        schedules.append(schedule)
    return schedules


def adaptive_columns(result):
    """The ``parent``, ``start_iter`` and ``slot`` (the fused network's slot,
    fold replicas together, that trained the row) columns of
    ``cv_results_``."""
    return {
        "parent": np.asarray(result.extra["parent"], dtype=int),
        "start_iter": np.asarray(result.extra["start_iter"], dtype=int),
        "slot": np.asarray(result.extra["seat"], dtype=int),
    }


@dataclass(frozen=True)
class AdaptiveRows:
    """What an adaptive run trained, as the search layer's rows.

    Attributes
    ----------
    population : Population
        Every model trained: the first population, then the refills.
    spec : PopulationSpec
        Their engine description.
    schedules : list of dict
        Every row's hyperparameter schedule (``hyperparameter_schedules_``).
    columns : dict
        The ``parent``, ``start_iter`` and ``slot`` columns of ``cv_results_``.
    """

    population: Population
    spec: PopulationSpec
    schedules: list
    columns: dict

    @classmethod
    def of(cls, result, first, source):
        """The rows of ``result``, an adaptive run of ``first`` refilled
        from ``source``."""
        population = adaptive_population(result, first)
        schedules = hyperparameter_schedules(
            population, result.extra["parent"], result.extra["start_iter"],
            result.n_iter.max(axis=1), source.perturbed,
        )
        return cls(population, result.extra["spec"], schedules, adaptive_columns(result))


def check_refill(estimator, n_models, space):
    """Refuse ``refill`` and ``max_models`` settings that cannot work.

    Raises
    ------
    ValueError
        If ``refill`` is set without ``pruning`` or ``early_stopping``
        (nothing frees a slot early), with ``n_jobs`` (an adaptive search is
        one fused run), with a searched ``batch_size`` or ``input_transform``
        (models of different batch sizes or input transforms train as
        separate runs) or a searched ``diagonal_scaling`` (scaled and
        unscaled models never share a group), or with ``max_models`` below
        the first population's ``n_models`` models; or if ``max_models`` is
        set without ``refill``.
    """
    refill, max_models = estimator.refill, estimator.max_models
    if refill is None:
        if max_models is not None:
            raise ValueError(
                f"max_models={max_models} caps the models an adaptive search trains in all; it "
                f"needs refill='sample' or 'perturb' (without refill, n_models is the budget)."
            )
        return
    if estimator.pruning is None and not uses_early_stopping(estimator):
        raise ValueError(
            f"refill={refill!r} fills the slots that pruning='halving' or early_stopping=True "
            f"free during the run; set one of them (or refill=None)."
        )
    if estimator.n_jobs is not None:
        raise ValueError(
            f"refill={refill!r} trains the whole search as one fused run, which refills its own "
            f"slots; it cannot be split into n_jobs={estimator.n_jobs!r} shards. Set n_jobs=None."
        )
    if "batch_size" in space.subspaces[0] and varied(space, "batch_size"):
        raise ValueError(
            f"refill={refill!r} trains the whole search as one fused run; a searched batch_size "
            f"trains one run per batch size. Give batch_size one value, or set refill=None."
        )
    inputs = [subspace["input_transform"] for subspace in space.subspaces]
    if any(is_distribution(v) for v in inputs) or len({v for vs in inputs for v in vs}) > 1:
        value = estimator.input_transform
        default = PARAMS["input_transform"].default_in("search")
        hint = (f" (the default searches {', '.join(default)}: pass "
                f"input_transform={default[0]!r})" if type(value) is tuple and value == default
                else "")
        raise ValueError(
            f"refill={refill!r} trains the whole search as one fused run; a searched "
            f"input_transform trains one run per value. Give input_transform one value{hint}, or "
            f"set refill=None."
        )
    scaling = [subspace.get("diagonal_scaling", [False]) for subspace in space.subspaces]
    if any(is_distribution(v) for v in scaling) or len({bool(v) for vs in scaling
                                                        for v in vs}) > 1:
        # scaled and unscaled models never share a group: a freed slot could
        # not take a draw of the other kind
        raise ValueError(
            f"refill={refill!r} refills a slot with a model of its group; scaled and unscaled "
            f"models (a searched diagonal_scaling) never share one. Give diagonal_scaling one "
            f"value, or set refill=None."
        )
    if max_models is not None and max_models < n_models:
        raise ValueError(
            f"max_models={max_models} is less than the {n_models} models of the first population "
            f"(the fused network's slots); set max_models >= {n_models} or None."
        )
