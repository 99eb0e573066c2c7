"""
Plug-in methods for a complex metric (Narasimhan et al.)
========================================================

Narasimhan et al. (JMLR 2024), Table 6: the H-mean loss (one minus the harmonic mean of the
per-class recalls) on the 5-class PageBlocks data, where a few classes hold most rows. The
plug-in methods turn a logistic regression's class probabilities into a randomized classifier
that minimizes the metric; ``"balanced"`` (argmax of probabilities divided by class priors) is
the paper's Plugin(bal) baseline. The full table (8 datasets, 10 splits) is
``benchmarks/narasimhan_tables.py``.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

d = load_dataset("pageblocks")
X_tr, X_te, y_tr, y_te = train_test_split(d.data, d.target, test_size=0.3, stratify=d.target, random_state=0)
print("class counts in training:", y_tr.value_counts().sort_index().to_dict())

# %%
# One base model, several methods: each refits nothing, it re-solves on the same probabilities.
# The objective ``"hmean"`` names the loss it minimizes (1 - H-mean).
rows = {}
for method in ["argmax", "balanced", "frank_wolfe", "gda", "ellipsoid"]:
    model = gf.GoalClassifier(objective="hmean", method=method, random_state=0).fit(X_tr, y_tr)
    rows[method] = model
    train = model.evaluate(X_tr, y_tr)["objective"]["value"]
    test = model.evaluate(X_te, y_te)["objective"]["value"]
    print(f"{method:12s} train H-mean loss {train:.4f}   test {test:.4f}")

# %%
# Frank-Wolfe's iterations: the training loss of the mixture after each linear-minimization
# step (``history_``).
hist = rows["frank_wolfe"].history_
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot([h["objective"] for h in hist])
ax.set_xlabel("iteration")
ax.set_ylabel("training H-mean loss")
ax.set_title("Frank-Wolfe on PageBlocks")
fig.tight_layout()
