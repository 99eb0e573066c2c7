"""
Rate constraints in PyTorch: the proxy-Lagrangian (Cotter et al.)
=================================================================

Cotter, Jiang & Sridharan (ALT 2019): a two-player game in which the model player minimizes a
differentiable proxy of the Lagrangian and the multiplier player reacts to the true 0-1 rates;
the result is a mixture of the iterates ("snapshots"), shrunk to a few by an LP. Here: a small
network on Adult whose true positive rate for women is at least 0.55, trained on minibatches.
The network never reads the group at prediction. The full experiments (Adult, law school, digits,
Communities and Crime, churn) are ``benchmarks/torch_constrained.py``.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset
from goalfit.estimators import TableEncoder
from goalfit.torch import LagrangianClassifier

d = load_dataset("adult")
X = TableEncoder(sparse_output=False).fit_transform(d.data).astype(np.float32)
sex = d.sensitive_features["sex"].to_numpy()
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, d.target.to_numpy(), sex, train_size=4000,
                                                      test_size=4000, stratify=d.target, random_state=0)

# %%
goal = gf.true_positive_rate(group="Female") >= 0.55
tpr_women = {}
for name, constraints in [("unconstrained", []), ("TPR(women) >= 0.55", [goal])]:
    net = LagrangianClassifier(hidden_layer_sizes=(16,), constraints=constraints, max_iter=10,
                               random_state=0, method_params={"learning_rate": 0.02})
    net.fit(X_tr, y_tr, sensitive_features=s_tr)
    pred = net.predict(X_te)
    women = s_te == "Female"
    tpr_women[name] = pred[women & (y_te == 1)].mean()
    print(f"{name:20s} test error {np.mean(pred != y_te):.4f}, test TPR of women {tpr_women[name]:.4f}, "
          f"feasible on train: {net.feasible_}")

# %%
fig, ax = plt.subplots(figsize=(4.5, 3))
ax.bar(list(tpr_women), list(tpr_women.values()), color=["tab:gray", "tab:blue"])
ax.axhline(0.55, color="k", ls="--", lw=1)
ax.set_ylabel("test TPR of women")
ax.set_title("Adult: proxy-Lagrangian MLP")
fig.tight_layout()
