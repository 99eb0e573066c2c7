"""Built-in base models by name, with the preprocessing real tables need (:func:`make_estimator`)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
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


class DataWarning(UserWarning):
    """A table whose columns are probably not what they seem (numbers stored as text, an
    identifier read as categories): the fit goes on, the warning says what was done and the fix."""


#: A text column is read as numbers when at least this fraction of its non-missing values parse.
NUMERIC_TEXT_FRACTION = 0.9
#: A categorical column with at least this many categories and fewer than ``MIN_ROWS_PER_CATEGORY``
#: rows per category on average is flagged (an identifier, free text or numbers read as text).
MANY_CATEGORIES = 20
MIN_ROWS_PER_CATEGORY = 5


def _text_columns(X) -> list:
    """Columns of a DataFrame that a one-hot encoder would treat as categories (not numeric,
    boolean, categorical or datetime)."""
    out = []
    for col in X.columns:
        dtype = X[col].dtype
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_numeric_dtype(dtype) \
                or pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_datetime64_any_dtype(dtype):
            continue
        out.append(col)
    return out


def numeric_text_columns(X) -> dict:
    """Text columns of a table that hold numbers on most rows and a few other values.

    A numeric column with one ``"?"`` is read by pandas as text; one-hot encoded, each
    distinct number becomes a category of its own. Such a column is better read as numbers
    with the few other values missing.

    Parameters
    ----------
    X : pandas.DataFrame

    Returns
    -------
    dict
        ``{column: message}`` for each column whose non-missing values parse as numbers on at
        least ``NUMERIC_TEXT_FRACTION`` of the rows but not on all; the message names the column,
        the counts and the most frequent other values (the caller adds the fix in its own words).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"age": ["25", "31", "?"] + [str(20 + i) for i in range(27)]})
    >>> print(numeric_text_columns(X)["age"])  # doctest: +ELLIPSIS
    column 'age' holds numbers on 29 of 30 rows and 1 other value(s): '?' (1 row(s))
    """
    out = {}
    for col in _text_columns(X):
        values = X[col][X[col].notna()]
        if len(values) == 0:
            continue
        parsed = _parse_numbers(values)
        other = values[parsed.isna().to_numpy()]
        n_num = len(values) - len(other)
        if 0 < len(other) and n_num >= NUMERIC_TEXT_FRACTION * len(values):
            counts = other.astype(str).value_counts()
            shown = ", ".join(f"{v!r} ({k} row(s))" for v, k in counts.head(3).items())
            more = f" and {len(counts) - 3} more" if len(counts) > 3 else ""
            out[col] = (f"column {col!r} holds numbers on {n_num} of {len(values)} rows and {len(other)} other "
                        f"value(s): {shown}{more}")
    return out


def many_category_columns(X) -> dict:
    """Categorical columns of a table with very many categories for its number of rows.

    One-hot encoding such a column (an identifier, free text) adds about one feature per row.

    Parameters
    ----------
    X : pandas.DataFrame

    Returns
    -------
    dict
        ``{column: message}`` for each text or categorical column with at least
        ``MANY_CATEGORIES`` distinct values and fewer than ``MIN_ROWS_PER_CATEGORY`` rows per
        value on average.
    """
    out = {}
    text = set(_text_columns(X))
    for col in X.columns:
        if col not in text and not isinstance(X[col].dtype, pd.CategoricalDtype):
            continue
        n, k = int(X[col].notna().sum()), int(X[col].nunique())
        if k >= MANY_CATEGORIES and k * MIN_ROWS_PER_CATEGORY > n:
            out[col] = (f"column {col!r} has {k} distinct values in {n} rows: one-hot encoded, it adds {k} "
                        "features with few rows each (an identifier or free text?); drop it, or convert it "
                        "to numbers if it holds numbers")
    return out


def read_as_numbers(X, columns):
    """A copy of the DataFrame ``X`` with ``columns`` parsed as numbers (other values become NaN);
    ``X`` itself when there is nothing to parse (columns missing from ``X`` are skipped)."""
    columns = [c for c in columns if c in X.columns]
    if not columns:
        return X
    X = X.copy()
    for col in columns:
        X[col] = _parse_numbers(X[col])
    return X


def _parse_numbers(values):
    """The Series ``values`` as numbers (text stripped of surrounding spaces first); a value that
    is not a number becomes NaN."""
    return pd.to_numeric(values.astype(object).map(lambda v: v.strip() if isinstance(v, str) else v),
                         errors="coerce")


class TableEncoder(TransformerMixin, BaseEstimator):
    """Features of a table as numbers: one-hot categories, imputed and standardized numbers.

    A pandas DataFrame gets one-hot encoding of its non-numeric columns (a missing value is a
    category of its own; categories unseen in training are all-zero) and median imputation plus
    standardization of its numeric columns (:class:`~sklearn.compose.ColumnTransformer`). A
    numeric array or sparse matrix is passed through unchanged.

    A text column that holds numbers on most rows (a numeric column with a few ``"?"``, see
    :func:`numeric_text_columns`) is read as numbers, its other values missing, with a
    :class:`DataWarning` naming it; a categorical column with very many categories for the
    number of rows (:func:`many_category_columns`) gets a :class:`DataWarning` too.

    Parameters
    ----------
    sparse_output : bool, default True
        Allow a sparse result (``False`` for models that need dense input, such as
        HistGradientBoosting).

    Attributes
    ----------
    transformer_ : ColumnTransformer or None
        None for array input.
    numeric_text_columns_ : list
        Text columns read as numbers (DataFrame input; empty otherwise).
    numeric_columns_ : list
        Columns encoded as numbers (DataFrame input); one given as text to ``transform`` is read
        as numbers, its other values missing, with a :class:`DataWarning`.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        DataFrame input only.
    """

    def __init__(self, sparse_output: bool = True):
        self.sparse_output = sparse_output

    def fit(self, X, y=None):
        """Choose and fit the encoding for ``X`` (DataFrame: per-column; otherwise none)."""
        validate_data(self, X, skip_check_array=True, reset=True)
        self.numeric_text_columns_, self.numeric_columns_ = [], []
        if hasattr(X, "columns"):
            found = numeric_text_columns(X)
            for message in found.values():
                warnings.warn(f"TableEncoder: {message}; they are read as missing (imputed). Mark them as missing "
                              "when reading the table (pandas.read_csv(..., na_values=[...])) to silence this, or "
                              "cast the column to 'category' to keep it categorical", DataWarning, stacklevel=2)
            self.numeric_text_columns_ = list(found)
            X = read_as_numbers(X, self.numeric_text_columns_)
            self.numeric_columns_ = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c].dtype)
                                     and not pd.api.types.is_bool_dtype(X[c].dtype)]
            for message in many_category_columns(X).values():
                warnings.warn(f"TableEncoder: {message}", DataWarning, stacklevel=2)
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
        parsed = getattr(self, "numeric_text_columns_", [])
        late = [c for c in set(getattr(self, "numeric_columns_", [])) & set(_text_columns(X)) if c not in parsed]
        for col in sorted(late, key=str):
            warnings.warn(f"TableEncoder: column {col!r} held numbers at fit time and holds text now; values "
                          "that are not numbers are read as missing (imputed)", DataWarning, stacklevel=2)
        return self.transformer_.transform(read_as_numbers(X, list(parsed) + late))

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
