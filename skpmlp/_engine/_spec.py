"""Dataclasses that describe a population and how to train it.

The engine knows models only through these: the search layer above turns
estimator parameters into a :class:`PopulationSpec` and a
:class:`TrainConfig`, and receives a :class:`TrainResult` back.
"""

import dataclasses
from dataclasses import dataclass, field, fields

import numpy as np

from .._kernels import SOLVERS

#: The values of ``learning_rate``: scikit-learn's SGD schedules, then the
#: schedules over ``max_iter`` epochs of every minibatch solver.
SCHEDULES = ("constant", "invscaling", "adaptive", "cosine", "coslog4")


@dataclass(frozen=True, order=True)
class OptimizerSettings:
    """One model's optimizer, as scikit-learn's MLP parameters name it, and
    the other per-model settings of its training: its learning-rate
    schedule and warm-up, its loss's label smoothing, its dropout and
    whether its network starts with a learnable diagonal scaling layer.

    Parameters
    ----------
    solver : {"adam", "sgd", "lbfgs"}
        ``"lbfgs"`` models train full-batch by their own L-BFGS
        (:mod:`skpmlp._engine._lbfgs._fused`), apart from the minibatch ones; the other fields
        do not apply to them.
    momentum : float
        SGD momentum (unused by Adam).
    nesterovs_momentum : bool
        Nesterov momentum for SGD.
    beta_1, beta_2, epsilon : float
        Adam's coefficients (unused by SGD).
    learning_rate : {"constant", "invscaling", "adaptive", "cosine", "coslog4"}
        The schedule (:mod:`skpmlp._engine._minibatch._schedules`):
        ``"invscaling"`` and ``"adaptive"`` are SGD's (Adam ignores them, as
        scikit-learn's MLP); ``"cosine"`` and ``"coslog4"`` apply to every
        minibatch solver.
    power_t : float
        The invscaling exponent.
    amsgrad : bool
        Adam's AMSGrad variant (``torch.optim.Adam(amsgrad=True)``): the
        step divides by the running maximum of the second moment.
    warmup_fraction : float
        The rate warms up linearly over this fraction of ``max_iter``
        epochs (every minibatch solver; 0: no warm-up).
    label_smoothing : float
        Classification losses only: the softmax cross-entropy's targets are
        ``(1 - label_smoothing) * onehot + label_smoothing / n_classes``
        (``torch.nn.functional.cross_entropy(label_smoothing=...)``), a
        multilabel model's 0/1 targets ``y * (1 - label_smoothing) +
        label_smoothing / 2``; L-BFGS models too. Ignored by regression.
    diagonal_scaling : bool
        The model multiplies its inputs by a learnable per-feature scale
        ``s`` (initialised to 1) before its first layer (RealMLP's first
        "scale" layer, Holzmueller et al. 2024): ``h1 = act((x * s) W1 + b1)``.
        ``s`` trains with the model's own optimizer, learning rate and
        schedule, and is never penalised by ``alpha`` (as a bias). It sits
        here, beside the optimizer, so that every path that carries a
        model's per-model settings (searches, checkpoints, refills, exports)
        carries it too; the network's layout reads it
        (:func:`~._build.build_network` puts scaled models in groups of
        their own).
    dropout : float
        Inverted dropout on every hidden layer's activations while training
        (:mod:`skpmlp._engine._dropout`: masks hashed from the model's own
        seed and the step, kept units scaled by ``1 / (1 - dropout)``);
        none at prediction. Minibatch solvers only (a stochastic objective
        breaks L-BFGS's line search).
    """

    solver: str = "adam"
    momentum: float = 0.9
    nesterovs_momentum: bool = True
    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-8
    learning_rate: str = "constant"
    power_t: float = 0.5
    amsgrad: bool = False
    warmup_fraction: float = 0.0
    label_smoothing: float = 0.0
    diagonal_scaling: bool = False
    dropout: float = 0.0

    def __post_init__(self):
        assert self.solver in SOLVERS
        assert self.learning_rate in SCHEDULES
        assert 0 <= self.warmup_fraction <= 1 and 0 <= self.label_smoothing < 1
        assert 0 <= self.dropout < 1 and not (self.solver == "lbfgs" and self.dropout > 0)


