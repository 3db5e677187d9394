"""Minibatch runs (Adam, SGD): the one epoch loop and what it reads each epoch.

:class:`~skpmlp._engine._minibatch._run.FusedRun` trains a run epoch by
epoch (an adaptive one with the :mod:`~skpmlp._engine._minibatch._refill`
hook); around it: the batch plans, what ends an epoch, the stopping rule and
halving's rungs, the learning-rate schedules, the fused torch optimizer and
the slots a refill writes.
"""
