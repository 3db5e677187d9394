"""A population trained as joblib shards, rung by rung: halving decided over every shard.

With ``n_jobs`` the population is cut into shards (:func:`~._engine.split_models`),
each trained by a joblib task (:func:`~skpmlp._execution._shards.train_shard`). Without
pruning every task trains its shard to the end. With
``pruning="halving"`` a task returns at each halving rung instead
(:class:`~._engine.PausedTraining`: its state and the scores of its models
still in the race); once every shard has reached the rung (or finished),
:func:`~._engine.decide` ranks the models of all of them together, and the
next round of tasks goes on from the states with the decision. The
survivors are thus those of one in-process run, whatever ``n_jobs``.

With a checkpoint the sharded call's state (the shards' models, the
decisions, the finished shards' results, the paused shards' states) is
saved in the search's file at every rung and whenever a shard finishes;
between rungs each shard keeps its own state in a file next to it
(:class:`~skpmlp._persistence._checkpoint.ShardCheckpoint`), written by its worker.
"""

import numpy as np

from .._engine import PausedTraining, Rung, decide, restore_result, result_state


def is_sharded_state(state):
    """Whether a saved call state is a sharded call's (else the engine's)."""
    return isinstance(state, dict) and "shards" in state


class ShardedCall:
    """The shards of a training call and the halving decisions taken so far.

    Parameters
    ----------
    parts : list of ndarray of int
        Every shard's models (indices into the call's population).
    config : TrainConfig
    checkpoint : CallCheckpoint or None
        Where the call's state goes.
    resume : dict or None
        A :meth:`state` to go on from (its shards replace ``parts``).
    """

    def __init__(self, parts, config, checkpoint=None, resume=None):
        self.config, self.checkpoint = config, checkpoint
        self.parts = [np.asarray(p, dtype=np.int64) for p in parts]
        self.cuts = {}  # (family, epoch) -> pruned models, indices into the population
        self.states = [None] * len(self.parts)  # a paused shard's engine state
        self.done = [None] * len(self.parts)  # a finished shard's (result, info)
        self.seconds = [0.0] * len(self.parts)  # each shard's training, over the rounds
        if resume is not None:
            self._restore(resume)

    # ------------------------------------------------------------ state
    def state(self):
        """The call's state, as host arrays (what ``resume`` takes)."""
        return {
            "shards": self.parts,
            "cuts": [[int(f), int(e), np.asarray(p, dtype=np.int64)]
                     for (f, e), p in sorted(self.cuts.items())],
            "states": self.states,
            "done": [None if d is None else {"result": result_state(d[0]), "info": dict(d[1])}
                     for d in self.done],
        }

    def _restore(self, state):
        self.parts = [np.asarray(p, dtype=np.int64) for p in state["shards"]]
        self.cuts = {(int(f), int(e)): np.asarray(p, dtype=np.int64) for f, e, p in state["cuts"]}
        self.states = list(state["states"])
        self.done = [None if d is None else (restore_result(d["result"]), dict(d["info"]))
                     for d in state["done"]]

    def _save(self):
        if self.checkpoint is not None:
            self.checkpoint.save(self.state())

    # --------------------------------------------------------- training
    def pending(self):
        """Shards not finished."""
        return [i for i, done in enumerate(self.done) if done is None]

    def task_settings(self, shard):
        """What the engine call of ``shard`` gets this round, as
        :class:`~skpmlp._execution._shards.ShardTask` fields: ``resume``, its
        state to go on from; ``rungs``, the decisions so far (in its own
        indices); ``checkpoint``, its own file."""
        settings = {"resume": self.states[shard]}
        if self.config.pruning is not None:
            part = self.parts[shard]
            settings["rungs"] = {key: np.flatnonzero(np.isin(part, pruned))
                                 for key, pruned in self.cuts.items()}
        if self.checkpoint is not None:
            settings["checkpoint"] = self.checkpoint.shard(shard, self.parts[shard])
        return settings

    def take(self, outputs):
        """Take a round's ``[(output, info)]`` (a :class:`TrainResult` or a
        :class:`PausedTraining` each); decide the rungs the paused shards
        wait at; save. Returns whether any shard is paused."""
        paused = []
        for output, info in outputs:
            shard = info["shard"]
            self.seconds[shard] += info["seconds"]
            info = {**info, "seconds": self.seconds[shard]}
            if isinstance(output, PausedTraining):
                self.states[shard] = output.state
                paused.append((shard, output))
            else:
                self.states[shard], self.done[shard] = None, (output, info)
        if paused:
            self._decide(paused)
        self._save()
        if self.checkpoint is not None:  # the search's file holds the finished shards
            for shard, _ in enumerate(self.parts):
                if self.done[shard] is not None:
                    self.checkpoint.shard(shard, self.parts[shard]).remove()
        return bool(paused)

    def _decide(self, paused):
        """One decision per rung waited at, over every shard waiting there."""
        groups = {}
        for shard, output in paused:
            for family, epoch, models, scores in output.rungs:
                rung = Rung(int(epoch), np.asarray(models), np.asarray(scores, dtype=float), None)
                groups.setdefault((int(family), int(epoch)), []).append((self.parts[shard], rung))
        config = self.config
        for key, reports in groups.items():
            assert key not in self.cuts
            pruned = decide(reports, config.halving_factor, config.min_survivors)
            self.cuts[key] = np.sort(np.concatenate(
                [index[local] for (index, _), local in zip(reports, pruned)]
            ))

    def outputs(self):
        """Every shard's ``(result, info)``, in shard order."""
        assert not self.pending()
        return list(self.done)
