"""The estimators' docstrings, assembled from numpydoc sections.

A section is a title and its entries, ``(header, description)`` pairs: the
Parameters come from the parameter table (:func:`~skpmlp._core._params.parameter_entries`),
the fitted attributes of the searches and the single models from the tables
here (:func:`search_attributes`, :func:`single_attributes`), each entry once,
with the words of its task. :func:`class_docstring` puts the sections
together.
"""

import textwrap


def _block(text, indent=""):
    """``text`` dedented, its lines indented by ``indent``."""
    return textwrap.indent(textwrap.dedent(text).strip("\n"), indent)


def section(title, entries):
    """A numpydoc section: its title, underline and entries, unindented."""
    lines = [title, "-" * len(title)]
    for header, description in entries:
        lines.append(header)
        if description:
            lines.append(_block(description, "    "))
    return "\n".join(lines)


def class_docstring(summary, extended, *, parameters, attributes, see_also, examples):
    """A class docstring from its parts.

    Parameters
    ----------
    summary : str
        The one-line summary.
    extended : str
        The extended summary (any indentation).
    parameters, attributes : list of (str, str)
        The entries of the Parameters and Attributes sections.
    see_also : list of (str, str)
        ``(name, what it is)`` entries of See Also.
    examples : str
        The doctest examples (any indentation).

    Returns
    -------
    str
        Indented as a docstring written in a class body.
    """
    parts = [
        summary, _block(extended), section("Parameters", parameters),
        section("Attributes", attributes),
        "See Also\n--------\n" + "\n".join(f"{name} : {what}" for name, what in see_also),
        "Examples\n--------\n" + _block(examples),
    ]
    return textwrap.indent("\n\n".join(parts), "    ").lstrip() + "\n    "


#: What ``best_estimator_`` is with an ensemble.
_ENSEMBLES = {"classifier": "MLPEnsembleClassifier", "regressor": "MLPEnsembleRegressor"}


def _default_score(task):
    return "accuracy" if task == "classifier" else "R^2"


def _out_activation(task, *, search):
    """``out_activation_``'s entry for ``task``."""
    if task == "regressor":
        return ('out_activation_ : {"identity", "exp"}', """\
            Output activation: "identity", or "exp" with ``loss="poisson"``
            (log link), as scikit-learn's MLPRegressor.""")
    models = "every model" if search else "the model"
    return ('out_activation_ : {"softmax", "logistic"}', f"""\
        Output activation of {models}: softmax over the classes (binary and
        multiclass ``y``), or one sigmoid per label for a multilabel
        indicator ``y`` (each label's binary log-loss, summed, is the
        training loss; predictions are indicator matrices and the default
        score is the subset accuracy), as scikit-learn's ``MLPClassifier``.""")


#: The fitted attributes a trained model has, as scikit-learn's MLP (a
#: single model's own, a search's those of its best model).
_MLP_ATTRIBUTES = (
    ("coefs_ : list of ndarray of shape (fan_in, fan_out)", """\
        Weight matrix of every layer."""),
    ("intercepts_ : list of ndarray of shape (fan_out,)", """\
        Bias vector of every layer."""),
    ("n_iter_ : int", """\
        Epochs trained (iterations with ``solver="lbfgs"``)."""),
    ("loss_ : float", """\
        Training loss (L2 term included) of the last epoch."""),
    ("loss_curve_ : list of float", """\
        Training loss of every epoch."""),
    ("best_loss_ : float or None", """\
        Lowest training loss; None with ``early_stopping``, as
        scikit-learn."""),
    ("validation_scores_ : list of float or None", """\
        Per-epoch validation score (accuracy / R^2, or the negated loss
        with ``monitor="loss"``) with ``early_stopping``, else None."""),
    ("best_validation_score_ : float or None", """\
        The best of ``validation_scores_`` (its weights are the model's),
        None without ``early_stopping``."""),
    ("t_ : int", """\
        Training samples seen: ``n_iter_`` times the training rows."""),
    ("n_layers_ : int", """\
        Layers, input and output included."""),
    ("n_outputs_ : int", """\
        Output units: one per class (also for two classes, where
        scikit-learn's MLP has a single logistic unit) or per target."""),
)

_DATA_ATTRIBUTES = (
    ("n_features_in_ : int", """\
        Number of features seen during ``fit``."""),
    ("feature_names_in_ : ndarray of shape (n_features_in_,)", """\
        Names of the features seen during ``fit``; defined only when X has
        string feature names."""),
)


