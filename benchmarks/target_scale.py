"""Does the default regressor search hold up when ``y`` is not of unit scale?

The selection benchmark standardises every target, and the default space
(learning rates, ``alpha``, initial weights) was chosen there. Users bring
prices, counts and kilograms. This script fits ``ParallelMLPRegressor()``
(the default space, ``random_state=0``) on the selection benchmark's
regression sets (``_tabular_data.py``, the same splits) with the target in
several units, ``a * y + b`` of the standardised ``y``, with
``target_transform="standard"`` (the default) and ``"none"`` (the targets
as given, as scikit-learn's MLPRegressor), and prints the test R^2 (which
does not depend on the units) and the seconds of ``fit``.

With ``"standard"`` every unit gives the same search (to rounding); with
``"none"`` the search is only right near unit scale.

Usage::

    python benchmarks/target_scale.py                      # diabetes, concrete, cps1985
    python benchmarks/target_scale.py --datasets diabetes --units 1,0 1000,0

Writes ``benchmarks/results/target_scale.json``.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _tabular_data import DATASETS, prepare  # noqa: E402

from skpmlp import ParallelMLPRegressor  # noqa: E402

#: ``(a, b)``: the target ``a * y + b`` of the standardised ``y``.
UNITS = ((1.0, 0.0), (100.0, 1000.0), (1e4, 1e5))
VALUES = ("standard", "none")


def fit_once(data, a, b, value):
    """Test R^2 and seconds of the default search on ``a * y + b``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        search = ParallelMLPRegressor(target_transform=value, random_state=0).fit(
            data["X_train"], a * data["y_train"] + b)
        seconds = time.perf_counter() - start
    return {"r2": float(search.score(data["X_test"], a * data["y_test"] + b)),
            "seconds": seconds}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    regression = [name for name, d in DATASETS.items() if d.task == "regression"]
    parser.add_argument("--datasets", nargs="+", choices=regression,
                        default=["diabetes", "concrete", "cps1985"])
    parser.add_argument("--units", nargs="+", default=[f"{a:g},{b:g}" for a, b in UNITS],
                        help="a,b pairs: the target a * y + b of the standardised y")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"
                                             / "target_scale.json"))
    args = parser.parse_args(argv)
    units = [tuple(float(v) for v in pair.split(",")) for pair in args.units]
    rows = []
    header = f"{'data':<10} {'target':<16}" + "".join(f"{v:>18}" for v in VALUES)
    print("test R^2 (seconds of fit) of ParallelMLPRegressor(target_transform=...)")
    print(header + "\n" + "-" * len(header))
    for name in args.datasets:
        data = prepare(name)
        for a, b in units:
            row = {"dataset": name, "a": a, "b": b,
                   **{value: fit_once(data, a, b, value) for value in VALUES}}
            rows.append(row)
            cells = "".join(f"{row[v]['r2']:>11.4f} ({row[v]['seconds']:4.1f})" for v in VALUES)
            print(f"{name:<10} {f'{a:g} y + {b:g}':<16}{cells}", flush=True)
    for value in VALUES:
        for a, b in units:
            mean = np.mean([r[value]["r2"] for r in rows if (r["a"], r["b"]) == (a, b)])
            print(f"mean {value:<8} {f'{a:g} y + {b:g}':<16} {mean:.4f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"units": units, "rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
