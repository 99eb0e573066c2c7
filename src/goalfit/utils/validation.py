"""Input checks shared by the estimators, the metrics and the command line.

Each check raises a ``ValueError`` (or ``TypeError``) whose message names the offending
argument and what is wrong with it, so that bad input never turns into a silent wrong answer
or into an error raised deep inside numpy.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["n_rows", "check_consistent_rows", "check_sample_weight", "check_has_predict_proba",
           "check_labels_in_classes", "resolve_pos_label", "check_no_missing", "check_confidence",
           "check_fraction", "check_count", "check_aligned_indexes"]


def n_rows(obj) -> int | None:
    """Number of rows of an array, DataFrame, sparse matrix, list or dict of columns (None for None)."""
    if obj is None:
        return None
    shape = getattr(obj, "shape", None)  # first: scipy's dok matrices are dicts too
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    if isinstance(obj, dict):
        lengths = {len(np.asarray(v)) for v in obj.values()}
        return lengths.pop() if len(lengths) == 1 else None
    try:
        return len(obj)
    except TypeError:
        return None


def check_consistent_rows(**arrays) -> int | None:
    """Check that every given (non-None) argument has the same number of rows.

    Parameters
    ----------
    **arrays
        Name -> array-like, e.g. ``X=X, y=y, sensitive_features=sf``. The first is the
        reference the others are compared with.

    Returns
    -------
    int or None
        The common number of rows (None when the first argument's rows cannot be counted).

    Raises
    ------
    ValueError
        ``"X has 200 rows but y has 199"``: naming the two arguments that differ.
    """
    items = [(k, n_rows(v)) for k, v in arrays.items() if v is not None]
    if not items:
        raise ValueError("no data given")
    ref_name, ref = items[0]
    for name, n in items[1:]:
        if n is not None and ref is not None and n != ref:
            raise ValueError(f"{ref_name} has {ref} rows but {name} has {n}")
    return ref


def check_sample_weight(sample_weight, n_samples: int):
    """Sample weights as a float array of shape (n_samples,), or None.

    Raises
    ------
    ValueError
        Wrong length, NaN/infinite or negative weights, or weights that sum to zero.
    """
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=float)
    if sw.ndim != 1 or len(sw) != n_samples:
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {sw.shape}")
    if not np.isfinite(sw).all():
        raise ValueError("sample_weight contains NaN or infinite values")
    if (sw < 0).any():
        i = int(np.flatnonzero(sw < 0)[0])
        raise ValueError(f"sample_weight must be non-negative; {int((sw < 0).sum())} negative value(s), "
                         f"e.g. {sw[i]:g} at index {i}")
    if sw.sum() <= 0:
        raise ValueError("sample_weight sums to zero: at least one example needs a positive weight")
    return sw


def check_probabilities(P, what: str = "precomputed probabilities", *, sum_to_one: bool = True, where: str = ""):
    """Check class probabilities: finite, non-negative and (``sum_to_one``) summing to 1 on each row.

    Two passes over ``P`` in the common case: the row sums (finite unless ``P`` holds NaN or
    infinities, or finite values overflow, which a full test then tells apart) and the smallest value.

    Parameters
    ----------
    P : ndarray of float, shape (n_samples, n_columns) (any shape when not ``sum_to_one``)
    what : str
        What the message calls ``P``.
    sum_to_one : bool, default True
        Also require each row to sum to 1 within 1e-3.
    where : str
        A prefix for the message (e.g. ``"partition 3: "``).

    Returns
    -------
    ndarray
        ``P``.

    Raises
    ------
    ValueError
        NaN, infinite or negative values; a row whose sum is off 1 by more than 1e-3 (naming it).

    Examples
    --------
    >>> import numpy as np
    >>> check_probabilities(np.array([[0.2, 0.8], [0.5, 0.5]])).shape
    (2, 2)
    >>> check_probabilities(np.array([[0.2, 0.7]]))
    Traceback (most recent call last):
    ...
    ValueError: precomputed probabilities must sum to 1 on each row (row 0 sums to 0.9): pass a model's predict_proba output, or scores turned into probabilities (e.g. scipy.special.softmax(scores, axis=1))
    """
    P = np.asarray(P)
    if sum_to_one:
        # two columns are added as columns (the same sums as P.sum(axis=1), without its per-row reduction)
        sums = P[:, 0] + P[:, 1] if P.ndim == 2 and P.shape[1] == 2 else P.sum(axis=-1)
        finite = bool(np.isfinite(sums).all()) or bool(np.isfinite(P).all())
    else:
        finite = bool(np.isfinite(P).all())
    if not finite or (P.size and P.min() < 0):
        raise ValueError(f"{where}{what} contain NaN, infinite or negative values")
    if sum_to_one and len(P) and (sums.max() - 1 > 1e-3 or 1 - sums.min() > 1e-3):  # |sum - 1| > 1e-3 on some row
        i = int(np.argmax(np.abs(sums - 1)))
        raise ValueError(f"{where}{what} must sum to 1 on each row (row {i} sums to {P[i].sum():.6g}): pass a "
                         "model's predict_proba output, or scores turned into probabilities (e.g. "
                         "scipy.special.softmax(scores, axis=1))")
    return P


def check_has_predict_proba(estimator, who: str = "GoalClassifier"):
    """Raise before fitting when ``estimator`` cannot give class probabilities.

    Raises
    ------
    TypeError
        Naming the estimator and the two ways out: calibrate it with
        :class:`~sklearn.calibration.CalibratedClassifierCV`, or pass its decision function
        turned into probabilities with ``estimator="precomputed"``.
    """
    if hasattr(estimator, "predict_proba"):
        return
    name = type(estimator).__name__
    raise TypeError(
        f"{who} needs class probabilities, but {name} has no predict_proba. Wrap it: "
        f"CalibratedClassifierCV({name}(...)) (sklearn.calibration), or fit it yourself and pass "
        f"probabilities from its decision_function (e.g. a sigmoid of the scores) with estimator='precomputed'")


def check_labels_in_classes(y_pred, classes, what: str = "y_pred"):
    """Check that 1-D predictions only hold known class labels.

    Catches probabilities or scores passed where labels are expected: with them every distinct
    float would otherwise become a class of its own.

    Raises
    ------
    ValueError
        Naming a few unknown values; for floats in [0, 1] it suggests thresholding or passing a
        (n_samples, n_classes) distribution.
    """
    y_pred = np.asarray(y_pred)
    known = set(np.asarray(classes).tolist())
    uniq = pd.unique(y_pred.ravel())
    bad = [v for v in uniq.tolist() if v not in known]
    if not bad:
        return
    hint = ""
    if y_pred.dtype.kind == "f" and np.nanmin(y_pred) >= 0 and np.nanmax(y_pred) <= 1:
        hint = (" They look like probabilities or scores: pass predicted labels (e.g. "
                "(proba >= 0.5).astype(int)), or a per-class distribution of shape (n_samples, n_classes)")
    raise ValueError(f"{what} holds {len(bad)} value(s) that are not class labels of y_true "
                     f"{sorted(known, key=str)}, e.g. {bad[:3]}.{hint}")


_UNAMBIGUOUS = ({0, 1}, {-1, 1}, {False, True})


def resolve_pos_label(classes, pos_label):
    """The positive class of a binary problem, scikit-learn's convention.

    ``pos_label=None`` is accepted when the classes are {0, 1}, {-1, 1} or {False, True} (the
    positive class is then 1 / True); for other labels (e.g. "bad"/"good") the positive class
    must be named. Multiclass problems return None (goals name their class).

    Raises
    ------
    ValueError
        ``pos_label`` is not one of the classes, or it is needed and missing.
    """
    classes = np.asarray(classes)
    if pos_label is not None:
        if pos_label not in set(classes.tolist()):
            raise ValueError(f"pos_label={pos_label!r} is not one of the classes {classes.tolist()}")
        return pos_label
    if len(classes) != 2:
        return None
    if set(classes.tolist()) in _UNAMBIGUOUS:
        return classes[1]
    return None


def check_no_missing(values, what: str):
    """Raise when an array-like holds NaN / None (named ``what`` in the message)."""
    if values is None:
        return
    mask = pd.isna(pd.DataFrame(values) if np.ndim(values) == 2 else pd.Series(np.asarray(values, dtype=object)))
    mask = np.asarray(mask).reshape(len(mask), -1).any(axis=1)
    if mask.any():
        rows = np.flatnonzero(mask)
        raise ValueError(f"{what} has {len(rows)} missing value(s) (NaN/None), e.g. at row {int(rows[0])}")


def check_confidence(confidence, what: str = "confidence") -> float:
    """A confidence level as a float in [0.5, 1).

    ``confidence`` is the probability that a bound (or interval) holds, e.g. 0.95. A value
    below 0.5 is refused: it is almost always ``alpha = 1 - confidence`` given by mistake
    (0.05 for 0.95), with which every "certified" bound would sit on the optimistic side of
    the measured value.

    Raises
    ------
    TypeError
        Not a real number.
    ValueError
        Not in [0.5, 1), naming ``what`` and, below 0.5, the likely confusion with alpha.
    """
    from numbers import Real

    if isinstance(confidence, bool) or not isinstance(confidence, Real):
        raise TypeError(f"{what} must be a float in [0.5, 1) such as 0.95, got {confidence!r}")
    c = float(confidence)
    if 0 < c < 0.5:
        raise ValueError(f"{what}={c:g} is the probability that the bound holds and must be in [0.5, 1), "
                         f"e.g. 0.95; {c:g} looks like alpha = 1 - confidence: pass {what}={1 - c:g}")
    if not 0.5 <= c < 1:
        raise ValueError(f"{what} must be in [0.5, 1) (the probability that the bound holds, e.g. 0.95), "
                         f"got {confidence!r}")
    return c


def check_fraction(value, what: str) -> float:
    """A float in the open interval (0, 1), named ``what`` in the error.

    Raises
    ------
    TypeError, ValueError
    """
    from numbers import Real

    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{what} must be a float in (0, 1), got {value!r}")
    if not 0 < float(value) < 1:
        raise ValueError(f"{what} must be in (0, 1), got {value!r}")
    return float(value)


def check_count(value, what: str, minimum: int = 1) -> int:
    """An integer (a count of rows, draws, ...) of at least ``minimum``, named ``what`` in the error.

    Raises
    ------
    TypeError
        Not an integer (a float such as 2.5, a string, a bool).
    ValueError
        Below ``minimum``.
    """
    from numbers import Integral, Real

    if isinstance(value, bool) or not isinstance(value, (Integral, Real)):
        raise TypeError(f"{what} must be an integer >= {minimum}, got {value!r}")
    if isinstance(value, Integral):
        count = int(value)
    else:
        as_float = float(value)
        if not (np.isfinite(as_float) and as_float.is_integer()):
            raise TypeError(f"{what} must be an integer >= {minimum}, got {value!r}")
        count = int(as_float)
    if count < minimum:
        raise ValueError(f"{what} must be an integer >= {minimum}, got {value!r}")
    return count


def check_aligned_indexes(**arrays) -> None:
    """Refuse pandas arguments whose indexes disagree (their rows would be paired by position).

    Parameters
    ----------
    **arrays
        Name -> argument, e.g. ``X=X, y=y, sensitive_features=sf``; only pandas Series and
        DataFrames are compared (numpy arrays, lists and dicts have no index), and only when
        their lengths agree (a length mismatch is :func:`check_consistent_rows`'s error).

    Raises
    ------
    ValueError
        Naming the two arguments, a row where they differ and the fix (``.reset_index(drop=True)``
        on each, or align them).
    """
    indexed = [(k, v.index) for k, v in arrays.items() if isinstance(v, (pd.Series, pd.DataFrame))]
    for (ref_name, ref), (name, index) in zip(indexed[:1] * len(indexed), indexed[1:]):
        if len(index) != len(ref) or index.equals(ref):
            continue
        i = next((k for k, (a, b) in enumerate(zip(ref, index)) if not (a == b or pd.isna(a) and pd.isna(b))), 0)
        raise ValueError(
            f"the indexes of {ref_name} and {name} differ (row {i}: {ref_name} index {ref[i]!r}, {name} index "
            f"{index[i]!r}); rows are matched by position, which would pair different examples: pass "
            f"{ref_name}.reset_index(drop=True) and {name}.reset_index(drop=True), or align them first "
            f"(e.g. {name} = {name}.loc[{ref_name}.index])")
