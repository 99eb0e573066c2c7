"""Exact fairness through unbiased subdata selection (Ye & Xie, arXiv 2012.12356).

Modules, one per concern (data flows framework -> zstep / wstep -> irs / mip):

* :mod:`.framework` - the unified problem: measures ``F(z)`` (OMR, FPR, EO, DP, 1 - F1) in
  exact integer form, selection costs, objective evaluation.
* :mod:`.zstep` - exact z-steps: the unified O(N log N) solver, Alg. 1, Alg. 3, Alg. 6, brute force.
* :mod:`.wstep` - classifier steps: linear SVM, logistic, kernel SVM, any estimator, multiclass SVM.
* :mod:`.irs` - the iterative refining strategy (Alg. 2, 4, 5) with restarts and rho paths.
* :mod:`.mip` - GSVMF / GSVM-F1 / GMSVMF / GLRF on SCIP, and enumeration.
* :mod:`.ssvm` - the SSVM baseline of Olfat & Aswani.
"""
