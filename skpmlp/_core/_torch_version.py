"""The oldest torch skpmlp runs on, checked when skpmlp is imported.

Every optimizer step calls torch's fused multi-tensor kernels
(``torch._fused_adam_`` / ``torch._fused_sgd_``, see ``_engine/_optim.py``),
whose CPU kernels arrived in torch 2.4 (pytorch/pytorch#123074 and #123629);
with an older torch, the first fit on the CPU would fail deep inside
training. ``setup.cfg`` asks for the same minimum.
"""

import re

import torch

MIN_TORCH = (2, 4)


def torch_release(version):
    """``(major, minor)`` of a torch version string such as ``"2.4.1+cpu"``
    or ``"2.5.0a0+git1234"``."""
    match = re.match(r"(\d+)\.(\d+)", str(version))
    if match is None:
        raise ValueError(f"Cannot read a torch version from {version!r}.")
    return int(match[1]), int(match[2])


def check_torch_version(version=None):
    """Raise ImportError unless torch ``version`` (default: the installed
    one) is at least :data:`MIN_TORCH`.

    Raises
    ------
    ImportError
        Naming the installed and the required versions.
    """
    version = torch.__version__ if version is None else version
    if torch_release(version) < MIN_TORCH:
        required = ".".join(map(str, MIN_TORCH))
        raise ImportError(
            f"skpmlp requires torch >= {required} (its CPU training uses the fused Adam and SGD "
            f"kernels added in torch {required}), but torch {version} is installed. Upgrade with "
            f"pip install 'torch>={required}'."
        )
