"""Where and how a population trains: in process, as joblib shards, with progress.

The one entry the search layer trains through (:func:`~skpmlp._execution._training.train_models`):
one fused run in this process, or shards of the population as joblib tasks
(loky processes or a Dask cluster) decided rung by rung for halving, with a
progress bar fed by every shard.
"""
