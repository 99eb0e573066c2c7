"""Warm-started dual coordinate descent for the weighted hinge problem (the ramp's inner solver).

The inner problem of Alg. 2 (:mod:`.svm`) is, over the rows ``r`` of ``X`` with weights
``a_r >= 0`` on the hinge of label -1 and ``c_r >= 0`` on the hinge of label +1 (both non-zero for
a row in the ramp's linear zone),

    P(w, b) = sum_r a_r max(0, 1/2 + f_r) + c_r max(0, 1/2 - f_r) + lam/2 |w|^2,
    f_r = <w, x_r> + b,

with ``b`` unregularized (or absent). Writing each hinge as ``max_{0 <= alpha <= weight}
alpha (1/2 -+ f)`` and merging a row's two variables into ``beta_r = alpha_+ - alpha_-`` (as
separate coordinates they are perfectly anti-correlated, which stalls coordinate descent), the
dual is

    D(beta) = sum_r h_r(beta_r) - |sum_r beta_r x_r|^2 / (2 lam),
    -a_r <= beta_r <= c_r,  sum_r beta_r = 0 (only with an intercept),
    h_r(beta) = 1/2 min(2 a_r + beta, 2 c_r - beta)   (concave, a kink at c_r - a_r),

with ``w = sum_r beta_r x_r / lam``; ``D(beta) <= P(w, b)`` for every feasible ``beta`` and every
``(w, b)`` (weak duality), so ``D`` is a certified lower bound. For a row with one hinge this is
the usual SVM dual (``beta = y alpha``, ``h = |beta| / 2``).

Algorithm: the dual coordinate descent of Hsieh, Chang, Lin, Keerthi & Sundararajan (ICML 2008,
Alg. 1; LIBLINEAR's dual solver) with its shrinking (§3.2) and a random order per epoch (§3.1;
ours is cache-friendly: random blocks of rows stored in a random order, each block in a random
order, see ``_dcd_epochs``); the weights are the per-coordinate boxes ``[-a_r, c_r]`` and each coordinate step
maximizes the piecewise-quadratic ``D`` along ``beta_r`` exactly. Goh et al. ran their
industrial experiments with SDCA inner solves (their missing Appendix F; notes). The
unregularized intercept makes the dual's equality ``sum beta = 0``, which a one-coordinate
method cannot keep: it is handled by proximal-point (method of multipliers) steps on ``b``
(Rockafellar 1976): coordinate descent runs on the dual of the problem with LIBLINEAR's
intercept feature of value ``s = intercept_scaling`` centred at ``b_c``
(``sum beta (1/2 ... - b_c) - s^2 (sum beta)^2 / (2 lam)`` added), whose intercept is
``b = b_c + s^2 sum(beta) / lam``; at every duality-gap check that fails, ``b_c <- b``. The
fixed point has ``sum beta = 0`` and solves the problem with the unregularized intercept
exactly (LIBLINEAR's own intercept is regularized).

Certificate: the primal value at ``(w, b)`` and the dual value at ``beta`` made feasible for the
equality (the side with the larger ``sum |beta|`` scaled down, which stays in the box) give a
duality gap; the solver stops when it is at most ``tol`` (absolute, in the objective's units:
rate units in the ramp method).

Warm start (Hsieh et al. §3.4 for a changed ``C``; here the boxes and the rows change): a
:class:`DualState` keeps ``beta`` per row and ``b_c`` between calls; a call clips the stored
values into its new boxes (zero for rows not stored). Any start is feasible, so warm starts
change the path, never the answer (up to ``tol``).

The kernels are compiled by numba on first use (``cache=True``: compiled once per
installation, then loaded from the cache once per process;
see benchmarks/README.md, section "Measurements behind the library's choices"); any ``X`` is converted once
to CSR per :class:`DualState`.
"""
from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from ...utils.extras import optional_import

