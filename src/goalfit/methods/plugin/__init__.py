"""Plug-in methods of Narasimhan et al. (JMLR 2024) over a linear minimization oracle.

``solve(problem, oracle, method="auto")`` picks by the objective's class and the dimension of
the problem's succinct representation (§8.6: ellipsoid for few dimensions, Frank-Wolfe for
smooth metrics without constraints, GDA / ConGDA otherwise, bisection for ratios), with one
departure for speed at the same guarantee or a better one: a **binary** problem on the plug-in
or the threshold oracle with a linear, smooth convex (H-mean, Q-mean, KL quantification) or
piecewise-linear (min-max recall) objective, under polyhedral constraints or none, is solved
exactly over the cells' ROC hulls (:mod:`goalfit.methods.plugin.binary_hull`: one linear or
convex program over every mixture of threshold rules) by the exact path of column generation
(linear) or of Frank-Wolfe / SplitFW (the others), where the paper's methods iterate (the
ellipsoid needs hundreds of cuts, ConGDA thousands of oracle calls):

=========================================  ==========================  ===========================
objective                                  no constraints              constraints
=========================================  ==========================  ===========================
linear (error, cost-sensitive, balanced)   one oracle call             column generation
ratio of linear (F-beta, micro-F1)         bisection (Alg. 4)          ConBisection (Alg. 8)
convex, representation dim <= 6            ellipsoid (Alg. 3)          see the rows below
convex, smooth (H-mean, Q-mean)            Frank-Wolfe (Alg. 1)        SplitFW (Alg. 5)*
convex, non-smooth (G-mean)                SplitFW (Alg. 5)            SplitFW (Alg. 5)*
convex, piecewise linear (min-max recall)  GDA (Alg. 2)                ConGDA (Alg. 6)
=========================================  ==========================  ===========================

(*) For polyhedral constraints (coverage, fairness, precision, ratios such as the 80% rule).
Both bisections test their values with Dinkelbach's iteration (2-4 steps where the paper's
midpoints take 14; the paper's search with ``search="midpoint"``;
:mod:`goalfit.methods.plugin.bisection`).
The table is for binary problems with an oracle the ROC hulls do not cover; with the plug-in
or the threshold oracle (the binary default) the linear rows run the hulls' LP inside column
generation (and the ratio rows inside ConBisection's steps), the smooth rows inside
Frank-Wolfe / SplitFW, and the piecewise-linear row is SplitFW (the hulls' epigraph LP);
G-mean with the threshold oracle runs SplitFW's exact column generation (certified in a few
oracle calls). With more than two classes on the plug-in oracle, the linear rows run column
generation and the ratio rows ConBisection (whose steps are column generation's), both pricing
the plug-in rule and its recalibrations within the cells
(:meth:`PluginOracle.cell_scales`), with or without constraints; every other objective with
polyhedral constraints or none runs SplitFW (Alg. 5), as do linear and ratio objectives on
another oracle; min-max recall iterates on its log-sum-exp smoothing
(``split_frank_wolfe(smoothing=...)``) and its output mixture is fitted to the true maximum.
A constraint that is smooth convex but not polyhedral (KL quantification) gets the constrained
ellipsoid when the cuts' dimension ``r + K`` is at most 6, ConGDA otherwise (e.g. G-mean with
a between-groups equal-opportunity constraint on two groups: 3 + 2 = 5; with
``method="to_overall"``: 3 + 4 = 7).

The constrained column and the multiclass choice are the rule "the fastest method whose
objective, on the training rows and on held-out rows, is within 1e-3 of the best method's",
read by class of goal (objective kind x constraint kind x binary / multiclass) from ``benchmarks/atlas.py`` (its results, and
which cells it covers, are in ``benchmarks/README.md``): SplitFW has no step sizes to tune and
reaches the best objective on smooth and non-smooth convex objectives in a few fully-corrective
iterations where the constrained ellipsoid needs hundreds of cuts; on a piecewise-linear
objective Frank-Wolfe's linearization stalls at a vertex, and with an exact oracle (binary)
ConGDA's certified steps get there first, while with several classes SplitFW iterates on the
smoothed maximum, within 1e-3 of ConGDA or below it at a fraction of its time; with
several classes, the plug-in oracle's rules (one oracle call, bisection's steps, the
ellipsoid's cuts) are optimal for the model's probabilities but not for the sample (a model that
does not see the group is not calibrated within it), and SplitFW's fully-corrective mixtures on
the sample reach the best objective on held-out rows as well, with or without constraints;
column generation, which also prices the rules on the probabilities recalibrated within each
cell, reaches it on linear goals in tens of oracle calls (all 40 multiclass linear cells of the
atlas at 10^5 rows; over 3-8 classes x 2-4 groups outside its grid,
``benchmarks/multiclass_linear.py``), and ConBisection with it on micro-F1. ConGDA after tuning
(:func:`goalfit.estimators.select_method_params`) can do better than with its defaults, as §8.6
of the paper reports.
"""
from collections.abc import Callable

