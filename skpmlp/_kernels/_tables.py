"""The layout of the per-model tables every step kernel reads: the int64
``meta`` table (a model's slot, depth, activation, fold, solver, layer sizes
and flat offsets) and the float64 ``hyper`` table (its optimizer scalars).

One definition for the C++ kernel (``mlp_step.cpp``, whose ``MAX_DEPTH``
must match) and the Triton kernels (``_triton_step.py``); nothing here
imports torch or triton.
"""

#: Deepest supported network (hidden layers); must match MAX_DEPTH in C++.
MAX_DEPTH = 8

#: Columns of the int64 ``meta`` table, one row per model.
META_FIELDS = {
    "slot": 0,
    "depth": 1,
    "activation": 2,
    "fold": 3,
    "solver": 4,
    "nesterov": 5,
    "sizes": 6,  # MAX_DEPTH + 2 layer sizes
    "w_off": 6 + MAX_DEPTH + 2,  # MAX_DEPTH + 1 weight offsets
    "b_off": 6 + 2 * MAX_DEPTH + 3,  # bias offsets
    "ld": 6 + 3 * MAX_DEPTH + 4,  # weight row strides
    # dropout (skpmlp._engine._dropout): the model's 32-bit key and its
    # rate's threshold ceil(p * 2**32), 0 without dropout (the native
    # kernel's and the Triton kernels')
    "dropout_key": 6 + 4 * MAX_DEPTH + 5,
    "dropout_threshold": 6 + 4 * MAX_DEPTH + 6,
}
META_WIDTH = 6 + 4 * MAX_DEPTH + 7

#: Columns of the float64 ``hyper`` table, one row per model.
#: ``step_offset``: the fold's optimizer steps a model did not take (it
#: joined the run later, or took over another model's optimizer state);
#: ``label_smoothing``: the softmax / logistic loss's (0: none);
#: ``dropout_scale``: a kept unit's factor ``1 / (1 - p)`` (with the meta
#: table's ``dropout_threshold``)
HYPER_FIELDS = {
    "lr": 0,
    "alpha": 1,
    "beta_1": 2,
    "beta_2": 3,
    "epsilon": 4,
    "momentum": 5,
    "step_offset": 6,
    "label_smoothing": 7,
    "dropout_scale": 8,
}
HYPER_WIDTH = 9

LOSS_CODES = {"softmax": 0, "squared": 1, "logistic": 2}

#: ``Epochs::score``'s codes in ``mlp_step.cpp``: what the kernel computes
#: of a model's evaluation rows (None: nothing, the host scores the outputs)
SCORE_CODES = {None: 0, "accuracy": 1, "r2": 2, "subset_accuracy": 3}
