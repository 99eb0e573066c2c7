"""The README's examples marked ``<!-- runnable -->`` run as written (issue 17)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"<!-- runnable -->\s*```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_runnable_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_readme_example_runs(k, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # examples may write files (frontier.png)
    exec(compile(BLOCKS[k], f"README.md[runnable {k}]", "exec"), {"__name__": "__readme__"})
