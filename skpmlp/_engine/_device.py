"""Device names: checked where the user gives them, resolved where a run trains.

A search's client and the workers that train its shards may be different
machines (a CPU laptop driving a Dask cluster of GPU workers), so the
client only checks that ``device`` is a valid name (:func:`check_device`);
each fused run resolves it on the machine it trains on
(:func:`resolve_device`), and work the client does itself (scoring the
trained models) runs on a device the client has (:func:`local_device`).
"""

import socket

import torch


def check_device(device):
    """Check a user's ``device`` value without looking for the hardware.

    Returns
    -------
    str
        ``"auto"``, or the canonical torch device string (``"cpu"``,
        ``"cuda"``, ``"cuda:N"``).

    Raises
    ------
    ValueError
        If ``device`` is not a valid torch device, or neither the CPU nor
        CUDA.
    """
    if device == "auto":
        return device
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device={device!r} is not a valid torch device: {exc}") from None
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r} is not supported; use 'auto', 'cpu' or 'cuda[:N]'.")
    return str(parsed)


def resolve_device(device):
    """Turn a user's ``device`` value into the torch device string a run
    trains on, on this machine.

    ``"auto"`` picks CUDA when available, else the CPU (a run asks
    :func:`~._backends._choice.run_device` instead, which decides
    ``"auto"`` by the run's size).

    Raises
    ------
    ValueError
        If ``device`` is not a valid torch device, or names CUDA on a machine
        without it.
    """
    device = check_device(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but CUDA is not available on "
            f"{socket.gethostname()}, where this run trains."
        )
    return device


def local_device(device):
    """Where this process computes with models trained on ``device``: that
    device resolved here, or the CPU when it names CUDA and this machine has
    none (a client whose shards trained on remote GPUs). ``"auto"`` gives
    the CPU: this work is forward passes, a small share of a fit, and a
    GPU's start (its context: seconds) would cost a small search more
    than it saves."""
    if check_device(device) in ("auto", "cpu") or not torch.cuda.is_available():
        return "cpu"
    return resolve_device(device)
