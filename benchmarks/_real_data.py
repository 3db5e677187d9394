"""The real data sets, split and grid that the search-quality benchmarks share.

Five data sets that ship with scikit-learn (no download): breast_cancer,
digits, iris and wine (classification) and diabetes (regression). Each is
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

import sklearn
import torch
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine
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

# name -> (loader, task)
DATASETS = {
    "breast_cancer": (load_breast_cancer, "classification"),
    "digits": (load_digits, "classification"),
    "iris": (load_iris, "classification"),
    "wine": (load_wine, "classification"),
    "diabetes": (load_diabetes, "regression"),
}
QUICK = ["breast_cancer", "diabetes"]


def standardised(X_train, X_test, y_train, y_test, *, regression):
    """The features, and a regression target, standardised with scalers
    fitted on the training part only (R^2 is unchanged by the target's)."""
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    if regression:
        target = StandardScaler().fit(y_train[:, None])
        y_train = target.transform(y_train[:, None]).ravel()
        y_test = target.transform(y_test[:, None]).ravel()
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
