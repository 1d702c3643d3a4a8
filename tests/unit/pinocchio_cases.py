"""The Pinocchio reference cases (tests/reference/pinocchio/, copies of the shared files) as
pytest parameters, and the measure the tests compare with them (not a test module)."""

import json
from pathlib import Path

import numpy as np
import pytest

from redmax_edu.model import model_from_dict

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "pinocchio"


def pinocchio_params():
    """One ``pytest.param(model, state)`` per state of every case, ``state`` a dict of arrays."""
    out = []
    for path in sorted(REFERENCE.glob("*.json")):
        data = json.loads(path.read_text())
        model = model_from_dict(data["model"])
        for k, state in enumerate(data["states"]):
            s = {key: np.asarray(value, dtype=float) for key, value in state.items()}
            out.append(pytest.param(model, s, id=f"{path.stem}-state{k}"))
    return out


def pinocchio_error(a, b):
    """``max |a - b| / max(1, max |b|)``, the measure of tests/claims/test_ch2_reference.py."""
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))
