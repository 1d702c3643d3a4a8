"""Generate ``redmax_edu/joints/_euler_generated.py``: the 12 Euler-angle charts by computer algebra.

This is Appendix A of the writeup ("Codegen for Euler angles") done with sympy instead of
MATLAB's Symbolic Toolbox. For each chart ``abc`` (six proper Euler charts such as ``XYX``
and six Tait-Bryan charts such as ``XYZ``) it

1. multiplies the elementary rotations, ``R = R_a(q1) R_b(q2) R_c(q3)`` (Eq. 2.33 for XYZ);
2. forms each column of the joint Jacobian by unbracketing ``R^T dR/dq_j`` (Eq. 2.32),
   simplified with the trigonometric identities (Eq. 2.35-2.36);
3. differentiates S in time, ``Sdot = sum_k dS/dq_k qdot_k`` (Eq. 2.37);
4. simplifies ``det S`` (Table 3, column 2);
5. for Part 3, differentiates R, S and Sdot once more in each angle: ``dR/dq_k`` (Eq. 3.24),
   the joint Hessian ``dS/dq_k`` and ``dSdot/dq_k`` at fixed qdot (Eq. 3.27 for XYZ), each
   stacked with the derivative index last;

and prints the results as plain numpy code, with ``s_k = sin(q_k)``, ``c_k = cos(q_k)`` and
``qd_k = qdot_k`` passed in, so that the joint evaluates the sines and cosines once.

    python tools/gen_euler_joints.py            # rewrite the generated module
    python tools/gen_euler_joints.py --check    # exit 1 if the committed module is stale

The output depends only on this script and the pinned sympy version, so ``--check`` (and
the unit test that runs :func:`generate`) detects a hand edit or a stale file.

Taught in book/02_reduced/04b_euler_joints.
"""

import argparse
import sys
from pathlib import Path

import sympy as sp

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "redmax_edu" / "joints" / "_euler_generated.py"

#: Table 1 (proper Euler angles) then Table 2 (Tait-Bryan angles), in the writeup's order.
CHARTS = ("XYX", "XZX", "YZY", "YXY", "ZXZ", "ZYZ", "XYZ", "XZY", "YZX", "YXZ", "ZXY", "ZYX")

q = sp.symbols("q1:4", real=True)
qd = sp.symbols("qd1:4", real=True)
s = sp.symbols("s1:4", real=True)
c = sp.symbols("c1:4", real=True)
# How the printed code names sin(q_k) and cos(q_k).
TO_SC = {**{sp.sin(q[k]): s[k] for k in range(3)}, **{sp.cos(q[k]): c[k] for k in range(3)}}


def elementary(axis, angle):
    """The rotation by ``angle`` about the coordinate ``axis`` ("X", "Y" or "Z")."""
    cs, sn = sp.cos(angle), sp.sin(angle)
    if axis == "X":
        return sp.Matrix([[1, 0, 0], [0, cs, -sn], [0, sn, cs]])
    if axis == "Y":
        return sp.Matrix([[cs, 0, sn], [0, 1, 0], [-sn, 0, cs]])
    return sp.Matrix([[cs, -sn, 0], [sn, cs, 0], [0, 0, 1]])


def unbracket(W):
    """The 3-vector of a skew-symmetric 3x3 matrix (the inverse of Eq. 1.7)."""
    return sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])


def chart_expressions(chart):
    """``(R, S, Sdot, detS)`` of one chart as sympy expressions in q and qd (S, Sdot: 3x3)."""
    R = elementary(chart[0], q[0]) * elementary(chart[1], q[1]) * elementary(chart[2], q[2])
    columns = [unbracket(R.T * R.diff(q[j])) for j in range(3)]  # Eq. (2.32)
    S = sp.Matrix.hstack(*columns).applyfunc(sp.trigsimp)
    Sdot = sp.zeros(3, 3)
    for k in range(3):  # Eq. (2.37): dS/dt = sum_k dS/dq_k qdot_k
        Sdot += S.diff(q[k]) * qd[k]
    Sdot = Sdot.applyfunc(sp.expand)
    detS = sp.trigsimp(S.det())
    return R, S, Sdot, detS


def chart_derivatives(chart, expressions=None):
    """``(dR, dS, dSdot)`` of one chart: three lists of three 3x3 sympy matrices, ``[k] = d/dq_k``.

    The derivatives are taken of the already simplified R, S and Sdot of
    :func:`chart_expressions` (pass them as ``expressions`` if already computed) and only
    expanded (no trigsimp), so this costs little.
    """
    R, S, Sdot, _ = expressions if expressions is not None else chart_expressions(chart)
    dR = [R.diff(q[k]).applyfunc(sp.expand) for k in range(3)]  # Eq. (3.24)
    dS = [S.diff(q[k]).applyfunc(sp.expand) for k in range(3)]  # Eq. (3.27), first line
    dSdot = [Sdot.diff(q[k]).applyfunc(sp.expand) for k in range(3)]  # Eq. (3.27), second line
    return dR, dS, dSdot


def _code(expr):
    """Print one entry with s_k, c_k, qd_k; the fixed str printer keeps the output deterministic."""
    return sp.sstr(sp.expand(sp.sympify(expr).subs(TO_SC)))


def _matrix_code(M, dtype):
    rows = ",\n        ".join("(" + ", ".join(_code(x) for x in M.row(i)) + ")" for i in range(M.rows))
    return f"    return np.array((\n        {rows},\n    ), dtype={dtype})\n"


