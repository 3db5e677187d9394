"""Fuzz the content of skpmlp's files: edits that keep every checksum right (issue 41).

Writes a model file (a search with cross-validation, ``skpmlp.io.save``)
and a checkpoint of a halving search killed after its 4th write, then edits
each ``--edits`` times with ``tests/persistence/document_mutations.py`` (a
number of the document changed, an array member cut or grown, a NaN written
over a value, an index changed) and writes the archive back with fresh
checksums. Every edited model file is loaded and predicts; every edited
checkpoint is resumed by a fit. Each under a 30 s alarm (a hang).

The outcome of every edit is one of:

* ``refused``: ``InvalidFileError`` (a ``ValueError``), or another
  ``ValueError`` naming the problem;
* ``works``: the file loads and its estimator predicts finite values, or
  the fit resumed from the checkpoint ends and predicts finite values;
* ``FAILED``: any other exception, non-finite predictions, or a hang. The
  run exits with status 1 when any edit failed.

Writes ``benchmarks/results/fuzz_documents.json`` (counts by edit kind and
outcome, and the seed of each failure to replay it).

    PYTHONPATH=. python benchmarks/fuzz_documents.py --edits 1000
"""

import argparse
import collections
import json
import signal
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "persistence"), str(HERE.parent / "tests")]

from document_mutations import mutate  # noqa: E402
from test_checkpoint import HALVING, KillAfterWrite, Killed  # noqa: E402

import skpmlp.io  # noqa: E402
from skpmlp import ParallelMLPClassifier  # noqa: E402

TIMEOUT_S = 30


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


def _files(directory, X, y):
    """The model file and the checkpoint the edits start from."""
    search = ParallelMLPClassifier([(4,), (3, 3)], ("relu", "tanh"), max_iter=8, cv=3,
                                   dtype="float64", random_state=0).fit(X, y)
    model = directory / "search.npz"
    skpmlp.io.save(search, model)
    checkpoint = directory / "search.ckpt"
    killer = KillAfterWrite()
    killer.arm(4)
    try:
        ParallelMLPClassifier(**HALVING, checkpoint=checkpoint).fit(X, y)
    except Killed:
        pass
    finally:
        killer.disarm()
    return model, checkpoint


def _use_model(path, X, y):
    return skpmlp.io.load(path).predict_proba(X)


def _use_checkpoint(path, X, y):
    return ParallelMLPClassifier(**HALVING, checkpoint=path).fit(X, y).predict_proba(X)


def _outcome(use, path, X, y):
    signal.alarm(TIMEOUT_S)
    try:
        predictions = use(path, X, y)
    except ValueError:
        return "refused"
    except _Hang:
        return "FAILED: hang"
    except Exception as error:  # noqa: BLE001  (anything else is a failure to report)
        return f"FAILED: {type(error).__name__}: {str(error)[:120]}"
    finally:
        signal.alarm(0)
    return "works" if np.isfinite(predictions).all() else "FAILED: non-finite predictions"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=1000, help="edits of each file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    counts = collections.Counter()
    failures = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        model, checkpoint = _files(directory, X, y)
        for kind, source, use in (("model file", model, _use_model),
                                  ("checkpoint", checkpoint, _use_checkpoint)):
            for seed in range(args.edits):
                edited = directory / f"edited{source.suffix}"
                what = mutate(source, edited, np.random.default_rng(seed))
                outcome = _outcome(use, edited, X, y)
                edit = what.split(" ")[0]
                counts[(kind, edit, outcome.split(":")[0])] += 1
                if outcome.startswith("FAILED"):
                    failures.append({"file": kind, "seed": seed, "edit": what,
                                     "outcome": outcome})
                edited.unlink(missing_ok=True)
    seconds = time.perf_counter() - start
    print(f"{'file':<12} {'edit':<8} {'outcome':<9} {'count':>6}")
    for (kind, edit, outcome), n in sorted(counts.items()):
        print(f"{kind:<12} {edit:<8} {outcome:<9} {n:>6}")
    print(f"{2 * args.edits} edits in {seconds:.0f} s, {len(failures)} failed")
    for failure in failures[:20]:
        print("  ", failure)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    summary = {"edits": args.edits, "seconds": seconds, "failures": failures,
               "counts": [[*key, n] for key, n in sorted(counts.items())]}
    (out / "fuzz_documents.json").write_text(json.dumps(summary, indent=2))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
