"""The native kernel evaluates each model on its own fold's evaluation rows
and scores them in its epoch call, as the host scores the outputs.

A monitored run lays its folds' evaluation rows out fold after fold
(``run_data``); each model of the kernel's call forwards its fold's rows
only, and either gives its outputs there (zero on the other folds' rows) or
its monitored score (accuracy, R^2, subset accuracy), which must be what
the engine's function of the outputs gives (``scores_of_outputs``): in
float64 to rounding, on interleaved, overlapping and weighted folds.
"""

import dataclasses

import numpy as np
import pytest
import torch
from kernel_widths import NATIVE_BACKENDS
from sklearn.model_selection import ShuffleSplit, StratifiedKFold
from test_kernel import data, population

from skpmlp import _kernels
from skpmlp._engine import TrainConfig, train_population
from skpmlp._engine._backends._native import NativeTrainer
from skpmlp._engine._build import run_data

pytestmark = pytest.mark.skipif(not _kernels.kernel_available(), reason="no C++ compiler for the native kernel")

N_OUTPUTS = {"classification": 3, "regression": 2, "multilabel": 3}


def folds_of(kind, X, y):
    if kind == "interleaved":  # stratified and shuffled: each fold's rows scattered
        labels = y if y.ndim == 1 else y[:, 0] > 0
        return list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, labels))
    # test sets that overlap: a row is evaluated by several folds
    return list(ShuffleSplit(3, test_size=0.4, random_state=0).split(X))


def trained_epoch(task, dtype, kind, scored, poisoned=False, with_loss=False):
    """One monitored epoch of a native trainer: (what the kernel call gave,
    the trainer, the run's data). Every seventh row weighs zero; where
    ``poisoned``, a weighted evaluation row of the first slot's fold has an
    infinite feature; ``with_loss``: the validation losses too."""
    X, y, sw = data(task, n=120)
    sw[::7] = 0.0  # rows that must not count, whatever the model outputs there
    folds = folds_of(kind, X, y)
    config = TrainConfig(task=task, n_outputs=N_OUTPUTS[task], batch_size=32, dtype=dtype,
                         early_stopping=True)
    run = run_data(config, X, y, folds, sw, True, dtype=getattr(torch, dtype), device="cpu")
    trainer = NativeTrainer(population(), config, X.shape[1], len(folds))
    assert trainer.kernel_score() is not None
    plan = run.planner.next_epoch(0)
    if poisoned:
        k = trainer.slot_fold[0]
        own = run.eval_weights[k].numpy() > 0
        run.X_eval[np.flatnonzero(own)[0], 0] = np.inf
    return trainer.run_epoch(run.X, run.y, plan, run, scored=scored, with_loss=with_loss), trainer, run


@pytest.mark.parametrize("kind", ["interleaved", "overlapping"])
@pytest.mark.parametrize("task", sorted(N_OUTPUTS))
def test_each_model_gives_outputs_for_its_own_folds_rows_only(task, kind):
    outputs, trainer, run = trained_epoch(task, "float64", kind, scored=False)
    assert len(run.X_eval) == run.eval_rows.sum()  # fold after fold, overlaps repeated
    everywhere = trainer.outputs(run.X_eval)  # the kernel's forward over every row
    folds = trainer.slot_fold
    for slot, k in enumerate(folds):
        own = slice(run.eval_first[k], run.eval_first[k] + run.eval_rows[k])
        torch.testing.assert_close(outputs[slot, own], everywhere[slot, own], rtol=0, atol=1e-13)
        others = torch.ones(len(run.X_eval), dtype=torch.bool)
        others[own] = False
        assert (outputs[slot, others] == 0).all()


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
@pytest.mark.parametrize("dtype, atol", [("float64", 1e-13), ("float32", 1e-6)])
@pytest.mark.parametrize("kind", ["interleaved", "overlapping"])
@pytest.mark.parametrize("task", sorted(N_OUTPUTS))
def test_the_kernels_scores_are_the_hosts_scores_of_its_outputs(task, kind, dtype, atol, backend):
    outputs, trainer, run = trained_epoch(task, dtype, kind, scored=False)
    scores, _, _ = trained_epoch(task, dtype, kind, scored=True)  # the same epoch, scored in the call
    expected = trainer.scores_of_outputs(outputs, run.y_eval, run.eval_weights)
    assert scores.shape == expected.shape == (len(trainer.slot_fold),)
    assert np.isfinite(expected).all() and len(np.unique(expected)) > 3  # models that differ
    # scores lie in [-2, 1] here: float32 sums in another order, a few ulp apart
    np.testing.assert_allclose(scores, expected, rtol=0, atol=atol)


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-13), ("float32", 1e-5)])
@pytest.mark.parametrize("kind", ["interleaved", "overlapping"])
@pytest.mark.parametrize("task", sorted(N_OUTPUTS))
def test_the_kernels_validation_losses_are_the_hosts_of_its_outputs(task, kind, dtype, rtol, backend):
    """restore_best_weights watches each model's validation loss: the
    kernel forms it beside the score, as the host's function of the
    outputs (without label smoothing or the L2 term)."""
    outputs, trainer, run = trained_epoch(task, dtype, kind, scored=False)
    (scores, losses), _, _ = trained_epoch(task, dtype, kind, scored=True, with_loss=True)
    expected_scores, expected = trainer.scores_of_outputs(outputs, run.y_eval, run.eval_weights,
                                                          with_loss=True)
    assert losses.shape == expected.shape == (len(trainer.slot_fold),)
    assert np.isfinite(expected).all() and len(np.unique(expected)) > 3 and (expected > 0).all()
    np.testing.assert_allclose(losses, expected, rtol=rtol, atol=0)
    np.testing.assert_allclose(scores, expected_scores, rtol=0, atol=1e-6)


