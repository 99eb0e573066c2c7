"""
Demographic parity on Adult
===========================

The quick start: minimize the error of a logistic regression on Adult subject to a demographic
parity difference on sex of at most 0.02, then check the goal on held-out rows with 95%
intervals. ``GoalClassifier`` fits the base model once and post-processes its class
probabilities with the plug-in methods of Narasimhan et al. (JMLR 2024).
"""

# %%
# Data: a stratified subsample of Adult's training file (the full run is
# ``benchmarks/fairness_vs_fairlearn.py``).
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

adult = load_dataset("adult")
X, y, sex = adult.data, adult.target, adult.sensitive_features[["sex"]]
X, _, y, _, sex, _ = train_test_split(X, y, sex, train_size=8000, stratify=y, random_state=0)
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, y, sex, test_size=0.5, stratify=y, random_state=0)

# %%
# The goal is symbolic: it names the sensitive column, not the data.
goal = gf.demographic_parity_difference("sex") <= 0.02
unconstrained = gf.GoalClassifier(random_state=0).fit(X_tr, y_tr, sensitive_features=s_tr)
fair = gf.GoalClassifier(constraints=[goal], random_state=0).fit(X_tr, y_tr, sensitive_features=s_tr)

for name, model in [("unconstrained", unconstrained), ("DP <= 0.02", fair)]:
    res = model.evaluate(X_te, y_te, sensitive_features=s_te, confidence=0.95)
    dp = gf.demographic_parity_difference(y_te, model.predict(X_te, sensitive_features=s_te),
                                          sensitive_features=s_te)
    print(f"{name:14s} method {model.method_:20s} test error {res['objective']['value']:.4f}  "
          f"DP of the sampled predictions {dp:.4f}")
res = fair.evaluate(X_te, y_te, sensitive_features=s_te, confidence=0.95)
c = res["constraints"][0]
print(f"expected test DP {c['value']:.4f}, 95% interval [{c['interval'][0]:.4f}, {c['interval'][1]:.4f}]")

# %%
# Selection rate per group, before and after (the exact expectation over the randomized
# classifier's draws: ``predict_proba`` is the distribution of what ``predict`` outputs).
groups = np.unique(s_te["sex"])
fig, ax = plt.subplots(figsize=(5, 3))
for k, (name, model) in enumerate([("unconstrained", unconstrained), ("DP <= 0.02", fair)]):
    p = model.predict_proba(X_te, sensitive_features=s_te)[:, 1]
    rates = [p[s_te["sex"].to_numpy() == g].mean() for g in groups]
    ax.bar(np.arange(len(groups)) + 0.4 * k, rates, width=0.4, label=name)
ax.set_xticks(np.arange(len(groups)) + 0.2, groups)
ax.set_ylabel("P(predict >50K)")
ax.set_title("Adult (test half): selection rate by sex")
ax.legend()
fig.tight_layout()
