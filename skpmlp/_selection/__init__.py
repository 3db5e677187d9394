"""Choosing from a trained search: the best row, an ensemble's members, the refit.

Works on a finished :class:`~skpmlp._search._run.SearchRun`: orders its rows
(held-out loss or the scorer's rank), picks an ensemble's members (the top
rows, a configuration's fold models, a greedy ensemble on held-out
predictions) and builds the standalone models ``best_estimator_`` and
``export_model`` return, retraining the chosen configurations where asked.
"""
