"""Memory this process may still allocate on its host: the RAM, the container, the rlimit.

A container (Docker, Kubernetes, a Slurm job, systemd) limits its processes'
memory through its cgroup, and the kernel kills a process that goes over
it; ``/proc/meminfo`` still shows the whole host. So the memory plan of a
CPU run takes the least of:

* the host's ``MemAvailable`` (``/proc/meminfo``);
* every memory cgroup limit on the way from this process's cgroup up to
  the root of its hierarchy (a parent's limit binds its children):
  cgroup v2's ``memory.max`` less ``memory.current``, cgroup v1's
  ``memory.limit_in_bytes`` less ``memory.usage_in_bytes``, the usage
  counted without the inactive page cache (``memory.stat``), which the
  kernel reclaims before it kills anything (as ``docker stats`` counts it);
* the address-space rlimit (``RLIMIT_AS``, ``ulimit -v``) less this
  process's virtual size (``VmSize`` of ``/proc/self/status``).

The cgroup directories are found as the kernel describes them: the
process's cgroup path in ``/proc/self/cgroup``, the hierarchy's mount point
in ``/proc/self/mountinfo``. The paths below are module attributes, so tests
point them at a fake container. Where a file is missing or unreadable its
limit is unknown and ignored (other systems, no cgroup).
"""

import dataclasses
import os

try:
    import resource
except ImportError:  # not on Windows
    resource = None

#: Files the limits are read from.
MEMINFO = "/proc/meminfo"
SELF_CGROUP = "/proc/self/cgroup"
MOUNTINFO = "/proc/self/mountinfo"
SELF_STATUS = "/proc/self/status"

#: A cgroup v1 limit at or above this means "no limit" (the kernel shows
#: its page counter's maximum, about 2**63, rounded to pages).
_V1_UNLIMITED = 2**62


@dataclasses.dataclass(frozen=True)
class MemoryLimit:
    """One limit on the memory this process may still allocate.

    Attributes
    ----------
    available : int
        Bytes that may still be allocated under it.
    source : str
        What sets it, for messages (e.g. ``"cgroup v2 memory.max of
        /sys/fs/cgroup (2.0 GiB, 0.3 GiB in use)"``).
    """

    available: int
    source: str


def memory_limits():
    """Every limit found on the memory this process may still allocate.

    Returns
    -------
    list of MemoryLimit
        The host's available RAM, each cgroup limit and the address-space
        rlimit, those that are known and set.
    """
    limits = []
    host = _meminfo_available()
    if host is not None:
        limits.append(MemoryLimit(host, "the host's available memory (MemAvailable)"))
    limits.extend(_cgroup_limits())
    rlimit = _rlimit_available()
    if rlimit is not None:
        limits.append(rlimit)
    return limits


def host_available_bytes():
    """The least memory any limit leaves this process, in bytes (None: none known).

    Returns
    -------
    int or None
    """
    limits = memory_limits()
    return min(limit.available for limit in limits) if limits else None


def binding_limit():
    """The limit that leaves the least memory (None: none known).

    Returns
    -------
    MemoryLimit or None
    """
    limits = memory_limits()
    return min(limits, key=lambda limit: limit.available) if limits else None


def _read(path):
    try:
        with open(path) as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def _meminfo_available():
    text = _read(MEMINFO)
    for line in (text or "").splitlines():
        if line.startswith("MemAvailable:"):
            try:
                return int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _gib(n):
    return f"{n / 2**30:.2f} GiB"


# ------------------------------------------------------------------ cgroups
def _own_cgroups():
    """``{"v2": path}`` and/or ``{"v1": path}``: this process's cgroup in the
    unified hierarchy and in the v1 memory hierarchy."""
    paths = {}
    for line in (_read(SELF_CGROUP) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        number, controllers, path = parts
        if number == "0" and controllers == "":
            paths["v2"] = path
        elif "memory" in controllers.split(","):
            paths["v1"] = path
    return paths


def _mounts():
    """``{"v2": (root, mount point)}`` and/or ``{"v1": (root, mount point)}``
    of the cgroup hierarchies, from ``/proc/self/mountinfo``."""
    mounts = {}
    for line in (_read(MOUNTINFO) or "").splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        dash = fields.index("-")
        if dash < 6 or len(fields) < dash + 2:
            continue
        root, mount_point = _unescape(fields[3]), _unescape(fields[4])
        fstype, options = fields[dash + 1], fields[dash + 3] if len(fields) > dash + 3 else ""
        if fstype == "cgroup2":
            mounts.setdefault("v2", (root, mount_point))
        elif fstype == "cgroup" and "memory" in options.split(","):
            mounts.setdefault("v1", (root, mount_point))
    return mounts


def _unescape(field):
    """mountinfo escapes spaces and a few other bytes as octal (``\\040``)."""
    return field.encode().decode("unicode_escape") if "\\" in field else field


def _directories(root, mount_point, path):
    """The cgroup directories from ``path`` up to the hierarchy's root, as
    seen under ``mount_point`` (``root`` is the part of the hierarchy the
    mount shows: a container sees only its own subtree)."""
    root = root.rstrip("/")
    if root and (path == root or path.startswith(root + "/")):
        path = path[len(root):]
    elif root:  # the process's cgroup is outside what this mount shows
        path = ""
    parts = [p for p in path.split("/") if p and p != ".."]
    return [os.path.join(mount_point, *parts[:n]) for n in range(len(parts), -1, -1)]


def _stat(directory, name, key):
    for line in (_read(os.path.join(directory, name)) or "").splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == key:
            try:
                return int(fields[1])
            except ValueError:
                return 0
    return 0


def _int_file(path):
    text = _read(path)
    if text is None:
        return None
    text = text.strip()
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _cgroup_limits():
    paths, mounts = _own_cgroups(), _mounts()
    files = {
        "v2": ("memory.max", "memory.current", "inactive_file"),
        "v1": ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
    }
    limits = []
    for version, (limit_file, usage_file, inactive_key) in files.items():
        if version not in paths or version not in mounts:
            continue
        for directory in _directories(*mounts[version], paths[version]):
            limit = _int_file(os.path.join(directory, limit_file))
            if limit is None or (version == "v1" and limit >= _V1_UNLIMITED):
                continue
            usage = _int_file(os.path.join(directory, usage_file)) or 0
            used = max(0, usage - _stat(directory, "memory.stat", inactive_key))
            limits.append(MemoryLimit(
                max(0, limit - used),
                f"the container's memory limit (cgroup {version} {limit_file} of {directory}: "
                f"{_gib(limit)}, {_gib(used)} in use)",
            ))
    return limits


# ------------------------------------------------------------------ rlimit
def _rlimit_available():
    if resource is None:
        return None
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    size = None
    for line in (_read(SELF_STATUS) or "").splitlines():
        if line.startswith("VmSize:"):
            try:
                size = int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                pass
    used = size or 0
    return MemoryLimit(
        max(0, soft - used),
        f"the address-space limit (RLIMIT_AS, ulimit -v: {_gib(soft)}, {_gib(used)} mapped)",
    )
