"""
Quickstart: one fused search against GridSearchCV and a default MLP
===================================================================

The same grid of MLP hyperparameters, searched on scikit-learn's bundled
digits data (it ships with scikit-learn: nothing is downloaded), three ways:

1. skpmlp's :class:`~skpmlp.ParallelMLPClassifier`, which trains every model
   of the grid as one fused network: first with a holdout (``cv=None``),
   then with ``cv=5``, the selection GridSearchCV uses (and what the
   default ``cv="auto"`` chooses for these 1,347 training rows);
2. ``GridSearchCV(MLPClassifier(), grid, cv=5, n_jobs=-1)``, scikit-learn's
   usual way, one fit per configuration and fold, spread over all cores;
3. one ``MLPClassifier()`` with scikit-learn's defaults and no search.

A quarter of the rows is kept aside as a test set that no search sees; each
line reports the test accuracy of what the search picked and the wall time
of the whole ``fit`` (for the searches, the refit included). The numbers
are printed as they come out, whatever they are: on a small data set a
default MLP is a strong baseline, and the times depend on the machine.

Needs only skpmlp's own dependencies (numpy, scipy, scikit-learn, torch,
joblib). ``python examples/quickstart.py --quick`` runs a smaller grid with
fewer epochs, for a smoke test.
"""

# %%
import argparse
import time
import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import MinMaxScaler

from skpmlp import ParallelMLPClassifier, sklearn_mlp_params

parser = argparse.ArgumentParser(description="skpmlp against GridSearchCV and a default MLP.")
parser.add_argument("--quick", action="store_true",
                    help="a small grid and few epochs (smoke test)")
QUICK = parser.parse_args().quick

# Models that reach max_iter warn (ConvergenceWarning); both libraries
# would print one per model, so they are silenced here.
warnings.simplefilter("ignore", ConvergenceWarning)

# %%
# The data: 1,797 8x8 images of digits, 10 classes, pixels scaled to [0, 1]
# (the scaler is fitted on the training rows only).
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y,
                                                    random_state=0)
scaler = MinMaxScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

# %%
# The grid, given as is to both searches: 3 architectures x 2 activations x
# 2 learning rates x 2 L2 penalties = 24 configurations. Every other
# setting is the same on both sides: scikit-learn's defaults (adam,
# batch_size="auto", tol, n_iter_no_change, no early stopping), the same
# max_iter and random_state=0. skpmlp's searches default to a space measured
# better on small tabular data (robust-scaled and quantile-transformed inputs,
# dropout 0.15, Adam's beta_2=0.95); sklearn_mlp_params() sets scikit-learn's values instead, so
# that both searches train the same models.
SKLEARN = sklearn_mlp_params()
if QUICK:
    GRID = {"hidden_layer_sizes": [(16,), (32,)], "activation": ["relu"],
            "learning_rate_init": [0.01], "alpha": [1e-4]}
    MAX_ITER, CV = 10, 3
else:
    GRID = {"hidden_layer_sizes": [(32,), (64,), (64, 64)], "activation": ["relu", "tanh"],
            "learning_rate_init": [0.001, 0.01], "alpha": [1e-4, 1e-2]}
    MAX_ITER, CV = 100, 5
n_configs = 1
for values in GRID.values():
    n_configs *= len(values)


def report(name, estimator, seconds):
    """One result line: test accuracy and wall time."""
    accuracy = estimator.score(X_test, y_test)
    print(f"{name:<62} {accuracy:>13.4f} {seconds:>9.1f} s", flush=True)
    return accuracy


def timed_fit(estimator):
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    return estimator, time.perf_counter() - start


# %%
# skpmlp trains on the CPU with a native kernel that it compiles for this
# machine's CPU the first time it is used (about half a minute on two cores;
# cached under ``~/.cache/skpmlp``, so later runs load it at once). One tiny
# fit pays for that, and for torch's one-time warm-up, before the timings.
start = time.perf_counter()
ParallelMLPClassifier(hidden_layer_sizes=[(16,)], max_iter=1, cv=None, random_state=0).fit(
    X_train[:200], y_train[:200])
print(f"skpmlp's first fit: {time.perf_counter() - start:.1f} s (a machine's first run compiles "
      f"skpmlp's native kernel here, once)")

print(f"digits: {len(y_train)} training rows, {len(y_test)} test rows; "
      f"{n_configs} configurations, max_iter={MAX_ITER}")
print()
print(f"{'':<62} {'test accuracy':>13} {'wall time':>11}")

