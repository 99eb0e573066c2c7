"""
Multiclass demographic parity on law school
===========================================

The law school data with a three-class label (tertiles of the first-year grade): every class's
prediction rate differs by at most 0.02 between the 8 race groups. fairlearn refuses multiclass
labels; the plug-in methods handle any number of classes and groups. The full-size numbers are in
``benchmarks/fairness_vs_fairlearn.py`` (law_school 3-class row).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

d = load_dataset("law_school")
X = d.data.drop(columns=["ZFYA"])  # race, sex, LSAT, UGPA, region and the Sander index are features
y = pd.Series(pd.qcut(d.data["ZFYA"], 3, labels=False), name="ZFYA_tertile")  # 0 low, 1 mid, 2 high
race = d.sensitive_features[["race"]]
X_tr, X_te, y_tr, y_te, r_tr, r_te = train_test_split(X, y, race, train_size=5000, test_size=5000,
                                                      stratify=y, random_state=0)
print("race groups (training rows):", r_tr["race"].value_counts().to_dict())

# %%
goal = gf.demographic_parity_difference("race") <= 0.02
plain = gf.GoalClassifier(random_state=0).fit(X_tr, y_tr, sensitive_features=r_tr)
fair = gf.GoalClassifier(constraints=[goal], random_state=0).fit(X_tr, y_tr, sensitive_features=r_tr)
for name, model in [("unconstrained", plain), ("DP <= 0.02", fair)]:
    tr = model.evaluate(X_tr, y_tr, sensitive_features=r_tr)
    te = model.evaluate(X_te, y_te, sensitive_features=r_te)
    print(f"{name:14s} train error {tr['objective']['value']:.4f}  test error {te['objective']['value']:.4f}")
dp_tr = fair.evaluate(X_tr, y_tr, sensitive_features=r_tr)["constraints"][0]["value"]
dp_te = fair.evaluate(X_te, y_te, sensitive_features=r_te, confidence=0.95)["constraints"][0]
print(f"DP difference: train {dp_tr:.4f}, test {dp_te['value']:.4f} "
      f"(95% interval [{dp_te['interval'][0]:.4f}, {dp_te['interval'][1]:.4f}])")

# %%
# The goal holds on the training sample. On new data the groups of 17 to 26 rows carry most of the
# gap: their rates have a sampling error of about 0.1, which the interval shows. Certification
# (see the certification example) states what a population bound needs.

# %%
# Expected rate of the top tertile per group, on the test half.
groups = r_te["race"].value_counts().index
fig, ax = plt.subplots(figsize=(7, 3))
for k, (name, model) in enumerate([("unconstrained", plain), ("DP <= 0.02", fair)]):
    p = model.predict_proba(X_te, sensitive_features=r_te)[:, 2]
    ax.bar(np.arange(len(groups)) + 0.4 * k, [p[(r_te["race"] == g).to_numpy()].mean() for g in groups],
           width=0.4, label=name)
ax.set_xticks(np.arange(len(groups)) + 0.2, groups, rotation=30, ha="right")
ax.set_ylabel("P(top tertile)")
ax.set_title("law school: top-tertile rate by race (test)")
ax.legend(loc="upper left", bbox_to_anchor=(1, 1), fontsize=8)
fig.tight_layout()
