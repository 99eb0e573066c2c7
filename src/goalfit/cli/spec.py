"""Problem specifications in TOML, for ``goalfit fit SPEC.toml``.

Example::

    [data]
    dataset = "adult"            # a goalfit.datasets name, or: csv = "path/to/file.csv", or
                                 # files = "data/part-*.parquet" (Parquet or CSV glob, read with Dask;
                                 # test_files = "..." optional; features = [...] optional)
    label = "income"             # label column (csv only)
    pos_label = ">50K"           # optional: the positive class of a binary label (csv only; encoded as 1,
                                 # the other class 0; needed for labels other than 0/1, -1/1, False/True
                                 # by goals that mean "the positive class")
    encoding = "latin-1"         # optional: the csv's text encoding (default UTF-8)
    na_values = ["unknown"]      # optional: more missing-value markers of the csv (besides '', 'NA',
                                 # 'NaN', 'null', 'None', 'N/A', '?', ...)
    sensitive = ["sex"]          # sensitive-feature columns (also kept as features)
    test_size = 0.3              # random stratified split; datasets with an official split use it
    seed = 0

    [model]
    estimator = "logistic_regression"   # or gradient_boosting, random_forest, sgd_logistic
    prefit = "model.joblib"             # optional: a fitted model (then estimator is not used)

    [goals]
    objective = "error"
    constraints = ["demographic_parity_difference('sex') <= 0.01"]
    method = "auto"               # any name of the method registry (goalfit.methods): a plug-in
                                  # method or baseline (GoalClassifier), "ramp" (RampClassifier),
                                  # "subdata" / "irs" / "mip" (FairSubdataClassifier), "surrogate" /
                                  # "interpolation" / ... (AdaptiveSurrogateClassifier), "lagrangian"
                                  # / "proxy_lagrangian" (goalfit.torch.LagrangianClassifier; needs
                                  # goalfit[torch]); the non-plug-in ones train on the [model]
                                  # estimator's preprocessing of the features
    method_params = {max_iter = 500}   # the method's knobs (checked before any data is read)
    estimator_params = {hidden_layer_sizes = [32]}   # optional: other constructor parameters
    cv = 5                        # optional: cross-fitted probabilities ("auto", 0 = in-sample)
    confidence = 0.95             # optional: certify the constraints on held data
    margin = 0.005                # optional: tighten every constraint by this much
    group_blind = true            # optional: no sensitive column as a feature nor at prediction
"""
from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..estimators.models import MODELS
from ..goals import parse_constraint, parse_objective
from ..methods import lookup
from ..utils.deprecation import warn_deprecated
from ..utils.lazy import load

#: The estimator that runs each method family (the registry, :mod:`goalfit.methods`, knows only
#: methods; this map points upward from the command line, which sits above both).
FAMILY_ESTIMATORS = {
    "plugin": "goalfit.estimators.goal_classifier:GoalClassifier",
    "ramp": "goalfit.estimators.ramp_classifier:RampClassifier",
    "subdata": "goalfit.estimators.fair_subdata:FairSubdataClassifier",
    "surrogate": "goalfit.estimators.surrogate_classifier:AdaptiveSurrogateClassifier",
    "lagrangian": "goalfit.torch.estimator:LagrangianClassifier",
}


def estimator_class(method: str):
    """The estimator class that runs ``method`` (a registry name or a family's name).

    Raises
    ------
    ValueError
        An unknown method (with the closest known name).
    ImportError
        The family needs an optional extra (``goalfit[torch]`` for the Lagrangian one).

    Examples
    --------
    >>> estimator_class("ramp").__name__
    'RampClassifier'
    """
    return load(FAMILY_ESTIMATORS[lookup(method).family])


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
    pos_label: object = None       # positive class of a binary label (csv)
    encoding: str | None = None    # text encoding of the csv (None: UTF-8)
    na_values: list = field(default_factory=list)  # more missing-value markers of the csv
    sensitive: list = field(default_factory=list)
    test_size: float = 0.3
    seed: int = 0
    estimator: str = "logistic_regression"
    objective: str = "error"
    constraints: list = field(default_factory=list)
    method: str = "auto"
    method_params: dict = field(default_factory=dict)
    dataset_params: dict = field(default_factory=dict)
    fit_options: dict = field(default_factory=dict)  # cv / confidence / margin / group_blind
    estimator_params: dict = field(default_factory=dict)  # other constructor parameters of the method's estimator

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
    "data": {"dataset", "csv", "files", "test_files", "features", "label", "pos_label", "encoding", "na_values",
             "sensitive", "test_size", "seed", "params"},
    "model": {"estimator", "prefit"},
    "goals": {"objective", "constraints", "method", "method_params", "estimator_params", "cv", "confidence", "margin",
              "group_blind"},
}


