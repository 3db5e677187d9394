"""Parameter and attribute text shared by the two population estimators."""

PARAMETERS = """
    hidden_layer_sizes : int, array-like of int, list of tuples, distribution or None, default=None
        Architectures to train. As in scikit-learn's MLP, an int is one
        network with one hidden layer and a sequence of ints, such as
        ``(64, 32)`` or ``[64, 32]``, ONE network with those hidden layers;
        a list of tuples (e.g. ``[(32,), (64, 64)]``) is several networks.
        A list mixing ints and tuples is ambiguous and raises an error. None
        trains ``(32,)``, ``(64,)``, ``(128,)`` and ``(64, 64)``. A
        distribution (an object with ``rvs``, needs ``n_models``) draws one
        architecture per configuration: an int-valued one such as
        ``scipy.stats.randint(16, 257)`` one hidden layer of the drawn
        width, a :class:`~skpmlp.LayerSizesDistribution` several depths.
    activation : str, array-like of str or distribution, default=("relu", "tanh", "logistic")
        Hidden activations to try: identity, logistic (alias sigmoid), tanh,
        relu, elu, selu, gelu, leaky_relu, hardshrink, mish.
    solver : {"adam", "sgd", "lbfgs"}, list of them or distribution, default="adam"
        Optimizer of every model: Adam, SGD with momentum as scikit-learn's
        MLP, or full-batch L-BFGS as scikit-learn's ``solver="lbfgs"``
        (scipy's L-BFGS-B), every model with its own curvature history and
        line search inside one fused run. scikit-learn recommends lbfgs for
        small data sets. With lbfgs, ``max_iter`` counts iterations, ``tol``
        is the gradient tolerance, ``max_fun`` bounds the loss evaluations,
        and ``batch_size``, ``learning_rate_init``, ``momentum``,
        ``n_iter_no_change``, ``early_stopping`` (ignored, as scikit-learn
        does) and ``monitor`` do not apply; ``pruning`` is refused. A list
        such as ``["sgd", "adam"]`` searches the solver per model, in the
        same fused run (lbfgs models train apart in the same call; mixing
        them with minibatch models is refused with ``early_stopping`` or
        ``pruning``).
    learning_rate_init : float, array-like of float or distribution, default=(0.001, 0.003, 0.01)
        Learning rates to try (a tuple, a list or an array such as
        ``np.logspace(-4, -2, 5)``); each model keeps its own inside the
        fused optimizer step. A distribution such as
        ``scipy.stats.loguniform(1e-4, 1e-1)`` is drawn from (see
        ``n_models``).
    alpha : float, array-like of float or distribution, default=0.0001
        L2 penalties to try (a tuple, a list, an array or a distribution),
        as scikit-learn's MLP applies them.
    batch_size : int, "auto", list of them or distribution, default="auto"
        Minibatch size; ``"auto"`` is ``min(200, n_samples)``. An int larger
        than the training rows is clipped to them, with scikit-learn's
        warning. A list (or an int-valued distribution) searches it per
        model: the models of each batch size train as one fused run, the
        runs one after another in the same ``fit`` (about 1.1x the cost of
        one run, see ``benchmarks/batch_size_cost.py``); halving then ranks
        models within their batch size.
    shuffle : bool, default=True
        Shuffle the training rows every epoch, as scikit-learn's MLP; with
        False every epoch takes them in the same order.
    max_iter : int, default=200
        Maximum number of epochs (iterations with ``solver="lbfgs"``).
    max_fun : int, default=15000
        ``solver="lbfgs"`` only: a model stops once it used more than
        ``max_fun`` loss evaluations (checked at the end of an iteration,
        as scipy's L-BFGS-B), as scikit-learn's MLP.
    n_repeats : int, default=1
        Number of independently initialised repeats of every configuration.
    n_models : int or None, default=None
        Number of configurations to draw, as ``n_iter`` of
        RandomizedSearchCV (each trained ``n_repeats`` times). None trains
        every combination of the lists (the grid's cross product); it
        needs every searched parameter to be a value or a list. With lists
        only, ``n_models`` configurations of the grid are sampled without
        replacement; with any distribution (an object with
        ``rvs(random_state=...)``), each configuration draws every
        parameter from its distribution or, uniformly, from its list. The
        draws depend on ``random_state`` only, and
        ``cv_results_["params"]`` holds the drawn values.
    param_grid : dict, list of dict or None, default=None
        Conditional search spaces, as ``GridSearchCV(param_grid=...)``
        takes them: each dict maps searched parameters
        (``hidden_layer_sizes``, ``activation``, ``learning_rate_init``,
        ``alpha``) to a list (a single value must be wrapped in one, as in
        GridSearchCV) or a distribution, and the parameters it leaves out
        keep this estimator's values. The population is the union of
        the dicts' grids, or with ``n_models`` draws from them (each draw
        picks a dict at random, as ParameterSampler). E.g.
        ``param_grid=[{"activation": ["relu"], "alpha": [1e-4, 1e-2]},
        {"activation": ["tanh"], "hidden_layer_sizes": [(32, 32)]}]``.
        As GridSearchCV, ``cv_results_["param_<name>"]`` is masked where a
        model's dict leaves out a parameter another dict sets (and this
        estimator gives it one value, which the model trains with);
        ``cv_results_["params"]`` holds every value, so it rebuilds the
        model. A value listed twice is two (identical) candidates.
    early_stopping : bool, default=False
        Stop each model when its validation score has not improved by
        ``tol`` for more than ``n_iter_no_change`` epochs, and keep its best
        weights. Otherwise each model stops on a training-loss plateau.
        With ``cv``, the validation score is that of a ``validation_fraction``
        part of each fold's training rows, averaged over the folds, so a
        model's fold replicas stop together. Stopped models are dropped from
        the fused network (compacted), so they stop costing compute.
    warm_start : bool, default=False
        Reuse the solution of the previous call to fit as initialization,
        as scikit-learn's MLP: with one configuration (one value per
        parameter, ``n_repeats=1``), the model starts from the previous
        fit's ``coefs_`` and ``intercepts_`` (its replica on every ``cv``
        fold and its refit too) instead of fresh initial weights (a previous
        fit with ``refit=False`` has none: it starts afresh); the
        optimizer and the stopping rule start afresh, ``n_iter_`` counts
        this fit's epochs, ``loss_curve_`` and ``validation_scores_`` go on
        from the previous fit's. The layer sizes and the classes must be the
        previous fit's.

        A search of several models resumes: every model that was neither
        pruned nor failed (diverged) continues, each ``cv`` fold replica
        from its own previous weights, for ``max_iter`` more epochs (a
        model that stopped early, converged, trains again: its stop does not
        carry over; a fit that was interrupted, or reached ``max_time``,
        continues where each model stopped). Pruned and failed models keep
        their weights and rows. ``n_iter_per_model_`` adds this fit's epochs,
        ``loss_curves_`` and ``validation_scores_per_model_`` go on,
        ``cv_results_`` holds the continued models' new scores, and the refit
        follows as usual (from fresh initial weights). The search must draw
        the same configurations on the same rows and folds: the same
        parameters, an int ``random_state`` (None keeps the previous fit's
        seed) and data of the same shape, else a ``ValueError`` says what
        changed. Not with ``refill``. This also works on a search loaded with
        :func:`skpmlp.io.load`.
    validation_fraction : float, default=0.1
        With ``cv=None``, the fraction of the rows held out (stratified for
        single-label classifiers; the fraction of the groups, whole, when
        ``fit`` gets ``groups``) to score and select models; with ``cv``, the fraction
        of each fold's training rows that early stopping and pruning watch.
    monitor : {"score", "loss"}, default="score"
        What early stopping and pruning watch on the validation rows each
        epoch, computed fused on the device: the accuracy (classifiers) or
        R^2 (regressors), as scikit-learn's MLP, or the validation loss
        (cross-entropy / half squared error, without the L2 term). With
        "loss", ``validation_scores_per_model_`` holds the negated loss, so higher is
        better either way (as scikit-learn's ``neg_log_loss``). The final
        ranking always uses ``scoring``.
    n_iter_no_change : int or np.inf, default=10
        Patience of the per-model stopping rule, in epochs; ``np.inf``
        never stops a model before ``max_iter`` (as scikit-learn's MLP).
    tol : float, default=1e-4
        Improvement that resets a model's patience. With
        ``solver="lbfgs"``, a model converges when its largest absolute
        gradient entry is at most ``tol`` (scipy's ``gtol``) or its loss
        decreases by a relative ``2.2e-9`` or less (scipy's ``ftol``).
    momentum : float, array-like of float or distribution, default=0.9
        SGD momentum, in [0, 1].
    nesterovs_momentum : bool or list of bool, default=True
        Use Nesterov's momentum with SGD.
    beta_1 : float, array-like of float or distribution, default=0.9
        Adam's decay rate of the first moment estimates, in [0, 1).
    beta_2 : float, array-like of float or distribution, default=0.999
        Adam's decay rate of the second moment estimates, in [0, 1).
    epsilon : float, array-like of float or distribution, default=1e-8
        Adam's numerical stability term, > 0.
    learning_rate : {"constant", "invscaling", "adaptive"} or list of them, default="constant"
        SGD's learning-rate schedule, as scikit-learn's MLP:
        ``"invscaling"`` divides ``learning_rate_init`` by
        ``t ** power_t`` (t the training samples seen), ``"adaptive"`` divides it
        by 5 where the stopping rule (``tol``, ``n_iter_no_change``) would
        stop the model, and stops only once it is below 1e-6. Adam ignores
        it.
    power_t : float, array-like of float or distribution, default=0.5
        The ``"invscaling"`` exponent.

        Each of ``solver``, ``momentum``, ``nesterovs_momentum``, ``beta_1``,
        ``beta_2``, ``epsilon``, ``learning_rate`` and ``power_t`` may be
        searched as the model parameters are: a list, a distribution (with
        ``n_models``) or a ``param_grid`` entry; models that differ in them
        train in one fused run, and each exported model carries its own.
        ``cv_results_`` has their ``param_*`` columns and ``params`` entries
        only when searched (several candidates, a distribution, or named in
        ``param_grid``).
    pruning : {None, "halving"}, default=None
        ``"halving"`` runs successive halving inside the fused run: after
        ``min_iter``, ``min_iter * halving_factor``, ... epochs, only the
        best ``1 / halving_factor`` of the models still training (by
        validation score, mean over folds) go on. A pruned model keeps the
        weights and score it had (its best ones with ``early_stopping``),
        ranks below every survivor, and its epoch count is in
        ``cv_results_["n_iter"]``. With ``n_jobs`` shards the halving ranks
        within each shard, so results then depend on ``n_jobs``. It ranks
        within memory chunks too, so these are planned from ``max_memory``
        alone, never from the free memory: a population too large for the
        device raises ``MemoryError`` unless ``max_memory`` is set.
    halving_factor : float, default=3
        Inverse of the fraction of models kept at each halving.
    min_iter : int, default=5
        Epochs before the first halving.
    refill : {None, "sample", "perturb"}, default=None
        An adaptive search that keeps the fused network full. None leaves
        the slots that ``pruning="halving"`` or ``early_stopping`` free
        empty. ``"sample"`` gives every freed slot (all fold replicas of a
        model together) a new configuration drawn from the search space,
        with fresh weights and optimizer state; its architecture and
        activation must fit the slot's group (the draws that fit no free
        slot are skipped). ``"perturb"`` is population-based training: a
        freed slot copies the weights and optimizer state of a surviving
        model of the same architecture and activation (drawn among the best
        quarter by validation score) and trains on with its searched
        continuous hyperparameters (``learning_rate_init``, ``alpha``,
        ``momentum``, ``beta_1``, ``beta_2``) multiplied by 0.8 or 1.25 (for
        a momentum or beta, its distance to 1), or drawn afresh with
        probability 0.2; where no survivor fits, a draw as ``"sample"``.
        Slots are refilled at the end of the epoch that freed them, while
        at least ``min_iter`` of the ``max_iter`` epochs are left. Every
        model trained is a row of ``cv_results_`` (the first ``n_models``,
        then refills in order; ``parent``, ``start_iter`` columns) and can
        be exported; a row's ``n_iter``, curves and exported ``n_iter_``
        count its own epochs. Needs ``pruning`` or ``early_stopping``, and
        ``n_jobs=None`` (one fused run). A refit retrains a row's final
        hyperparameters from fresh weights (a perturbed row's schedule is
        not replayed; ``refit=False`` and ``export_model`` give the trained
        model itself).
    max_models : int or None, default=None
        With ``refill``: how many models train in all, the first population
        included (at least its size); None sets no cap beyond ``max_iter``
        and ``max_time``.
    cv : int, cross-validation generator, iterable or None, default=None
        None holds out ``validation_fraction`` of the rows (of the groups,
        when ``fit`` gets ``groups``). Otherwise, as in GridSearchCV (an int
        K gives StratifiedKFold for single-label classifiers, KFold
        otherwise; group splitters such as GroupKFold get ``fit``'s
        ``groups``); every model is trained once per fold inside the
        same fused run (its fold replicas share its initial weights).
    scoring : str, callable, list, tuple, set, dict or None, default=None
        scikit-learn scorer(s) used to rank models on the held-out rows;
        None uses <default_score>. Several scorers, or a callable returning
        a dict of metrics, give multi-metric ``cv_results_`` columns, as
        GridSearchCV.
    ensemble_size : int, default=1
        With more than one, ``best_estimator_`` (and predict) averages the
        top ``ensemble_size`` models as ``selection`` orders them: their
        probabilities for classifiers, their predictions for regressors.
        With ``pruning``, models pruned by successive halving (partly
        trained) are passed over; only when fewer than ``ensemble_size``
        models trained to the end do the best pruned ones fill the
        ensemble up, with a warning. Failed models never enter.
        The members were selected on their validation scores, so the
        ensemble's score on the same validation data is optimistic: judge
        it on data the search never saw.
    refit : bool, str or callable, default=True
        Expose the best model as ``best_estimator_`` and predict with it
        (with multi-metric scoring, the name of the scorer that picks it).
        As GridSearchCV, a callable takes ``cv_results_`` and returns
        ``best_index_``; ``best_score_`` is then not set. With one metric
        any string refits as True does, as GridSearchCV.
        With ``cv`` the best configuration is retrained on all the data, as
        GridSearchCV does; with ``cv=None``, see ``holdout_refit``.
        ``refit=False`` leaves ``best_estimator_`` unset and prediction
        unavailable, as GridSearchCV does.
    holdout_refit : bool, default=True
        With ``cv=None`` and ``refit``: True retrains the chosen
        configuration(s) on all the rows, the validation part included, each
        for as many epochs as it trained in the search (``n_iter_``, or its
        best epoch with ``early_stopping``), from the same initial weights
        and batch order, as GridSearchCV refits; ``best_estimator_`` is then
        that model, with ``max_iter`` (and ``n_iter_no_change``) set to the
        epoch count and no early stopping, so its ``fit`` retrains exactly
        it. False returns the model trained in the search on the training
        part itself (its validation score then describes it). Ignored with
        ``cv``, and for a lone configuration (nothing was chosen; with
        ``early_stopping`` it is then scikit-learn's MLP, validation part
        included). The user guide's "Choosing the model" section has the
        measurements behind the default.
    selection : {"auto", "loss", "score"}, default="auto"
        What picks ``best_index_`` (and orders an ensemble's members):
        "loss" the lowest mean validation loss (log-loss for classifiers,
        squared error for regressors, without the L2 term:
        ``validation_loss_``), "score" the best
        ``rank_test_<scorer>`` (``scoring``, or the scorer ``refit``
        names), as GridSearchCV. "auto" is "loss" with ``scoring=None``
        and "score" when a scorer is given. ``cv_results_`` ranks and
        ``best_score_`` always use ``scoring``. Ties go by row order.
    tie_breaker : {"loss"} or None, default="loss"
        With ``selection="score"``, how models tied for a rank (the same
        mean validation score, frequent with accuracy on a small
        validation set) are ordered: "loss" prefers the lower mean
        validation loss, None takes the first row, as GridSearchCV.
    error_score : "raise" or float, default=np.nan
        Score of a fit (a model on a fold) that diverged or whose scoring
        raised; "raise" raises instead. As GridSearchCV, failed fits warn
        with :class:`~sklearn.exceptions.FitFailedWarning` and, if every
        fit failed, ``fit`` raises ``ValueError``.
    return_train_score : bool, default=False
        Also score every replica on its training rows.
    dtype : {"float32", "float64", "auto"}, default="float32"
        Training precision, and the dtype of the trained weights
        (``coefs_``, ``intercepts_``). ``"auto"`` is X's dtype (float32 or
        float64), as scikit-learn's MLP; the default is float32 whatever X's,
        because it trains about twice as fast as float64. Predictions are
        computed in the wider of X's and the weights' dtypes, as
        scikit-learn's MLP: float32 only for float32 X with float32 weights.
    device : str, default="auto"
        Torch device; ``"auto"`` uses CUDA when available. Resolved where
        each fused run trains: with ``n_jobs``, on the worker running the
        shard, so a client without CUDA can send ``device="cuda"`` shards to
        GPU workers (it then scores the trained models on its CPU). Fitted
        state is kept as numpy arrays, so a fitted estimator loads without
        a GPU.
    n_jobs : int or None, default=None
        None trains the population as one fused network in this process.
        An int splits it into that many shards of about equal cost (-1: as
        many as joblib's backend has workers), each trained as its own
        fused network in a joblib task: the active joblib backend decides
        where (loky processes by default, a Dask cluster under
        ``joblib.parallel_config(backend="dask")``). With ``device="cuda"``
        shards spread over the visible GPUs. Results equal one in-process
        run up to floating-point rounding (except for ``pruning``, which
        ranks within a shard).
    max_memory : float or None, default=None
        Bytes a fused run may use on its device; None uses 80% of the free
        memory (on the CPU, the least the host's available memory, the
        container's cgroup limit and ``ulimit -v`` leave). A population that needs more trains as chunks, one after
        another, with the same results up to floating-point rounding; a
        chunk that still runs out of memory is split and retried with a
        warning. With ``pruning``, chunks are planned from ``max_memory``
        alone (None: never chunked; a population that does not fit raises
        ``MemoryError``, and so does running out of memory), so the results
        do not depend on the memory free at fit time.
    max_time : float or None, default=None
        Seconds, counted from the start of ``fit``, after which training
        ends at the end of an epoch; what was trained is kept and scored (a
        warning says how far it got). One budget for the whole fit, the cv
        refit included: a memory chunk or ``n_jobs`` shard that would start
        after it (e.g. queued on a busy cluster) trains nothing and its
        models score ``error_score``; the fit's first run always trains at
        least one epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the validation split, the minibatch order and, with each
        model's own hyperparameters and repeat index, its initial weights.
    verbose : int, default=0
        1 prints GridSearchCV's "Fitting K folds for each of N
        candidates" and shows a progress bar per fused run (epochs, models
        still training, best validation score so far; needs tqdm, else a
        line every few epochs); 2 also prints a line per epoch and, once
        the models are scored, GridSearchCV's ``[CV] END ...`` line per fit
        (a model on a fold: its parameters and time); 3 adds the fold and
        its scores to those lines (``[CV k/n] END ...; score=...``); 0
        prints nothing. With ``n_jobs``, one bar covers the whole search
        (fit-epochs: a model on a fold for an epoch), fed by the shards
        while they train, from loky processes and Dask workers alike, with
        a line as each shard finishes.
"""

