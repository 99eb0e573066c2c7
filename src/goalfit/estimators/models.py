"""Built-in base models by name, with the preprocessing real tables need (:func:`make_estimator`)."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

def _gradient_boosting(seed):
    from sklearn.ensemble import HistGradientBoostingClassifier  # sklearn.ensemble loads only when used

    return HistGradientBoostingClassifier(random_state=seed)


def _random_forest(seed):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=200, min_samples_leaf=5, random_state=seed, n_jobs=1)


#: name -> (factory of the classifier from a seed, whether it takes sparse input)
MODELS = {
    "logistic_regression": (lambda seed: LogisticRegression(max_iter=1000), True),
    "gradient_boosting": (_gradient_boosting, False),
    "random_forest": (_random_forest, True),
    # incremental (partial_fit): the base model of Dask fits on files
    "sgd_logistic": (lambda seed: SGDClassifier(loss="log_loss", random_state=seed), True),
}


class TableEncoder(TransformerMixin, BaseEstimator):
    """Features of a table as numbers: one-hot categories, imputed and standardized numbers.

    A pandas DataFrame gets one-hot encoding of its non-numeric columns (a missing value is a
    category of its own; categories unseen in training are all-zero) and median imputation plus
    standardization of its numeric columns (:class:`~sklearn.compose.ColumnTransformer`). A
    numeric array or sparse matrix is passed through unchanged.

    Parameters
    ----------
    sparse_output : bool, default True
        Allow a sparse result (``False`` for models that need dense input, such as
        HistGradientBoosting).

    Attributes
    ----------
    transformer_ : ColumnTransformer or None
        None for array input.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        DataFrame input only.
    """

    def __init__(self, sparse_output: bool = True):
        self.sparse_output = sparse_output

    def fit(self, X, y=None):
        """Choose and fit the encoding for ``X`` (DataFrame: per-column; otherwise none)."""
        validate_data(self, X, skip_check_array=True, reset=True)
        if hasattr(X, "columns"):
            cat = make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                                OneHotEncoder(handle_unknown="ignore"))
            num = make_pipeline(SimpleImputer(strategy="median"), StandardScaler())
            self.transformer_ = make_column_transformer(
                (cat, make_column_selector(dtype_exclude=np.number)),
                (num, make_column_selector(dtype_include=np.number)),
                sparse_threshold=0.3 if self.sparse_output else 0.0).fit(X)
        else:
            validate_data(self, X, accept_sparse=True, reset=True)
            self.transformer_ = None
        return self

    def transform(self, X):
        """The encoded features, shape (n_samples, n_features_out).

        Raises
        ------
        ValueError
            Another number of columns (or other column names) than at fit time.
        """
        check_is_fitted(self, "transformer_")
        if self.transformer_ is None:
            return validate_data(self, X, accept_sparse=True, reset=False)
        if not hasattr(X, "columns"):  # 1-D input gets scikit-learn's "Reshape your data" message
            check_array(X, accept_sparse=True, dtype=None, ensure_all_finite=False)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.transformer_.transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags


def make_estimator(name: str = "logistic_regression", *, random_state=None):
    """A built-in base model that takes real tables: :class:`TableEncoder` then the classifier.

    Parameters
    ----------
    name : {"logistic_regression", "gradient_boosting", "random_forest", "sgd_logistic"}
        ``LogisticRegression(max_iter=1000)``, ``HistGradientBoostingClassifier``,
        ``RandomForestClassifier(n_estimators=200, min_samples_leaf=5)`` or
        ``SGDClassifier(loss="log_loss")`` (learns incrementally: the Dask base model).
    random_state : int or None
        Seed of the models that use one.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Unfitted; ``fit(X, y)`` accepts a pandas DataFrame with categorical and numeric columns
        (and missing values), a numeric array or a sparse matrix.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).

    Examples
    --------
    >>> import goalfit as gf
    >>> model = gf.GoalClassifier(gf.make_estimator("gradient_boosting"),
    ...                           constraints=[gf.demographic_parity_difference("sex") <= 0.02])
    """
    if name not in MODELS:
        raise ValueError(f"unknown estimator {name!r}; known: {sorted(MODELS)}")
    factory, sparse = MODELS[name]
    return make_pipeline(TableEncoder(sparse_output=sparse), factory(random_state))


def resolve_estimator(estimator, default: str = "logistic_regression", *, random_state=None):
    """The base model an estimator parameter names: None (the default built-in model), a
    built-in model's name, or an estimator (cloned).

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if estimator is None:
        return make_estimator(default, random_state=random_state)
    if isinstance(estimator, str):
        return make_estimator(estimator, random_state=random_state)
    return clone(estimator)
