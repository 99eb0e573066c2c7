"""
Ramp loss with dataset constraints (Goh et al.)
===============================================

Goh et al. (NIPS 2016), Fig. 2: a linear classifier on a9a (Adult, one-hot, 123 features) whose
positive rate among men is at most ``u`` times the positive rate among women. The
``RampClassifier`` majorizes the ramp relaxation of each rate and solves a cutting-plane
Lagrangian over weighted-SVM problems. The full sweep is ``benchmarks/goh_fairness_adult.py``.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

d = load_dataset("a9a")
sex = d.sensitive_features["sex"].to_numpy()
idx_tr, idx_te = train_test_split(np.arange(len(sex)), train_size=2000, test_size=4000,
                                  stratify=d.target, random_state=0)
X_tr, X_te = d.data[idx_tr], d.data[idx_te]
y_tr, y_te = d.target.to_numpy()[idx_tr], d.target.to_numpy()[idx_te]
s_tr, s_te = sex[idx_tr], sex[idx_te]


def ratio(pred, s):
    return pred[s == "Male"].mean() / pred[s == "Female"].mean()


# %%
# The goal is a ratio of two rates, written with ``*``: linear in the confusion statistics.
bounds = [1.0, 1.5, 2.0, 3.0]
ratios, errors = [], []
for u in bounds:
    goal = gf.positive_prediction_rate(group="Male") <= u * gf.positive_prediction_rate(group="Female")
    model = gf.RampClassifier("error", [goal], max_iter=3, random_state=0)
    model.fit(X_tr, y_tr, sensitive_features={"sex": s_tr})
    pred = model.predict(X_te)
    ratios.append(ratio(pred, s_te))
    errors.append(np.mean(pred != y_te))
    print(f"u = {u:.1f}: test error {errors[-1]:.4f}, test ratio men/women {ratios[-1]:.3f}")

# %%
fig, ax = plt.subplots(figsize=(4.5, 3.2))
ax.plot(bounds, ratios, "o-", label="test ratio (deterministic rule)")
ax.plot(bounds, bounds, "k--", lw=1, label="bound u")
ax.set_xlabel("u")
ax.set_ylabel("positive rate, men / women")
ax.set_title("a9a: ramp loss with a ratio constraint")
ax.legend()
fig.tight_layout()
