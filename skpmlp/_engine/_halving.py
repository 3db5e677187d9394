"""Successive halving's decisions, taken over every part of a population at once.

A halving rung ends the epoch ``min_iter * halving_factor**j``: of the
models still in the race, the best ``1 / halving_factor`` go on. A
population may train as several fused runs (memory chunks, ``n_jobs``
shards); each run stops at the rung and reports a :class:`Rung` (its
models still in the race and their scores), :func:`decide` ranks the
models of every run together, and each run applies its share of the
decision. The survivors are then those of one run holding the whole
population, whatever the chunks or shards.

Models of different batch sizes train in different runs, each size ranked
on its own (a *family*: ``Rung`` reports carry it), as a search of one
batch size would rank them.
"""

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(frozen=True)
class Rung:
    """What a run reports at a halving rung.

    Parameters
    ----------
    epoch : int
        Epochs trained at the rung.
    models : ndarray of int
        The run's models still in the race (indices into the run).
    scores : ndarray of float
        Their scores (higher is better; NaN ranks last).
    candidates : ndarray of bool of shape (n_folds * n_models,)
        Their replicas that the rung may stop (the others stopped already).
    """

    epoch: int
    models: np.ndarray
    scores: np.ndarray
    candidates: np.ndarray


def n_kept(n_alive, factor, min_keep=1):
    """How many of ``n_alive`` models a rung keeps: the best
    ``ceil(n_alive / factor)``, at least ``min_keep`` (an ensemble's size:
    its members train to the end), at most all."""
    return min(n_alive, max(min_keep, math.ceil(n_alive / factor)))


def halve(scores, alive, factor, min_keep=1):
    """Successive halving's cut: of the ``alive`` models, those outside the
    best :func:`n_kept` by ``scores`` (NaN worst, ties by position), as a
    bool mask."""
    candidates = np.flatnonzero(alive)
    keep = n_kept(len(candidates), factor, min_keep)
    filled = np.where(np.isnan(scores[candidates]), -np.inf, scores[candidates])
    ranked = candidates[np.argsort(-filled, kind="stable")]
    pruned = np.zeros(len(alive), dtype=bool)
    pruned[ranked[keep:]] = True
    return pruned


def decide(reports, factor, min_keep=1):
    """One rung's decision over several runs of one family.

    Parameters
    ----------
    reports : list of (ndarray of int, Rung)
        For each run, the population index of each of its models (so
        that ties go by population order, as in one run) and its rung.
    factor : float
    min_keep : int, default=1

    Returns
    -------
    list of ndarray of int
        For each run, its models (indices into the run) that stop.
    """
    ids = np.concatenate([index[rung.models] for index, rung in reports])
    scores = np.concatenate([rung.scores for _, rung in reports])
    order = np.argsort(ids, kind="stable")
    pruned = np.zeros(len(ids), dtype=bool)
    pruned[order] = halve(scores[order], np.ones(len(ids), dtype=bool), factor, min_keep)
    out, start = [], 0
    for _, rung in reports:
        stop = start + len(rung.models)
        out.append(rung.models[pruned[start:stop]])
        start = stop
    return out
