"""Every code block of README.md and docs/*.md runs as written: Python blocks are executed, TOML
specs are validated by the spec loader, shell blocks name real ``goalfit`` commands."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(lang):
    out = []
    for path in DOCS:
        for k, body in enumerate(re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)):
            out.append(pytest.param(body, id=f"{path.name}[{lang} {k}]"))
    return out


PYTHON, TOML, BASH = _blocks("python"), _blocks("toml"), _blocks("bash")


def test_the_docs_have_examples():
    assert len(PYTHON) >= 6 and TOML and BASH


@pytest.mark.parametrize("code", PYTHON)
def test_python_block_runs(code, tmp_path, monkeypatch, need_data):
    import matplotlib

    matplotlib.use("Agg")
    for name in re.findall(r'load_dataset\("(\w+)"', code):
        need_data(name)
    monkeypatch.chdir(tmp_path)  # examples may write files (frontier.png)
    exec(compile(code, "README example", "exec"), {"__name__": "__readme__"})


@pytest.mark.parametrize("text", TOML)
def test_toml_block_is_a_valid_spec(text):
    from goalfit.cli.spec import spec_from_dict
    import tomllib

    spec = spec_from_dict(tomllib.loads(text), "README")
    assert spec.goals()


@pytest.mark.parametrize("text", BASH)
def test_shell_blocks_name_real_commands(text):
    from typer.testing import CliRunner

    from goalfit.cli.app import app

    for sub in re.findall(r"\bgoalfit (\w+)", text):
        res = CliRunner().invoke(app, [sub, "--help"])
        assert res.exit_code == 0, (sub, res.output)


def test_every_example_spec_is_valid():
    from goalfit.cli.spec import load_spec

    specs = sorted((ROOT / "examples").glob("*.toml"))
    assert len(specs) >= 5
    for path in specs:
        load_spec(path)
