"""Exact fairness through unbiased subdata selection (Ye & Xie, arXiv 2012.12356)."""
