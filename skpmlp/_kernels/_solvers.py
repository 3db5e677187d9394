"""The solvers: one row per value of the ``solver`` parameter, read wherever a solver matters.

The parameter table takes its options from here, the engine its run
families, state buffers, schedules and torch's fused update, the kernel
tables the code each kernel's update branches on (``mlp_step.cpp`` and
``_triton_step.py`` name the same codes; ``tests/kernels`` checks the C++
ones). Adding a solver is a row here and its update in the kernels.

Nothing here imports torch or triton.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Solver:
    """What skpmlp needs to know of one solver.

    Attributes
    ----------
    name : str
        The value of the ``solver`` parameter.
    family : {"minibatch", "lbfgs"}
        Minibatch solvers step through batches and count epochs; L-BFGS
        trains full-batch apart from them (its own runs).
    moments : bool
        Adam's first and second moments (and amsgrad's running maximum of
        the second), else SGD's momentum buffer.
    decoupled : bool
        ``alpha`` decays the weights directly at every step
        (``torch.optim.AdamW``'s ``weight_decay``: ``W *= 1 - lr * alpha``)
        instead of adding scikit-learn's L2 term ``alpha * W / batch`` to
        the gradient and ``0.5 * alpha * ||W||^2 / n`` to the loss.
    velocity : bool
        A momentum buffer that scikit-learn keeps as a velocity (rescaled
        when the learning rate changes), and the ``learning_rate``
        schedules (``"invscaling"``, ``"adaptive"``), which scikit-learn
        applies to SGD alone.
    torch_update : str or None
        torch's fused multi-tensor update (``torch._fused_adam_``, ...).
    code, amsgrad_code : int or None
        The kernels' update code, and with ``amsgrad=True`` (None: the
        solver has no such variant, or no kernel step).
    """

    name: str
    family: str
    moments: bool = False
    decoupled: bool = False
    velocity: bool = False
    torch_update: str = None
    code: int = None
    amsgrad_code: int = None


#: Every solver, by name (the parameter's options, in this order).
SOLVERS = {
    solver.name: solver
    for solver in (
        Solver("adam", "minibatch", moments=True, torch_update="_fused_adam_", code=0,
               amsgrad_code=2),
        Solver("sgd", "minibatch", velocity=True, torch_update="_fused_sgd_", code=1),
        Solver("adamw", "minibatch", moments=True, decoupled=True,
               torch_update="_fused_adamw_", code=3, amsgrad_code=4),
        Solver("lbfgs", "lbfgs"),
    )
}


def kernel_code(name, amsgrad=False):
    """The kernels' update code of solver ``name`` (with ``amsgrad``)."""
    solver = SOLVERS[name]
    return solver.amsgrad_code if amsgrad and solver.moments else solver.code


#: Kernel codes whose update keeps Adam's two moments / amsgrad's maximum.
MOMENT_CODES = frozenset(
    c for s in SOLVERS.values() if s.moments for c in (s.code, s.amsgrad_code))
AMSGRAD_CODES = frozenset(s.amsgrad_code for s in SOLVERS.values() if s.amsgrad_code is not None)
KERNEL_CODES = frozenset(
    c for s in SOLVERS.values() for c in (s.code, s.amsgrad_code) if c is not None)


def n_state_buffers(settings):
    """State buffers (laid out as the parameters) that models with these
    optimizer settings (``solver`` and ``amsgrad`` attributes) need
    together: two where any keeps moments, three with amsgrad, else one
    (SGD's momentum buffer)."""
    moments = [s for s in settings if SOLVERS[s.solver].moments]
    return 3 if any(s.amsgrad for s in moments) else 2 if moments else 1
