"""The trainers of a run's epochs, one per backend, and the choice between them.

Every backend is a :class:`~skpmlp._engine._backends._torch.PopulationTrainer`
(torch's fused ops, the reference) or a subclass whose epochs run elsewhere:
the native CPU kernel (``_native``) or the Triton kernels (``_triton``), both
reading the per-model tables of ``_kernel_tables``. ``_choice`` decides which
one trains a run.
"""

from ._choice import choose_trainer, fallback_reason, prepare_kernel, run_device, torch_is_faster

__all__ = ["choose_trainer", "fallback_reason", "prepare_kernel", "run_device", "torch_is_faster"]