from . import binary_hull
from .bisection import bisection, con_bisection
from .column_generation import column_generation, min_max_violation
from .ellipsoid import con_ellipsoid, ellipsoid, jle_update
from .frank_wolfe import frank_wolfe, split_frank_wolfe
from .gda import con_gda, gda
from .mixture import mixture_program
from .oracle import PluginOracle, RefitOracle, ThresholdOracle, recalibrates
from ._common import FitResult, PluginDetails, StopReason, certified_gap, is_exact, piecewise_linear, prune
from .repair import applies, compare_constants, repair_infeasible

METHODS: dict[str, Callable[..., FitResult]] = {
    "column_generation": column_generation,
    "frank_wolfe": frank_wolfe,
    "split_frank_wolfe": split_frank_wolfe,
    "con_gda": con_gda,
    "gda": gda,
    "bisection": bisection,
    "con_bisection": con_bisection,
    "ellipsoid": ellipsoid,
    "con_ellipsoid": con_ellipsoid,
}

ELLIPSOID_MAX_DIM = 6


def choose_method(problem, oracle=None) -> str:
    """The method ``"auto"`` resolves to for a compiled problem (the module docstring's table).

    By class of goal (objective kind x constraint kind x binary / multiclass); "polyhedral":
    coverage, fairness, precision and ratio constraints; "dim": the ellipsoid's dimension:

    =========================  ======================  ========================  ====================
    objective                  constraints             binary                    multiclass
    =========================  ======================  ========================  ====================
    linear                     none / polyhedral       column_generation         column_generation
                                                                                 (plug-in oracle),
                                                                                 else split_frank_wolfe
    any                        smooth, not polyhedral  con_gda (linear); con_ellipsoid if dim <= 6,
                                                       else con_gda (convex); con_bisection (ratio)
    ratio of linear            none / polyhedral       bisection / con_bisection con_bisection (plug-in
                                                                                 oracle), else
                                                                                 split_frank_wolfe
    convex smooth              none                    split_frank_wolfe (exact  split_frank_wolfe
                                                       oracle), else frank_wolfe
    convex non-smooth          none                    split_frank_wolfe         split_frank_wolfe
    convex piecewise linear    none                    split_frank_wolfe (plug-  split_frank_wolfe
                                                       in / threshold oracle),   (smoothed)
                                                       else ellipsoid if dim
                                                       <= 6, else gda
    convex, not piecewise lin. polyhedral              split_frank_wolfe         split_frank_wolfe
    convex piecewise linear    polyhedral              split_frank_wolfe (plug-  split_frank_wolfe
                                                       in / threshold oracle),   (smoothed)
                                                       else con_gda
    smooth non-convex          none / polyhedral       split_frank_wolfe (plug-  split_frank_wolfe
    (macro-F1; a heuristic,                            in / threshold oracle),   (heuristic)
    with a RuntimeWarning)                             else frank_wolfe /
                                                       con_gda (heuristics)
    =========================  ======================  ========================  ====================

    Parameters
    ----------
    problem : CompiledProblem
    oracle : linear minimization oracle, optional
        The oracle the method will run on. With an exact one (``oracle.exact``: the threshold
        oracle, binary problems), a smooth convex objective without constraints runs SplitFW's
        exact path (instead of Frank-Wolfe); with the plug-in or the threshold oracle, binary
        min-max recall runs SplitFW, whose exact path solves the epigraph LP over the cells'
        ROC hulls (:mod:`~goalfit.methods.plugin.binary_hull`) in one program instead of GDA's
        or ConGDA's iterations and the ellipsoid's cuts; with one whose rules can be
        recalibrated within the cells (:func:`~goalfit.methods.plugin.oracle.recalibrates`: the
        plug-in oracle, in memory or map-reduce, several classes), linear objectives run column
        generation and ratio objectives ConBisection; None: the choice for another oracle.

    Returns
    -------
    str
        A name of :data:`METHODS`.

    Raises
    ------
    ValueError
        When no method applies (a non-convex objective without smoothness). A smooth
        non-convex objective (``"macro_f1"``, ``macro_f1_over_groups``) gets a heuristic with a
        RuntimeWarning: ``"split_frank_wolfe"`` with several classes (polyhedral constraints or
        none) or on the binary plug-in or threshold oracle (a local optimum over the ROC hulls),
        else ``"frank_wolfe"`` without constraints and ``"con_gda"`` with them.
    """
    kind = problem.objective.kind
    constrained = bool(problem.constraints)
    binary = problem.space.n_classes == 2
    # measured (benchmarks/atlas.py): with several classes the plug-in oracle's rules are optimal
    # for the model's probabilities, not for the sample (a model that does not see the group is
    # not calibrated within it); SplitFW's fully-corrective mixtures, fitted on the sample, reach
    # the best objective on train and held-out rows where one oracle call, bisection and the
    # ellipsoid stop above it, with or without constraints (linear and ratio objectives on the
    # plug-in oracle: column generation's recalibrated pricing, below)
    mixture_on_sample = not binary and not problem.nonlinear
    exact = oracle is not None and is_exact(oracle)
    if kind == "linear":
        if problem.nonlinear:
            return "con_gda"
        # several classes on the plug-in oracle: column generation prices the plug-in rule and its
        # recalibrations within the cells, and every candidate with a negative reduced cost on the
        # sample enters: the best objective on train and held-out rows in tens of oracle calls;
        # SplitFW's mixtures on the sample for another oracle
        if mixture_on_sample and not recalibrates(oracle):
            return "split_frank_wolfe"
        return "column_generation"
    if kind == "ratio":
        if mixture_on_sample:
            # several classes on the plug-in oracle: ConBisection's steps are column generation's,
            # with its recalibrated pricing (with or without constraints)
            return "con_bisection" if recalibrates(oracle) else "split_frank_wolfe"
        return "con_bisection" if constrained else "bisection"
    if kind == "convex":
        if binary and problem.objective.smooth and not problem.nonlinear:
            # the exact binary program (ROC hulls with the plug-in oracle); with an exact oracle
            # SplitFW's column generation certifies in a few calls, unconstrained too (KL
            # quantification: 3 calls where Frank-Wolfe's iterations stall after hundreds)
            return "split_frank_wolfe" if constrained or exact else "frank_wolfe"
        pwl = piecewise_linear(problem.objective)
        if mixture_on_sample:
            # multiclass, polyhedral constraints or none: SplitFW (see above); a maximum of linear
            # pieces (min-max recall) iterates on its log-sum-exp smoothing (its measurements
            # against ConGDA: benchmarks/README.md, "Measurements behind the library's choices")
            return "split_frank_wolfe"
        if pwl and oracle is not None and binary_hull.applies(problem, oracle):
            # binary min-max recall on the plug-in or threshold oracle, polyhedral constraints or
            # none: SplitFW's exact path solves the epigraph LP over the cells' ROC hulls (one LP,
            # the optimum over every mixture of threshold rules, where GDA and ConGDA iterate)
            return "split_frank_wolfe"
        if constrained and not problem.nonlinear:
            # binary: SplitFW reaches the best objective on train and held-out rows at a fraction
            # of the constrained ellipsoid's / ConGDA's time; on min-max recall ConGDA (certified
            # by its epigraph pricing with the exact oracle) is as fast as SplitFW's column
            # generation and, with the plug-in oracle, closer to the best (benchmarks/README.md)
            return "con_gda" if pwl else "split_frank_wolfe"
        if not constrained and not pwl:
            # binary G-mean: SplitFW's exact column generation on the threshold oracle certifies the
            # optimum in a few oracle calls, faster than the ellipsoid at the same objective
            # (benchmarks/README.md, atlas.py)
            return "split_frank_wolfe"
        dim = _ellipsoid_dim(problem)
        if dim is not None and 2 <= dim <= ELLIPSOID_MAX_DIM:
            return "con_ellipsoid" if constrained else "ellipsoid"
        if not constrained:
            return "gda"  # piecewise linear (the smooth ones returned above)
        return "con_gda"  # a nonlinear constraint (polyhedral ones returned above)
    if problem.objective.smooth:
        # macro-F1, macro-F1 over groups: smooth but neither convex nor ratio-of-linear (a sum of
        # ratios); Frank-Wolfe is the heuristic Narasimhan et al. run on them (§8.6, no
        # guarantee). Read from the atlas (benchmarks/README.md): with several classes SplitFW's
        # mixtures on the sample; binary on the plug-in or threshold oracle SplitFW, whose exact
        # path runs SLSQP over the cells' ROC hulls from two starts (as low as ConGDA's 2000
        # iterations or lower, at a fraction of their time); otherwise ConGDA with constraints
        # (SplitFW's linearization stalls at the balanced rule there)
        import warnings

        hulls = oracle is not None and binary_hull.applies(problem, oracle)
        method = ("split_frank_wolfe" if mixture_on_sample or hulls
                  else "frank_wolfe" if not constrained else "con_gda")
        warnings.warn(f"objective {problem.objective.name!r} is neither convex nor ratio-of-linear: "
                      f"method='auto' runs {method} as a heuristic (no optimality guarantee)",
                      RuntimeWarning, stacklevel=3)
        return method
    raise ValueError(
        f"objective {problem.objective.name!r} is neither convex nor ratio-of-linear nor smooth: no "
        "plug-in method has a guarantee for it; pass method='frank_wolfe' (no constraints) or "
        "'con_gda' to run one as a heuristic"
    )


