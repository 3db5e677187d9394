"""Moré-Thuente line search (MINPACK-2's ``dcsrch`` / ``dcstep``), one per model.

The search L-BFGS-B runs, and so scikit-learn's ``solver="lbfgs"``, written
for arrays: every entry is one model's own search, with its own bracket,
stage and trial step, advanced together in one numpy pass per function
evaluation. The arithmetic and the branch order are those of scipy's
``scipy/optimize/_dcsrch.py`` (a transcription of MINPACK-2), each ``if``
becoming a ``np.where``.

Host side, numpy only: a search sees each model's value ``f`` and
directional derivative ``g = grad . d`` at its trial step, nothing else.
"""

import numpy as np

#: L-BFGS-B's line search constants (``lnsrlb``): sufficient decrease,
#: curvature, relative width of the bracket, and the largest step.
FTOL, GTOL, XTOL = 1e-3, 0.9, 0.1
STPMIN, STPMAX = 0.0, 1e10
_P5, _P66, _XTRAPL, _XTRAPU = 0.5, 0.66, 1.1, 4.0

#: The per-model state of a search (arrays of shape (n,)).
STATE_FIELDS = (
    "stp", "stage", "brackt", "finit", "ginit", "gtest", "width", "width1",
    "stx", "fx", "gx", "sty", "fy", "gy", "stmin", "stmax",
)


class LineSearches:
    """One Moré-Thuente search per model, as arrays.

    Parameters
    ----------
    n : int
        Number of models.

    Attributes
    ----------
    stp : ndarray of shape (n,)
        Every model's current trial step.
    """

    def __init__(self, n):
        for name in STATE_FIELDS:
            setattr(self, name, np.zeros(n))
        self.stage = np.ones(n, dtype=int)
        self.brackt = np.zeros(n, dtype=bool)

    def subset(self, keep):
        """The searches of the models where ``keep`` is True."""
        other = LineSearches(int(np.count_nonzero(keep)))
        for name in STATE_FIELDS:
            setattr(other, name, getattr(self, name)[keep].copy())
        return other

    def start(self, mask, stp, f0, g0):
        """Start the searches of ``mask`` at step ``stp`` from value ``f0``
        and directional derivative ``g0 < 0`` at step 0 (``task='START'``)."""
        width = STPMAX - STPMIN
        values = {
            "stp": stp, "stage": 1, "brackt": False, "finit": f0, "ginit": g0,
            "gtest": FTOL * g0, "width": width, "width1": width / _P5,
            "stx": 0.0, "fx": f0, "gx": g0, "sty": 0.0, "fy": f0, "gy": g0,
            "stmin": 0.0, "stmax": stp + _XTRAPU * stp,
        }
        for name, value in values.items():
            array = getattr(self, name)
            array[mask] = np.broadcast_to(value, array.shape)[mask]

    def iterate(self, mask, f, g):
        """One ``dcsrch`` call for the models of ``mask``, which were
        evaluated at their trial step: value ``f``, derivative ``g``.

        Returns
        -------
        done : ndarray of bool of shape (n,)
            Models of ``mask`` whose search ended (``'CONVERGENCE'`` or a
            ``'WARNING'``, both accepted by L-BFGS-B): their trial step is
            the step taken. The others of ``mask`` have a new trial step in
            :attr:`stp` (``'FG'``).
        """
        with np.errstate(all="ignore"):
            return self._iterate(mask, f, g)

    def _iterate(self, mask, f, g):
        stp = self.stp
        ftest = self.finit + stp * self.gtest
        self.stage = np.where(mask & (self.stage == 1) & (f <= ftest) & (g >= 0), 2, self.stage)
        brackt = self.brackt
        warn = (
            (brackt & ((stp <= self.stmin) | (stp >= self.stmax)))
            | (brackt & (self.stmax - self.stmin <= XTOL * self.stmax))
            | ((stp == STPMAX) & (f <= ftest) & (g <= self.gtest))
            | ((stp == STPMIN) & ((f > ftest) | (g >= self.gtest)))
        )
        conv = (f <= ftest) & (np.abs(g) <= GTOL * -self.ginit)
        done = mask & (warn | conv)
        go = mask & ~done

        # stage 1 with a decrease short of sufficient: search the modified
        # function psi(stp) = f(stp) - f(0) - ftol * stp * f'(0)
        modified = (self.stage == 1) & (f <= self.fx) & (f > ftest)
        gtest = np.where(modified, self.gtest, 0.0)
        (stx, fx, gx), (sty, fy, gy), new_stp, new_brackt = dcstep(
            (self.stx, self.fx - self.stx * gtest, self.gx - gtest),
            (self.sty, self.fy - self.sty * gtest, self.gy - gtest),
            (stp, f - stp * gtest, g - gtest), brackt, (self.stmin, self.stmax),
        )
        fx, fy = fx + stx * gtest, fy + sty * gtest
        gx, gy = gx + gtest, gy + gtest
        # where not modified, gtest is 0 and the above are the plain values
        # (x - 0 * y == x exactly for finite y)

        width, width1 = self.width, self.width1
        bisect = new_brackt & (np.abs(sty - stx) >= _P66 * width1)
        new_stp = np.where(bisect, stx + _P5 * (sty - stx), new_stp)
        width1 = np.where(new_brackt, width, width1)
        width = np.where(new_brackt, np.abs(sty - stx), width)
        stmin = np.where(new_brackt, np.minimum(stx, sty), new_stp + _XTRAPL * (new_stp - stx))
        stmax = np.where(new_brackt, np.maximum(stx, sty), new_stp + _XTRAPU * (new_stp - stx))
        new_stp = np.clip(new_stp, STPMIN, STPMAX)
        stuck = new_brackt & (
            (new_stp <= stmin) | (new_stp >= stmax) | (stmax - stmin <= XTOL * stmax)
        )
        new_stp = np.where(stuck, stx, new_stp)

        for name, value in (
            ("stx", stx), ("fx", fx), ("gx", gx), ("sty", sty), ("fy", fy), ("gy", gy),
            ("stp", new_stp), ("brackt", new_brackt), ("width", width), ("width1", width1),
            ("stmin", stmin), ("stmax", stmax),
        ):
            array = getattr(self, name)
            array[go] = value[go]
        return done

    def backtrack(self, mask):
        """A trial step whose value or gradient is not finite: halve the
        step towards the best one so far (``stx``) and search on (scipy
        would feed the NaN to ``dcstep``; a model that diverges nowhere
        is not affected)."""
        self.stp = np.where(mask, self.stx + _P5 * (self.stp - self.stx), self.stp)
        self.stmax = np.where(mask, np.maximum(self.stp, self.stx), self.stmax)


