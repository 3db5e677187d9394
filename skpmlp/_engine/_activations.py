"""Activation functions of the fused engine, as lookup tables.

One table maps every accepted name to its canonical name (``sigmoid`` is an
alias of ``logistic``, as in the paper), one maps canonical names to torch
functions. The training loop and the standalone models both use these
tables, so a model computes the same function inside and outside a
population.
"""

import torch
import torch.nn.functional as F

ACTIVATIONS = {
    "identity": lambda x: x,
    "logistic": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "elu": F.elu,
    "selu": F.selu,
    "gelu": F.gelu,
    "leaky_relu": F.leaky_relu,
    "hardshrink": F.hardshrink,
    # composite: F.mish's CPU kernel measured 3-6x slower than this
    "mish": lambda x: x * torch.tanh(F.softplus(x)),
}

#: torch module computing each activation, for plain ``nn.Sequential``
#: copies of a model (its defaults, e.g. exact gelu, leaky slope 0.01,
#: hardshrink 0.5, are those of the functions above).
TORCH_MODULES = {
    "identity": torch.nn.Identity,
    "logistic": torch.nn.Sigmoid,
    "tanh": torch.nn.Tanh,
    "relu": torch.nn.ReLU,
    "elu": torch.nn.ELU,
    "selu": torch.nn.SELU,
    "gelu": torch.nn.GELU,
    "leaky_relu": torch.nn.LeakyReLU,
    "hardshrink": torch.nn.Hardshrink,
    "mish": torch.nn.Mish,
}

ACTIVATION_ALIASES = {"sigmoid": "logistic"}

#: Every name a user may pass, canonical names first.
ACTIVATION_NAMES = tuple(ACTIVATIONS) + tuple(ACTIVATION_ALIASES)

#: Stable integer code of each canonical name; part of a model's seed, so it
#: must never be reordered.
ACTIVATION_CODES = {name: code for code, name in enumerate(ACTIVATIONS)}

#: Glorot-uniform factor per activation, as scikit-learn's MLP uses
#: (``sqrt(factor / (fan_in + fan_out))`` bounds the initial weights).
INIT_FACTORS = {name: (2.0 if name == "logistic" else 6.0) for name in ACTIVATIONS}


def canonical_activation(name):
    """Return the canonical name of activation ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a known activation; the message lists the allowed
        names.
    """
    name = ACTIVATION_ALIASES.get(name, name)
    if name not in ACTIVATIONS:
        raise ValueError(
            f"Unknown activation {name!r}; allowed activations are "
            f"{', '.join(map(repr, ACTIVATION_NAMES))}."
        )
    return name