@dataclass(frozen=True)
class PopulationSpec:
    """The models of a population, one entry per model.

    Parameters
    ----------
    hidden_layer_sizes : list of tuple of int
        Hidden widths of every model, e.g. ``(64,)`` or ``(64, 32)``.
    activations : list of str
        Canonical activation name of every model.
    learning_rates : ndarray of shape (n_models,)
        Learning rate of every model.
    alphas : ndarray of shape (n_models,)
        L2 penalty of every model.
    init_seeds : list of tuple of int
        Entropy of every model's initial weights. It must depend only on the
        search's random state and the model's own hyperparameters and repeat
        index, never on the model's position in the population.
    optimizers : list of OptimizerSettings, optional
        Every model's own optimizer; by default the one
        :meth:`TrainConfig.optimizer_settings` describes, for all.
    initial_weights : list of (list of ndarray, list of ndarray), optional
        Every model's own initial ``(coefs, intercepts)`` (a warm start:
        a previous fit's weights); by default drawn from ``init_seeds``.
    fold_initial_weights : list of list of (list of ndarray, list of ndarray), optional
        ``fold_initial_weights[k][i]``: the initial ``(coefs, intercepts)``
        of fold k's replica of model i (a resumed search: every replica
        continues from its own previous weights). Overrides
        ``initial_weights``; :meth:`replicate` needs one entry per fold.
    batch_sizes : ndarray of int of shape (n_models,), optional
        Every model's own minibatch size; by default ``config.batch_size``
        for all. Models of different batch sizes step through different
        batch plans, so they train as separate fused runs (see
        :func:`~._train.train_population`).
    """

    hidden_layer_sizes: list
    activations: list
    learning_rates: np.ndarray
    alphas: np.ndarray
    init_seeds: list
    optimizers: list = None
    initial_weights: list = None
    batch_sizes: np.ndarray = None
    fold_initial_weights: list = None

    def __post_init__(self):
        n = len(self.hidden_layer_sizes)
        assert len(self.activations) == n
        assert len(self.learning_rates) == n and len(self.alphas) == n
        assert len(self.init_seeds) == n
        assert self.optimizers is None or len(self.optimizers) == n
        assert self.initial_weights is None or len(self.initial_weights) == n
        assert self.batch_sizes is None or len(self.batch_sizes) == n
        folds = self.fold_initial_weights
        assert folds is None or all(len(w) == n for w in folds)

    def optimizers_of(self, config):
        """Every model's :class:`OptimizerSettings` (``config``'s where the
        spec gives none)."""
        if self.optimizers is None:
            return [config.optimizer_settings()] * self.n_models
        return list(self.optimizers)

    def batch_sizes_of(self, config):
        """Every model's batch size, an int array (``config``'s where the
        spec gives none)."""
        if self.batch_sizes is None:
            return np.full(self.n_models, config.batch_size, dtype=np.int64)
        return np.asarray(self.batch_sizes, dtype=np.int64)

    @property
    def n_models(self):
        return len(self.hidden_layer_sizes)

    def replicate(self, n_copies):
        """The spec repeated ``n_copies`` times (one copy per fold); copies
        share their models' seeds, hence their initial weights (unless
        ``fold_initial_weights`` gives each fold's own)."""
        index = list(range(self.n_models)) * n_copies
        replicas = dataclasses.replace(self, fold_initial_weights=None).subset(index)
        if self.fold_initial_weights is not None:
            assert len(self.fold_initial_weights) == n_copies
            weights = [w for fold in self.fold_initial_weights for w in fold]
            replicas = dataclasses.replace(replicas, initial_weights=weights)
        return replicas

    def subset(self, indices):
        """Return the spec restricted to the models at ``indices``."""
        indices = list(indices)
        return PopulationSpec(
            hidden_layer_sizes=[self.hidden_layer_sizes[i] for i in indices],
            activations=[self.activations[i] for i in indices],
            learning_rates=np.asarray(self.learning_rates)[indices],
            alphas=np.asarray(self.alphas)[indices],
            init_seeds=[self.init_seeds[i] for i in indices],
            optimizers=None if self.optimizers is None else [self.optimizers[i] for i in indices],
            initial_weights=(
                None if self.initial_weights is None
                else [self.initial_weights[i] for i in indices]
            ),
            batch_sizes=(
                None if self.batch_sizes is None else np.asarray(self.batch_sizes)[indices]
            ),
            fold_initial_weights=(
                None if self.fold_initial_weights is None
                else [[fold[i] for i in indices] for fold in self.fold_initial_weights]
            ),
        )