def single_attributes(task):
    """The Attributes entries of a single-model estimator of ``task``."""
    classes = [("classes_ : ndarray of shape (n_classes,)", """\
        Class labels; for a multilabel model, ``arange(n_labels)`` (the
        columns of the indicator matrix), as scikit-learn's MLP.""")]
    return [
        *(classes if task == "classifier" else []),
        _out_activation(task, search=False),
        *_MLP_ATTRIBUTES,
        ("input_transform_ : transformer or None", """\
            The fitted ``input_transform`` (a ``StandardScaler`` or a
            :class:`~skpmlp.RobustSmoothClipScaler`, fitted on the rows the
            model trained on: in a search, its fold's training rows, or all
            the rows for a refit), which ``predict`` applies to ``X``
            first; None for ``"none"``."""),
        *_DATA_ATTRIBUTES,
    ]


#: What a search ran: its size and its table.
_SEARCH_RUN = (
    ("n_models_ : int", """\
        Number of models (configurations x repeats) in the search."""),
    ("cv_ : int, cross-validation generator, iterable or None", """\
        The ``cv`` the search ran with: ``cv`` itself, or what
        ``cv="auto"`` chose (5, ``GroupKFold(5)`` with groups, or None:
        the holdout)."""),
    ("n_splits_ : int", """\
        Number of folds (1 with a holdout, ``cv_=None``)."""),
    ("multimetric_ : bool", """\
        Whether several scorers were used."""),
    ("refit_time_ : float", """\
        Seconds spent building ``best_estimator_``: choosing its members
        and retraining the chosen configuration(s) on all the data (with
        ``cv`` and ``ensemble="best"``, or ``cv=None`` and
        ``holdout_refit``), else only assembling the trained models
        (``ensemble="folds"`` or ``"greedy"`` with ``cv``: the default
        ``ensemble="auto"`` with folds). Only
        with ``refit``."""),
    ("cv_results_ : dict of ndarray", """\
        One row per model, in GridSearchCV's schema (``params``,
        ``param_<name>``, ``param_repeat``, ``split0_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``,
        ``mean_fit_time``, ...). Models are trained together, so each row's
        fit time is an equal share of the fused run's wall time; its score
        time is its share of each fold's scoring (0 for a failed fit, as
        GridSearchCV's). ``pandas.DataFrame(cv_results_)`` gives a table."""),
)

#: What it chose.
_SEARCH_BEST = (
    ("best_index_ : int", """\
        Row of the best model (set unless multi-metric with
        ``refit=False``, as GridSearchCV): the best single configuration
        by ``selection``, whatever ``ensemble``; the ensemble's rows are
        ``ensemble_indices_``."""),
    ("best_params_ : dict", """\
        Its hyperparameters (valid estimator parameters; the repeat index
        is in ``cv_results_["param_repeat"]``)."""),
    ("best_score_ : float", """\
        The mean validation score (``scoring``) of the chosen configuration
        (row ``best_index_``; on the held-out rows, or over the cv folds),
        as GridSearchCV's, whatever ``ensemble`` (a greedy ensemble's own
        is ``ensemble_score_``). With ``selection="loss"`` the chosen row has the
        lowest validation loss, so ``best_score_`` may be below the highest
        ``mean_test_score``. When ``best_estimator_`` was retrained on all
        the rows (``cv``, or ``holdout_refit``), it describes the
        configuration, not that retrained model, which no held-out data
        scored. NaN for a lone configuration trained on every row; not set
        with a callable ``refit``, as GridSearchCV."""),
    ("scorer_ : callable or dict", """\
        The scorer(s) used to rank models."""),
)