@pytest.mark.parametrize("task", sorted(N_OUTPUTS))
def test_a_non_finite_output_on_a_weighted_row_scores_nan_as_on_the_host(task):
    outputs, trainer, run = trained_epoch(task, "float64", "interleaved", scored=False, poisoned=True)
    scores, _, _ = trained_epoch(task, "float64", "interleaved", scored=True, poisoned=True)
    expected = trainer.scores_of_outputs(outputs, run.y_eval, run.eval_weights)
    # an infinite input overflows the outputs of some models (not those
    # whose units all saturate, as tanh's); only the poisoned fold's
    assert np.isnan(expected).any()
    assert np.isfinite(expected[trainer.slot_fold != trainer.slot_fold[0]]).all()
    np.testing.assert_array_equal(np.isnan(scores), np.isnan(expected))
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-13)
    # and so does the validation loss
    (_, losses), _, _ = trained_epoch(task, "float64", "interleaved", scored=True, poisoned=True,
                                      with_loss=True)
    _, expected_losses = trainer.scores_of_outputs(outputs, run.y_eval, run.eval_weights,
                                                   with_loss=True)
    np.testing.assert_array_equal(np.isnan(losses), np.isnan(expected))
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-13, atol=0)


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_an_early_stopping_run_on_the_kernel_is_the_torch_run(task, backend):
    """Scored in the kernel's call, on overlapping and weighted folds: the
    same epochs, validation scores and weights as the torch path's host
    scoring."""
    X, y, sw = data(task, n=160)
    sw[::5] = 0.0
    folds = folds_of("overlapping", X, y)
    config = TrainConfig(task=task, n_outputs=N_OUTPUTS[task], batch_size=40, max_iter=25, dtype="float64",
                         early_stopping=True, n_iter_no_change=2, tol=1e-3)
    reference = train_population(population(), dataclasses.replace(config, backend="torch"), X, y, folds,
                                 sample_weight=sw)
    native = train_population(population(), dataclasses.replace(config, backend="native"), X, y, folds,
                              sample_weight=sw)
    np.testing.assert_array_equal(native.n_iter, reference.n_iter)
    assert native.n_iter.min() < config.max_iter  # early stopping stopped some
    np.testing.assert_allclose(native.validation_scores, reference.validation_scores, rtol=1e-12, atol=1e-12)
    for k in range(len(folds)):
        for model_a, model_b in zip(native.coefs[k], reference.coefs[k]):
            for a, b in zip(model_a, model_b):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
@pytest.mark.parametrize("early_stopping", [True, False])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_best_weights_run_on_the_kernel_is_the_torch_run(task, early_stopping, backend):
    """restore_best_weights on the kernel (its validation losses, and the
    weights kept in its calls) keeps the epochs and weights the torch
    path's host keeps."""
    X, y, sw = data(task, n=160)
    sw[::5] = 0.0
    folds = folds_of("overlapping", X, y)
    config = TrainConfig(task=task, n_outputs=N_OUTPUTS[task], batch_size=40, max_iter=25, dtype="float64",
                         early_stopping=early_stopping, restore_best_weights=True, n_iter_no_change=2,
                         tol=1e-3)
    reference = train_population(population(), dataclasses.replace(config, backend="torch"), X, y, folds,
                                 sample_weight=sw)
    native = train_population(population(), dataclasses.replace(config, backend="native"), X, y, folds,
                              sample_weight=sw)
    np.testing.assert_array_equal(native.n_iter, reference.n_iter)
    np.testing.assert_array_equal(native.best_epoch, reference.best_epoch)
    assert (native.best_epoch < native.n_iter).any()  # weights kept before the last epoch
    for k in range(len(folds)):
        for model_a, model_b in zip(native.coefs[k], reference.coefs[k]):
            for a, b in zip(model_a, model_b):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


def test_evaluation_blocks_that_disagree_with_the_call_are_refused():
    X = torch.zeros((10, 3), dtype=torch.float64)
    with pytest.raises(ValueError, match="lie outside"):
        _kernels.eval_blocks(X, [0, 6], [6, 6])
    with pytest.raises(ValueError, match="score must be"):
        _kernels.eval_blocks(X, [0], [10], score="log_loss")
