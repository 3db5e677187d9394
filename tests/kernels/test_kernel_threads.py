"""The native kernels' results do not depend on how many threads train.

A call's threads take its models in runs of consecutive ones
(``skpmlp/_kernels/work_queue.h``); which thread trains which model must
change nothing, and every model must be trained exactly once: a search
on 1, 2, 3 and 5 threads gives the same numbers bit for bit, with the
minibatch kernel and the L-BFGS one, in float32 and float64.
"""

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification

from skpmlp import ParallelMLPClassifier, _kernels

pytestmark = pytest.mark.skipif(not _kernels.kernel_available(), reason="no C++ compiler for the native kernel")


@pytest.fixture
def set_threads():
    """``torch.set_num_threads``, the count the kernels' calls take,
    restored after the test."""
    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("solver", ["adam", "lbfgs"])
def test_a_search_is_the_same_on_any_number_of_threads(set_threads, solver, dtype):
    X, y = make_classification(150, 6, n_informative=4, n_classes=3, random_state=0)
    fits = {}
    for n_threads in (1, 2, 3, 5):
        set_threads(n_threads)
        # 3 architectures x 2 activations x 2 alphas, on 3 folds and the
        # default space's input transforms and repeats: dozens of models of
        # several sizes a call, more than the threads' runs
        fits[n_threads] = ParallelMLPClassifier(
            hidden_layer_sizes=[(3,), (16,), (8, 5)], activation=("relu", "tanh"), alpha=(1e-4, 1e-1),
            solver=solver, max_iter=12, cv=3, dtype=dtype, ensemble="best", random_state=0,
        ).fit(X, y)
    one = fits[1]
    assert np.isfinite(one.cv_results_["mean_test_score"]).all()
    for n_threads, other in fits.items():
        for column in ("mean_test_score", "split0_test_score", "split2_test_score", "n_iter"):
            np.testing.assert_array_equal(other.cv_results_[column], one.cv_results_[column],
                                          err_msg=f"{column} on {n_threads} threads")
        np.testing.assert_array_equal(other.predict_proba(X), one.predict_proba(X),
                                      err_msg=f"the best model on {n_threads} threads")
