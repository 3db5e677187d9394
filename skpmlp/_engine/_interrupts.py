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

Only the main thread receives signals in Python, and only Python's own
SIGINT handler (:func:`signal.default_int_handler`) is replaced: in another
thread, or under another handler (an application's own), the block runs
as it is, unguarded.
"""

import contextlib
import signal
import threading


class _Deferral:
    """The SIGINT handler of a deferred block: records the first signal,
    raises on the second."""

    def __init__(self):
        self.pending = False

    def __call__(self, signum, frame):
        if self.pending:
            raise KeyboardInterrupt
        self.pending = True


_active = threading.local()


@contextlib.contextmanager
def deferred_interrupts():
    """Hold SIGINT back until the block ends, then raise ``KeyboardInterrupt``.

    Nested blocks defer to the outermost one. Outside the main thread, or
    when SIGINT has a handler other than Python's default, nothing changes.
    """
    nested = getattr(_active, "depth", 0) > 0
    guard = (
        not nested
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if not guard:
        _active.depth = getattr(_active, "depth", 0) + 1
        try:
            yield
        finally:
            _active.depth -= 1
        return
    deferral = _Deferral()
    signal.signal(signal.SIGINT, deferral)
    _active.depth = 1
    try:
        yield
    except BaseException as error:
        _release()
        if deferral.pending and not isinstance(error, KeyboardInterrupt):
            # the user asked to stop: say so rather than what failed meanwhile
            raise KeyboardInterrupt from error
        raise
    _release()
    if deferral.pending:
        raise KeyboardInterrupt


def _release():
    """Python's own SIGINT handler back, the block over."""
    _active.depth = 0
    signal.signal(signal.SIGINT, signal.default_int_handler)
