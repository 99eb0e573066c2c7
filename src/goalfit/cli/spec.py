"""Problem specifications in TOML, for ``goalfit fit SPEC.toml``.

Example::

    [data]
    dataset = "adult"            # a goalfit.datasets name, or: csv = "path/to/file.csv", or
                                 # files = "data/part-*.parquet" (Parquet or CSV glob, read with Dask;
                                 # test_files = "..." optional; features = [...] optional)
    label = "income"             # label column (csv only)
    sensitive = ["sex"]          # sensitive-feature columns (also kept as features)
    test_size = 0.3              # random stratified split; datasets with an official split use it
    seed = 0

    [model]
    estimator = "logistic_regression"   # or gradient_boosting, random_forest, sgd_logistic
    prefit = "model.joblib"             # optional: a fitted model (then estimator is not used)

    [goals]
    objective = "error"
    constraints = ["demographic_parity_difference('sex') <= 0.01"]
    method = "auto"               # a plug-in method or baseline, or "ramp" (Goh et al.'s
                                  # RampClassifier; method_params go to its constructor), or
                                  # "subdata" (Ye & Xie's FairSubdataClassifier: objective "error"
                                  # and at most one "<disparity>_difference <= eps" constraint), or
                                  # "surrogate" (Jiang et al.'s AdaptiveSurrogateClassifier: the
                                  # objective, e.g. "macro_f1_over_groups('sex')", is the black-box
                                  # metric; no constraints), or
                                  # "lagrangian" (goalfit.torch.LagrangianClassifier, a PyTorch
                                  # network; method_params e.g. {hidden_layer_sizes = [32],
                                  # n_epochs = 20}; needs goalfit[torch])
    cv = 5                        # optional: cross-fitted probabilities ("auto", 0 = in-sample)
    confidence = 0.95             # optional: certify the constraints on held data (GoalClassifier)
    margin = 0.005                # optional: tighten every constraint by this much
    group_blind = true            # optional: no sensitive column as a feature nor at prediction
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..goals import parse_constraint, parse_objective
from ..methods.baselines import BASELINES
from ..methods.plugin import METHODS
from .models import ESTIMATORS


class SpecError(ValueError):
    """An invalid specification (reported by the CLI with exit code 2)."""


@dataclass
class Spec:
    dataset: str | None = None
    csv: str | None = None
    files: str | None = None       # Parquet/CSV glob read with Dask (goalfit.distributed)
    test_files: str | None = None
    features: list | None = None
    prefit: str | None = None      # path of a fitted model (joblib)
    label: str | None = None
    sensitive: list = field(default_factory=list)
    test_size: float = 0.3
    seed: int = 0
    estimator: str = "logistic_regression"
    objective: str = "error"
    constraints: list = field(default_factory=list)
    method: str = "auto"
    method_params: dict = field(default_factory=dict)
    dataset_params: dict = field(default_factory=dict)
    fit_options: dict = field(default_factory=dict)  # cv / confidence / margin for GoalClassifier

    def goals(self):
        """Parsed objective and constraints.

        Raises
        ------
        SpecError
            On an unknown metric, a syntax error or an out-of-range bound.
        """
        try:
            return parse_objective(self.objective), [parse_constraint(c) for c in self.constraints]
        except (ValueError, TypeError) as err:
            raise SpecError(str(err)) from None


_KNOWN = {
    "data": {"dataset", "csv", "files", "test_files", "features", "label", "sensitive", "test_size", "seed", "params"},
    "model": {"estimator", "prefit"},
    "goals": {"objective", "constraints", "method", "method_params", "cv", "confidence", "margin", "group_blind"},
}


def load_spec(path) -> Spec:
    """Read and validate a TOML spec.

    Raises
    ------
    SpecError
        Missing file, TOML syntax, unknown section or key, missing dataset, bad types, unknown
        estimator or method, unknown metric or out-of-range bound.
    """
    path = Path(path)
    if not path.exists():
        raise SpecError(f"spec file {path} does not exist")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"{path}: invalid TOML: {err}") from None
    return spec_from_dict(raw, str(path))


def spec_from_dict(raw: dict, where: str = "spec") -> Spec:
    for section, body in raw.items():
        if section not in _KNOWN:
            raise SpecError(f"{where}: unknown section [{section}]; known: {sorted(_KNOWN)}")
        if not isinstance(body, dict):
            raise SpecError(f"{where}: [{section}] must be a table")
        unknown = set(body) - _KNOWN[section]
        if unknown:
            raise SpecError(f"{where}: unknown key(s) {sorted(unknown)} in [{section}]; known: {sorted(_KNOWN[section])}")
    data, model, goals = raw.get("data", {}), raw.get("model", {}), raw.get("goals", {})
    if sum(bool(data.get(k)) for k in ("dataset", "csv", "files")) != 1:
        raise SpecError(f"{where}: [data] needs exactly one of dataset = \"name\", csv = \"path\" or "
                        "files = \"glob\"")
    for key in ("csv", "files"):
        if data.get(key) and not data.get("label"):
            raise SpecError(f"{where}: [data] {key} needs label = \"column\"")
    if (data.get("test_files") or data.get("features")) and not data.get("files"):
        raise SpecError(f"{where}: [data] test_files and features go with files = \"glob\"")
    sensitive = data.get("sensitive", [])
    if isinstance(sensitive, str):
        sensitive = [sensitive]
    constraints = goals.get("constraints", [])
    if isinstance(constraints, str):
        constraints = [constraints]
    test_size = data.get("test_size", 0.3)
    if not isinstance(test_size, (int, float)) or not 0 < test_size < 1:
        raise SpecError(f"{where}: test_size must be a number in (0, 1), got {test_size!r}")
    spec = Spec(dataset=data.get("dataset"), csv=data.get("csv"), label=data.get("label"),
                files=data.get("files"), test_files=data.get("test_files"),
                features=None if data.get("features") is None else list(data["features"]),
                prefit=model.get("prefit"),
                sensitive=list(sensitive), test_size=float(test_size), seed=int(data.get("seed", 0)),
                estimator=model.get("estimator", "logistic_regression"),
                objective=goals.get("objective", "error"), constraints=list(constraints),
                method=goals.get("method", "auto"), method_params=dict(goals.get("method_params", {})),
                dataset_params=dict(data.get("params", {})),
                fit_options=_fit_options(goals, where))
    if spec.estimator not in ESTIMATORS:
        raise SpecError(f"{where}: unknown estimator {spec.estimator!r}; known: {sorted(ESTIMATORS)}")
    known_methods = ["auto"] + sorted(METHODS) + sorted(BASELINES) + ["ramp", "subdata", "surrogate", "lagrangian"]
    if spec.method not in known_methods:
        raise SpecError(f"{where}: unknown method {spec.method!r}; known: {known_methods}")
    if spec.fit_options and spec.method in ("ramp", "subdata", "surrogate", "lagrangian"):
        raise SpecError(f"{where}: cv / confidence / margin / group_blind are GoalClassifier options; method "
                        f"{spec.method!r} does not take them")
    spec.goals()  # validate metric names and bounds now
    if spec.fit_options:
        check_fit_options(spec, where)
    return spec


def _fit_options(goals: dict, where: str) -> dict:
    """``cv``, ``confidence``, ``margin`` and ``group_blind`` of ``[goals]`` as GoalClassifier parameters.

    TOML has no ``None``: ``cv = 0`` means in-sample. The values are checked by GoalClassifier
    itself (:func:`check_fit_options`), once the goals are parsed.
    """
    out = {k: goals[k] for k in ("cv", "confidence", "margin", "group_blind") if k in goals}
    if out.get("cv") == 0:
        out["cv"] = None
    if "group_blind" in out and not isinstance(out["group_blind"], bool):
        raise SpecError(f"{where}: group_blind must be true or false, got {out['group_blind']!r}")
    return out


def check_fit_options(spec: Spec, where: str) -> None:
    """Validate the spec's GoalClassifier options with the estimator's own checks, before any data
    is read (a bad value exits 2 with the estimator's message)."""
    from ..estimators import GoalClassifier
    from ..estimators.goal_classifier import _user_margins
    from ..goals import Problem

    objective, constraints = spec.goals()
    est = GoalClassifier(objective=objective, constraints=constraints, **spec.fit_options)
    try:
        est._check_options()
        est._cv_folds()
        _user_margins(est.margin, Problem(objective, constraints))
    except (ValueError, TypeError) as err:
        raise SpecError(f"{where}: {err}") from None
