"""Deprecated (removed in 0.3): the built-in base models moved to :mod:`goalfit.estimators.models`.

``make_estimator(name, X, seed)`` is :func:`goalfit.estimators.make_estimator` ``(name,
random_state=seed)`` (one encoder for numpy, sparse and pandas input, so ``X`` is no longer
needed); ``ESTIMATORS`` is ``goalfit.estimators.models.MODELS``. Each use warns FutureWarning.
"""
from __future__ import annotations

from ..utils.deprecation import moved_module, warn_deprecated


def make_estimator(name: str, X=None, seed: int = 0):
    """Deprecated (removed in 0.3): use ``goalfit.estimators.make_estimator(name, random_state=seed)``.

    Parameters
    ----------
    name : str
        A built-in model's name (``goalfit.estimators.models.MODELS``).
    X : ignored
        The new model encodes numpy, sparse and pandas input alike.
    seed : int, default 0
        Passed as ``random_state``.

    Returns
    -------
    sklearn.pipeline.Pipeline
        :class:`~goalfit.estimators.TableEncoder` then the classifier.

    Raises
    ------
    ValueError
        An unknown name.
    """
    from ..estimators.models import make_estimator as _make_estimator

    warn_deprecated("goalfit.cli.models.make_estimator(name, X, seed)",
                    "goalfit.estimators.make_estimator(name, random_state=seed)")
    return _make_estimator(name, random_state=seed)


_forward = moved_module(__name__, "goalfit.estimators.models")


def __getattr__(name):
    if name == "ESTIMATORS":  # name -> seed -> unfitted classifier, as in 0.1 (MODELS also says if it is linear)
        from ..estimators.models import MODELS

        warn_deprecated("goalfit.cli.models.ESTIMATORS", "goalfit.estimators.models.MODELS (name -> (factory, linear))")
        return {name: factory for name, (factory, _) in MODELS.items()}
    return _forward(name)
