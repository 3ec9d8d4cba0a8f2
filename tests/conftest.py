import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

# Real material lives outside the repo; never copy it in.
DATA_DIR = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.fail(f"shared data not found at {DATA_DIR}; set QUIRE_DATA")
    return DATA_DIR


@pytest.fixture(scope="session")
def pdf_dir(data_dir) -> Path:
    return data_dir / "pdfs"
