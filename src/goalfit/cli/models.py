"""Base estimators the command line can build by name, with the preprocessing tabular data needs."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

ESTIMATORS = {
    "logistic_regression": lambda seed: LogisticRegression(max_iter=1000),
    "gradient_boosting": lambda seed: HistGradientBoostingClassifier(random_state=seed),
    "random_forest": lambda seed: RandomForestClassifier(n_estimators=200, min_samples_leaf=5,
                                                         random_state=seed, n_jobs=1),
    # incremental (partial_fit): the base model of Dask fits on files that are not prefit
    "sgd_logistic": lambda seed: SGDClassifier(loss="log_loss", random_state=seed),
}


def make_estimator(name: str, X, seed: int = 0):
    """Base estimator ``name`` with preprocessing for ``X``.

    DataFrames get one-hot encoding of non-numeric columns (missing values as their own
    category) and median imputation plus standardization of numeric ones; sparse matrices go
    to the estimator as they are.

    Raises
    ------
    ValueError
        For an unknown estimator name.
    """
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r}; known: {sorted(ESTIMATORS)}")
    est = ESTIMATORS[name](seed)
    if sp.issparse(X) or not hasattr(X, "columns"):
        return est
    cat = make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                        OneHotEncoder(handle_unknown="ignore"))
    num = make_pipeline(SimpleImputer(strategy="median"), StandardScaler())
    pre = make_column_transformer(
        (cat, make_column_selector(dtype_exclude=np.number)),
        (num, make_column_selector(dtype_include=np.number)),
        # tree ensembles (HistGradientBoosting) need dense input; the linear model takes sparse
        sparse_threshold=0.3 if name == "logistic_regression" else 0.0,
    )
    return make_pipeline(pre, est)
