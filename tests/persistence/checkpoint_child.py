"""A search with a checkpoint in a process of its own, for the tests that kill it.

``python tests/persistence/checkpoint_child.py CONFIG.json`` reads ``params`` (the
estimator's; ``hidden_layer_sizes`` as lists), ``backend`` ("native" or
"torch"), ``data`` (:func:`sklearn.datasets.make_classification`'s
arguments), ``out`` (where :func:`fitted_arrays` go, as .npz) and
optionally ``epochs_per_call`` (the native kernel's epochs per call at most:
1 gives a checkpoint after every epoch) from CONFIG, fits, and writes
``out`` once the fit returned.
"""

import contextlib
import dataclasses
import json
import sys
import warnings

import numpy as np


def fitted_arrays(search):
    """Every array of a fitted search that an uninterrupted fit fixes:
    ``cv_results_`` but the times, the curves, the epochs, every model's
    weights on every fold and the best model's, by name."""
    arrays = {}
    for name, value in search.cv_results_.items():
        if "time" in name or name.startswith("param") or not isinstance(value, np.ndarray):
            continue
        arrays[f"cv_results_.{name}"] = np.asarray(value)
    for name in ("loss_curves_", "validation_scores_per_model_", "n_iter_per_model_",
                 "validation_loss_", "best_epoch_per_model_"):
        if getattr(search, name, None) is not None:
            arrays[name] = np.asarray(getattr(search, name))
    for name in ("_coefs", "_intercepts"):
        arrays[name] = np.concatenate([np.ravel(w) for fold in getattr(search, name)
                                       for model in fold for w in model])
    if hasattr(search, "coefs_"):
        arrays["coefs_"] = np.concatenate([np.ravel(w) for w in search.coefs_])
    return arrays


def data(config):
    """The child's data set."""
    from sklearn.datasets import make_classification

    return make_classification(**config)


@contextlib.contextmanager
def training_backend(backend):
    """Every search fitted in the block trains on ``backend``."""
    import skpmlp._search._plan

    original = skpmlp._search._plan.train_config
    skpmlp._search._plan.train_config = lambda *a, **kw: dataclasses.replace(
        original(*a, **kw), backend=backend
    )
    try:
        yield
    finally:
        skpmlp._search._plan.train_config = original


def estimator(params):
    """The search of ``params`` (as JSON holds them)."""
    from skpmlp import ParallelMLPClassifier

    params = dict(params)
    if "hidden_layer_sizes" in params:
        params["hidden_layer_sizes"] = [tuple(h) for h in params["hidden_layer_sizes"]]
    return ParallelMLPClassifier(**params)


def main(config_path):
    with open(config_path) as handle:
        config = json.load(handle)
    X, y = data(config["data"])
    if "epochs_per_call" in config:
        from skpmlp._engine._minibatch import _epoch_calls

        _epoch_calls.MAX_EPOCHS = config["epochs_per_call"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with training_backend(config["backend"]):
            search = estimator(config["params"]).fit(X, y)
    np.savez(config["out"], **fitted_arrays(search))


if __name__ == "__main__":
    main(sys.argv[1])