#: The best model's scikit-learn MLP attributes, and every model's curves.
_SEARCH_MODELS = (
    ("coefs_, intercepts_ : list of ndarray", """\
        The best model's weights (``best_estimator_``'s, the first member
        of an ensemble of single models), as scikit-learn's MLP. Only with
        ``refit``, as are the next attributes, and not where
        ``best_estimator_`` predicts through fold models (the default with
        folds): no one model is then the best, and reading them (and
        ``loss_``, ``loss_curve_``, ``best_loss_``, ``t_``,
        ``validation_scores_``, ``best_validation_score_``) raises an
        ``AttributeError`` naming ``export_model(best_index_, fold=k)``
        instead. ``n_iter_`` and ``n_layers_`` are then the best
        configuration's (``n_iter_`` the most over its folds)."""),
    ("n_iter_, t_, n_layers_, n_outputs_ : int", """\
        The best model's epochs trained, training samples seen, layers and
        output units, as scikit-learn's MLP (``n_iter_`` is one int, the
        best model's: every model's is in ``n_iter_per_model_``)."""),
    ("loss_, best_loss_, best_validation_score_ : float or None", """\
        The best model's last and lowest training loss and best validation
        score, with scikit-learn's rules (``best_loss_`` None with
        ``early_stopping``, ``best_validation_score_`` None without)."""),
    ("loss_curve_, validation_scores_ : list of float or None", """\
        The best model's per-epoch training loss and, with
        ``early_stopping``, validation scores (else None), as
        scikit-learn's MLP; every model's are in ``loss_curves_`` and
        ``validation_scores_per_model_``."""),
    ("loss_curves_ : ndarray of shape (n_models, n_epochs) or (n_models, n_splits, n_epochs)", """\
        Training loss per epoch (with ``cv``, per fold replica); NaN after
        a model stopped."""),
    ("validation_loss_ : ndarray of shape (n_models,)", """\
        Every model's loss on the held-out rows (with ``cv``, the mean over
        its folds' test rows): log-loss for classifiers, half the squared
        error for regressors (as their training loss, without the L2 term);
        NaN for a model that failed. What ``selection="loss"`` and
        ``tie_breaker="loss"`` compare."""),
    ("n_iter_per_model_ : ndarray of shape (n_models,) or (n_models, n_splits)", """\
        Epochs each model (fold replica) trained for."""),
    ("best_epoch_per_model_ : ndarray of shape (n_models,) or (n_models, n_splits), or None", """\
        With ``restore_best_weights``, the epoch whose weights each model
        (fold replica) holds, 1-based (after how many epochs): the one of
        its lowest validation loss; 0 where none was finite (it holds its
        initial weights). None without ``restore_best_weights``."""),
    ("hyperparameter_schedules_ : list of dict", """\
        Only with ``refill``: per row of ``cv_results_``, the
        hyperparameters of every epoch along its lineage (its oldest
        ancestor's epochs, then its parent's, then its own): ``"iter"``
        (the run's epochs, 0-based) and one array per searched continuous
        hyperparameter. ``cv_results_`` then also has ``parent`` (the row
        whose weights and optimizer state a ``"perturb"`` refill copied,
        else -1), ``start_iter`` (the run's epoch a row started
        training at) and ``slot`` (the slot of the fused network, its fold
        replicas together, that trained it, 0 to ``n_models - 1``)."""),
    ("ensemble_indices_ : ndarray of int", """\
        Rows of the models in ``best_estimator_``, best first (the most
        weighted first for ``ensemble="greedy"``, which the default
        ``ensemble="auto"`` is with folds; one row for ``ensemble="best"``,
        ``ensemble_size=None``, which it is with a holdout). With
        ``ensemble="folds"``, or ``"greedy"`` with ``cv``, each row stands
        for its k fold models (``export_model(row, fold="all")``). Only
        with ``refit``."""),
    ("ensemble_weights_ : ndarray of float", """\
        The members' weights in ``best_estimator_``, one per row of
        ``ensemble_indices_``, summing to 1: equal, or for
        ``ensemble="greedy"`` how often the selection added each member
        over the steps taken. Only with ``refit``."""),
    ("ensemble_score_ : float", """\
        With ``ensemble="greedy"``: the ensemble's ranking metric
        (``scoring``, as ``best_score_``) on the pooled held-out
        predictions it was selected on (out-of-fold with ``cv``, the
        validation rows with a holdout). Optimistic: those predictions
        chose it. Not set for the other kinds, or when no single metric
        ranks the models."""),
    ("shards_ : list of dict", """\
        One entry per fused run: ``shard``, ``models``, ``device``,
        ``host``, ``pid``, ``worker`` (Dask address, or None), ``threads``,
        ``seconds``; a fit whose rows were split over the ranks of a
        ``torch.distributed`` process group (:func:`skpmlp.data_parallel`)
        has one entry with ``world_size`` and ``rows_per_rank`` (rows of
        every step's batch on each rank) too."""),
)


def search_attributes(task, single):
    """The Attributes entries of a search estimator of ``task`` whose
    models are ``single`` (the class name of ``best_estimator_``)."""
    classes = [("classes_ : ndarray of shape (n_classes,)", """\
        Class labels, only with ``refit`` (as GridSearchCV); for a multilabel
        ``y`` (an indicator matrix of shape (n_samples, n_labels)),
        ``arange(n_labels)``, as scikit-learn's MLP.""")]
    return [
        *(classes if task == "classifier" else []),
        _out_activation(task, search=True),
        *_SEARCH_RUN,
        (f"best_estimator_ : {single} or {_ENSEMBLES[task]}",
         """\
        The best model, standalone, or the ensemble ``ensemble`` asks for
        (a weighted average of members, each a model or a fold ensemble).
        Only with ``refit``."""),
        *_SEARCH_BEST,
        ("validation_scores_per_model_ : ndarray like ``loss_curves_``, or None", f"""\
        Per-epoch {_default_score(task)} (or the negated loss, with
        ``monitor="loss"``) on the validation rows; NaN after a model
        stopped. Always set with ``cv=None`` (the held-out rows; not for a
        lone configuration trained on every row); with ``cv`` only when
        validation is monitored, i.e. with ``early_stopping=True`` or a
        ``pruning`` (a validation part of each fold's training rows), else
        None."""),
        *_SEARCH_MODELS,
        *_DATA_ATTRIBUTES,
    ]
