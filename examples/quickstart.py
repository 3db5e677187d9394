"""
Quickstart: a whole MLP search on the digits data in one fused run
==================================================================

Train every combination of widths, depths, activations, learning rates and
L2 penalties on scikit-learn's bundled digits data at once, print a
leaderboard of the best models, and compare the best model's test accuracy
and wall time with a default ``MLPClassifier``.
"""

# %%
import time
import warnings

import pandas as pd
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import MinMaxScaler

from skpmlp import ParallelMLPClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
scaler = MinMaxScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

# %%
# The search space: 6 architectures x 4 activations x 3 learning rates x
# 2 L2 penalties = 144 models, trained together as one network.
search = ParallelMLPClassifier(
    hidden_layer_sizes=[(32,), (64,), (128,), (256,), (64, 64), (128, 64)],
    activation=("relu", "tanh", "logistic", "elu"),
    learning_rate_init=(0.001, 0.003, 0.01),
    alpha=(1e-4, 1e-2),
    max_iter=100,
    early_stopping=True,
    random_state=0,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = time.perf_counter()
    search.fit(X_train, y_train)
    search_seconds = time.perf_counter() - start

# %%
# A leaderboard of the top models, by validation accuracy.
results = pd.DataFrame(search.cv_results_)
columns = ["param_hidden_layer_sizes", "param_activation", "param_learning_rate_init",
           "param_alpha", "mean_test_score", "rank_test_score"]
print(f"Trained {search.n_models_} models in {search_seconds:.1f} s")
print(results.sort_values("rank_test_score")[columns].head(10).to_string(index=False))

# %%
# The best model against scikit-learn's default MLPClassifier.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = time.perf_counter()
    baseline = MLPClassifier(random_state=0).fit(X_train, y_train)
    baseline_seconds = time.perf_counter() - start

print()
print(f"{'model':<40} {'test accuracy':>13} {'wall time':>10}")
print(f"{'skpmlp best of ' + str(search.n_models_) + ' models':<40} "
      f"{search.score(X_test, y_test):>13.4f} {search_seconds:>9.1f}s")
print(f"{'MLPClassifier() (one model)':<40} "
      f"{baseline.score(X_test, y_test):>13.4f} {baseline_seconds:>9.1f}s")
print(f"best configuration: {search.best_params_}")