@dataclass(frozen=True, kw_only=True)
class TrainConfig(OptimizerSettings):
    """How every model of a population is trained.

    Its :class:`OptimizerSettings` fields (``solver``, ``momentum``, ...,
    given by keyword as all the others) are the optimizer of models whose
    spec gives none.

    Parameters
    ----------
    task : {"classification", "regression", "multilabel"}
        Softmax cross-entropy, squared-error loss, or one sigmoid
        log-loss per label summed over labels (multilabel: 2-D 0/1 targets).
    n_outputs : int
        Number of classes (classification), targets (regression) or labels
        (multilabel).
    batch_size : int
    max_iter : int
        Maximum number of epochs (L-BFGS: of iterations).
    max_fun : int
        L-BFGS only: a model stops once it used more than ``max_fun``
        loss evaluations (checked at the end of an iteration, as scipy's
        L-BFGS-B).
    tol, n_iter_no_change :
        Per-model stopping rule, as in scikit-learn's MLP: a model stops when
        its monitored quantity has not improved by ``tol`` for more than
        ``n_iter_no_change`` consecutive epochs. ``n_iter_no_change=inf`` never stops.
    early_stopping : bool
        Monitor the validation score (and keep the best weights) instead of
        the training loss. L-BFGS models (full batch) stop by scipy's
        L-BFGS-B rules instead: largest absolute gradient entry ``<= tol``
        or relative loss decrease ``<= 2.2e-9``.
    restore_best_weights : bool
        Watch every replica's own validation loss (cross-entropy / half
        squared error / half Poisson deviance, no L2 term; the loss
        whatever ``monitor`` is) on its fold's evaluation rows each epoch, and end
        the replica with the weights of its own best epoch (the first of
        ties), independently of every other replica; ``best_epoch`` of the
        result says which. Stopping is unchanged (the training-loss rule,
        or early stopping's), and so are the rungs. Needs evaluation rows;
        L-BFGS runs (never monitored) ignore it.
    shuffle : bool
        Draw a new order of each fold's training rows every epoch (else
        the batches take the rows in the order given), as scikit-learn's MLP.
    shuffle_seed : int
        Seed of the minibatch order; the same for every model.
    dtype : {"float32", "float64"}
    device : str
        ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; a run resolves it
        on the machine it trains on (:func:`~._device.resolve_device`).
    max_padding : float
        Largest fraction of padded (wasted) hidden units accepted when models
        of different widths share one batched matmul.
    pruning : {None, "halving"}
        Successive halving inside the run: at epochs ``min_iter``,
        ``min_iter * halving_factor``, ``min_iter * halving_factor**2``, ...
        only the best ``1 / halving_factor`` of the models still training
        (by validation score, mean over folds) go on; the others stop.
    halving_factor : float
    min_iter : int
        Epochs before the first halving.
    min_survivors : int
        Models every halving rung keeps at least (of those still in the
        race): an ensemble's size, so that its members train to the end.
    compact_fraction : float
        The network drops its stopped models (parameters and optimizer
        state) once this fraction of its slots has stopped; above 1 never.
    monitor : {"score", "loss"}
        What early stopping and pruning watch on the evaluation rows: the
        accuracy / R^2, or the negated loss (higher is better either way).
    loss : {"squared_error", "poisson"}
        Regression loss: half squared error on the raw outputs, or half
        Poisson deviance with an exponential output (log link), as
        scikit-learn's MLPRegressor. Ignored by the other tasks.
    refill : {None, "sample", "perturb"}
        What a slot freed by halving or a stopping rule trains next: nothing
        (None), a new configuration drawn from the search space, or a
        perturbed copy of a surviving model (population-based training); see
        :mod:`skpmlp._engine._minibatch._refill`. The run then needs a refill source.
    max_models : int or None
        With ``refill``, how many models may train in all (first population
        included); None: no cap.
    backend : {"auto", "native", "triton", "torch"}
        How each epoch's steps run: the per-model native kernel
        (``"native"``, CPU only), the Triton kernels (``"triton"``, CUDA,
        or the CPU in Triton's interpreter), torch's batched ops
        (``"torch"``, the reference and the fallback), or a kernel wherever
        one can run (``"auto"``: native on the CPU, Triton on CUDA).
    """

    task: str
    n_outputs: int
    batch_size: int = 200
    max_iter: int = 200
    max_fun: int = 15000
    tol: float = 1e-4
    n_iter_no_change: int = 10
    early_stopping: bool = False
    restore_best_weights: bool = False
    shuffle: bool = True
    shuffle_seed: int = 0
    dtype: str = "float32"
    device: str = "cpu"
    max_padding: float = 0.25
    pruning: str = None
    halving_factor: float = 3.0
    min_iter: int = 5
    compact_fraction: float = 0.25
    monitor: str = "score"
    backend: str = "auto"
    loss: str = "squared_error"
    refill: str = None
    max_models: int = None
    min_survivors: int = 1

    def __post_init__(self):
        super().__post_init__()
        assert self.task in ("classification", "regression", "multilabel")
        assert self.monitor in ("score", "loss")
        assert self.pruning in (None, "halving")
        assert self.backend in ("auto", "native", "triton", "torch")
        assert self.loss in ("squared_error", "poisson")
        assert self.refill in (None, "sample", "perturb")

    def optimizer_settings(self):
        """The :class:`OptimizerSettings` of models whose spec gives none:
        the config's own."""
        names = [f.name for f in fields(OptimizerSettings)]
        return OptimizerSettings(**{name: getattr(self, name) for name in names})

    def halving_epochs(self):
        """Epoch counts after which a halving happens (below ``max_iter``)."""
        if self.pruning is None:
            return set()
        epochs, e = set(), float(self.min_iter)
        while round(e) < self.max_iter:
            epochs.add(int(round(e)))
            e *= self.halving_factor
        return epochs


