"""Do periodic numerical embeddings help the default search on regression?

Issue 40 lists RealMLP-TD's PBLD embeddings among the ingredients to offer
(Holzmüller et al., NeurIPS 2024; pytabkit's ``num_emb_type="pbld"``). For
each continuous feature ``x`` (more than two distinct training values),
PBLD computes ``cos(2 pi w x + b)`` for 16 frequencies ``w`` (drawn from
``N(0, sigma^2)``, ``sigma = 0.1``) and phases ``b`` (uniform on
``[-pi, pi]``), maps them linearly to 3 values and appends ``x`` itself.
RealMLP trains ``w`` and ``b`` at a tenth of the learning rate.

Before the fused engine grows per-model embedding tensors, this script
measures what the embeddings would buy, on the regression sets of the
selection benchmark (``_tabular_data.py``; test R^2, the split unseen):

1. ``--part search``: ``ParallelMLPRegressor()`` (the default space) on the
   raw features against the same search on robust-smooth-clip features
   followed by *frozen* periodic features (``x`` and ``cos(2 pi w x + b)``,
   ``--frequencies`` per feature): an input the fused engine trains
   without any change (``input_transform="none"``).
2. ``--part torch``: one plain torch MLP (the default's relu, (128, 128),
   dropout 0.15, Adam with beta_2 = 0.95, 100 epochs, batch 200) on
   robust-smooth-clip features with no embedding, with frozen PBLD and with
   learnable PBLD (frequencies and phases at a tenth of the learning
   rate), three seeds each: whether learning the frequencies differs
   from freezing them.

Usage::

    python benchmarks/periodic_embeddings.py                 # both parts
    python benchmarks/periodic_embeddings.py --part search --frequencies 8 16

Writes ``benchmarks/results/periodic_embeddings.json``.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import r2_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _tabular_data import DATASETS, prepare  # noqa: E402
from _torch_mlp import hidden_layers, train_and_predict  # noqa: E402

from skpmlp import ParallelMLPRegressor, RobustSmoothClipScaler  # noqa: E402

SIGMA = 0.1  # RealMLP-TD's plr_sigma
HIDDEN = 3  # RealMLP-TD's plr_hidden_2 - 1 (PBLD appends x itself)
SEEDS = (0, 1, 2)


def continuous(X):
    """Features with more than two distinct values (RealMLP embeds the
    continuous features only; one-hot and binary columns stay as they are)."""
    return np.array([len(np.unique(X[:, j])) > 2 for j in range(X.shape[1])])


def periodic_features(X_train, X_test, n_frequencies, sigma=SIGMA, seed=0):
    """Robust-smooth-clip features, then for every continuous feature its
    ``cos(2 pi w x + b)`` for ``n_frequencies`` frozen ``(w, b)``."""
    scaler = RobustSmoothClipScaler().fit(X_train)
    train, test = scaler.transform(X_train), scaler.transform(X_test)
    cont = continuous(X_train)
    rng = np.random.default_rng(seed)
    w = sigma * rng.standard_normal((int(cont.sum()), n_frequencies))
    b = rng.uniform(-np.pi, np.pi, w.shape)

    def embedded(Z):
        waves = np.cos(2 * np.pi * Z[:, cont, None] * w + b).reshape(len(Z), -1)
        return np.concatenate([Z, waves], axis=1)

    return embedded(train), embedded(test)


def search_part(data, frequencies):
    """The default search on the raw features and on frozen periodic ones."""
    row = {}

    def fit(label, X_train, X_test, **params):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # cv="auto"'s notice
            search = ParallelMLPRegressor(random_state=0, **params).fit(X_train, data["y_train"])
        row[label] = {"test": float(search.score(X_test, data["y_test"])),
                      "seconds": time.perf_counter() - start}

    fit("default", data["X_train"], data["X_test"])
    for k in frequencies:
        train, test = periodic_features(data["X_train"], data["X_test"], k)
        fit(f"periodic {k}", train, test, input_transform="none")
    return row


class PBLD(torch.nn.Module):
    """RealMLP's PBLD embedding of the continuous features ``cont``:
    ``cos(2 pi w x + b)``, 16 per feature, a per-feature linear map to
    ``HIDDEN`` values, and the features themselves appended."""

    def __init__(self, cont, learn, n_frequencies=16):
        super().__init__()
        self.cont = torch.as_tensor(cont)
        n = int(cont.sum())
        self.w1 = torch.nn.Parameter(SIGMA * torch.randn(n, 1, n_frequencies), requires_grad=learn)
        self.b1 = torch.nn.Parameter(np.pi * (2 * torch.rand(n, 1, n_frequencies) - 1),
                                     requires_grad=learn)
        bound = n_frequencies ** -0.5
        self.w2 = torch.nn.Parameter(bound * (2 * torch.rand(n, n_frequencies, HIDDEN) - 1))
        self.b2 = torch.nn.Parameter(bound * (2 * torch.rand(n, 1, HIDDEN) - 1))
        self.n_out = len(cont) + n * HIDDEN

    def forward(self, x):
        c = x[:, self.cont].T.unsqueeze(-1)  # (features, rows, 1)
        e = torch.cos(2 * np.pi * c @ self.w1 + self.b1) @ self.w2 + self.b2
        return torch.cat([x, e.transpose(0, 1).reshape(x.shape[0], -1)], 1)


def torch_fit(X_train, y_train, X_test, embedding, seed, epochs=100, lr=3e-3):
    """One plain torch MLP (see the module docstring); its test predictions."""
    torch.manual_seed(seed)
    front = None if embedding == "none" else PBLD(continuous(X_train), learn=embedding == "learnable")
    layers, fan_in = hidden_layers(X_train.shape[1] if front is None else front.n_out)
    net = torch.nn.Sequential(*([] if front is None else [front]), *layers,
                              torch.nn.Linear(fan_in, 1)).double()
    slow = [] if front is None else [front.w1, front.b1]
    groups = [{"params": [p for p in net.parameters() if all(p is not s for s in slow)]}]
    if embedding == "learnable":
        groups.append({"params": slow, "lr": lr / 10})
    return train_and_predict(net, groups, lr, X_train, y_train, X_test, seed, epochs)


def torch_part(data):
    """Plain torch MLPs without, with frozen and with learnable PBLD."""
    scaler = RobustSmoothClipScaler().fit(data["X_train"])
    train, test = scaler.transform(data["X_train"]), scaler.transform(data["X_test"])
    return {f"torch {embedding}": {"test": float(np.mean([
        r2_score(data["y_test"], torch_fit(train, data["y_train"], test, embedding, seed))
        for seed in SEEDS]))} for embedding in ("none", "frozen", "learnable")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("search", "torch", "both"), default="both")
    parser.add_argument("--frequencies", type=int, nargs="+", default=[8],
                        help="frozen frequencies per feature of the search part")
    parser.add_argument("--datasets", nargs="+", help="regression sets (default: all)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    names = args.datasets or [n for n, d in DATASETS.items() if d.task == "regression"]
    rows = {}
    for name in names:
        data = prepare(name)
        row = {}
        if args.part in ("search", "both"):
            row.update(search_part(data, args.frequencies))
        if args.part in ("torch", "both"):
            row.update(torch_part(data))
        rows[name] = row
        print(f"{name:12s} " + "  ".join(f"{k} {v['test']:.4f}" for k, v in row.items()), flush=True)
    labels = list(next(iter(rows.values())))
    summary = {label: {"mean_test": float(np.mean([r[label]["test"] for r in rows.values()]))}
               for label in labels}
    for label, s in summary.items():
        timed = [r[label]["seconds"] for r in rows.values() if "seconds" in r[label]]
        if timed:  # the searches (the torch part's fits are not timed)
            s["seconds"] = float(sum(timed))
        print(f"{label:18s} mean R^2 {s['mean_test']:.4f}"
              + (f"   seconds {s['seconds']:.1f}" if timed else ""))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "periodic_embeddings.json"
    path.write_text(json.dumps({"rows": rows, "summary": summary, "torch_threads":
                                torch.get_num_threads()}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
