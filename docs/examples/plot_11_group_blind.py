"""
Group-blind and deterministic classifiers for deployment
========================================================

Where the law forbids reading the sensitive attribute at prediction, ``group_blind=True`` learns
a joint model of group and class from the features (``P(y | x) P(group | x, y)``) and meets the
goals with rules that never read the group. ``to_deterministic`` then replaces the randomized
mixture by one rule and re-checks the goals. ``benchmarks/group_blind.py`` has the full study.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

adult = load_dataset("adult")
X, y, sex = adult.data.drop(columns=["sex"]), adult.target, adult.sensitive_features[["sex"]]
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, y, sex, train_size=5000, test_size=5000,
                                                      stratify=y, random_state=0)
goal = [gf.demographic_parity_difference("sex") <= 0.03]

# %%
aware = gf.GoalClassifier(constraints=goal, random_state=0).fit(X_tr, y_tr, sensitive_features=s_tr)
blind = gf.GoalClassifier(constraints=goal, group_blind=True, random_state=0).fit(X_tr, y_tr, sensitive_features=s_tr)
deterministic = blind.to_deterministic("best_rule")

rows = {}
for name, model in [("group-aware", aware), ("group-blind", blind)]:
    test = model.evaluate(X_te, y_te, sensitive_features=s_te)
    rows[name] = (test["objective"]["value"], test["constraints"][0]["value"])
pred = deterministic.predict(X_te)  # no sensitive_features: the rule does not read them
rows["group-blind, deterministic"] = ((pred != y_te.to_numpy()).mean(),
                                      gf.demographic_parity_difference(y_te, pred, sensitive_features=s_te))
for name, (err, dp) in rows.items():
    print(f"{name:28s} test error {err:.4f}  test DP difference {dp:.4f}")

# %%
fig, ax = plt.subplots(figsize=(5, 3.2))
for name, (err, dp) in rows.items():
    ax.scatter(dp, err, s=40, label=name)
ax.axvline(0.03, color="k", ls="--", lw=1)
ax.set_xlabel("test DP difference")
ax.set_ylabel("test error")
ax.set_title("Adult: reading the group or not")
ax.legend(fontsize=8)
fig.tight_layout()