ATTRIBUTES = """
    n_models_ : int
        Number of models (configurations x repeats) in the search.
    n_splits_ : int
        Number of folds (1 with ``cv=None``).
    multimetric_ : bool
        Whether several scorers were used.
    refit_time_ : float
        Seconds spent building ``best_estimator_``: retraining the best
        configuration(s) on all the data (with ``cv``, or ``cv=None`` and
        ``holdout_refit``), else only assembling the trained model(s),
        close to 0. Only with ``refit``.
    cv_results_ : dict of ndarray
        One row per model, in GridSearchCV's schema (``params``,
        ``param_<name>``, ``param_repeat``, ``split0_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``,
        ``mean_fit_time``, ...). Models are trained together, so each row's
        fit time is an equal share of the fused run's wall time; its score
        time is its share of each fold's scoring (0 for a failed fit, as
        GridSearchCV's).
        ``pandas.DataFrame(cv_results_)`` gives a table.
    best_index_ : int
        Row of the best model (set unless multi-metric with
        ``refit=False``, as GridSearchCV).
    best_params_ : dict
        Its hyperparameters (valid estimator parameters; the repeat index
        is in ``cv_results_["param_repeat"]``).
    best_score_ : float
        The mean validation score (``scoring``) of the chosen configuration
        (row ``best_index_``; on the held-out rows, or over the cv folds),
        as GridSearchCV's. With ``selection="loss"`` the chosen row has the
        lowest validation loss, so ``best_score_`` may be below the highest
        ``mean_test_score``. When ``best_estimator_`` was retrained on all
        the rows (``cv``, or ``holdout_refit``), it describes the
        configuration, not that retrained model, which no held-out data
        scored. NaN for a lone configuration trained on every row; not set
        with a callable ``refit``, as GridSearchCV.
    best_estimator_ : <single>
        The best model, standalone. Only with ``refit``.
    scorer_ : callable or dict
        The scorer(s) used to rank models.
    coefs_, intercepts_ : list of ndarray
        The best model's weights (``best_estimator_``'s, the first member
        of an ensemble), as scikit-learn's MLP. Only with ``refit``, as
        are the next attributes.
    n_iter_, t_, n_layers_, n_outputs_ : int
        The best model's epochs trained, training samples seen, layers and
        output units, as scikit-learn's MLP (``n_iter_`` is one int, the
        best model's: every model's is in ``n_iter_per_model_``).
    loss_, best_loss_, best_validation_score_ : float or None
        The best model's last and lowest training loss and best validation
        score, with scikit-learn's rules (``best_loss_`` None with
        ``early_stopping``, ``best_validation_score_`` None without).
    loss_curve_, validation_scores_ : list of float or None
        The best model's per-epoch training loss and, with
        ``early_stopping``, validation scores (else None), as
        scikit-learn's MLP; every model's are in ``loss_curves_`` and
        ``validation_scores_per_model_``.
    out_activation_ : str
        "softmax" (classifiers), "identity" or "exp" (regressors).
    loss_curves_ : ndarray of shape (n_models, n_epochs) or (n_models, n_splits, n_epochs)
        Training loss per epoch (with ``cv``, per fold replica); NaN after
        a model stopped.
    validation_scores_per_model_ : ndarray like ``loss_curves_``, or None
        Per-epoch <default_score> (or the negated loss, with
        ``monitor="loss"``) on the validation rows; NaN after a model
        stopped. Always
        set with ``cv=None`` (the held-out rows; not for a lone
        configuration trained on every row); with ``cv`` only when
        validation is monitored, i.e. with ``early_stopping=True`` or a
        ``pruning`` (a validation part of each fold's training rows), else
        None.
    validation_loss_ : ndarray of shape (n_models,)
        Every model's loss on the held-out rows (with ``cv``, the mean over
        its folds' test rows): log-loss for classifiers, half the squared
        error for regressors (as their training loss, without the L2 term);
        NaN for a model that failed. What ``selection="loss"`` and
        ``tie_breaker="loss"`` compare.
    n_iter_per_model_ : ndarray of shape (n_models,) or (n_models, n_splits)
        Epochs each model (fold replica) trained for.
    hyperparameter_schedules_ : list of dict
        Only with ``refill``: per row of ``cv_results_``, the
        hyperparameters of every epoch along its lineage (its oldest
        ancestor's epochs, then its parent's, then its own): ``"iter"``
        (the run's epochs, 0-based) and one array per searched continuous
        hyperparameter. ``cv_results_`` then also has ``parent`` (the row
        whose weights and optimizer state a ``"perturb"`` refill copied,
        else -1), ``start_iter`` (the run's epoch a row started
        training at) and ``slot`` (the slot of the fused network, its fold
        replicas together, that trained it, 0 to ``n_models - 1``).
    ensemble_indices_ : ndarray of int
        Rows of the models in ``best_estimator_``, best first (one row
        unless ``ensemble_size > 1``). Only with ``refit``.
    shards_ : list of dict
        One entry per fused run: ``shard``, ``models``, ``device``,
        ``host``, ``pid``, ``worker`` (Dask address, or None), ``threads``,
        ``seconds``; a fit whose rows were split over the ranks of a
        ``torch.distributed`` process group (:func:`skpmlp.data_parallel`)
        has one entry with ``world_size`` and ``rows_per_rank`` (rows of
        every step's batch on each rank) too.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has string feature names.
"""
