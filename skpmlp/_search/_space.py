"""The search space: the one place where a population is validated, drawn and described.

A search space is a list of *subspaces*, each a dict mapping every
searchable parameter to its candidates: a list of valid values, or a
distribution (any object with ``rvs(random_state=...)``, as
:class:`~sklearn.model_selection.RandomizedSearchCV` takes, e.g.
``scipy.stats.loguniform(1e-4, 1e-1)``). One subspace is a plain grid; several
are a conditional space, as ``GridSearchCV(param_grid=[{...}, {...}])``.

Drawing a population from it (:meth:`SearchSpace.draw`) is
scikit-learn's own code: :class:`~sklearn.model_selection.ParameterGrid`
for the whole cross product, :class:`~sklearn.model_selection.ParameterSampler`
for a budget of ``n_models`` configurations (without replacement when every
candidate is a list). Every drawn value is checked as the lists are, so a
distribution that draws a negative learning rate fails with the
parameter's name.

Which parameters are searchable, and how each reads its candidates from a
list or scalar and checks one drawn value, comes from the parameter table
(:mod:`skpmlp._core._params`).
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils import check_random_state

from .._core._checks import as_list
from .._core._params import MODEL_PARAMS, PARAMS, SEARCHED_DEFAULTS, SEARCHED_PARAMS
from ._population import Population

__all__ = ["LayerSizesDistribution", "SearchSpace", "build_population", "is_distribution"]


def is_distribution(value):
    """Whether ``value`` is a distribution (it has ``rvs``), as scikit-learn's
    :class:`~sklearn.model_selection.ParameterSampler` tells them from lists."""
    return hasattr(value, "rvs")


#: Searchable parameters, in ``cv_results_`` column order: how each reads
#: its candidates and checks its draws (the parameter table's rules).
PARAMETERS = {name: PARAMS[name].values for name in SEARCHED_PARAMS}


# ------------------------------------------------------------------- space
def searchable_params(task=None):
    """The searchable parameters of the estimators of ``task``
    ("classifier" or "regressor"; None: of either), in :data:`PARAMETERS`
    order."""
    return [name for name in PARAMETERS if task is None or PARAMS[name].task in ("both", task)]


def _subspace(override, base, where, task=None):
    """One subspace: the ``base`` values (one per searchable parameter), those
    of a ``param_grid`` dict ``override`` (``param_grid{where}``) instead,
    every list read into its valid candidates.

    Raises
    ------
    ValueError, TypeError
        As :meth:`SearchSpace.from_params` says.
    """
    if not isinstance(override, dict):
        raise ValueError(f"param_grid{where} must be a dict; got {override!r}.")
    searchable = searchable_params(task)
    unknown = sorted(set(override) - set(searchable), key=str)
    if unknown:
        raise ValueError(
            f"param_grid{where} has keys {unknown} that cannot be searched; searchable "
            f"parameters are {searchable} (set the others on the estimator)."
        )
    # the lists are checked as GridSearchCV checks its param_grid (a
    # single value or a string is refused, not read as one value)
    ParameterGrid({k: v for k, v in override.items() if not is_distribution(v)})
    subspace = {}
    for name, parameter in PARAMETERS.items():
        value = override.get(name, base[name])
        label = f"param_grid{where}[{name!r}]" if name in override else name
        subspace[name] = value if is_distribution(value) else parameter.candidates(value, label)
    return subspace



#: The key that marks a configuration with its subspace (see ``draw_unset``).
_SUBSPACE = "_subspace"


class SearchSpace:
    """A grid, sampled or conditional space of model configurations.

    Parameters
    ----------
    subspaces : list of dict
        Each maps every name of :data:`PARAMETERS` to a list of valid
        candidates or to a distribution (an object with ``rvs``). Build it
        with :meth:`from_params`, which validates.
    searched : tuple of str, default=MODEL_PARAMS
        The parameters ``cv_results_`` shows (``Population.shown``): the
        model parameters, and the optimizer parameters that are searched.
    unset : list of frozenset, default=None
        Per subspace, the parameters it leaves to the estimator's one value
        while another subspace sets them: the entries GridSearchCV leaves
        masked in ``param_*``. None: none.
    """

    def __init__(self, subspaces, searched=MODEL_PARAMS, unset=None):
        assert subspaces and all(set(s) == set(PARAMETERS) for s in subspaces)
        self.subspaces = subspaces
        self.searched = tuple(name for name in PARAMETERS if name in searched)
        self.unset = list(unset) if unset is not None else [frozenset()] * len(subspaces)

    @classmethod
    def from_params(cls, params, param_grid=None, task=None):
        """The space of an estimator's parameters, validated.

        Parameters
        ----------
        params : dict
            A value of every searchable parameter (e.g. the estimator's
            ``get_params()``): a single value, a list (a tuple) of values, or a
            distribution. Optimizer parameters left out take scikit-learn's
            defaults.
        param_grid : dict, list of dict or None, default=None
            Subspaces, as ``GridSearchCV.param_grid``: each dict overrides
            ``params`` for some searchable parameters; the others keep their
            value from ``params``. None is one subspace, ``params`` itself.
        task : {"classifier", "regressor"}, optional
            The estimators' task: ``param_grid`` may not name another
            task's parameters (a regressor's ``label_smoothing``).

        Raises
        ------
        ValueError
            On a ``param_grid`` that is not a dict or a non-empty list of
            dicts, a key that is not searchable, an empty list or an invalid
            candidate (the message names the parameter and the subspace).
        TypeError
            On a ``param_grid`` entry that is neither a sequence, an array
            nor a distribution (a single value or a string must be wrapped
            in a list, as in GridSearchCV).
        """
        base = {name: params.get(name, SEARCHED_DEFAULTS.get(name)) for name in PARAMETERS}
        # a missing model parameter is an error, as it always was
        base.update({name: params[name] for name in MODEL_PARAMS})
        if param_grid is None:
            overrides = [{}]
        elif isinstance(param_grid, dict):
            overrides = [param_grid]
        elif isinstance(param_grid, (list, tuple)) and param_grid:
            overrides = list(param_grid)
        else:
            raise ValueError(
                f"param_grid must be a dict or a non-empty list of dicts, as GridSearchCV's "
                f"param_grid; got {param_grid!r}."
            )
        numbered = isinstance(param_grid, (list, tuple))  # errors name param_grid[i]
        subspaces = [
            _subspace(override, base, f"[{i}]" if numbered else "", task)
            for i, override in enumerate(overrides)
        ]
        # what cv_results_ shows: the model parameters always, an optimizer
        # parameter only where searched (a distribution, several candidates,
        # or named in param_grid)
        searched = set(MODEL_PARAMS) | {
            name for name in PARAMETERS
            if any(name in o for o in overrides)
            or any(is_distribution(s[name]) or len(s[name]) > 1 for s in subspaces)
        }
        # a subspace that leaves out a parameter another one sets trains with
        # the estimator's value: masked in param_* where that is one value
        # (GridSearchCV's candidate did not set it); a list it leaves out is
        # searched there, so shown
        named = {name for o in overrides for name in o}
        unset = [
            frozenset(
                name for name in named
                if name not in o and not is_distribution(s[name]) and len(s[name]) == 1
            )
            for o, s in zip(overrides, subspaces)
        ]
        return cls(subspaces, searched, unset)

    @property
    def is_sampled(self):
        """Whether some candidates are distributions (the space has no finite grid)."""
        return any(is_distribution(v) for s in self.subspaces for v in s.values())

    @property
    def n_configurations(self):
        """Configurations of the grid (their sum over subspaces), or None if sampled."""
        if self.is_sampled:
            return None
        return sum(int(np.prod([len(v) for v in s.values()])) for s in self.subspaces)

    def draw(self, n_models=None, random_state=None):
        """Draw configurations: the whole grid, or ``n_models`` of them.

        Parameters
        ----------
        n_models : int or None, default=None
            None gives every configuration of the grid (in
            :class:`~sklearn.model_selection.ParameterGrid` order). An int
            draws that many with
            :class:`~sklearn.model_selection.ParameterSampler`: without
            replacement when every candidate is a list (at most the whole
            grid, with a warning), else each configuration picks a subspace
            at random and draws each parameter from its list or distribution.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.

        Returns
        -------
        list of dict
            One dict per configuration, a valid value per searchable
            parameter, in :data:`PARAMETERS` order.

        Raises
        ------
        ValueError
            If ``n_models`` is None and the space holds distributions, or a
            distribution draws an invalid value.
        """
        drawn = self._draw(self.subspaces, n_models, random_state)
        return [self._checked(config) for config in drawn]

    def draw_unset(self, n_models=None, random_state=None):
        """:meth:`draw`'s configurations, and what each left unset.

        Returns
        -------
        configurations : list of dict
            The same as :meth:`draw`'s.
        unset : list of frozenset
            The :attr:`unset` of each configuration's subspace.
        """
        # each subspace carries its index as a one-valued parameter, which
        # takes no randomness: the draws are those of draw()
        marked = [{**subspace, _SUBSPACE: [i]} for i, subspace in enumerate(self.subspaces)]
        drawn = self._draw(marked, n_models, random_state)
        unset = [self.unset[config[_SUBSPACE]] for config in drawn]
        return [self._checked(config) for config in drawn], unset

    def _draw(self, subspaces, n_models, random_state):
        """The configurations of ``subspaces`` (this space's, possibly
        marked) that :meth:`draw` describes, unchecked."""
        if n_models is None:
            if self.is_sampled:
                raise ValueError(
                    f"n_models must be set when a searched parameter is a distribution "
                    f"({self._distribution_names()}): it is the number of configurations to "
                    f"draw."
                )
            drawn = ParameterGrid(subspaces)
        else:
            size = self.n_configurations
            if size is not None and n_models > size:
                warnings.warn(
                    f"n_models={n_models} is more than the {size} configurations of the grid; "
                    f"training each of them once.",
                    UserWarning,
                    stacklevel=4,
                )
                n_models = size
            drawn = ParameterSampler(subspaces, n_models,
                                     random_state=check_random_state(random_state))
        return list(drawn)

    def _checked(self, config):
        # list candidates were checked up front; this checks draws (and
        # makes every value a plain Python one)
        return {name: values.check(config[name], name) for name, values in PARAMETERS.items()}

    def _distribution_names(self):
        names = [n for n in PARAMETERS if any(is_distribution(s[n]) for s in self.subspaces)]
        return ", ".join(names)

    def __repr__(self):
        def describe(value):
            return repr(value) if is_distribution(value) else repr(list(value))

        parts = [
            "{" + ", ".join(f"{name!r}: {describe(v)}" for name, v in s.items()) + "}"
            for s in self.subspaces
        ]
        return f"SearchSpace([{', '.join(parts)}])"


def build_population(hidden_layer_sizes, activation, learning_rate_init, alpha, n_repeats, *,
                     param_grid=None, n_models=None, random_state=None):
    """Validate the searched parameters, draw the configurations and expand
    them into a population of ``n_repeats`` models each.

    The grid (``n_models=None``) keeps the order of the previous
    list-only populations: :class:`~sklearn.model_selection.ParameterGrid`'s,
    repeats innermost.

    Raises
    ------
    ValueError
        On an empty list, an unknown activation (the
        message lists the allowed ones), a non-positive width or learning
        rate, a negative alpha (listed or drawn), or distributions without
        ``n_models``.
    """
    space = SearchSpace.from_params(
        {"hidden_layer_sizes": hidden_layer_sizes, "activation": activation,
         "learning_rate_init": learning_rate_init, "alpha": alpha},
        param_grid,
    )
    return Population.from_configurations(space.draw(n_models, random_state), n_repeats,
                                          space.searched)


# ----------------------------------------------------------- architectures
def _check_candidates(value, name, *, low):
    """A list of ints >= ``low``, or a distribution; for LayerSizesDistribution."""
    if is_distribution(value):
        return value
    values = as_list(value, name)
    for v in values:
        if not isinstance(v, Integral) or isinstance(v, bool) or v < low:
            raise ValueError(
                f"{name} must hold ints >= {low} or be a distribution; got {value!r}."
            )
    return [int(v) for v in values]


def _draw_int(candidates, rng, name, low):
    if not is_distribution(candidates):
        return candidates[rng.randint(len(candidates))]
    value = candidates.rvs(random_state=rng)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if not isinstance(value, Real) or isinstance(value, bool) or not np.isfinite(value):
        raise ValueError(f"{name} drew {value!r} from {candidates!r}; it must draw numbers.")
    drawn = int(round(float(value)))
    if drawn < low:
        raise ValueError(
            f"{name} drew {value!r} from {candidates!r}; it must draw numbers >= {low}."
        )
    return drawn


class LayerSizesDistribution:
    """Random architectures: a depth, then a width for each hidden layer.

    A distribution over ``hidden_layer_sizes`` for a sampled search
    (``n_models``), as ``scipy.stats`` distributions are for the other
    parameters: ``rvs`` draws a depth from ``depths``, then each hidden
    layer's width independently from ``widths``.

    Parameters
    ----------
    depths : int, list of int or distribution, default=(1, 2, 3)
        Numbers of hidden layers, drawn uniformly from a list, or from a
        distribution with ``rvs`` (e.g. ``scipy.stats.randint(1, 4)``).
    widths : list of int or distribution, default=(16, 32, 64, 128, 256)
        Widths of each hidden layer, drawn uniformly from a list, or from a
        distribution. Float draws are rounded to the nearest int, so
        ``scipy.stats.loguniform(16, 512)`` gives log-uniform widths;
        ``scipy.stats.randint(16, 513)`` uniform ones.

    See Also
    --------
    sklearn.model_selection.RandomizedSearchCV : Takes the same
        distributions in ``param_distributions``.

    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from skpmlp import LayerSizesDistribution
    >>> sizes = LayerSizesDistribution(depths=[1, 2], widths=loguniform(8, 256))
    >>> [sizes.rvs(random_state=seed) for seed in range(3)]
    [(62,), (254, 203), (15,)]
    """

    def __init__(self, depths=(1, 2, 3), widths=(16, 32, 64, 128, 256)):
        self.depths = _check_candidates(depths, "depths", low=1)
        self.widths = _check_candidates(widths, "widths", low=1)

    def rvs(self, size=None, random_state=None):
        """Draw architectures.

        Parameters
        ----------
        size : int or None, default=None
            None draws one architecture; an int a list of that many.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.

        Returns
        -------
        tuple of int, or list of tuple of int
            ``hidden_layer_sizes`` of one model, or of ``size`` models.
        """
        rng = check_random_state(random_state)
        if size is not None:
            return [self.rvs(random_state=rng) for _ in range(int(size))]
        depth = _draw_int(self.depths, rng, "depths", 1)
        return tuple(_draw_int(self.widths, rng, "widths", 1) for _ in range(depth))

    def __repr__(self):
        return f"LayerSizesDistribution(depths={self.depths!r}, widths={self.widths!r})"