def _ellipsoid_dim(problem):
    """Dimension of the ellipsoid's space (representation + constraints), or None."""
    from .representation import FeatureSpace

    try:
        fs = FeatureSpace(problem, with_constraints=bool(problem.constraints))
    except (NotImplementedError, ValueError):
        return None
    return fs.dim + (fs.n_constraints if problem.constraints else 0)


def solve(problem, oracle, method: str = "auto", **params) -> FitResult:
    """Run a plug-in method on a compiled problem.

    Parameters
    ----------
    problem : CompiledProblem
    oracle : PluginOracle or RefitOracle
    method : str, default "auto"
        ``"auto"`` or one of :data:`METHODS`.
    **params
        Passed to the method (e.g. ``max_iter``).

    Returns
    -------
    FitResult
        The method's result; when it meets no constraint set, the constant classifiers join
        its members first (:func:`~goalfit.methods.plugin.repair.repair_infeasible`); when a
        feasible constant classifier beats it, they join too
        (:func:`~goalfit.methods.plugin.repair.compare_constants`): never worse than a
        feasible constant. ``details`` (:class:`PluginDetails`) says why the method stopped and,
        with an exact oracle, its certified lower bound and the returned mixture's gap.

    Raises
    ------
    ValueError
        Unknown method, or a method that does not support the problem.
    """
    if method == "auto":
        method = choose_method(problem, oracle)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known: ['auto'] + {sorted(METHODS)}")
    result = METHODS[method](problem, oracle, **params)
    tol = params.get("tol")  # the method's stopping tolerance is the polish's (0: the default)
    kw = {"tol": float(tol)} if tol else {}
    if applies(problem, oracle, result):
        result = repair_infeasible(problem, oracle, result, **kw)
    else:
        result = compare_constants(problem, oracle, result, **kw)
    return result


__all__ = ["METHODS", "PluginDetails", "PluginOracle", "RefitOracle", "FitResult", "StopReason", "ThresholdOracle",
           "bisection",
           "choose_method", "column_generation", "con_bisection", "con_ellipsoid", "con_gda", "ellipsoid",
           "frank_wolfe", "gda", "jle_update", "min_max_violation", "mixture_program", "prune", "solve",
           "split_frank_wolfe"]

from .baselines import BASELINES  # noqa: E402
from .method import (CV_MODELS, FIT_OPTIONS, JOINT_MODELS, ORACLES, PLUGIN_NAMES, PluginMethod,  # noqa: E402
                     PluginSettings, make_oracle, resolve_oracle)

__all__ += ["BASELINES", "CV_MODELS", "FIT_OPTIONS", "JOINT_MODELS", "ORACLES", "PLUGIN_NAMES", "PluginMethod",
            "PluginSettings", "make_oracle", "resolve_oracle"]


def __getattr__(name):  # names of goalfit 0.1, kept with a FutureWarning until 0.3
    if name == "SolverResult":
        from ...utils.deprecation import warn_deprecated

        warn_deprecated("goalfit.methods.plugin.SolverResult", "goalfit.fit.FitResult (the same fields)")
        return FitResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
