"""
The audit report
================

``gf.build_report`` puts the objective and every constraint on the training and test data side
by side, with 95% intervals on test and the baseline (the unconstrained fit on the same base
model) beside them; ``print`` shows the table, ``plot(folder)`` writes the figures and
``to_html(path)`` writes one self-contained HTML file. ``goalfit fit SPEC.toml`` prints the same
report.
"""

# %%
import tempfile

import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset

adult = load_dataset("adult")
X, y, sex = adult.data, adult.target, adult.sensitive_features[["sex"]]
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, y, sex, train_size=5000, test_size=5000,
                                                      stratify=y, random_state=0)
model = gf.GoalClassifier(constraints=[gf.demographic_parity_difference("sex") <= 0.02], random_state=0)
model.fit(X_tr, y_tr, sensitive_features=s_tr)

# %%
report = gf.build_report(model, X_tr, y_tr, sensitive_features_train=s_tr,
                         X_test=X_te, y_test=y_te, sensitive_features_test=s_te, confidence=0.95)
report.print()

# %%
# The figures ``plot`` writes (one PNG each); the first one is shown here.
folder = tempfile.mkdtemp()
paths = report.plot(folder)
print([p.name for p in paths])
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.imshow(plt.imread(paths[0]))
ax.set_axis_off()
fig.tight_layout()
