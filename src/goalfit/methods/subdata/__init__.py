"""Exact fairness through unbiased subdata selection (Ye & Xie, arXiv 2012.12356).

Modules, one per concern (data flows framework / measure -> zstep / wstep -> irs / mip -> method):

* :mod:`.framework` - the unified problem: the paper's named measures ``F(z)`` (OMR, FPR, EO,
  DP, 1 - F1) in exact integer form, selection costs, objective evaluation.
* :mod:`.measure` - ``F(z)`` built from compiled goals (any linear rate goal): per example the
  weight of being right, per constraint row an affine function of ``z``.
* :mod:`.zstep` - exact z-steps: the unified O(N log N) solver, Alg. 1, Alg. 3, Alg. 6, the
  structured O(N log N) z-step of compiled goals, the MILP z-step (HiGHS), brute force.
* :mod:`.wstep` - classifier steps: linear SVM, logistic, kernel SVM, any estimator, multiclass SVM.
* :mod:`.irs` - the iterative refining strategy (Alg. 2, 4, 5) with restarts and rho paths.
* :mod:`.mip` - GSVMF / GSVM-F1 / GMSVMF / GLRF on SCIP, the lambda = 0 MILP on HiGHS, and
  enumeration.
* :mod:`.method` - :class:`~.method.SubdataMethod`, the method on the compiled problem
  (``"irs"``, ``"mip"``, ``"bruteforce"``) behind :class:`goalfit.FairSubdataClassifier`.
* :mod:`.ssvm` - the SSVM baseline of Olfat & Aswani.
"""
