"""Which of RealMLP-TD's ingredients carry its lead on the regression sets?

Issue 40: the default search ties RealMLP-TD (pytabkit, ``n_cv=5``) on the
selection benchmark's regression sets within the seed noise, and trails it
on diabetes and cps1985 on every seed. Its recipe differs from the search's
models in many places at once (NTK parametrisation at learning rate 0.2,
3 x 256 mish units, PBLD embeddings, a learnable diagonal scaling layer
first, trained at 6 times the learning rate, parametric activations,
coslog4, ...). Before the fused engine grows any of the ingredients it
lacks, this script measures what each is worth, in two parts (test R^2 on
the selection benchmark's regression sets, the split unseen):

1. ``--part realmlp``: RealMLP-TD itself with one ingredient taken away at
   a time (pytabkit's own switches, ``n_cv=1`` to keep the run short):
   ``add_front_scale=False`` (no diagonal scaling layer),
   ``scale_lr_factor=1`` (the layer at the model's learning rate, as
   skpmlp's ``diagonal_scaling`` trains it), ``use_parametric_act=False``
   and ``num_emb_type="none"`` (no PBLD embeddings).
2. ``--part torch``: one plain torch MLP of the default search's kind
   (relu, (128, 128), dropout 0.15, Adam with beta_2 = 0.95 at 3e-3, 100
   epochs, batch 200, robust-smooth-clip inputs) without a scaling layer
   and with one trained at ``--scale-factors`` times the learning rate:
   whether the layer RealMLP depends on helps a network of the search's
   standard parametrisation.

Usage::

    python benchmarks/realmlp_ablation.py --seeds 2            # both parts
    python benchmarks/realmlp_ablation.py --part torch --scale-factors 1 6 30

Writes ``benchmarks/results/realmlp_ablation.json``. Needs pytabkit for the
first part (``pip install pytabkit``; without it that part stops with a note).
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import r2_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _tabular_data import DATASETS, prepare  # noqa: E402
from _torch_mlp import hidden_layers, train_and_predict  # noqa: E402
from selection import fit_pytabkit, realmlp_classes  # noqa: E402

from skpmlp import RobustSmoothClipScaler  # noqa: E402

#: RealMLP-TD's regressor with one ingredient taken away (pytabkit's names).
ABLATIONS = {
    "RealMLP-TD": {},
    "no front scale": {"add_front_scale": False},
    "scale at lr": {"scale_lr_factor": 1.0},
    "no param. act.": {"use_parametric_act": False},
    "no embeddings": {"num_emb_type": "none"},
}


def realmlp_part(data, seeds, threads):
    """RealMLP-TD and its ablations (``n_cv=1``), mean test R^2 over
    ``seeds``, fitted as the selection benchmark fits pytabkit's models."""
    classes, missing = realmlp_classes()
    if classes is None:
        raise SystemExit(f"--part realmlp: {missing}")
    return {label: fit_pytabkit(data, False, classes, threads, seeds, {"n_cv": 1, **changes})["test"]
            for label, changes in ABLATIONS.items()}


class FrontScale(torch.nn.Module):
    """A learnable per-feature factor ``s`` (initialised to 1): ``x * s``."""

    def __init__(self, n_features):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(n_features))

    def forward(self, x):
        return x * self.scale


def torch_fit(X_train, y_train, X_test, scale_factor, seed, epochs=100, lr=3e-3):
    """One plain torch MLP (see the module docstring), with a front scale
    trained at ``scale_factor`` times ``lr`` (None: no scale); its test
    predictions."""
    torch.manual_seed(seed)
    front = None if scale_factor is None else FrontScale(X_train.shape[1])
    layers, fan_in = hidden_layers(X_train.shape[1])
    body = torch.nn.Sequential(*layers, torch.nn.Linear(fan_in, 1))
    net = torch.nn.Sequential(*([] if front is None else [front]), body).double()
    groups = [{"params": body.parameters()}]
    if front is not None:
        groups.append({"params": front.parameters(), "lr": lr * scale_factor})
    return train_and_predict(net, groups, lr, X_train, y_train, X_test, seed, epochs)


def torch_part(data, seeds, scale_factors):
    """Plain torch MLPs without and with a front scale, mean test R^2 over ``seeds``."""
    scaler = RobustSmoothClipScaler().fit(data["X_train"])
    train, test = scaler.transform(data["X_train"]), scaler.transform(data["X_test"])
    row = {}
    for factor in (None, *scale_factors):
        label = "torch" if factor is None else f"torch scale x{factor:g}"
        row[label] = float(np.mean([
            r2_score(data["y_test"], torch_fit(train, data["y_train"], test, factor, seed))
            for seed in seeds]))
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("realmlp", "torch", "both"), default="both")
    parser.add_argument("--seeds", type=int, default=2, help="seeds per model (mean test R^2)")
    parser.add_argument("--scale-factors", type=float, nargs="+", default=[1.0, 6.0, 30.0],
                        help="the torch part's front-scale learning-rate factors")
    parser.add_argument("--threads", type=int, default=2, help="RealMLP's torch threads")
    parser.add_argument("--datasets", nargs="+", help="regression sets (default: all)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    names = args.datasets or [n for n, d in DATASETS.items() if d.task == "regression"]
    seeds = list(range(args.seeds))
    rows = {}
    for name in names:
        data = prepare(name)
        row = {}
        if args.part in ("realmlp", "both"):
            row.update(realmlp_part(data, seeds, args.threads))
        if args.part in ("torch", "both"):
            row.update(torch_part(data, seeds, args.scale_factors))
        rows[name] = row
        print(f"{name:12s} " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()), flush=True)
    labels = list(next(iter(rows.values())))
    summary = {}
    for label in labels:
        scores = [r[label] for r in rows.values()]
        summary[label] = {"mean_test": statistics.fmean(scores)}
        reference = "RealMLP-TD" if label in ABLATIONS else "torch"
        if label != reference:  # paired against the part's full model, set by set
            gaps = [r[label] - r[reference] for r in rows.values()]
            summary[label].update(mean_gap=statistics.fmean(gaps),
                                  worse=sum(g < -0.005 for g in gaps),
                                  better=sum(g > 0.005 for g in gaps))
    for label, s in summary.items():
        extra = (f"   vs full {s['mean_gap']:+.4f}, worse on {s['worse']}, better on {s['better']}"
                 if "mean_gap" in s else "")
        print(f"{label:20s} mean R^2 {s['mean_test']:.4f}{extra}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "realmlp_ablation.json"
    path.write_text(json.dumps({"rows": rows, "summary": summary, "seeds": seeds,
                                "scale_factors": args.scale_factors}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
