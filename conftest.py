"""Settings for collecting the whole repository: tests and doctests.

Triton runs kernels on the CPU only through its interpreter, which must be
asked for (``TRITON_INTERPRET=1``) before the kernels are defined, that is
before ``skpmlp._kernels._triton_step`` is first imported, here by the
doctest collection or a test. Where CUDA is present the kernels run on it
for real.
"""

import os
from importlib.util import find_spec

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

# the kernel module imports triton, an optional dependency
collect_ignore = [] if find_spec("triton") else ["skpmlp/_kernels/_triton_step.py"]