# %%
# 1. skpmlp, holdout (``cv=None``): every configuration trains
# once, on 90 % of the training rows, and is scored on the other 10 %
# (``validation_fraction``); the one of lowest validation loss is then
# retrained on all the training rows.
holdout, holdout_seconds = timed_fit(
    ParallelMLPClassifier(**GRID, **SKLEARN, max_iter=MAX_ITER, cv=None, random_state=0)
)
report(f"skpmlp, holdout ({holdout.n_models_} models in one fused run)", holdout, holdout_seconds)

# %%
# 1'. skpmlp with ``cv``: every configuration trains once per fold, all
# folds in the same fused run. With folds, skpmlp's default
# ``ensemble="auto"`` predicts with a greedy ensemble (Caruana et al., 2004)
# chosen on the out-of-fold predictions of every trained model, each member
# the average of its 5 fold models: nothing is retrained.
# ``ensemble="best"`` would retrain the best configuration on all the
# training rows instead, the selection GridSearchCV makes.
fused_cv, fused_cv_seconds = timed_fit(
    ParallelMLPClassifier(**GRID, **SKLEARN, max_iter=MAX_ITER, cv=CV, random_state=0)
)
report(f"skpmlp, cv={CV} ({fused_cv.n_models_} x {CV} fits fused, greedy ensemble)", fused_cv,
       fused_cv_seconds)

# %%
# 2. GridSearchCV over the same grid and folds count: one MLPClassifier fit
# per configuration and fold, as joblib tasks on every core (``n_jobs=-1``),
# then a refit of the best configuration on all the training rows.
# Being the script's first parallel search, its time includes starting
# joblib's worker processes (about 2 s on a 2-core machine), as a first
# search in a fresh Python session does; later ones reuse them.
grid_search, grid_seconds = timed_fit(
    GridSearchCV(MLPClassifier(max_iter=MAX_ITER, random_state=0), GRID, cv=CV, n_jobs=-1)
)
report(f"GridSearchCV(MLPClassifier(), cv={CV}, n_jobs=-1) ({n_configs} x {CV} fits)",
       grid_search, grid_seconds)

# %%
# 3. No search at all: scikit-learn's default MLP (100 relu units,
# learning_rate_init=0.001, alpha=0.0001, max_iter=200).
default, default_seconds = timed_fit(MLPClassifier(random_state=0))
report("MLPClassifier() with its defaults (one model)", default, default_seconds)

# %%
# What each search picked, and its own estimate of it (the validation
# accuracy with a holdout, the mean fold accuracy with cv): an estimate made
# on the rows that chose the model is optimistic, the test accuracy above
# is not. ``best_params_`` is the best single configuration; the cv
# search's ensemble is listed after it (rows of ``cv_results_``, weights).
print()
for name, search in (("skpmlp, holdout", holdout), (f"skpmlp, cv={CV}", fused_cv),
                     ("GridSearchCV", grid_search)):
    print(f"{name:<16} picked {search.best_params_} (its own estimate {search.best_score_:.4f})")
members = ", ".join(f"{row} ({weight:.2f})" for row, weight in
                    zip(fused_cv.ensemble_indices_, fused_cv.ensemble_weights_))
print(f"skpmlp, cv={CV} ensemble members (row, weight): {members}")

# %%
# The top of skpmlp's cv leaderboard: ``cv_results_`` has GridSearchCV's
# columns (``pandas.DataFrame(search.cv_results_)`` turns it into a table,
# when pandas is installed). Its ranks are by accuracy, but with the default
# ``selection="auto"`` skpmlp picks the configuration of lowest mean
# held-out log-loss (a finer measure than accuracy on a few hundred rows),
# so its pick need not be rank 1; ``selection="score"`` picks by the ranks.
print()
print(f"top of skpmlp's cv={CV} leaderboard (mean fold accuracy; skpmlp picked by held-out loss):")
results = fused_cv.cv_results_
order = sorted(range(len(results["params"])), key=lambda i: results["rank_test_score"][i])
for i in order[:5]:
    print(f"  rank {results['rank_test_score'][i]:>2}  {results['mean_test_score'][i]:.4f} "
          f"+/- {results['std_test_score'][i]:.4f}  {results['params'][i]}")

# %%
# The ratio of the two cross-validated searches' wall times, as measured
# here (it depends on the machine, its cores and what else runs on it).
print()
ratio = grid_seconds / fused_cv_seconds
print(f"skpmlp cv={CV} took {fused_cv_seconds:.1f} s, GridSearchCV {grid_seconds:.1f} s: "
      + (f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower")
      + " on this machine.")
