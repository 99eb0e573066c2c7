"""Goals as differentiable minibatch estimates of the core's compiled linear forms.

There is no second goal parser: :meth:`goalfit.goals.Problem.compile` binds the goals to the
training sample's :class:`~goalfit.confusion.ConfusionSpace` once, giving the objective as a
bound function of the stacked confusion tensor ``C`` (shape ``(n_cells, n, n)``, entries are
fractions of the whole sample) and every polyhedral constraint as rows ``A vec(C) <= b``
(ratios such as precision multiplied out, max-abs disparities expanded into one row per pair,
Narasimhan et al. JMLR 2024 §7.2). This module estimates ``C`` on a minibatch:

``C_hat[c, i, j] = sum_r w_r 1[cell_r = c, y_r = i] s_j(x_r)``

with importance weights ``w_r`` (each stratum of the batch stands for its share of the sample)
and ``s_j`` either the exact indicator of predicting ``j`` (the 0-1 rates the multipliers of the
proxy-Lagrangian see, Cotter, Jiang & Sridharan, ALT 2019, §4) or a differentiable proxy of it:
``"hinge"`` (``max(0, 1 + f)`` for the positive class and ``max(0, 1 - f)`` for the negative one,
TFCO's default, convex in ``f``), ``"logistic"`` (``softplus(+-f) / ln 2``, convex and smooth, an
upper bound of the indicator: with it the error objective is the logistic loss in bits),
``"sigmoid"`` (``sigmoid(+-f)``) for binary problems on the margin ``f``, and ``"softmax"`` (the
softmax of the logits) for any number of classes. Every rate, difference, scalar multiple and
max-abs disparity of the core is a linear form of ``C`` and so of ``C_hat``.

``"cross_entropy"`` (any number of classes) does not replace the indicators one by one. The
model's loss ``w_0 psi + sum_k lambda_k g_k`` is linear in the indicators, so on each example it
is a cost ``c_j`` of predicting class ``j`` (``c = w_0 a_0 + sum_k lambda_k a_k`` at the
example's (cell, class) row). With ``j* = argmin_j c_j`` and logits ``z``, the cost-augmented
softmax cross-entropy ``c_{j*} + log sum_j exp(c_j - c_{j*} + z_j - z_{j*})`` is a convex, smooth
upper bound of ``c_{argmax z}`` (the ``j = argmax z`` term alone exceeds it) whose gradient does
not vanish when the softmax saturates, unlike the softmax proxy's: the log-loss counterpart of the
cost-sensitive multiclass hinge. The multipliers of the Lagrangian then ascend on the softmax
proxies of the rows (those of the proxy-Lagrangian on the 0-1 rows, as always).

A linear objective (error, cost-sensitive, balanced error, any rate expression) is estimated the
same way. Any other objective that exposes its linear features ``psi(C) = g(U vec(C))`` (ratios
such as F-beta or precision as an objective, H/G/Q-mean, min-max recall) is optimized through
slack variables ``xi`` with the equality constraints ``U vec(C) = xi`` written as two inequality
rows each: ``min g(xi)`` s.t. ``U vec(C) - xi <= 0``, ``xi - U vec(C) <= 0`` (Narasimhan, Cotter
& Gupta, NeurIPS 2019, §3, the three-player game: model, slacks and multipliers). Ratio
*constraints* with a constant bound need no slack: ``num / den >= t`` is the linear row
``t den - num <= 0`` (``den > 0``), which the core's compile step already produces.
"""
from __future__ import annotations

import math

import numpy as np
import torch

PROXIES = ("hinge", "logistic", "sigmoid", "softmax", "cross_entropy")
_LN2 = math.log(2.0)