@dataclass
class TrainResult:
    """What training a population over K folds returns; numpy only.

    Every model is trained once per fold (its *replicas*, which share its
    initial weights).

    Attributes
    ----------
    coefs : list of list of list of ndarray
        ``coefs[k][i][l]``: fold k's replica of model i, weight matrix of
        layer l, of shape (fan_in, fan_out), as scikit-learn's ``coefs_``.
    intercepts : list of list of list of ndarray
        ``intercepts[k][i][l]`` of shape (fan_out,).
    loss_curves : ndarray of shape (n_models, n_folds, n_epochs)
        Mean training loss (L2 term included) per epoch; NaN after a
        replica stopped.
    validation_scores : ndarray of shape (n_models, n_folds, n_epochs) or None
        Accuracy / R^2 (or the negated loss, ``monitor="loss"``) on each fold's
        validation rows per epoch; NaN after a replica stopped. None when
        not monitored.
    n_iter : ndarray of shape (n_models, n_folds)
        Epochs each replica trained for.
    converged : ndarray of bool of shape (n_models, n_folds)
        Whether each replica stopped by its stopping rule before ``max_iter``.
    diverged : ndarray of bool of shape (n_models, n_folds)
        Whether each replica's loss became NaN or infinite; it was frozen
        when detected.
    pruned : ndarray of bool of shape (n_models, n_folds)
        Whether each replica was stopped by successive halving.
    best_epoch : ndarray of int of shape (n_models, n_folds) or None
        With ``restore_best_weights``, the epoch (1-based: after how many
        epochs) whose weights each replica holds, its lowest validation
        loss; 0 where no epoch had a finite one (it holds its initial
        weights). None otherwise.
    train_time : float
        Wall time of the fused training, in seconds.
    halted : {None, "interrupted", "terminated", "max_time"}
        Why training ended before every model finished, if it did.
    extra : dict
        Diagnostics (e.g. where the parts of a split run were trained).
    """

    coefs: list
    intercepts: list
    loss_curves: np.ndarray
    validation_scores: np.ndarray = None
    n_iter: np.ndarray = None
    converged: np.ndarray = None
    diverged: np.ndarray = None
    pruned: np.ndarray = None
    best_epoch: np.ndarray = None
    train_time: float = 0.0
    halted: str = None
    extra: dict = field(default_factory=dict)