def _unknown(names, known, what: str) -> str:
    """``unknown key(s) [...] in [goals]; did you mean 'x'? known: [...]``."""
    close = {n: m[0] for n in names for m in [difflib.get_close_matches(str(n), sorted(known), n=1)] if m}
    if len(names) == 1 and close:
        hint = f"; did you mean {next(iter(close.values()))!r}?"
    else:
        hint = f"; did you mean {', '.join(f'{m!r} for {n!r}' for n, m in close.items())}?" if close else ""
    return f"unknown {what} {sorted(names)}{hint} known: {sorted(known)}"


#: (section, key) -> the TOML type its value must have; cv / confidence / margin / group_blind are
#: checked by the estimator (:func:`check_fit_options`).
_TYPES = {
    "data": {"dataset": "string", "csv": "string", "files": "string", "test_files": "string", "label": "string",
             "encoding": "string", "na_values": "list of strings", "features": "list of strings", "sensitive": "list of strings",
             "params": "table", "seed": "integer", "test_size": "number", "pos_label": "label"},
    "model": {"estimator": "string", "prefit": "string"},
    "goals": {"objective": "string", "constraints": "list of strings", "method": "string",
              "method_params": "table", "estimator_params": "table"},
}
_EXAMPLE = {"dataset": '"adult"', "csv": '"data.csv"', "files": '"data/part-*.parquet"', "test_files": '"test-*.csv"',
            "label": '"income"', "encoding": '"latin-1"', "na_values": '["?", "unknown"]', "features": '["age", "hours"]',
            "sensitive": '["sex"]', "params": "{name = value}", "seed": "0", "test_size": "0.3",
            "pos_label": '">50K"', "estimator": '"logistic_regression"', "prefit": '"model.joblib"',
            "objective": '"error"', "constraints": '["demographic_parity_difference(\'sex\') <= 0.05"]',
            "method": '"auto"', "method_params": "{max_iter = 500}", "estimator_params": "{max_iter = 10}"}
_A = {"integer": "an integer", "label": "class label (a string, an integer or true/false)"}


def _type_ok(value, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "list of strings":  # a single string is accepted as a list of one
        return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
    if kind == "table":
        return isinstance(value, dict)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, (str, int, bool))  # label


def check_types(raw: dict, where: str = "spec") -> None:
    """Refuse a key whose TOML value has the wrong type (``seed = "abc"``, ``csv = 5``), naming
    the key, the value and the type it needs.

    Raises
    ------
    SpecError
        The first key of a wrong type.
    """
    for section, kinds in _TYPES.items():
        body = raw.get(section, {})
        for key, kind in kinds.items():
            if key in body and not _type_ok(body[key], kind):
                value = body[key]
                raise SpecError(f"{where}: [{section}] {key} must be {_A.get(kind, 'a ' + kind)}, got {value!r} "
                                f"({type(value).__name__}); e.g. {key} = {_EXAMPLE[key]}")


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
    if path.is_dir():
        raise SpecError(f"{path} is a folder; give the spec file (TOML) inside it")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"{path}: invalid TOML: {err}") from None
    except (UnicodeDecodeError, OSError) as err:
        raise SpecError(f"{path}: cannot read it as a TOML text file ({err})") from None
    return spec_from_dict(raw, str(path))