def margins(logits: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Binary margin ``f`` (predict the positive class iff ``f > 0``) from a network's output.

    Parameters
    ----------
    logits : tensor of shape (B,), (B, 1) or (B, 2)
    n_classes : int
        Must be 2.

    Raises
    ------
    ValueError
        If the output shape does not fit a binary problem.
    """
    if logits.ndim == 1:
        return logits
    if logits.ndim == 2 and logits.shape[1] == 1:
        return logits.select(1, 0)
    if logits.ndim == 2 and logits.shape[1] == 2:
        return logits.select(1, 1) - logits.select(1, 0)
    raise ValueError(f"a binary problem needs a network output of shape (B,), (B, 1) or (B, 2), "
                     f"got {tuple(logits.shape)}")


def margin_column(logits: torch.Tensor) -> torch.Tensor:
    """The binary margin as a column, shape (B, 1) (a (B, 1) output as it is)."""
    if logits.ndim == 2 and logits.shape[1] == 1:
        return logits
    return margins(logits, 2).unsqueeze(1)


def check_output(logits: torch.Tensor, n_classes: int) -> None:
    """Raise ``ValueError`` when a network's output does not match the number of classes."""
    if n_classes == 2:
        margins(logits, 2)
    elif logits.ndim != 2 or logits.shape[1] != n_classes:
        raise ValueError(f"a {n_classes}-class problem needs a network output of shape (B, {n_classes}), "
                         f"got {tuple(logits.shape)}")


def predicted_codes(logits: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Deterministic predictions (class codes), shape (B,): ``f > 0`` or the argmax."""
    if n_classes == 2:
        return (margins(logits, 2) > 0).long()
    return logits.argmax(dim=1)


def indicators(logits: torch.Tensor, n_classes: int, proxy: str | None) -> torch.Tensor:
    """Per-example indicators of predicting each class, shape (B, n_classes).

    Parameters
    ----------
    logits : tensor
        Network output (see :func:`margins` for binary problems; (B, n_classes) otherwise).
    n_classes : int
    proxy : {"hinge", "logistic", "sigmoid", "softmax", "cross_entropy"} or None
        ``None``: the exact 0-1 indicators (one-hot of :func:`predicted_codes`, no gradient);
        ``"cross_entropy"`` gives the softmax indicators (its model loss is
        :meth:`RateProblem.cost_bound_loss`, not these).

    Raises
    ------
    ValueError
        For an unknown proxy, or a binary-only proxy on a multiclass problem.
    """
    if proxy is None:
        codes = predicted_codes(logits, n_classes)
        return torch.nn.functional.one_hot(codes, n_classes).to(logits.dtype)
    if proxy in ("softmax", "cross_entropy"):  # cross_entropy: softmax stands in for the rates
        if n_classes == 2:
            f = margins(logits, 2)
            return torch.stack([torch.sigmoid(-f), torch.sigmoid(f)], dim=1)
        return torch.softmax(logits, dim=1)
    if n_classes != 2:
        raise ValueError(f"proxy {proxy!r} is for binary problems; a {n_classes}-class problem uses "
                         "proxy='cross_entropy' or 'softmax'")
    f = margins(logits, 2)
    if proxy == "hinge":
        return torch.stack([torch.relu(1.0 - f), torch.relu(1.0 + f)], dim=1)
    if proxy == "logistic":
        sp = torch.nn.functional.softplus
        return torch.stack([sp(-f), sp(f)], dim=1) / _LN2
    if proxy == "sigmoid":
        return torch.stack([torch.sigmoid(-f), torch.sigmoid(f)], dim=1)
    raise ValueError(f"unknown proxy {proxy!r}; known: {list(PROXIES)}")


class _FeatureObjective(torch.autograd.Function):
    """``g(xi)`` of a core :class:`~goalfit.goals.functions.Features` object, with its gradient."""

    @staticmethod
    def forward(ctx, xi, features):
        z = xi.detach().cpu().double().numpy()
        ctx.save_for_backward(xi)
        ctx.features = features
        return xi.new_tensor(float(features.value(z)))

    @staticmethod
    def backward(ctx, grad):
        (xi,) = ctx.saved_tensors
        g = ctx.features.gradient(xi.detach().cpu().double().numpy())
        return grad * xi.new_tensor(np.asarray(g, dtype=float)), None


class RateProblem:
    """A compiled problem estimated on minibatches (see the module docstring).

    Parameters
    ----------
    problem : goalfit.goals.problem.CompiledProblem
        The core's compiled problem on the training sample.
    proxy : str
        Proxy of the indicators for the model's gradient (see :func:`indicators`).
    device : torch.device or str
    dtype : torch.dtype, default torch.float32

    Attributes
    ----------
    n_constraint_rows : int
        ``K``, the polyhedral rows of the user's constraints.
    n_slacks : int
        ``m``, slack variables of a non-linear objective (0 for a linear one).
    n_rows : int
        ``K + 2 m``: the rows that carry a multiplier.

    Raises
    ------
    ValueError
        If a constraint has no polyhedral form (e.g. KL quantification) or the objective
        exposes neither a linear form nor linear features.
    """

    def __init__(self, problem, proxy: str, device="cpu", dtype=torch.float32):
        if problem.nonlinear:
            names = [c.name for c in problem.nonlinear]
            raise ValueError(f"constraints {names} have no linear-row form; the Lagrangian methods "
                             "support rate constraints, ratios with a constant bound and max-abs disparities")
        self.problem = problem
        self.space = problem.space
        self.n_cells, self.n_classes, _ = self.space.shape
        self.proxy = proxy
        self.device, self.dtype = torch.device(device), dtype
        tt = lambda a: torch.as_tensor(np.asarray(a, dtype=float), dtype=dtype, device=self.device)  # noqa: E731
        D = self.space.size
        self.A = tt(problem.A) if problem.A is not None else torch.zeros((0, D), dtype=dtype, device=self.device)
        self.b = tt(problem.b) if problem.b is not None else torch.zeros(0, dtype=dtype, device=self.device)
        self.n_constraint_rows = int(self.A.shape[0])
        obj = problem.objective
        if obj.kind == "linear":
            self.obj_coef, self.obj_const = tt(obj.coef.ravel()), float(obj.const)
            self.features = None
            self.U = torch.zeros((0, D), dtype=dtype, device=self.device)
        else:
            try:
                self.features = obj.features()
            except NotImplementedError:
                raise ValueError(f"objective {obj.name!r} exposes no linear features: it cannot be "
                                 "optimized with slack variables") from None
            self.U = tt(self.features.U)
            m = self.U.shape[0]
            # each feature U_k . vec(C) ranges over the confusion tensors whose rows sum to row_mass
            U4 = self.features.U.reshape(m, self.n_cells, self.n_classes, self.n_classes)
            mass = self.space.row_mass[None]
            self.slack_low = torch.as_tensor((mass * U4.min(axis=3)).sum(axis=(1, 2)), dtype=dtype, device=self.device)
            self.slack_high = torch.as_tensor((mass * U4.max(axis=3)).sum(axis=(1, 2)), dtype=dtype, device=self.device)
        self.n_slacks = int(self.U.shape[0])
        self.n_rows = self.n_constraint_rows + 2 * self.n_slacks
        if proxy not in PROXIES:
            raise ValueError(f"unknown proxy {proxy!r}; known: {list(PROXIES)}")
        if self.n_classes != 2 and proxy in ("hinge", "logistic", "sigmoid"):
            raise ValueError(f"proxy {proxy!r} is for binary problems; a {self.n_classes}-class problem uses "
                             "proxy='cross_entropy' or 'softmax'")
        # every linear form a batch needs, stacked: the objective's (zero for a slack objective)
        # and the rows' [A; U; -U]; ``forms @ vec(C) - offset`` = (objective, rows without slacks)
        K, m = self.n_constraint_rows, self.n_slacks
        forms = np.zeros((1 + self.n_rows, D))
        offset = np.zeros(1 + self.n_rows)
        if self.features is None:
            forms[0], offset[0] = np.asarray(obj.coef, float).ravel(), -float(obj.const)
        if K:
            forms[1: 1 + K], offset[1: 1 + K] = np.asarray(problem.A, float), np.asarray(problem.b, float)
        if m:
            assert self.features is not None  # slacks are the features' values
            forms[1 + K: 1 + K + m], forms[1 + K + m:] = self.features.U, -np.asarray(self.features.U)
        self.forms, self.offset = tt(forms), tt(offset)
        self.n_forms = 1 + self.n_rows
        #: ``table[s, j]``: the forms' coefficients of the confusion entry (slice s, predicted class j)
        self.table = self.forms.T.reshape(self.n_cells * self.n_classes, self.n_classes, self.n_forms).contiguous()
        self._slice_table = self.table.reshape(self.n_cells * self.n_classes, -1)
        self._entry_table64 = torch.as_tensor(forms.T, dtype=torch.float64, device=self.device).contiguous()
        self._neg_offset64 = -torch.as_tensor(offset, dtype=torch.float64, device=self.device)
        self._sign = torch.tensor([-1.0, 1.0], dtype=dtype, device=self.device)
        self._one = torch.ones((), dtype=dtype, device=self.device)
        self._zero = torch.zeros((), dtype=dtype, device=self.device)

    def slice_shares(self) -> np.ndarray:
        """How much each (cell, class) slice carries of the goal it matters most to, shape (n_cells * n,).

        For every constraint row, slack feature and linear objective ``a``, slice ``s`` carries
        ``max_j |a[s, j]| mass_s`` out of the sum of that over all slices; the result is the
        largest such share over the rows. A rare slice with a large share (the positives of a
        small group in a TPR constraint) is what TFCO's "one stream per rare group" is for; a
        rare slice that only enters an overall rate is not.
        """
        n = self.n_classes
        mats = [np.asarray(self.problem.A)] if self.problem.A is not None else []
        if self.features is None:
            mats.append(np.asarray(self.problem.objective.coef).reshape(1, -1))
        else:
            mats.append(np.asarray(self.features.U))
        mass = self.space.row_mass.reshape(-1)
        best = np.zeros(len(mass))
        for M in mats:
            W = np.abs(M).reshape(len(M), -1, n).max(axis=2) * mass[None, :]
            tot = W.sum(axis=1, keepdims=True)
            share = np.divide(W, tot, out=np.zeros_like(W), where=tot > 0)
            best = np.maximum(best, share.max(axis=0))
        return best

    # ------------------------------------------------------------------ per-batch linear forms
    def weighted_forms(self, slice_ids: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """Each example's share of every linear form, flattened to shape (B * n, n_forms).

        Row ``r n + j`` is ``w_r`` times the forms' coefficients of the confusion entry (slice of
        ``r``, predicted class ``j``), so for any per-example indicators ``s`` of shape (B, n),
        ``P^T s.ravel() = forms @ vec(C_hat)``: the objective and every row of the batch
        estimate of the module docstring in one matrix-vector product, with no loop over groups
        or rows.

        Parameters
        ----------
        slice_ids : long tensor of shape (B,)
            ``cell * n_classes + true class`` of each example.
        weights : tensor of shape (B,)
            Importance weights (see :class:`goalfit.torch.batches.StratifiedBatches`).
        """
        return torch.mul(self._slice_table.index_select(0, slice_ids), weights.unsqueeze(1)).view(-1, self.n_forms)

    def proxy_indicators(self, logits: torch.Tensor) -> torch.Tensor:
        """The proxy indicators of :func:`indicators` for this problem's proxy, shape (B, n)
        (``"cross_entropy"``: the softmax). A binary proxy is one function of ``(-f, f)``."""
        if self.n_classes != 2:
            return torch.softmax(logits, dim=1)
        f = margin_column(logits)
        if self.proxy == "hinge":
            return torch.relu(torch.addcmul(self._one, f, self._sign))
        u = f * self._sign
        if self.proxy == "logistic":
            return torch.nn.functional.softplus(u) / _LN2
        return torch.sigmoid(u)

    def forms_01(self, logits: torch.Tensor, table, weights_or_base, out=None):
        """Exact 0-1 values ``forms @ vec(C) - offset`` of a batch, shape (n_forms,), no gradient.

        Parameters
        ----------
        logits : network output on the batch
        table, weights_or_base :
            Binary problems: ``Pd = P[:, 1] - P[:, 0]`` (shape (B, n_forms)) and
            ``sum_r P[r, 0] - offset`` for the batch's :meth:`weighted_forms` ``P`` viewed as
            (B, 2, n_forms), so that the value is ``base + Pd^T 1[f > 0]``; multiclass: ``n``
            times the slice ids (long, shape (B,)) and the importance weights (float64), the
            value is then float64.
        out : tensor of shape (n_forms,), optional
            Written in place.
        """
        if self.n_classes == 2:
            pred = torch.heaviside(margin_column(logits).detach().view(-1), self._zero)  # 1[f > 0]
            return torch.addmv(weights_or_base, table.t(), pred, out=out)
        rows = self._entry_table64.index_select(0, table + logits.detach().argmax(dim=1))  # (B, n_forms)
        return torch.addmv(self._neg_offset64, rows.t(), weights_or_base, out=out)

    def cost_bound_batch(self, logits, slice_ids, weights, lam_full) -> torch.Tensor:
        """The ``"cross_entropy"`` loss of the model on a batch for the weights ``lam_full``
        (shape (n_forms,): objective weight, then the rows'); constants and slack terms left out."""
        n = self.n_classes
        coef = (lam_full.detach().to(self.dtype) @ self.forms).reshape(self.n_cells * n, n)
        c = coef[slice_ids]  # (B, n): each example's cost of predicting each class
        if n == 2 and (logits.ndim == 1 or (logits.ndim == 2 and logits.shape[1] == 1)):
            f = margins(logits, 2)
            z = torch.stack([torch.zeros_like(f), f], dim=1)
        else:
            z = logits
        star = c.argmin(dim=1, keepdim=True)
        c_star, z_star = c.gather(1, star), z.gather(1, star)
        bound = c_star[:, 0] + torch.logsumexp(c - c_star + z.to(self.dtype) - z_star.to(self.dtype), dim=1)
        return (weights.to(self.dtype) * bound).sum()

    def slack_loss(self, xi: torch.Tensor, lam_full: torch.Tensor):
        """The slacks' terms of the Lagrangian, ``w_0 g(xi) + lambda . [-xi, xi]`` (Narasimhan,
        Cotter & Gupta, NeurIPS 2019, §3), and the objective ``g(xi)``."""
        m = self.n_slacks
        lam = lam_full.detach()
        lam_s = lam[1 + self.n_constraint_rows:]
        obj = _FeatureObjective.apply(xi, self.features)
        return lam[0] * obj + ((lam_s[m:] - lam_s[:m]) * xi).sum(), obj

    def slack_vector(self, xi: torch.Tensor) -> torch.Tensor:
        """``[0_K, xi, -xi]``: what the rows subtract for the slacks, shape (n_rows,)."""
        xi = xi.detach()
        return torch.cat([torch.zeros(self.n_constraint_rows, dtype=self.dtype, device=self.device), xi, -xi])

    # ------------------------------------------------------------------ estimates
    def confusion(self, logits, y_codes, cell_ids, weights, proxy: str | None) -> torch.Tensor:
        """Estimate of ``vec(C)``, shape (n_cells * n * n,).

        Parameters
        ----------
        logits : tensor, network output on the batch
        y_codes, cell_ids : long tensors of shape (B,)
        weights : tensor of shape (B,)
            Importance weights summing to 1 over the sample's strata (see
            :class:`goalfit.torch.batches.StratifiedBatches`).
        proxy : str or None
            ``None`` for the exact 0-1 estimate (no gradient).
        """
        n = self.n_classes
        rows = cell_ids * n + y_codes
        if proxy is None:  # one bincount of (row, predicted class)
            flat = rows * n + predicted_codes(logits.detach(), n)
            return torch.bincount(flat, weights=weights, minlength=self.n_cells * n * n).to(self.dtype)
        ind = indicators(logits, n, proxy).to(self.dtype)
        C = torch.zeros((self.n_cells * n, n), dtype=self.dtype, device=ind.device)
        C = C.index_add(0, rows, ind * weights[:, None])
        return C.reshape(-1)

    def row_matrix(self) -> torch.Tensor:
        """``[A; U; -U]``, shape (n_rows, D): the rows' linear forms on ``vec(C)``."""
        if self.n_slacks == 0:
            return self.A
        return torch.cat([self.A, self.U, -self.U])

    def cost_bound_loss(self, logits, y_codes, cell_ids, weights, w0, lam, xi) -> torch.Tensor:
        """The ``"cross_entropy"`` loss of the model (and the slacks) for fixed multipliers.

        ``sum_r w_r B(c_r, z_r)`` with ``c_r`` the cost vector of example ``r`` (see the module
        docstring), plus the slack terms ``w_0 g(xi) + lambda . [-xi, xi]`` of a non-linear
        objective; constants (``b``, the objective's constant) are left out.
        """
        lam = torch.as_tensor(lam, dtype=self.dtype, device=self.device).detach().reshape(-1)
        lam_full = torch.cat([torch.as_tensor(w0, dtype=self.dtype, device=self.device).reshape(1), lam])
        loss = self.cost_bound_batch(logits, cell_ids * self.n_classes + y_codes, weights, lam_full)
        if self.n_slacks:
            loss = loss + self.slack_loss(xi, lam_full)[0]
        return loss

    def constraint_rows(self, C: torch.Tensor) -> torch.Tensor:
        """``A vec(C) - b``, shape (K,) (positive entries are violated rows)."""
        return self.A @ C - self.b

    def slack_rows(self, C: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        """``[U vec(C) - xi, xi - U vec(C)]``, shape (2 m,)."""
        d = self.U @ C - xi
        return torch.cat([d, -d])

    def rows(self, C: torch.Tensor, xi: torch.Tensor | None) -> torch.Tensor:
        """All rows that carry a multiplier, shape (n_rows,)."""
        if self.n_slacks == 0:
            return self.constraint_rows(C)
        if xi is None:
            raise ValueError("xi is None, but this problem has slacks: pass them (initial_slacks gives a start)")
        return torch.cat([self.constraint_rows(C), self.slack_rows(C, xi)])

    def objective(self, C: torch.Tensor, xi: torch.Tensor | None) -> torch.Tensor:
        """The objective: ``<coef, C> + const`` (linear), or ``g(xi)`` of the slacks."""
        if self.features is None:
            return self.obj_coef @ C + self.obj_const
        return _FeatureObjective.apply(xi, self.features)

    def initial_slacks(self, C01: np.ndarray) -> torch.Tensor:
        """Slacks at the features of a confusion tensor (the initial model's), clipped to their range."""
        if self.n_slacks == 0:
            return torch.zeros(0, dtype=self.dtype, device=self.device)
        assert self.features is not None  # slacks are the features' values
        z = torch.as_tensor(self.features.U @ np.asarray(C01).ravel(), dtype=self.dtype, device=self.device)
        return torch.maximum(torch.minimum(z, self.slack_high), self.slack_low)

    def clip_slacks_(self, xi: torch.Tensor) -> None:
        """Project the slacks onto the range of their features, in place."""
        if self.n_slacks:
            with torch.no_grad():
                xi.copy_(torch.maximum(torch.minimum(xi, self.slack_high), self.slack_low))
