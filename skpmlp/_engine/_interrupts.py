"""Ctrl-C at a safe point: SIGINT held back while a unit of training runs.

An epoch mutates many things that must change together: the parameters and
optimizer state (in one native call on the kernel's path, whose step counts
Python then advances), the batch order's generators, the stopping rule's
counters, the curves. Python raises ``KeyboardInterrupt`` at the first
bytecode after the signal, which can be anywhere among those: between the
kernel's return and the step count, between two partitions' updates.

:func:`deferred_interrupts` holds the signal back for a block: a SIGINT
that arrives inside it is recorded and raised as ``KeyboardInterrupt`` when
the block ends, so the training loop sees it only between whole epochs (or
L-BFGS rounds), with every piece of state consistent. A second SIGINT
inside the same block is not held back: a user who presses Ctrl-C twice
gets the interrupt at once (the fit then raises, and a checkpoint file
keeps its last complete state, since files are replaced atomically).

SIGTERM (what batch schedulers, Kubernetes and preemptible machines send
before a SIGKILL) is held back the same way and raised as :class:`Terminated`,
a ``KeyboardInterrupt``: the run halts with whole epochs (``"terminated"``),
its call saves the checkpoint, and the fit then ends the process with
SIGTERM's status (:func:`~skpmlp._execution._training.terminable`).

Only the main thread receives signals in Python, and only Python's own
SIGINT handler (:func:`signal.default_int_handler`) and SIGTERM's default
disposition are replaced: in another thread, or under another handler (an
application's own), the signal is left to it.
"""

import contextlib
import signal
import threading


class Terminated(KeyboardInterrupt):
    """A SIGTERM, raised at a safe point: training stops as at Ctrl-C, and
    the process then ends with SIGTERM's status."""


def _interruption(signum):
    """The exception a signal becomes."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


class _Deferral:
    """The signal handler of a deferred block: records the first signal,
    raises on the second."""

    def __init__(self):
        self.pending = None  # the first signal held back

    def __call__(self, signum, frame):
        if self.pending is not None:
            raise _interruption(signum)
        self.pending = signum


def sigterm_is_ours():
    """Whether a fit may handle SIGTERM here: the main thread, SIGTERM at
    its default disposition or one of ours."""
    if threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(signal.SIGTERM)
    return handler is signal.SIG_DFL or getattr(handler, "skpmlp", False)


_active = threading.local()


@contextlib.contextmanager
def deferred_interrupts():
    """Hold SIGINT and SIGTERM back until the block ends, then raise
    ``KeyboardInterrupt`` (:class:`Terminated` for SIGTERM).

    Nested blocks defer to the outermost one. Outside the main thread, or
    under a handler other than Python's default (SIGINT) or the default
    disposition (SIGTERM), that signal is left alone.
    """
    nested = getattr(_active, "depth", 0) > 0
    main = threading.current_thread() is threading.main_thread()
    signums = []
    if not nested and main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signums.append(signal.SIGINT)
    if not nested and sigterm_is_ours():
        signums.append(signal.SIGTERM)
    if not signums:
        _active.depth = getattr(_active, "depth", 0) + 1
        try:
            yield
        finally:
            _active.depth -= 1
        return
    deferral = _Deferral()
    previous = {signum: signal.getsignal(signum) for signum in signums}
    for signum in signums:
        signal.signal(signum, deferral)
    _active.depth = 1
    try:
        yield
    except BaseException as error:
        _release(previous)
        if deferral.pending is not None and not isinstance(error, KeyboardInterrupt):
            # the user (or the scheduler) asked to stop: say so rather than
            # what failed meanwhile
            raise _interruption(deferral.pending) from error
        raise
    _release(previous)
    if deferral.pending is not None:
        raise _interruption(deferral.pending)


def _release(previous):
    """The handlers the block replaced back, the block over."""
    _active.depth = 0
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def halt_reason(interruption):
    """A run's ``halted`` for the interruption that stopped it:
    ``"terminated"`` (SIGTERM) or ``"interrupted"`` (Ctrl-C)."""
    return "terminated" if isinstance(interruption, Terminated) else "interrupted"
