"""The minibatch planner: every fold's rows, weights and tables, epoch after epoch."""

import numpy as np
import pytest
import torch

from skpmlp._engine._minibatch._batches import BatchPlanner


def _planner(fold_rows, batch_size, sample_weight=None, seed=3, shuffle=True):
    return BatchPlanner(fold_rows, batch_size, seed, sample_weight, dtype=torch.float64,
                        device="cpu", shuffle=shuffle)


def _folds(rng, n_samples, n_folds):
    return [np.sort(rng.choice(n_samples, int(rng.integers(1, n_samples)), replace=False))
            for _ in range(n_folds)]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_epoch_trains_each_fold_on_its_rows_once(weighted, shuffle):
    rng = np.random.default_rng(0)
    n_samples, batch_size = 97, 16
    folds = _folds(rng, n_samples, 4)
    sample_weight = rng.uniform(0.5, 2.0, n_samples) if weighted else None
    planner = _planner(folds, batch_size, sample_weight, shuffle=shuffle)
    for epoch in range(3):
        plan = planner.next_epoch(epoch)
        assert plan.epoch == epoch and plan.rows.is_contiguous() and plan.weights.is_contiguous()
        for k, rows in enumerate(folds):
            flat = plan.rows[:, k].reshape(-1).numpy()
            weights = plan.weights[:, k].reshape(-1).numpy()
            real = np.arange(len(flat)) < len(rows)
            assert sorted(flat[real]) == sorted(rows)
            if not shuffle:
                assert np.array_equal(flat[real], rows)
            assert (flat[~real] == 0).all() and (weights[~real] == 0).all()
            sw = np.ones(n_samples) if sample_weight is None else sample_weight
            for step in range(plan.n_steps):
                in_batch = plan.rows[step, k].numpy()[plan.weights[step, k].numpy() > 0]
                expected = sw[in_batch] / sw[in_batch].sum() if len(in_batch) else []
                assert np.allclose(plan.weights[step, k].numpy()[: len(in_batch)], expected)
                assert plan.counts[step, k] == len(in_batch)
                assert np.isclose(plan.weight_sums[step, k], sw[in_batch].sum())
                assert plan.stepping[step, k] == (len(in_batch) > 0)
        assert np.array_equal(plan.fold_sizes, [len(r) for r in folds])
        assert np.array_equal(plan.fold_batches, [-(-len(r) // batch_size) for r in folds])


def test_plans_are_reproducible_and_a_fold_is_independent_of_the_others():
    rng = np.random.default_rng(1)
    folds = _folds(rng, 60, 3)
    plans = [_planner(folds, 8).next_epoch(0), _planner(folds, 8).next_epoch(0)]
    assert torch.equal(plans[0].rows, plans[1].rows)
    alone = _planner(folds[1:2], 8).next_epoch(0)
    steps = alone.n_steps
    assert torch.equal(plans[0].rows[:steps, 1], alone.rows[:, 0])
    assert torch.equal(plans[0].weights[:steps, 1], alone.weights[:, 0])


def test_epochs_draw_new_orders_and_unweighted_plans_share_their_tables():
    planner = _planner([np.arange(50)], 10)
    first, second = planner.next_epoch(0), planner.next_epoch(1)
    assert not torch.equal(first.rows, second.rows)
    # without sample weights the tables do not depend on the order: built once
    assert first.weights is second.weights and first.counts is second.counts
    weighted = _planner([np.arange(50)], 10, np.linspace(1, 2, 50))
    a, b = weighted.next_epoch(0), weighted.next_epoch(1)
    assert not torch.equal(a.weights, b.weights)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_epochs_drawn_together_are_those_drawn_one_by_one(weighted, shuffle):
    """A kernel call's epochs, planned in one pass, are the plans of as many
    calls of ``next_epoch``: the same rows, weights and tables, and the
    planners go on drawing the same next epoch."""
    rng = np.random.default_rng(2)
    folds = _folds(rng, 80, 3)
    sample_weight = rng.uniform(0.5, 2.0, 80) if weighted else None
    one, many = (_planner(folds, 12, sample_weight, shuffle=shuffle) for _ in range(2))
    singles = [one.next_epoch(epoch) for epoch in range(2, 7)]
    together = many.next_epochs(2, 5)
    assert len(together) == 5
    for single, plan in zip(singles, together):
        assert plan.epoch == single.epoch and plan.rows.is_contiguous()
        for name in ("rows", "weights", "counts"):
            assert torch.equal(getattr(plan, name), getattr(single, name))
        assert np.array_equal(plan.weight_sums, single.weight_sums)
        assert np.array_equal(plan.stepping, single.stepping)
    assert torch.equal(one.next_epoch(7).rows, many.next_epoch(7).rows)


def test_folds_of_one_size_drawn_once_are_each_drawn_as_alone():
    """Folds of one size whose generators are in one state share their
    draws (:meth:`BatchPlanner._orders`): each fold's batches and generator
    are still those of the fold planned alone, also for a fold of that size
    whose generator was in another state."""
    rng = np.random.default_rng(4)
    folds = [np.sort(rng.choice(100, size, replace=False)) for size in (30, 30, 31, 30, 30)]
    planner = _planner(folds, 8)
    torch.randperm(30, generator=planner.generators[3])  # fold 3 a draw ahead
    alone = [_planner([rows], 8) for rows in folds]
    torch.randperm(30, generator=alone[3].generators[0])
    plans = planner.next_epochs(0, 4) + planner.next_epochs(4, 3)
    for k, fold in enumerate(alone):
        own = fold.next_epochs(0, 4) + fold.next_epochs(4, 3)
        for plan, single in zip(plans, own):
            assert torch.equal(plan.rows[: single.n_steps, k], single.rows[:, 0])
        assert torch.equal(planner.generators[k].get_state(), fold.generators[0].get_state())
    # and the folds in step drew the same permutations of their positions
    order = [np.searchsorted(folds[k], plans[5].rows[:4, k].reshape(-1)[:30]) for k in (0, 1, 3)]
    assert np.array_equal(order[0], order[1]) and not np.array_equal(order[0], order[2])
