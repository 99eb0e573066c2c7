import os
from pathlib import Path

import pytest

_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data"
if "GOALFIT_DATA" not in os.environ and _DEFAULT.is_dir():
    os.environ["GOALFIT_DATA"] = str(_DEFAULT)


def _have(folder: str) -> bool:
    root = os.environ.get("GOALFIT_DATA")
    return bool(root) and (Path(root) / folder).is_dir()


@pytest.fixture
def need_data():
    def check(folder):
        if not _have(folder):
            pytest.skip(f"dataset folder {folder} not found under $GOALFIT_DATA")
    return check
