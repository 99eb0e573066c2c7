"""Rate surrogates over slices of the training data (Jiang et al., ICML 2020, §3.1 and §6).

A *slice surrogate* is the average of a pointwise loss of the margin ``z_i = y_i s_i`` (labels
``y_i`` in {-1, +1}, scores ``s_i = f_theta(x_i)``) over one slice of the training data: the
positives or the negatives of a group, or all examples. With the hinge loss,
``mean_{i in G, y_i = +1} max(0, 1 - s_i)`` upper-bounds the false-negative rate of group G and
``mean_{i in G, y_i = -1} max(0, 1 + s_i)`` its false-positive rate (§6.1-6.2; the notes'
reconstruction I.2.5 of the lost formulas). Losses: hinge, logistic, sigmoid (non-convex, the
authors' colab scale 1.5, §6.4-6.5) and ``lp`` (``max(0, 1 - z)^p``, Example 2). The quantile
surrogate for precision at recall tau (§6.3) is :class:`QuantilePrecisionSurrogate`.

Every surrogate is vectorized over many models at once: ``values`` takes scores of shape
``(n,)`` or ``(m, n)`` (one row per perturbed model) and returns ``(K,)`` or ``(m, K)``.
:func:`values_of_models` scores parameter matrices chunk by chunk to bound memory.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

__all__ = [
    "PointwiseLoss", "LOSSES", "get_loss", "SliceSurrogate", "QuantilePrecisionSurrogate",
    "SurrogateSet", "make_rate_surrogates", "values_of_models", "DEFAULT_CHUNK_ELEMENTS",
]

#: Largest number of score entries (rows x examples) held at once by chunked evaluations.
DEFAULT_CHUNK_ELEMENTS = 4_000_000

#: Up to this many surrogates per loss, :meth:`SurrogateSet.values` averages the losses of many
#: models by one matrix-vector product per surrogate instead of one (m, n) x (n, K) product
#: (skinny matrix products are slower than a few matrix-vector products with one BLAS thread;
#: from about 8 surrogates on, the one product wins).
_COLUMNWISE_AVERAGES = 3


class PointwiseLoss:
    """A pointwise loss ``l(z)`` of the margin ``z = y s``, non-increasing in ``z``.

    Subclasses give the numpy value and derivative and the torch value (for autograd).
    """

    name = "loss"
    convex = True

    def value(self, z):  # pragma: no cover - abstract
        raise NotImplementedError

    def derivative(self, z):  # pragma: no cover - abstract
        raise NotImplementedError

    def torch_value(self, z):  # pragma: no cover - abstract
        raise NotImplementedError

    def value_(self, z):
        """Loss values written over the margins ``z`` (a float array, any shape); returns ``z``.

        In place, in ``z``'s dtype: the batched surrogate evaluation of many perturbed models
        applies it to one fresh (m, n) margin matrix instead of allocating temporaries.
        """
        z[...] = self.value(z)
        return z

    def __repr__(self):
        return self.name


class HingeLoss(PointwiseLoss):
    """``max(0, 1 - z)``: convex upper bound of ``1(z <= 0)``."""

    name = "hinge"

    def value(self, z):
        return np.maximum(0.0, 1.0 - z)

    def value_(self, z):
        np.subtract(1.0, z, out=z)
        return np.maximum(z, 0.0, out=z)

    def derivative(self, z):
        return -(z < 1.0).astype(float)

    def torch_value(self, z):
        import torch

        return torch.clamp(1.0 - z, min=0.0)


class LogisticLoss(PointwiseLoss):
    """``log(1 + exp(-z))`` (natural log; divide by log 2 for an upper bound of the 0-1 loss)."""

    name = "logistic"

    def value(self, z):
        return np.logaddexp(0.0, -z)

    def value_(self, z):
        np.negative(z, out=z)
        return np.logaddexp(0.0, z, out=z)

    def derivative(self, z):
        return -expit(-z)

    def torch_value(self, z):
        import torch

        return torch.nn.functional.softplus(-z)


class SigmoidLoss(PointwiseLoss):
    """``1 / (1 + exp(scale z))``: a tight, non-convex relaxation of ``1(z <= 0)`` (§6.4-6.5).

    Parameters
    ----------
    scale : float, default 1.5
        Steepness (the authors' colab default ``sigma_scale=1.5``).
    """

    convex = False

    def __init__(self, scale: float = 1.5):
        if not scale > 0:
            raise ValueError(f"sigmoid scale must be positive, got {scale}")
        self.scale = float(scale)
        self.name = "sigmoid" if scale == 1.5 else f"sigmoid({scale:g})"

    def value(self, z):
        return expit(-self.scale * z)

    def value_(self, z):
        z *= -self.scale
        return expit(z, out=z)

    def derivative(self, z):
        v = expit(-self.scale * z)
        return -self.scale * v * (1.0 - v)

    def torch_value(self, z):
        import torch

        return torch.sigmoid(-self.scale * z)


class LpLoss(PointwiseLoss):
    """``max(0, 1 - z)^p`` with ``p >= 1``: the l_p losses of Example 2 (p = 1 is the hinge).

    Parameters
    ----------
    p : float, default 2
    """

    def __init__(self, p: float = 2.0):
        if not p >= 1:
            raise ValueError(f"the l_p loss needs p >= 1 (convex), got {p}")
        self.p = float(p)
        self.name = f"l{p:g}"

    def value(self, z):
        return np.maximum(0.0, 1.0 - z) ** self.p

    def value_(self, z):
        np.subtract(1.0, z, out=z)
        np.maximum(z, 0.0, out=z)
        return np.power(z, self.p, out=z)

    def derivative(self, z):
        return -self.p * np.maximum(0.0, 1.0 - z) ** (self.p - 1.0) * (z < 1.0)

    def torch_value(self, z):
        import torch

        return torch.clamp(1.0 - z, min=0.0) ** self.p


LOSSES = {"hinge": HingeLoss, "logistic": LogisticLoss, "sigmoid": SigmoidLoss, "lp": LpLoss}


def get_loss(loss) -> PointwiseLoss:
    """A :class:`PointwiseLoss` from an instance or a name in :data:`LOSSES`.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if isinstance(loss, PointwiseLoss):
        return loss
    if loss not in LOSSES:
        raise ValueError(f"unknown surrogate loss {loss!r}; known: {sorted(LOSSES)}")
    return LOSSES[loss]()


@dataclass(frozen=True)
class SliceSurrogate:
    """Average pointwise loss over one slice: examples with ``label`` in ``group``.

    Parameters
    ----------
    loss : PointwiseLoss or str
    label : {+1, -1, None}
        Positives, negatives or all examples of the group.
    group : str or None
        Name of a group mask passed when the set is bound (None: all examples).
    """

    loss: object = "hinge"
    label: int | None = None
    group: str | None = None

    @property
    def name(self) -> str:
        who = {1: "pos", -1: "neg", None: "all"}[self.label]
        where = "" if self.group is None else f"[{self.group}]"
        return f"{get_loss(self.loss).name}_{who}{where}"


class QuantilePrecisionSurrogate:
    """Convex surrogate of the false positives above the recall-``tau`` threshold (§6.3).

    The paper uses the quantile surrogates of Mackey et al. (2018), whose form the available
    text lacks; this follows the notes' convex stand-in (I.2.5 [O]) with its level corrected:
    recall tau needs a threshold at or below the (1 - tau)-quantile of the positive scores, which
    is lower-bounded by the lower superquantile (CVaR) at level ``a = 1 - tau``,
    ``q(s) = max_t t - (1/(a n+)) sum_pos (t - s_i)_+`` (the mean of the ``ceil(a n+)`` lowest
    positive scores; the notes print ``tau`` for ``a``, which bounds the tau-quantile instead).
    Every threshold ``<= q(s)`` has recall ``>= tau``, and the surrogate is the hinge bound of the
    false-positive rate there, ``(1/n-) sum_neg max(0, 1 + s_j - q(s))``, convex in the scores
    (``q`` is concave: a partial maximum of jointly concave terms).

    Parameters
    ----------
    recall : float in (0, 1)
        Target recall tau.
    group : str, optional
    """

    label = None

    def __init__(self, recall: float = 0.5, group: str | None = None):
        if not 0 < recall < 1:
            raise ValueError(f"recall must be in (0, 1), got {recall}")
        self.recall, self.group = float(recall), group
        self.loss = "quantile"

    @property
    def name(self) -> str:
        return f"quantile_prec@rec{self.recall:g}" + ("" if self.group is None else f"[{self.group}]")

    def bound_values(self, S, pos, neg):
        """Values for scores ``S`` (m, n), positives/negatives index arrays; shape (m,)."""
        Sp = np.sort(S[:, pos], axis=1)  # ascending
        a, t = self._level_and_t(Sp)
        q = t - np.maximum(t[:, None] - Sp, 0.0).sum(axis=1) / (a * Sp.shape[1])
        return np.maximum(0.0, 1.0 + S[:, neg] - q[:, None]).mean(axis=1)

    def _level_and_t(self, Sp):
        """Level ``a = 1 - tau`` and the maximizing ``t``: the ceil(a n+)-th smallest score."""
        a = 1.0 - self.recall
        k = max(1, int(np.ceil(a * Sp.shape[-1])))
        return a, Sp[..., k - 1]

    def bound_gradient(self, s, pos, neg, n):
        """Subgradient w.r.t. the scores ``s`` (n,), shape (n,)."""
        g = np.zeros(n)
        sp = s[pos]
        a, t = self._level_and_t(np.sort(sp))
        q = t - np.maximum(t - sp, 0.0).sum() / (a * len(sp))
        active = (1.0 + s[neg] - q) > 0
        g[neg] = active / len(neg)
        # dq/ds_i = 1/(a n+) for positives below t, plus the slack at t (envelope theorem)
        dq = (sp < t) / (a * len(sp))
        dq[np.flatnonzero(sp == t)[:1]] += 1.0 - dq.sum()
        g[pos] = -active.mean() * dq
        return g

    def torch_value(self, s, pos, neg):
        import torch

        sp = s[pos]
        a = 1.0 - self.recall
        k = max(1, int(np.ceil(a * sp.shape[0])))
        t = torch.kthvalue(sp, k).values  # carries the envelope gradient through s_t
        q = t - torch.clamp(t - sp, min=0.0).sum() / (a * sp.shape[0])
        return torch.clamp(1.0 + s[neg] - q, min=0.0).mean()


def make_rate_surrogates(loss="hinge", groups=None, labels=(1, -1)) -> list:
    """Slice surrogates for every (label, group): the paper's K = 2 x n_groups (§6).

    Parameters
    ----------
    loss : str or PointwiseLoss, default "hinge"
    groups : sequence of str, optional
        Group names (bound to masks later); None: one slice per label over all examples.
    labels : sequence of {+1, -1, None}, default (+1, -1)

    Returns
    -------
    list of SliceSurrogate, groups outer, labels inner.
    """
    loss = get_loss(loss)
    gs = [None] if groups is None else list(groups)
    return [SliceSurrogate(loss, lab, g) for g in gs for lab in labels]


class SurrogateSet:
    """K surrogates bound to training labels and group masks.

    Parameters
    ----------
    surrogates : sequence of SliceSurrogate / QuantilePrecisionSurrogate
    y : array of shape (n,)
        Labels in {-1, +1}.
    group_masks : dict of str -> bool array of shape (n,), optional
        Masks the surrogates' ``group`` names refer to; groups may overlap (§6.5).
    sample_weight : array of shape (n,), optional
        Non-negative example weights: each surrogate is then the weighted average of its
        pointwise losses over its slice (the weighted rate it bounds).

    Raises
    ------
    ValueError
        On labels other than +-1, NaN, an unknown group name, a mask of the wrong length,
        an empty slice (a surrogate over no example, or of zero total weight, is undefined),
        bad weights, or weights with quantile surrogates.
    """

    def __init__(self, surrogates, y, group_masks=None, sample_weight=None):
        y = np.asarray(y, dtype=float)
        if y.ndim != 1 or not np.isin(y, (-1.0, 1.0)).all():
            raise ValueError("surrogate labels must be a 1-d array of -1 / +1")
        self.y = y
        self.n = len(y)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=float)
            if sample_weight.shape != (self.n,) or not np.isfinite(sample_weight).all() or (sample_weight < 0).any():
                raise ValueError(f"sample_weight must hold {self.n} finite non-negative numbers")
        self.sample_weight = sample_weight
        self.surrogates = list(surrogates)
        if not self.surrogates:
            raise ValueError("need at least one surrogate")
        group_masks = {} if group_masks is None else dict(group_masks)
        self.index: list[np.ndarray] = []
        self.pos_neg: list = []  # (pos, neg) rows of a quantile surrogate, None for a slice
        for s in self.surrogates:
            mask = np.ones(self.n, dtype=bool)
            if s.group is not None:
                if s.group not in group_masks:
                    raise ValueError(f"surrogate {s.name}: unknown group {s.group!r}; "
                                     f"known: {sorted(group_masks)}")
                gm = np.asarray(group_masks[s.group], dtype=bool)
                if gm.shape != (self.n,):
                    raise ValueError(f"group mask {s.group!r} has shape {gm.shape}, expected ({self.n},)")
                mask = mask & gm
            if isinstance(s, QuantilePrecisionSurrogate):
                if sample_weight is not None:
                    raise ValueError(f"surrogate {s.name}: quantile surrogates take no sample weights")
                pos, neg = np.flatnonzero(mask & (y > 0)), np.flatnonzero(mask & (y < 0))
                if len(pos) == 0 or len(neg) == 0:
                    raise ValueError(f"surrogate {s.name}: the slice has no positive or no negative example")
                self.index.append(np.flatnonzero(mask))
                self.pos_neg.append((pos, neg))
                continue
            if s.label is not None:
                mask = mask & (y == s.label)
            idx = np.flatnonzero(mask)
            if len(idx) == 0 or (sample_weight is not None and sample_weight[idx].sum() <= 0):
                raise ValueError(f"surrogate {s.name}: empty slice (no training example with "
                                 f"label {s.label} in group {s.group!r}, or zero total weight)")
            self.index.append(idx)
            self.pos_neg.append(None)
        self.losses = [None if isinstance(s, QuantilePrecisionSurrogate) else get_loss(s.loss)
                       for s in self.surrogates]
        self._blocks = self._pointwise_blocks()
        self._cast = {}  # float32 copies of the block constants, for float32 scores

    def _pointwise_blocks(self):
        """Pointwise surrogates grouped by loss: ``(loss, ks, cols, W, y)`` with W the dense
        (len(cols), len(ks)) averaging matrix over the columns ``cols`` the slices cover (None
        for all) and ``y`` their labels, so that each loss is evaluated once per example even
        when slices overlap and all surrogates of a block are one matrix product."""
        by_loss: dict = {}
        for k, loss in enumerate(self.losses):
            if loss is not None:
                by_loss.setdefault((type(loss), loss.name), (loss, []))[1].append(k)
        blocks = []
        for loss, ks in by_loss.values():
            cols = np.unique(np.concatenate([self.index[k] for k in ks]))
            W = np.zeros((len(cols), len(ks)), order="F")  # contiguous columns
            for j, k in enumerate(ks):
                W[np.searchsorted(cols, self.index[k]), j] = self.slice_weights(k)
            full = len(cols) == self.n
            blocks.append((loss, np.array(ks), None if full else cols, W, self.y if full else self.y[cols]))
        return blocks

    def slice_weights(self, k) -> np.ndarray:
        """Averaging weights of surrogate ``k`` over its slice ``index[k]`` (sum 1), shape (len(index[k]),)."""
        idx = self.index[k]
        if self.sample_weight is None:
            return np.full(len(idx), 1.0 / len(idx))
        w = self.sample_weight[idx]
        return w / w.sum()

    def _as(self, a, dtype, key):
        """``a`` in ``dtype`` (float32 copies of the block constants are made once)."""
        if a.dtype == dtype:
            return a
        if key not in self._cast:
            self._cast[key] = a.astype(dtype)
        return self._cast[key]

    @property
    def names(self) -> list:
        return [s.name for s in self.surrogates]

    def __len__(self):
        return len(self.surrogates)

    def disjoint(self) -> bool:
        """Whether the slices are pairwise disjoint (needed by finite differences, Alg. 2)."""
        count = np.zeros(self.n, dtype=int)
        for idx in self.index:
            count[idx] += 1
        return bool((count <= 1).all())

    def values(self, S, overwrite=False) -> np.ndarray:
        """Surrogate values at scores ``S`` of shape (n,) or (m, n); returns (K,) or (m, K).

        float32 scores (the batched perturbed models) are evaluated in float32 (losses and the
        averaging product); the result is float64. With ``overwrite=True`` a float ``S`` may be
        overwritten by the losses (no (m, n) temporary; for freshly computed scores).

        Raises
        ------
        ValueError
            On a shape mismatch or NaN (or infinite) scores.
        """
        S = np.asarray(S)
        if S.dtype not in (np.float32, np.float64):
            S = S.astype(float)
        one = S.ndim == 1
        S2 = S[None, :] if one else S
        if S2.ndim != 2 or S2.shape[1] != self.n:
            raise ValueError(f"scores must have shape (n,) or (m, n) with n = {self.n}, got {S.shape}")
        out = np.empty((S2.shape[0], len(self)))
        in_place = overwrite and S is S2 and len(self._blocks) == 1 and all(loss is not None for loss in self.losses)
        for b, (loss, ks, cols, W, yc) in enumerate(self._blocks):
            ys = self._as(yc, S2.dtype, ("y", b))
            if in_place and cols is None:
                Z = np.multiply(S2, ys, out=S2)  # margins over the scores
            else:
                Z = (S2 if cols is None else S2[:, cols]) * ys  # margins
            L, Wd = loss.value_(Z), self._as(W, S2.dtype, ("W", b))
            if Wd.shape[1] <= _COLUMNWISE_AVERAGES:  # matrix-vector products beat a skinny GEMM
                for j, k in enumerate(ks):
                    out[:, k] = L @ Wd[:, j]
            else:
                out[:, ks] = L @ Wd
        for k, (s, loss) in enumerate(zip(self.surrogates, self.losses)):
            if loss is None:
                if np.isnan(S2).any():
                    raise ValueError("scores contain NaN")
                out[:, k] = s.bound_values(S2, *self.pos_neg[k])
        if not np.isfinite(out).all():  # NaN scores propagate through every loss
            raise ValueError("scores contain NaN or infinite values (non-finite surrogate values)")
        return out[0] if one else out

    def score_vjp(self, s, w) -> np.ndarray:
        """``w @ J(s)``: the weighted sum of the surrogates' score (sub)gradients, shape (n,).

        The projection (4) and Relaxed-FM need only this product (the gradient of
        ``sum_k w_k phi_k`` w.r.t. the scores), which avoids forming the (K, n) Jacobian.

        Parameters
        ----------
        s : array of shape (n,)
        w : array of shape (K,)
        """
        s, w = np.asarray(s, dtype=float), np.asarray(w, dtype=float)
        g = np.zeros(self.n)
        for loss, ks, cols, W, yc in self._blocks:
            sc = s if cols is None else s[cols]
            part = (W @ w[ks]) * yc * loss.derivative(yc * sc)
            if cols is None:
                g += part
            else:
                g[cols] += part
        for k, (sur, loss) in enumerate(zip(self.surrogates, self.losses)):
            if loss is None and w[k] != 0:
                g += w[k] * sur.bound_gradient(s, *self.pos_neg[k], self.n)
        return g

    def score_jacobian(self, s) -> np.ndarray:
        """(Sub)gradients of each surrogate w.r.t. the scores ``s`` (n,); shape (K, n)."""
        return np.stack([self.score_vjp(s, np.eye(len(self))[k]) for k in range(len(self))])

    def torch_values(self, s):
        """Surrogate values of a torch score vector (n,), a (K,) tensor with autograd."""
        import torch

        key = (str(s.device), s.dtype)
        if getattr(self, "_torch_cache", (None,))[0] != key:  # index tensors once per device
            t = lambda a: torch.as_tensor(a, device=s.device)  # noqa: E731
            self._torch_cache = (key, torch.as_tensor(self.y, dtype=s.dtype, device=s.device),
                                 [t(i) for i in self.index],
                                 [torch.as_tensor(self.slice_weights(k), dtype=s.dtype, device=s.device)
                                  for k in range(len(self))],
                                 [None if pn is None else (t(pn[0]), t(pn[1])) for pn in self.pos_neg])
        _, y, index, weights, pos_neg = self._torch_cache
        vals = []
        for sur, ti, wt, pn, loss in zip(self.surrogates, index, weights, pos_neg, self.losses):
            if loss is None:
                assert pn is not None  # a quantile surrogate: its (pos, neg) rows
                vals.append(sur.torch_value(s, *pn))
            else:
                vals.append(loss.torch_value(y[ti] * s[ti]) @ wt)
        return torch.stack(vals)


def values_of_models(score_many, Theta, fn, *, n_examples, chunk_elements=DEFAULT_CHUNK_ELEMENTS):
    """``fn(score_many(Theta_chunk))`` over row chunks of a parameter matrix, concatenated.

    Parameters
    ----------
    score_many : callable (m_c, d) -> (m_c, n)
        Scores of a chunk of models.
    Theta : array of shape (m, d)
    fn : callable (m_c, n) -> (m_c, ...) array
    n_examples : int
        n, to size the chunks so that at most ``chunk_elements`` scores are held at once.
    chunk_elements : int

    Returns
    -------
    ndarray of shape (m, ...)
    """
    m = Theta.shape[0]
    step = max(1, int(chunk_elements // max(n_examples, 1)))
    return np.concatenate([np.asarray(fn(score_many(Theta[i:i + step]))) for i in range(0, m, step)], axis=0)
