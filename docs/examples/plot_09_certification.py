"""
Certified goals and sample-size planning
========================================

A goal met on the training sample may fail on new data. With ``confidence=0.95`` the estimator
fits candidates on part of the rows, each constraint tightened by a multiple of its predicted
bound width, and tests them in a fixed sequence on the rest: ``certified_`` says whether one
passed, and ``certification_`` gives each constraint's ``certified_bound``, which holds at 95%
for the deployed classifier. ``plan_certification`` predicts the training rows a certificate
needs. The full study (20 splits, three datasets) is ``benchmarks/certification.py``.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

adult = load_dataset("adult")
X, y, sex = adult.data, adult.target, adult.sensitive_features[["sex"]]
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, y, sex, train_size=6000, test_size=6000,
                                                      stratify=y, random_state=0)
goals = [gf.demographic_parity_difference("sex") <= 0.05]

# %%
model = gf.GoalClassifier(constraints=goals, confidence=0.95, random_state=0)
model.fit(X_tr, y_tr, sensitive_features=s_tr)
print("certified:", model.certified_)
for row in model.certification_:
    print(f"{row['name']}: certified bound {row['certified_bound']:.4f} at 95% "
          f"({'passed' if row['passed'] else 'not passed'})")
test = model.evaluate(X_te, y_te, sensitive_features=s_te)
print(f"on 6000 new rows: DP difference {test['constraints'][0]['value']:.4f}, "
      f"error {test['objective']['value']:.4f}")

# %%
# How many training rows does a certificate of this classifier's values need? The plan reads
# the values and their variance on held-out rows and simulates the test.
plan = model.plan_certification(X_te, y_te, sensitive_features=s_te, n_train=len(y_tr))
print(f"training rows needed for power {plan.power:.2f}: {plan.train_rows_needed:.0f}; "
      f"power with {plan.n_train} rows: {plan.power_at_n_train:.3f}")

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(plan.curve["n_train"], plan.curve["power"])
ax.axvline(len(y_tr), color="k", ls=":", lw=1, label="this training set")
ax.axhline(plan.power, color="gray", ls="--", lw=1, label="target power")
ax.set_xscale("log")
ax.set_xlabel("training rows")
ax.set_ylabel("P(certified)")
ax.set_title("Adult, DP <= 0.05 at 95%: power curve")
ax.legend()
fig.tight_layout()