def dcstep(best, other, trial, brackt, bounds):
    """MINPACK-2's safeguarded step, for arrays (see scipy's ``dcstep``).

    Parameters
    ----------
    best, other, trial : tuple of 3 ndarray
        ``(step, value, derivative)`` at the interval's end of least value
        (``stx, fx, dx``), at its other end (``sty, fy, dy``) and at the
        trial step (``stp, fp, dp``).
    brackt : ndarray of bool
        Whether a minimiser is bracketed.
    bounds : tuple of 2 ndarray
        ``(stpmin, stpmax)``, the bounds of the step.

    Returns
    -------
    best, other, stp, brackt :
        The updated interval's ends, the new trial step, and whether a
        minimiser is now bracketed.
    """
    (stx, fx, dx), (sty, fy, dy), (stp, fp, dp) = best, other, trial
    stpmin, stpmax = bounds
    sgnd = np.sign(dp) * np.sign(dx)
    case1 = fp > fx
    case2 = ~case1 & (sgnd < 0)
    case3 = ~case1 & ~case2 & (np.abs(dp) < np.abs(dx))
    case4 = ~(case1 | case2 | case3)

    theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp
    s = np.maximum(np.maximum(np.abs(theta), np.abs(dx)), np.abs(dp))
    root = (theta / s) ** 2 - (dx / s) * (dp / s)

    # case 1: a higher value; the minimum is bracketed
    gamma = s * np.sqrt(root)
    gamma1 = np.where(stp < stx, -gamma, gamma)
    p = (gamma1 - dx) + theta
    q = ((gamma1 - dx) + gamma1) + dp
    stpc = stx + (p / q) * (stp - stx)
    stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx)
    stpf1 = np.where(np.abs(stpc - stx) <= np.abs(stpq - stx), stpc, stpc + (stpq - stpc) / 2.0)

    # case 2: lower value, derivatives of opposite sign; bracketed
    gamma2 = np.where(stp > stx, -gamma, gamma)
    p = (gamma2 - dp) + theta
    q = ((gamma2 - dp) + gamma2) + dx
    stpc = stp + (p / q) * (stx - stp)
    stpq = stp + (dp / (dp - dx)) * (stx - stp)
    stpf2 = np.where(np.abs(stpc - stp) > np.abs(stpq - stp), stpc, stpq)

    # case 3: lower value, same sign, the derivative decreases
    gamma3 = s * np.sqrt(np.maximum(0.0, root))
    gamma3 = np.where(stp > stx, -gamma3, gamma3)
    p = (gamma3 - dp) + theta
    q = (gamma3 + (dx - dp)) + gamma3
    r = p / q
    stpc = np.where((r < 0) & (gamma3 != 0), stp + r * (stx - stp),
                    np.where(stp > stx, stpmax, stpmin))
    stpq = stp + (dp / (dp - dx)) * (stx - stp)
    inside = np.where(np.abs(stpc - stp) < np.abs(stpq - stp), stpc, stpq)
    inside = np.where(
        stp > stx, np.minimum(stp + _P66 * (sty - stp), inside),
        np.maximum(stp + _P66 * (sty - stp), inside)
    )
    outside = np.clip(np.where(np.abs(stpc - stp) > np.abs(stpq - stp), stpc, stpq), stpmin,
                      stpmax)
    stpf3 = np.where(brackt, inside, outside)

    # case 4: lower value, same sign, the derivative does not decrease
    theta4 = 3.0 * (fp - fy) / (sty - stp) + dy + dp
    s4 = np.maximum(np.maximum(np.abs(theta4), np.abs(dy)), np.abs(dp))
    gamma4 = s4 * np.sqrt((theta4 / s4) ** 2 - (dy / s4) * (dp / s4))
    gamma4 = np.where(stp > sty, -gamma4, gamma4)
    p = (gamma4 - dp) + theta4
    q = ((gamma4 - dp) + gamma4) + dy
    stpf4 = np.where(brackt, stp + (p / q) * (sty - stp), np.where(stp > stx, stpmax, stpmin))

    stpf = np.select([case1, case2, case3, case4], [stpf1, stpf2, stpf3, stpf4])
    best, other = _new_interval(best, other, trial, higher=case1, swap=~case1 & (sgnd < 0))
    return best, other, stpf, brackt | case1 | case2


def _new_interval(best, other, trial, *, higher, swap):
    """dcstep's new interval ``(best, other)``: a ``higher`` trial value
    becomes the other end; else the trial point is the best one, and the
    old best becomes the other end where the derivatives' signs differ
    (``swap``)."""
    new_best = tuple(np.where(higher, b, t) for b, t in zip(best, trial))
    new_other = tuple(
        np.where(higher, t, np.where(swap, b, o)) for b, o, t in zip(best, other, trial)
    )
    return new_best, new_other
