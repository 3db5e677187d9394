"""Settings for the whole test session."""

import os

import torch

if os.environ.get("PYTEST_XDIST_WORKER"):
    # the suite runs in one process per core (pytest-xdist): one torch
    # thread each, since OpenMP regions of oversubscribed threads stall
    torch.set_num_threads(1)
