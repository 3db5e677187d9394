"""Initial weights of one model, from its own seed only.

A model's start must not depend on which population it is trained in, so
every model draws its weights from its own generator, seeded by entropy the
search layer derives from the random state, the model's hyperparameters and
its repeat index. The scheme is scikit-learn MLP's Glorot-uniform one.
"""

import numpy as np

from ._activations import INIT_FACTORS


def initial_weights(hidden_layer_sizes, activation, seed, n_features, n_outputs):
    """Draw the initial weights of one MLP.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int
    activation : str
        Canonical activation name (sets the Glorot factor).
    seed : tuple of int
        Entropy for :func:`numpy.random.default_rng`.
    n_features, n_outputs : int

    Returns
    -------
    coefs : list of ndarray of shape (fan_in, fan_out)
    intercepts : list of ndarray of shape (fan_out,)
    """
    rng = np.random.default_rng(list(seed))
    sizes = [n_features, *hidden_layer_sizes, n_outputs]
    factor = INIT_FACTORS[activation]
    coefs, intercepts = [], []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = np.sqrt(factor / (fan_in + fan_out))
        coefs.append(rng.uniform(-bound, bound, (fan_in, fan_out)))
        intercepts.append(rng.uniform(-bound, bound, fan_out))
    return coefs, intercepts


def population_initial_weights(spec, n_features, n_outputs):
    """Initial ``(coefs, intercepts)`` of every model of ``spec``, each
    drawn from the model's own seed (or the spec's ``initial_weights``,
    copied)."""
    if spec.initial_weights is not None:
        return (
            [[np.array(c, dtype=np.float64) for c in coefs] for coefs, _ in spec.initial_weights],
            [
                [np.array(b, dtype=np.float64) for b in intercepts]
                for _, intercepts in spec.initial_weights
            ],
        )
    # a model's fold replicas (and models that differ only in what the
    # start does not depend on) share their draw: drawn once, copied for
    # the others (seeding a generator was most of a draw's cost); the first
    # takes the drawn arrays themselves (copying every draw was 1 ms of the
    # 5.7 that 240 distinct models took)
    draws, coefs, intercepts = {}, [], []
    for arch, act, seed in zip(spec.hidden_layer_sizes, spec.activations, spec.init_seeds):
        key = (tuple(arch), act, tuple(seed))
        if key in draws:
            model_coefs, model_intercepts = draws[key]
            model_coefs = [c.copy() for c in model_coefs]
            model_intercepts = [b.copy() for b in model_intercepts]
        else:
            model_coefs, model_intercepts = draws[key] = initial_weights(
                arch, act, seed, n_features, n_outputs)
        coefs.append(model_coefs)
        intercepts.append(model_intercepts)
    return coefs, intercepts