_KERNELS: dict = {}
# the most passes' worth of coordinate visits between duality-gap checks (each check is one
# sequential pass over the rows, about a third of an epoch's cost); fewer near the end of a solve
# (see _dcd_epochs). Replaying the 46 solves of speed.py's two fits: 5, 8, 12 and 16 cost 721-724,
# 701-719, 724-736 and 775-805 passes (counting a check as 0.6 of one)
CHECK_EVERY = 8
# weight of the newest iterate in the exponential average of the primal iterates, per pass's
# worth of visits (time constant ~3 passes); speed.py's fits, seeds 0-2, checks every 4 passes:
# 0.1 took 10-12% more visits than 0.3, 0.6 within 4% of it
AVERAGE_RATE = 0.3
# The epoch order (see _dcd_epochs): blocks of about BLOCK_BYTES of consecutive stored rows
# (64-75 rows of a9a or one-hot Adult), and one fully random order once the active rows take at
# most CACHE_BYTES (then they stay in cache). Blocks make a visit 2-3x cheaper but cost visits
# (1.1-1.5x at 64-75 rows; why a fixed grouping of random rows slows coordinate descent is not
# understood); benchmarks/ramp_epochs.py measures the fits against one random order.
BLOCK_BYTES = 16 * 1024
CACHE_BYTES = 2 * 1024 * 1024


def _h(b, a, c):  # pragma: no cover - compiled by numba
    """Conjugate part of one row's loss: ``1/2 min(2 a + b, 2 c - b)`` on ``-a <= b <= c``."""
    return 0.5 * min(2.0 * a + b, 2.0 * c - b)


def _draw(rng, m):  # pragma: no cover - compiled by numba
    """``(next state, j)``: one xorshift64 step (Marsaglia 2003) and ``j`` in ``[0, m)`` by
    Lemire's multiply-shift (2019) on its upper 32 bits (no 64-bit division)."""
    rng ^= rng << np.uint64(13)
    rng ^= rng >> np.uint64(7)
    rng ^= rng << np.uint64(17)
    return rng, np.int64(((rng >> np.uint64(32)) * np.uint64(m)) >> np.uint64(32))


def _shuffle(x, n, rng):  # pragma: no cover - compiled by numba
    """Fisher-Yates shuffle of ``x[:n]`` in place; returns the generator's state."""
    for i in range(n - 1, 0, -1):
        rng, j = _draw(rng, i + 1)
        t = x[i]
        x[i] = x[j]
        x[j] = t
    return rng


def _gap(indptr, indices, data, rows, a, c, beta, v, lam, s2, b_eff, vavg, bavg):  # pragma: no cover - numba
    """``(primal, primal_avg, dual)``: primals at ``(v / lam, b_eff)`` and ``(vavg / lam, bavg)``
    (the averaged iterate, read in the same pass); dual at beta balanced for ``sum beta = 0``."""
    K = rows.shape[0]
    d = v.shape[0]
    vpos = np.zeros(d)  # sum of beta x over beta > 0 (the balancing scales the two signs apart)
    vv = 0.0
    vva = 0.0
    for j in range(d):
        vv += v[j] * v[j]
        vva += vavg[j] * vavg[j]
    loss = 0.0
    loss_avg = 0.0
    ppos = 0.0
    pneg = 0.0
    for k in range(K):
        r = rows[k]
        dot = 0.0
        dot_avg = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            x = data[p]
            dot += v[indices[p]] * x
            dot_avg += vavg[indices[p]] * x
        f = dot / lam + b_eff
        loss += a[k] * max(0.0, 0.5 + f) + c[k] * max(0.0, 0.5 - f)
        f = dot_avg / lam + bavg
        loss_avg += a[k] * max(0.0, 0.5 + f) + c[k] * max(0.0, 0.5 - f)
        if beta[k] > 0.0:
            ppos += beta[k]
            for p in range(indptr[r], indptr[r + 1]):
                vpos[indices[p]] += beta[k] * data[p]
        else:
            pneg -= beta[k]
    primal = loss + vv / (2.0 * lam)
    primal_avg = loss_avg + vva / (2.0 * lam)
    cp = 1.0
    cn = 1.0
    if s2 > 0.0:
        if ppos > pneg:
            cp = pneg / ppos
        elif pneg > ppos:
            cn = ppos / pneg
    hsum = 0.0
    for k in range(K):
        b = beta[k] * (cp if beta[k] > 0.0 else cn)
        hsum += _h(b, a[k], c[k])
    ww = 0.0  # |cp vpos - cn vneg|^2 with vneg = vpos - v
    for j in range(d):
        x = cp * vpos[j] - cn * (vpos[j] - v[j])
        ww += x * x
    return primal, primal_avg, hsum - ww / (2.0 * lam)


