"""Checks every per-model optimizer's tests make (``test_amsgrad.py``, ``test_adamw.py``)."""

import numpy as np

from skpmlp._engine import train_population


def assert_kernel_equals_torch(spec, config, X, y):
    """The native kernel trains ``spec`` as the torch path does, on two
    overlapping folds: every weight to 1e-12, the loss curves to 1e-12
    (``config(backend)`` gives each path's ``TrainConfig``)."""
    folds = [(np.arange(60), np.arange(60, 90)), (np.arange(30, 90), np.arange(30))]
    reference = train_population(spec, config("torch"), X, y, folds)
    native = train_population(spec, config("native"), X, y, folds)
    for k in range(2):
        for ours, theirs in zip(native.coefs[k], reference.coefs[k]):
            for a, b in zip(ours, theirs):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(native.loss_curves, reference.loss_curves, rtol=1e-12)