def spec_from_dict(raw: dict, where: str = "spec") -> Spec:
    for section, body in raw.items():
        if section not in _KNOWN:
            raise SpecError(f"{where}: {_unknown([section], _KNOWN, 'section(s)')}")
        if not isinstance(body, dict):
            raise SpecError(f"{where}: [{section}] must be a table")
        unknown = set(body) - _KNOWN[section]
        if unknown:
            raise SpecError(f"{where}: {_unknown(unknown, _KNOWN[section], f'key(s) in [{section}]')}")
    check_types(raw, where)
    data, model, goals = raw.get("data", {}), raw.get("model", {}), raw.get("goals", {})
    if sum(bool(data.get(k)) for k in ("dataset", "csv", "files")) != 1:
        raise SpecError(f"{where}: [data] needs exactly one of dataset = \"name\", csv = \"path\" or "
                        "files = \"glob\"")
    for key in ("csv", "files"):
        if data.get(key) and not data.get("label"):
            raise SpecError(f"{where}: [data] {key} needs label = \"column\"")
    if (data.get("test_files") or data.get("features")) and not data.get("files"):
        raise SpecError(f"{where}: [data] test_files and features go with files = \"glob\"")
    for key in ("pos_label", "encoding", "na_values"):
        if key in data and not data.get("csv"):
            raise SpecError(f"{where}: [data] {key} goes with csv = \"path\" (a dataset knows its own)")
    if data.get("params") and not data.get("dataset"):
        raise SpecError(f"{where}: [data] params are the options of a dataset's loader; they go with "
                        "dataset = \"name\"")
    if "encoding" in data:
        import codecs

        try:
            codecs.lookup(data["encoding"])
        except LookupError:
            raise SpecError(f"{where}: [data] encoding = {data['encoding']!r} is not a known text encoding; "
                            "e.g. \"utf-8\", \"latin-1\", \"cp1252\"") from None
    sensitive = data.get("sensitive", [])
    if isinstance(sensitive, str):
        sensitive = [sensitive]
    twice = sorted({c for c in sensitive if sensitive.count(c) > 1})
    if twice:
        raise SpecError(f"{where}: [data] sensitive lists {twice} more than once")
    if data.get("label") in sensitive:
        raise SpecError(f"{where}: [data] sensitive column {data['label']!r} is the label column; "
                        "name the sensitive feature(s), not the label")
    constraints = goals.get("constraints", [])
    if isinstance(constraints, str):
        constraints = [constraints]
    if data.get("seed", 0) < 0:
        raise SpecError(f"{where}: [data] seed must be >= 0, got {data['seed']}")
    test_size = data.get("test_size", 0.3)
    if not 0 < test_size < 1:  # a number: check_types refused any other type
        raise SpecError(f"{where}: test_size must be a number in (0, 1), got {test_size!r}")
    spec = Spec(dataset=data.get("dataset"), csv=data.get("csv"), label=data.get("label"),
                pos_label=data.get("pos_label"), encoding=data.get("encoding"),
                na_values=[data["na_values"]] if isinstance(data.get("na_values"), str) else
                list(data.get("na_values", [])),
                files=data.get("files"), test_files=data.get("test_files"),
                features=None if data.get("features") is None else list(data["features"]),
                prefit=model.get("prefit"),
                sensitive=list(sensitive), test_size=float(test_size), seed=int(data.get("seed", 0)),
                estimator=model.get("estimator", "logistic_regression"),
                objective=goals.get("objective", "error"), constraints=list(constraints),
                method=goals.get("method", "auto"), method_params=dict(goals.get("method_params", {})),
                estimator_params=dict(goals.get("estimator_params", {})),
                dataset_params=dict(data.get("params", {})),
                fit_options=_fit_options(goals, where))
    if spec.estimator not in MODELS:
        raise SpecError(f"{where}: {_unknown([spec.estimator], MODELS, 'estimator')}")
    try:
        lookup(spec.method)
    except ValueError as err:
        raise SpecError(f"{where}: {err}") from None
    spec.goals()  # validate metric names and bounds now
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


def build_estimator(spec: Spec, base=None):
    """The estimator of the spec's method (the registry's, :mod:`goalfit.methods`), unfitted.

    ``base`` is the plug-in methods' base model (the [model] estimator); the other families
    train their own model on the preprocessed features.

    Raises
    ------
    SpecError
        An option the method's estimator does not take, or an optional extra that is missing.
    """
    entry = lookup(spec.method)
    try:
        cls = estimator_class(entry.name)
    except ImportError as err:
        raise SpecError(f"method {spec.method!r}: {err}") from None
    objective, constraints = spec.goals()
    names = set(cls().get_params(deep=False))
    old = getattr(cls, "_deprecated_params", {})  # 0.1 constructor keywords, accepted with a FutureWarning
    method_params, moved = dict(spec.method_params), {}
    if entry.family != "plugin":  # 0.1 passed these methods' method_params to the estimator's constructor
        moved = {k: method_params.pop(k) for k in list(method_params)
                 if k in names or (k in old and old[k] != f"method_params.{k}")}
        if moved:
            warn_deprecated(f"[goals] method_params keys {sorted(moved)} (constructor parameters of {cls.__name__})",
                            "[goals] estimator_params = {...} for them (method_params holds the method's knobs only)",
                            stacklevel=2)
    kwargs = dict(objective=objective, constraints=constraints, method_params=method_params or None,
                  random_state=spec.seed, **spec.fit_options, **moved, **spec.estimator_params)
    if "method" in names:
        kwargs["method"] = entry.name
    if entry.family == "plugin":
        kwargs["estimator"] = base
    unknown = sorted(set(kwargs) - names - set(old))
    if unknown:
        raise SpecError(f"method {spec.method!r} ({cls.__name__}) does not take {unknown}; its parameters: {sorted(names)}")
    if "hidden_layer_sizes" in kwargs:
        kwargs["hidden_layer_sizes"] = tuple(kwargs["hidden_layer_sizes"])
    return cls(**kwargs)


def check_fit_options(spec: Spec, where: str) -> None:
    """Validate the spec's estimator with its own checks (every parameter, ``method_params``),
    before any data is read: a bad value exits 2 with the estimator's message."""
    est = build_estimator(spec)
    try:
        est.check_params()
    except (ValueError, TypeError) as err:
        raise SpecError(f"{where}: {err}") from None
