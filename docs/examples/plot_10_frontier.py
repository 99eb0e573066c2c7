"""
The trade-off frontier
======================

``gf.frontier`` fits the base model once and re-solves the goals for each bound (warm-started):
the error against the demographic parity difference on Adult, on the training rows and on held-out
validation rows. ``benchmarks/frontier.py`` compares it with fairlearn's ``GridSearch`` and
``ThresholdOptimizer`` on the full data.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

adult = load_dataset("adult")
X, y, sex = adult.data, adult.target, adult.sensitive_features[["sex"]]
X_tr, X_va, y_tr, y_va, s_tr, s_va = train_test_split(X, y, sex, train_size=6000, test_size=6000,
                                                      stratify=y, random_state=0)

# %%
goal = gf.demographic_parity_difference("sex") <= 0.05  # the swept constraint
model = gf.GoalClassifier(constraints=[goal], random_state=0)
f = gf.frontier(model, X_tr, y_tr, sensitive_features=s_tr, bounds=np.linspace(0, 0.2, 11),
                X_val=X_va, y_val=y_va, sensitive_features_val=s_va)
print(f.table[["bound", "objective_train", "objective_val"]].round(4).to_string(index=False))

# %%
fig, ax = plt.subplots(figsize=(7, 4.2))
f.plot(ax=ax)
fig.tight_layout()
