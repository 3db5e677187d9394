"""Device resolution (torch only)."""

import torch


def resolve_device(device):
    """Turn a user's ``device`` value into a torch device string.

    ``"auto"`` picks CUDA when available, else the CPU.

    Raises
    ------
    ValueError
        If ``device`` is not a valid torch device, or names CUDA on a machine
        without it.
    """
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device={device!r} is not a valid torch device: {exc}") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available here.")
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r} is not supported; use 'auto', 'cpu' or 'cuda[:N]'.")
    return str(parsed)
