"""
Beyond one machine: Dask
========================

``GoalClassifier.fit``, ``predict``, ``predict_proba`` and ``evaluate`` accept Dask arrays and
DataFrames. One pass computes the base model's probabilities per partition; the plug-in method
then reads sufficient statistics instead of the rows. The base model must not need the whole data
in memory: a frozen model (``sklearn.frozen.FrozenEstimator``), an incremental learner (one with
``partial_fit``, such as ``SGDClassifier(loss="log_loss")``) or precomputed probabilities. Here the data are a Dask array in 8 partitions, computed with the
synchronous scheduler; ``benchmarks/scale_dask.py`` runs a cluster on 10^7 rows.
"""

# %%
import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split

import goalfit as gf
from goalfit.datasets import load_dataset
from goalfit.estimators import TableEncoder

adult = load_dataset("adult")
X = TableEncoder(sparse_output=False).fit_transform(adult.data)
y = adult.target.to_numpy()
sex = adult.sensitive_features["sex"].to_numpy()
X_tr, X_te, y_tr, y_te, s_tr, s_te = train_test_split(X, y, sex, train_size=16000, test_size=8000,
                                                      stratify=y, random_state=0)
chunks = len(y_tr) // 8
dX, dy = da.from_array(X_tr, chunks=(chunks, X.shape[1])), da.from_array(y_tr, chunks=chunks)
ds = da.from_array(s_tr.astype(object), chunks=chunks)
print(dX)

# %%
with dask.config.set(scheduler="synchronous"):
    model = gf.GoalClassifier(SGDClassifier(loss="log_loss", random_state=0),
                              constraints=[gf.demographic_parity_difference() <= 0.02], random_state=0)
    model.fit(dX, dy, sensitive_features=ds)
    test = model.evaluate(X_te, y_te, sensitive_features=s_te)
print(f"method {model.method_}: test error {test['objective']['value']:.4f}, "
      f"test DP difference {test['constraints'][0]['value']:.4f}")

# %%
# The selection rate per group on the test rows: the base model alone (its argmax) and the
# expected rate of the classifier that meets the goal.
p_fair = model.predict_proba(X_te, sensitive_features=s_te)[:, 1]
p_base = model.estimator_.predict_proba(X_te)[:, 1] > 0.5  # the fitted base model alone
groups = np.unique(s_te)
fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(np.arange(len(groups)) - 0.2, [p_base[s_te == g].mean() for g in groups], width=0.4, label="SGD alone")
ax.bar(np.arange(len(groups)) + 0.2, [p_fair[s_te == g].mean() for g in groups], width=0.4, label="DP <= 0.02")
ax.set_xticks(np.arange(len(groups)), groups)
ax.set_ylabel("P(predict >50K)")
ax.set_title("Adult, fitted on a Dask array: selection rate by sex")
ax.legend()
fig.tight_layout()
