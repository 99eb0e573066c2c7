"""
A black-box metric by adaptive surrogates (Jiang et al.)
========================================================

Jiang et al. (ICML 2020), Table 3: macro-F over the sexes on COMPAS, a metric the learner only
evaluates. ``AdaptiveSurrogateClassifier`` writes it as a monotone function of surrogate losses,
estimates its gradient by local linear interpolation and descends in surrogate space; the
post-shift baseline (``BlackBoxPostShiftClassifier``) tunes a threshold on the same validation
rows. The full table (3 datasets, 5 seeds) is ``benchmarks/jiang_tables.py``.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset
from goalfit.estimators import TableEncoder

d = load_dataset("compas")
X = TableEncoder(sparse_output=False).fit_transform(d.data.drop(columns=["sex", "race"]))
s = d.sensitive_features[["sex"]]
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, d.target, s, test_size=0.3, stratify=d.target,
                                                      random_state=0)
X_tr, X_va, y_tr, y_va, s_tr, s_va = train_test_split(X_tr, y_tr, s_tr, test_size=0.3, stratify=y_tr,
                                                      random_state=0)
metric = gf.macro_f1_over_groups_loss()  # a black-box loss: 1 - macro-F over the groups
val = {"X_val": X_va, "y_val": y_va, "sensitive_features_val": s_va}

# %%
post = gf.BlackBoxPostShiftClassifier("macro_f1_over_groups").fit(X_tr, y_tr, sensitive_features=s_tr, **val)
adaptive = gf.AdaptiveSurrogateClassifier("macro_f1_over_groups", max_iter=60, random_state=0,
                                          method_params={"n_perturbations": 100, "eval_every": 5})
adaptive.fit(X_tr, y_tr, sensitive_features=s_tr, **val)
for name, model in [("post-shift", post), ("adaptive surrogates", adaptive)]:
    macro_f = 1.0 - metric(y_te, model.decision_function(X_te), s_te["sex"])
    print(f"{name:20s} test macro-F over sex {macro_f:.4f}")

# %%
# The validation metric along the descent (``history_``).
hist = adaptive.history_
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot([h["objective"] for h in hist])
ax.set_xlabel("iteration")
ax.set_ylabel("validation loss (1 - macro-F)")
ax.set_title("COMPAS: adaptive surrogates")
fig.tight_layout()