def _row_code(row, indent):
    """One matrix row as a tuple: on one line when it fits in the line length, else one entry per line."""
    entries = [_code(x) for x in row]
    line = "(" + ", ".join(entries) + ")"
    if len(indent) + len(line) + 1 <= 110:
        return line
    inner = indent + "    "
    return "(\n" + "".join(f"{inner}{e},\n" for e in entries) + indent + ")"


def _stack_code(slices, dtype):
    """Three 3x3 slices (d/dq1, d/dq2, d/dq3) as a (3, 3, 3) array, derivative index last."""
    blocks = []
    for k, M in enumerate(slices):
        rows = "".join(f"            {_row_code(M.row(i), '            ')},\n" for i in range(M.rows))
        blocks.append(f"        (  # d/dq{k + 1}\n{rows}        ),\n")
    return f"    return np.moveaxis(np.array((\n{''.join(blocks)}    ), dtype={dtype}), 0, -1)\n"


def derivative_code(chart, expressions=None):
    """The three derivative functions of one chart (Part 3, §3.2.5) as Python source."""
    dR, dS, dSdot = chart_derivatives(chart, expressions)
    low = chart.lower()
    head = "    s1, s2, s3 = s\n    c1, c2, c3 = c\n"
    return (
        f"\n\ndef dR_{low}(s, c):\n    \"\"\"dR/dq for chart {chart}: [:, :, k] = dR/dq_k (Eq. 3.24).\"\"\"\n"
        + head + _stack_code(dR, "s.dtype")
        + f"\n\ndef dS_{low}(s, c):\n    \"\"\"Top three rows of the Hessian dS/dq for chart {chart} "
        + "(Eq. 3.27).\"\"\"\n"
        + head + _stack_code(dS, "s.dtype")
        + f"\n\ndef dSdot_{low}(s, c, qd):\n    \"\"\"Top three rows of dSdot/dq at fixed qdot for chart "
        + f"{chart} (Eq. 3.27).\"\"\"\n"
        + head + "    qd1, qd2, qd3 = qd\n" + _stack_code(dSdot, "np.result_type(s, qd)")
    )


def chart_code(chart, expressions=None):
    """The four functions of one chart as Python source."""
    R, S, Sdot, detS = expressions if expressions is not None else chart_expressions(chart)
    low = chart.lower()
    head = "    s1, s2, s3 = s\n    c1, c2, c3 = c\n"
    return (
        f"\n\ndef R_{low}(s, c):\n    \"\"\"R = R_{chart[0]}(q1) R_{chart[1]}(q2) R_{chart[2]}(q3).\"\"\"\n"
        + head + _matrix_code(R, "s.dtype")
        + f"\n\ndef S_{low}(s, c):\n    \"\"\"Top three rows of S for chart {chart}.\"\"\"\n"
        + head + _matrix_code(S, "s.dtype")
        + f"\n\ndef Sdot_{low}(s, c, qd):\n    \"\"\"Top three rows of Sdot for chart {chart}.\"\"\"\n"
        + head + "    qd1, qd2, qd3 = qd\n" + _matrix_code(Sdot, "np.result_type(s, qd)")
        + f"\n\ndef detS_{low}(s, c):\n    \"\"\"det S for chart {chart} (Table 3).\"\"\"\n"
        + "    s1, s2, s3 = s\n    c1, c2, c3 = c\n" + f"    return {_code(detS)}\n"
    )


HEADER = '''"""R, S, Sdot, det S and their derivatives for the 12 Euler charts (Tables 1-3, Eq. 3.24-3.27).

GENERATED by tools/gen_euler_joints.py with sympy {version}. DO NOT EDIT BY HAND: change the
generator and run ``python tools/gen_euler_joints.py`` (``--check`` verifies this file).

Arguments: ``s = sin(q)``, ``c = cos(q)`` and ``qd = qdot``, each of shape (3,). S and Sdot
are the top three rows of the 6x3 joint Jacobian and its time derivative (the bottom rows
are zero). ``CHARTS[name] = (R, S, Sdot, detS)``.

Part 3 (§3.2.5): ``DERIVATIVES[name] = (dR, dS, dSdot)``, each of shape (3, 3, 3) with the
derivative index last: ``dR[:, :, k] = dR/dq_k``, ``dS[:, j, k] = dS_j/dq_k`` (top rows of
the joint Hessian) and ``dSdot[:, j, k] = dSdot_j/dq_k`` at fixed qdot.

Taught in book/02_reduced/04b_euler_joints.
"""

import numpy as np
'''


def generate():
    """The text of the generated module."""
    parts = [HEADER.format(version=sp.__version__)]
    for chart in CHARTS:
        expressions = chart_expressions(chart)  # the trigsimp of S: the slow part, done once
        parts += [chart_code(chart, expressions), derivative_code(chart, expressions)]
    table = "".join(f"    \"{ch}\": (R_{ch.lower()}, S_{ch.lower()}, Sdot_{ch.lower()}, detS_{ch.lower()}),\n"
                    for ch in CHARTS)
    parts.append(f"\n\nCHARTS = {{\n{table}}}\n")
    table = "".join(f"    \"{ch}\": (dR_{ch.lower()}, dS_{ch.lower()}, dSdot_{ch.lower()}),\n"
                    for ch in CHARTS)
    parts.append(f"\n#: Part 3: the derivatives in q of R, S and Sdot (derivative index last).\n"
                 f"DERIVATIVES = {{\n{table}}}\n")
    return "".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file is stale")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        current = TARGET.read_text() if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run python tools/gen_euler_joints.py")
            return 1
        print(f"{TARGET.relative_to(ROOT)} is up to date")
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
