"""torch's intra-op thread count, scoped to the calling thread."""

import contextlib
import functools

import torch
from threadpoolctl import ThreadpoolController


@functools.cache
def _controller():
    """One :class:`threadpoolctl.ThreadpoolController` a process: making one
    scans every loaded library (3-4 ms, 3 % of a small search's fit, twice a
    fit); torch's OpenMP runtime is loaded with torch, before the first."""
    return ThreadpoolController()


@contextlib.contextmanager
def torch_threads(n_threads):
    """Run the block with ``n_threads`` torch intra-op threads in the calling
    thread only, and give the thread its own count back on exit (exceptions
    and KeyboardInterrupt included).

    ``torch.set_num_threads`` is process-wide: it sets the default every new
    thread starts from as well as the calling thread's count, so shards
    running in threads of one process (joblib's threading backend,
    multi-threaded Dask workers) would interleave their save / restore and
    leave a wrong default behind. torch's intra-op pool is OpenMP, whose
    thread count belongs to each calling thread: limiting only that with
    :meth:`threadpoolctl.ThreadpoolController.limit` scopes the change to the shard
    with no lock, and never touches other threads or the process default.
    Where torch is built without OpenMP, the block runs with torch's own
    count.
    """
    # torch sets a thread's OpenMP count from the process default on the
    # thread's first parallel op: have that happen now, not inside the block
    # where it would overwrite the limit
    torch.get_num_threads()
    with _controller().limit(limits=n_threads, user_api="openmp"):
        yield
