"""Appendix A: the committed Euler-angle module is exactly what tools/gen_euler_joints.py writes."""

from pathlib import Path

import numpy as np
import pytest
from scripts import load_tool

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # sympy regenerates the module: make test runs it, make check leaves it out
def test_generated_euler_module_is_up_to_date():
    """Runs sympy for all 12 charts (about 15 s): a hand edit or a stale file fails here."""
    text = load_tool("gen_euler_joints").generate()
    committed = (ROOT / "redmax_edu" / "joints" / "_euler_generated.py").read_text()
    assert text == committed, "run: python tools/gen_euler_joints.py"


def test_generator_xyz_chart_reproduces_eq_2_36():
    gen = load_tool("gen_euler_joints")
    _, S, Sdot, detS = gen.chart_expressions("XYZ")
    q1, q2, q3 = gen.q
    expected = [[gen.sp.cos(q2) * gen.sp.cos(q3), gen.sp.sin(q3), 0],
                [-gen.sp.cos(q2) * gen.sp.sin(q3), gen.sp.cos(q3), 0],
                [gen.sp.sin(q2), 0, 1]]
    assert gen.sp.simplify(S - gen.sp.Matrix(expected)) == gen.sp.zeros(3, 3)
    assert gen.sp.simplify(detS - gen.sp.cos(q2)) == 0
    values = {q1: 0.3, q2: -0.4, q3: 1.1, **dict(zip(gen.qd, (0.5, -1.0, 2.0), strict=True))}
    numeric = np.array(Sdot.subs(values).evalf(), dtype=float)
    from redmax_edu.joints import SphericalEuler

    assert np.allclose(numeric, SphericalEuler("XYZ").Sdot([0.3, -0.4, 1.1], [0.5, -1.0, 2.0])[:3],
                       rtol=0, atol=1e-14)
