"""
Equal false positive rates on COMPAS
====================================

The COMPAS recidivism data: a classifier whose false positive rate (people predicted to
reoffend who did not) differs by at most 0.05 between African-American and Caucasian defendants,
with the four families on the same goal: the plug-in post-processing (``GoalClassifier``), the
ramp loss (``RampClassifier``), fair subdata selection (``FairSubdataClassifier``) and adaptive
surrogates (``AdaptiveSurrogateClassifier``).
"""

# %%
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset
from goalfit.estimators import TableEncoder

d = load_dataset("compas")
keep = d.sensitive_features["race"].isin(["African-American", "Caucasian"]).to_numpy()
X = TableEncoder(sparse_output=False).fit_transform(d.data[keep].drop(columns=["sex", "race"]))
race = d.sensitive_features[keep][["race"]].reset_index(drop=True)
y = d.target[keep].reset_index(drop=True)
X_tr, X_te, y_tr, y_te, r_tr, r_te = train_test_split(X, y, race, test_size=0.4, stratify=y, random_state=0)

# %%
goal = [gf.false_positive_rate_difference("race") <= 0.05]
models = {
    "plug-in": gf.GoalClassifier(constraints=goal, random_state=0),
    "ramp": gf.RampClassifier(constraints=goal, max_iter=3, random_state=0),
    "subdata": gf.FairSubdataClassifier(constraints=goal, random_state=0),
    "surrogate": gf.AdaptiveSurrogateClassifier("error", constraints=goal, max_iter=40, random_state=0),
}
base = gf.GoalClassifier(random_state=0).fit(X_tr, y_tr, sensitive_features=r_tr)
gap = gf.false_positive_rate_difference(y_te, base.predict(X_te, sensitive_features=r_te), sensitive_features=r_te)
print(f"{'no goal':10s} test error {base.evaluate(X_te, y_te, sensitive_features=r_te)['objective']['value']:.4f}  test FPR gap {gap:.4f}")
gaps = {}
for name, model in models.items():
    model.fit(X_tr, y_tr, sensitive_features=r_tr)
    test = model.evaluate(X_te, y_te, sensitive_features=r_te)
    gaps[name] = test["constraints"][0]["value"]
    print(f"{name:10s} test error {test['objective']['value']:.4f}  test FPR gap {gaps[name]:.4f}")

# %%
fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(list(gaps), list(gaps.values()))
ax.axhline(0.05, color="k", ls="--", lw=1)
ax.set_ylabel("test FPR difference (race)")
ax.set_title("COMPAS: one goal, four families")
fig.tight_layout()
