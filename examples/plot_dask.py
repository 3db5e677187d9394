"""
Training a search on a Dask cluster
===================================

With ``n_jobs``, a search cuts its population into shards of about equal
cost and trains each shard as its own fused network in a joblib task. Inside
``joblib.parallel_config(backend="dask")`` those tasks go to a Dask
cluster. This example starts a small local cluster (two worker processes on
this machine, reachable only on 127.0.0.1), trains the same search in
process and on the cluster, and shows where each shard ran.

On a real cluster, connect to its scheduler instead of starting one:
``Client("tcp://scheduler-host:8786")``; nothing else changes.
"""

# %%
# The data and the search
# -----------------------
# The digits data and 4 widths x 2 activations x 2 learning rates x 2
# repeats = 32 models.
import time
import warnings

import joblib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from skpmlp import ParallelMLPClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
scaler = MinMaxScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
warnings.simplefilter("ignore", ConvergenceWarning)  # short training on purpose


def make_search(**kwargs):
    return ParallelMLPClassifier(
        hidden_layer_sizes=[(8,), (16,), (32,), (64,)],
        activation=("relu", "tanh"),
        learning_rate_init=(0.003, 0.01),
        n_repeats=2,
        max_iter=20,
        cv=None,  # the holdout: one run per model (cv="auto" would take 5 folds here)
        random_state=0,
        **kwargs,
    )


# %%
# In this process
# ---------------
# One fused network of all 32 models (``n_jobs=None``).
start = time.perf_counter()
local = make_search().fit(X_train, y_train)
local_seconds = time.perf_counter() - start
print(f"in process: {local_seconds:.1f} s, best {local.best_params_}")
print(pd.DataFrame(local.shards_).to_string(index=False))

# %%
# A local Dask cluster
# --------------------
# Two workers with one thread each. Every address is on the loopback
# interface (the dashboard too, on a free port), so nothing outside this
# machine can reach the cluster.
#
# Worker *processes* are started with the "spawn" method, which re-imports
# the script that started them: a script that starts them must keep its
# code under an ``if __name__ == "__main__":`` guard, which an example cut
# into cells cannot do. The documentation build runs this file without a
# ``__file__`` (nothing is re-imported), so there the workers are two
# processes, each importing torch in a few seconds; run as
# ``python plot_dask.py`` it falls back to two worker threads of this
# process (``processes=False``), which train the shards in parallel too.
run_as_script = "__file__" in globals()
cluster = LocalCluster(
    n_workers=2, threads_per_worker=1, processes=not run_as_script,
    protocol="tcp://", host="127.0.0.1", dashboard_address="127.0.0.1:0",
)
client = Client(cluster)
print(client.scheduler_info()["address"], "with", len(client.scheduler_info()["workers"]),
      "workers")

# import skpmlp (and torch) on every worker once, so that the timing below
# measures the search rather than the workers' first imports
client.run(lambda: __import__("skpmlp") and None)

# %%
# The same search on the cluster
# ------------------------------
# ``n_jobs=2`` cuts the population into two shards; the Dask backend sends
# them to the workers. Each task receives numpy arrays, trains its shard
# with the threads of the worker it lands on, and sends numpy arrays back.
start = time.perf_counter()
with joblib.parallel_config(backend="dask"):
    distributed = make_search(n_jobs=2).fit(X_train, y_train)
cluster_seconds = time.perf_counter() - start
print(f"on the cluster: {cluster_seconds:.1f} s")

# %%
# ``shards_`` records where each shard ran: the Dask worker's address, its
# host and process id, the device and the torch threads it used, and how
# long the shard trained.
shards = pd.DataFrame(distributed.shards_)
print(shards.to_string(index=False))

# %%
# The models are independent, so sharding changes nothing about them: the
# two searches rank the same models with the same scores, up to float32
# rounding (the shards' matrix products are of other sizes).
difference = np.abs(local.cv_results_["mean_test_score"]
                    - distributed.cv_results_["mean_test_score"]).max()
print(f"largest difference between the two searches' scores: {difference:.4f}")
print(f"same best model: {local.best_index_ == distributed.best_index_}, "
      f"test accuracy {distributed.score(X_test, y_test):.4f}")

# %%
# Wall time
# ---------
# The cluster run pays for sending the data and the tasks and for starting
# the shards on the workers; here the two shards train side by side on the
# machine's two cores. On a problem this small the gain is modest or
# negative; shards pay off when each one trains for long, or when each
# worker has its own GPU.
fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
labels = ["in process\n(1 fused run)"] + [f"shard {s}\n{w}" for s, w in
                                          zip(shards["shard"], shards["worker"])]
ax.barh(labels[:1], [local_seconds], color="tab:grey")
ax.barh(labels[1:], shards["seconds"], color="tab:blue", label="training time of the shard")
ax.barh(["on the cluster\n(whole fit)"], [cluster_seconds], color="tab:orange")
ax.set(xlabel="seconds", title="Where the time went")
ax.legend(loc="lower right")

# %%
# Shut the cluster down.
client.close()
cluster.close()