def _keep_best(primal, primal_avg, dual, v, b, v_avg, b_avg, best_primal, best_dual, best_b,
               v_best):  # pragma: no cover - compiled by numba
    """One gap check's bounds kept: ``(best_primal, best_dual, best_b)``; ``v_best`` receives the
    ``v`` of the best primal point (the last iterate ``(v, b)`` or the average ``(v_avg, b_avg)``)."""
    best_dual = max(best_dual, dual)
    if primal < best_primal or primal_avg < best_primal:
        last = primal <= primal_avg
        src = v if last else v_avg
        best_primal = primal if last else primal_avg
        best_b = b if last else b_avg
        for j in range(v_best.shape[0]):
            v_best[j] = src[j]
    return best_primal, best_dual, best_b


def _dcd_epochs(indptr, indices, data, rows, a, c, qdiag, beta, v, lam, s2, b_c, tol, max_epochs, seed,
                check_every, block, small, average_rate, ones, out, v_best):  # pragma: no cover - numba
    """Coordinate-descent epochs until the duality gap is at most ``tol`` (see module docstring).

    One coordinate per row: ``beta`` in ``[-a, c]`` with the concave piecewise-linear ``h``
    (slope +1/2 below the kink ``c - a``, -1/2 above); each update maximizes the dual exactly
    along the coordinate. Shrinking as LIBLINEAR (Hsieh et al. 2008, §3.2), with the kink
    treated like a bound: a coordinate at a bound or kink whose one-sided gradients point out by
    more than the last epoch's largest projected gradient leaves the active set; when the
    projected-gradient spread on the active set is below ``eps`` every coordinate is reactivated,
    and once it is below ``eps`` on all of them the duality gap is computed: stop if at most
    ``tol``, else ``eps *= 0.3``. The gap is also computed whenever ``check_every`` epochs' worth
    of coordinate visits were made since the last check (each check is one pass over the data),
    or sooner near the end: when the gap fell since the previous check, the next one comes when
    that rate of decay (linear convergence) would bring it to ``tol``, with 25% to spare, and at
    least a pass later (fewer passes than checking every ``check_every``, whose checks overshot
    ``tol`` by up to ``check_every`` passes;
    see benchmarks/README.md, section "Measurements behind the library's choices").

    Certificate (our additions to Hsieh et al.): the primal value of the last iterate
    ``(v / lam, b)`` jumps from epoch to epoch by several times the gap the dual has closed
    (``lam = 1/n`` magnifies the dual's noise in ``w``), so each check also evaluates, in the
    same pass, an exponential average of the iterates (``average_rate`` per pass's worth of
    visits: a dual-averaging primal candidate, as for SDCA), and the gap is the best primal value
    seen in the solve minus the best dual value (both valid bounds). A check that fails also
    re-centres the intercept's proximal term (``b_c <- b``: a method-of-multipliers step; before,
    only once the projected gradients met ``eps``). With these, checks every 8 passes instead of
    4 (see benchmarks/README.md, section "Measurements behind the library's choices").

    ``ones``: every entry of ``X`` is 1 (binary features): visits do not read ``data``.

    ``v = sum beta x`` is updated in place, as is ``beta``; ``v_best`` receives the ``v`` of
    the returned primal point (the best one seen).
    ``out`` receives ``[b_c, epochs, primal, dual, intercept, coordinate visits, gap checks,
    read-ahead checksum]`` (primal, dual and intercept of the returned certificate; the checksum
    only keeps the read-ahead from being optimized away).

    Order of an epoch (cache-friendly; the rows are stored in a random order, see
    :class:`DualState`): the active coordinates, kept in increasing order of ``rows`` (the caller
    sorts them by storage position), are cut into blocks of ``block`` consecutive coordinates at
    a random offset; the blocks are visited in a random order, each in a random order of its own,
    and the next block's rows are read once in storage order before the current block is worked
    (the hardware prefetcher streams them, the block's random visits then hit the cache). When at
    most ``small`` coordinates are active they form one block: a fully random order, as
    LIBLINEAR's (Hsieh et al. §3.1). A fully random order over every row made each visit a cache
    miss
    (see benchmarks/README.md, section "Measurements behind the library's choices").
    Shrunk coordinates leave the active list at the end of the epoch (a stable
    compaction keeps it sorted). The random draws are xorshift64 (Marsaglia 2003) from ``seed``,
    mapped to ``[0, m)`` by Lemire's multiply-shift (2019) instead of a 64-bit division.
    """
    K = rows.shape[0]
    rng = np.uint64(seed) | np.uint64(1)  # xorshift64 (Marsaglia 2003): the order's generator
    active = np.arange(K)
    shrunk = np.zeros(K, np.bool_)
    block = max(block, 1)
    starts = np.empty(K // block + 3, np.int64)
    border = np.empty(K // block + 2, np.int64)
    local = np.empty(max(min(block, K), min(small, K), 1), np.int64)
    sink = 0.0
    n_active = K
    bsum = 0.0
    for k in range(K):
        bsum += beta[k]
    pg_max_old = np.inf
    pg_min_old = -np.inf
    eps = 0.1
    primal = np.inf
    dual = -np.inf
    b_eff = b_c
    epochs = 0
    checked = 0
    visits = 0
    visits_checked = 0
    d = v.shape[0]
    v_avg = v.copy()  # exponential average of the iterates (v, b_eff)
    b_avg = b_c + s2 * bsum / lam
    visits_averaged = 0
    next_check = check_every * K  # visits between checks: shortened near the end (see below)
    last_gap = np.inf
    best_primal = np.inf
    best_dual = -np.inf
    best_b = b_avg
    for j in range(d):
        v_best[j] = v[j]
    while epochs < max_epochs:
        # blocks [starts[j], starts[j + 1]) of the active list, cut at a random offset; one block,
        # a fully random order, once at most `small` coordinates are active
        nb = 0
        if n_active > small:
            rng, t = _draw(rng, block)
            if t > 0:
                starts[0] = 0
                nb = 1
            while t < n_active:
                starts[nb] = t
                nb += 1
                t += block
        elif n_active > 0:
            starts[0] = 0
            nb = 1
        starts[nb] = n_active
        for j in range(nb):  # the blocks' order: a random permutation
            border[j] = j
        rng = _shuffle(border, nb, rng)
        pg_max = -np.inf
        pg_min = np.inf
        visits += n_active
        n_shrunk = 0
        for jb in range(nb):
            lo_t = starts[border[jb]]
            hi_t = starts[border[jb] + 1]
            if jb + 1 < nb:  # read the next block's rows once, in order: the prefetcher streams them
                r0 = rows[active[starts[border[jb + 1]]]]
                r1 = rows[active[starts[border[jb + 1] + 1] - 1]] + 1
                for p in range(indptr[r0], indptr[r1], 8):
                    sink += indices[p] if ones else data[p] + indices[p]
            nloc = hi_t - lo_t
            for i in range(nloc):  # the block's own order: a random permutation
                local[i] = lo_t + i
            rng = _shuffle(local, nloc, rng)
            for tt in range(nloc):
                t = local[tt]
                k = active[t]
                r = rows[k]
                dot = 0.0
                if ones:  # every entry is 1: its value is not read (a9a: a fifth less time a visit)
                    for p in range(indptr[r], indptr[r + 1]):
                        dot += v[indices[p]]
                else:
                    for p in range(indptr[r], indptr[r + 1]):
                        dot += v[indices[p]] * data[p]
                f = (dot + s2 * bsum) / lam + b_c
                b = beta[k]
                lo = -a[k]
                hi = c[k]
                kink = hi + lo
                # one-sided gradients of the minimized (negated) dual: down uses the left slope of h
                g_up = f + (0.5 if b >= kink else -0.5)
                g_down = f + (-0.5 if b <= kink else 0.5)
                pg = 0.0
                shrink = False  # at a bound or the kink with gradients pointing out (shrinking)
                if b <= lo:
                    shrink = g_up > pg_max_old
                    pg = min(g_up, 0.0)
                elif b >= hi:
                    shrink = g_down < pg_min_old
                    pg = max(g_down, 0.0)
                elif b == kink:
                    shrink = g_up > pg_max_old and g_down < pg_min_old
                    if g_up < 0.0:
                        pg = g_up
                    elif g_down > 0.0:
                        pg = g_down
                else:
                    pg = g_up
                if shrink:  # leaves the active list at the end of the epoch
                    shrunk[k] = True
                    n_shrunk += 1
                    continue
                if pg > pg_max:
                    pg_max = pg
                if pg < pg_min:
                    pg_min = pg
                if pg == 0.0:
                    continue
                q = qdiag[k]
                nbeta = b + (0.5 - f) / q  # on the piece below the kink
                if nbeta > kink:
                    nbeta = b + (-0.5 - f) / q  # above it
                    if nbeta < kink:
                        nbeta = kink
                if nbeta < lo:
                    nbeta = lo
                elif nbeta > hi:
                    nbeta = hi
                delta = nbeta - b
                if delta == 0.0:
                    continue
                beta[k] = nbeta
                bsum += delta
                if ones:
                    for p in range(indptr[r], indptr[r + 1]):
                        v[indices[p]] += delta
                else:
                    for p in range(indptr[r], indptr[r + 1]):
                        v[indices[p]] += delta * data[p]
        if n_shrunk:  # stable compaction: the active list stays in storage order
            w = 0
            for t in range(n_active):
                k = active[t]
                if shrunk[k]:
                    shrunk[k] = False
                else:
                    active[w] = k
                    w += 1
            n_active = w
        epochs += 1
        b_eff = b_c + s2 * bsum / lam
        if visits - visits_averaged >= K:  # O(d): at most once per pass's worth of visits
            rho = min(1.0, average_rate * (visits - visits_averaged) / K)
            for j in range(d):
                v_avg[j] += rho * (v[j] - v_avg[j])
            b_avg += rho * (b_eff - b_avg)
            visits_averaged = visits
        converged = pg_max - pg_min <= eps or n_active == 0
        if visits - visits_checked >= next_check or (converged and n_active == K):
            primal, primal_avg, dual = _gap(indptr, indices, data, rows, a, c, beta, v, lam, s2, b_eff,
                                            v_avg, b_avg)
            out[6] += 1.0
            checked = epochs
            since_check = visits - visits_checked
            visits_checked = visits
            best_primal, best_dual, best_b = _keep_best(primal, primal_avg, dual, v, b_eff, v_avg, b_avg,
                                                        best_primal, best_dual, best_b, v_best)
            gap = best_primal - best_dual
            if gap <= tol:
                break
            # the next check when the gap's decay since the last check (linear convergence)
            # would bring it to tol, with 25% to spare; between 1 and check_every passes
            next_check = check_every * K
            if gap < last_gap < np.inf:
                n_more = np.log(gap / tol) / np.log(last_gap / gap) * since_check
                next_check = int(min(max(1.25 * n_more, K), next_check))
            last_gap = gap
            if s2 > 0.0:  # a proximal-point (multiplier) step on the intercept: re-centre
                b_c = b_eff
        if converged:
            if n_active < K:  # converged on the active set: check every coordinate
                for k in range(K):
                    active[k] = k
                n_active = K
                pg_max_old = np.inf
                pg_min_old = -np.inf
                continue
            eps *= 0.3  # converged on every coordinate, gap still above tol (b_c re-centred)
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    if checked != epochs:
        primal, primal_avg, dual = _gap(indptr, indices, data, rows, a, c, beta, v, lam, s2, b_eff, v_avg, b_avg)
        best_primal, best_dual, best_b = _keep_best(primal, primal_avg, dual, v, b_eff, v_avg, b_avg,
                                                    best_primal, best_dual, best_b, v_best)
    out[0] = b_c
    out[1] = epochs
    out[2] = best_primal
    out[3] = best_dual
    out[4] = best_b
    out[5] = visits
    out[7] = sink


def _accumulate(indptr, indices, data, rows, beta, v):  # pragma: no cover - compiled by numba
    """``v += sum_k beta_k x_{r_k}``."""
    for k in range(rows.shape[0]):
        b = beta[k]
        if b == 0.0:
            continue
        r = rows[k]
        for p in range(indptr[r], indptr[r + 1]):
            v[indices[p]] += b * data[p]


def _kernel(name):
    if name not in _KERNELS:
        numba = optional_import("numba", "the dual coordinate descent solver (inner_solver='dcd')")
        jit = numba.njit(cache=True, nogil=True)
        # the kernels call these: numba resolves module globals at compile time
        for helper in ("_h", "_gap", "_draw", "_shuffle", "_keep_best"):
            globals()[helper] = jit(globals()[helper])
        _KERNELS["epochs"] = jit(_dcd_epochs)
        _KERNELS["accumulate"] = jit(_accumulate)
    return _KERNELS[name]


class DualState:
    """Dual variables of the weighted hinge problem kept between solves (the warm start).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        Converted once to CSR (float64; int32 column indices where they fit) for the kernel,
        with its rows stored in a random order: the kernel visits blocks of consecutive stored
        rows (see ``_dcd_epochs``), which are then random samples of the rows whatever the
        order of ``X`` (sorted by label, say).
    random_state : int or None, default 0
        Seed of the storage order (None: 0, so that a solve is reproducible).

    Attributes
    ----------
    storage_order : ndarray of shape (n,)
        The row of ``X`` stored at each position; ``position`` is its inverse.
    ones : bool
        Whether every stored entry is 1 (binary or one-hot features, as a9a): the kernel then
        does not read the values
        (see benchmarks/README.md, section "Measurements behind the library's choices").
    beta : ndarray of shape (n,)
        The dual variable of each row from the last solve (``alpha_+ - alpha_-`` of its two
        hinge entries); zero for rows absent from it.
    intercept_centre : float
        The multiplier-method centre ``b_c`` of the last solve.
    n_solves, n_epochs, n_visits, n_gap_checks : int
        Solves, coordinate-descent epochs, coordinate visits (the work: shrunk epochs visit
        fewer coordinates) and duality-gap checks (one pass over the rows each) run so far.
    """

    def __init__(self, X, random_state=0):
        self._source = X  # the matrix the kernel's copy was made from (see matches)
        Xc = sp.csr_matrix(X, dtype=np.float64)
        Xc.sum_duplicates()
        Xc.sort_indices()
        self.shape = Xc.shape
        # storage order: the rows shuffled once, so that the blocks of consecutive rows the kernel
        # visits in turn are random samples whatever the order of X (sorted by label, say)
        seed = 0 if random_state is None else random_state
        self.storage_order = np.random.RandomState(seed).permutation(Xc.shape[0])
        self.position = np.empty_like(self.storage_order)
        self.position[self.storage_order] = np.arange(Xc.shape[0])
        self.sqnorm = np.asarray(Xc.multiply(Xc).sum(axis=1)).ravel()
        Xc = Xc[self.storage_order]
        self.indptr = np.ascontiguousarray(Xc.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(Xc.indices, dtype=np.int32 if Xc.shape[1] < 2 ** 31 else np.int64)
        self.data = np.ascontiguousarray(Xc.data, dtype=np.float64)
        self.ones = bool((self.data == 1.0).all())  # binary / one-hot features: values not read
        self.beta = np.zeros(Xc.shape[0])
        self.intercept_centre = 0.0
        self.n_solves = 0
        self.n_epochs = 0
        self.n_visits = 0
        self.n_gap_checks = 0

    def cold(self):
        """A state on the same stored rows (shared, not copied) with every dual variable zero."""
        new = copy.copy(self)
        new.beta = np.zeros(self.shape[0])
        new.intercept_centre = 0.0
        new.n_solves = new.n_epochs = new.n_visits = new.n_gap_checks = 0
        return new

    def matches(self, X) -> bool:
        """Whether the state was built for this matrix (same entries, not only the same shape).

        The kernel solves on the state's own copy of ``X``, so a state built for another matrix
        of the same shape would silently solve the wrong problem. The same object is accepted
        at once (the MM loop's case); any other is compared entry by entry (``O(nnz)``).
        """
        if X is self._source:
            return True
        if tuple(X.shape) != tuple(self.shape):
            return False
        Xc = sp.csr_matrix(X, dtype=np.float64)
        Xc.sum_duplicates()
        Xc.sort_indices()
        Xc = Xc[self.storage_order]
        return (np.array_equal(Xc.indptr, self.indptr) and np.array_equal(Xc.indices, self.indices)
                and np.array_equal(Xc.data, self.data))


def solve_dcd(state, rows, a, c, lam, *, fit_intercept=True, intercept_scaling=1.0, tol=1e-5,
              max_epochs=2000, random_state=0):
    """Minimize the weighted hinge problem (module docstring) from the state's dual variables.

    Parameters
    ----------
    state : DualState
        Read for the start and updated with the solution.
    rows : ndarray of int, shape (K,)
        Distinct rows of ``X`` in the problem.
    a, c : ndarray of shape (K,), non-negative
        Weights of each row's hinge entries with label -1 (``a max(0, 1/2 + f)``) and +1
        (``c max(0, 1/2 - f)``); zero when the entry is absent. The dual variable of the row is
        ``beta = alpha_+ - alpha_-`` in ``[-a, c]`` (the two entries' variables merged: as
        separate coordinates they are perfectly anti-correlated and slow coordinate descent).
    lam : float
        ``lam/2 |w|^2``, > 0.
    fit_intercept : bool
        Unregularized intercept (method of multipliers), or none.
    intercept_scaling : float
        ``s`` of the augmented dual (> 0); changes the path, not the answer.
    tol : float
        Duality gap at which to stop (absolute).
    max_epochs : int
    random_state : int
        Seed of the coordinate order.

    Returns
    -------
    coef : ndarray of shape (d,)
    intercept : float
        The best primal point the gap checks saw: the last iterate ``w = sum beta x / lam`` or
        the average of the iterates (see ``_dcd_epochs``), so ``coef`` need not equal the stored
        ``beta``'s ``w``.
    dual : float
        Certified lower bound on the optimum: the best ``D(beta)`` the checks saw.
    primal : float
        ``P(coef, intercept)``; ``primal - dual`` is the certified gap.
    epochs : int

    Raises
    ------
    ValueError
        For ``lam <= 0``, a non-positive ``intercept_scaling``, negative weights, repeated rows
        or shapes that do not match.
    """
    if not lam > 0:
        raise ValueError(f"the regularization lam must be positive, got {lam!r}")
    if fit_intercept and not intercept_scaling > 0:
        raise ValueError(f"intercept_scaling must be positive, got {intercept_scaling!r}")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    a = np.ascontiguousarray(a, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    if not (len(rows) == len(a) == len(c)):
        raise ValueError("rows, a and c must have the same length")
    if (a < 0).any() or (c < 0).any():
        raise ValueError("the hinge weights a and c must be non-negative")
    d = state.shape[1]
    # the kernel visits the rows in storage order by blocks: sort the problem by storage position
    # (by a scatter over the positions when the problem has most rows: O(n), not a sort)
    pos = state.position[rows]
    K = len(rows)
    if K > state.shape[0] // 8:
        slot = np.full(state.shape[0], -1, dtype=np.int64)
        slot[pos] = np.arange(len(rows))
        order = slot[slot >= 0]
    else:
        order = np.argsort(pos, kind="stable")
    rows, a, c = rows[order], a[order], c[order]
    stored = np.ascontiguousarray(state.position[rows])
    if len(stored) != K or (np.diff(stored) <= 0).any():
        raise ValueError("rows must be distinct rows of X")
    beta = np.ascontiguousarray(np.clip(state.beta[rows], -a, c))
    v = np.zeros(d)
    _kernel("accumulate")(state.indptr, state.indices, state.data, stored, beta, v)
    s2 = float(intercept_scaling) ** 2 if fit_intercept else 0.0
    qdiag = (state.sqnorm[rows] + s2) / lam
    qdiag[qdiag <= 0] = np.inf  # an empty row with no intercept: its coordinate never moves
    b_c = float(state.intercept_centre) if fit_intercept else 0.0
    out = np.zeros(8)
    v_best = np.empty(d)
    seed = int(np.random.RandomState(random_state).randint(np.iinfo(np.int32).max))
    # bytes a visit reads: the row's entries, and the coordinate's rows/a/c/qdiag/beta/active
    row_bytes = (len(state.data) / max(state.shape[0], 1)) * (state.data.itemsize + state.indices.itemsize) + 48
    block, small = max(1, int(BLOCK_BYTES / row_bytes)), int(CACHE_BYTES / row_bytes)
    _kernel("epochs")(state.indptr, state.indices, state.data, stored, a, c, qdiag, beta, v, float(lam), s2,
                      b_c, float(tol), int(max_epochs), seed, CHECK_EVERY, block, small, AVERAGE_RATE, state.ones, out,
                      v_best)
    state.beta[:] = 0.0
    state.beta[rows] = beta
    state.intercept_centre = float(out[0])
    state.n_solves += 1
    state.n_epochs += int(out[1])
    state.n_visits += int(out[5])
    state.n_gap_checks += int(out[6])
    return v_best / lam, (float(out[4]) if fit_intercept else 0.0), float(out[3]), float(out[2]), int(out[1])
