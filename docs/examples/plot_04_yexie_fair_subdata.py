"""
Fair subdata selection (Ye & Xie)
=================================

Ye & Xie (2020): choose the training rows (and the model on them) so that a fairness measure
holds exactly on the selection, with the iterative refining strategy (IRS) for data too large for
a mixed-integer solver. Here: COMPAS, a linear SVM whose demographic parity difference between
the sexes is at most 0.02 on the selection. The papers' tables are ``benchmarks/yexie_table4.py``,
``yexie_tables56.py`` and ``yexie_synthetic_adult.py``.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset
from goalfit.estimators import TableEncoder

d = load_dataset("compas")
X = TableEncoder(sparse_output=False).fit_transform(d.data.drop(columns=["sex", "race"]))
sex = d.sensitive_features["sex"].to_numpy()
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, d.target.to_numpy(), sex, train_size=800,
                                                      test_size=2000, stratify=d.target, random_state=0)

# %%
goal = gf.demographic_parity_difference("sex") <= 0.02
results = {}
for name, constraints in [("unconstrained", []), ("DP difference <= 0.02", [goal])]:
    model = gf.FairSubdataClassifier("error", constraints, method="irs", random_state=0)
    model.fit(X_tr, y_tr, sensitive_features={"sex": s_tr})
    pred = model.predict(X_te)
    gap = gf.demographic_parity_difference(y_te, pred, sensitive_features=s_te)
    kept = getattr(model, "selected_", None)
    results[name] = (np.mean(pred != y_te), gap)
    print(f"{name:24s} test error {results[name][0]:.4f}, test DP difference {gap:.4f}"
          + ("" if kept is None else f", rows kept {int(np.sum(kept))} of {len(y_tr)}"))

# %%
fig, ax = plt.subplots(figsize=(4.5, 3))
names = list(results)
ax.bar(names, [results[n][1] for n in names], color=["tab:gray", "tab:blue"])
ax.axhline(0.02, color="k", ls="--", lw=1)
ax.set_ylabel("test DP difference (sex)")
ax.set_title("COMPAS: fair subdata selection (IRS)")
fig.tight_layout()
