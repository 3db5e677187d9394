"""A search as rows of a table: its plan, its run and its scores.

Pure Python and numpy above the engine: the search space and the population
it draws, the folds, the scorers, the settings the engine trains with, the
run of the plan (every model on every fold, then scored) and the
``cv_results_`` table. Knows models as rows (architecture, activation,
learning rate, ... , repeat, fold), never as tensors.
"""
