"""Submissions for the tests of the graders (not a test module).

* :func:`reference` loads the reference solutions from the source notebooks of
  ``exercises/`` (the notebook is the one copy of the solutions);
* ``EXP_LOG_MUTANTS`` and ``ADJOINT_MUTANTS``: for every common mistake, a mutant of the
  solution written as a student would, with numpy and ``brac`` only (a mutant calling the
  library would be refused as such), and a fragment of the message the grader must give it;
* ``BROKEN``: submissions that raise, loop, sleep, return NaN or the wrong type, end the
  process, recurse without end, and the message each must get (graded as ``exp_se3`` or
  ``adjoint_dot``).
"""

import contextlib
import io
import os
import sys
import time
from pathlib import Path

import matplotlib
import nbformat
import numpy as np

from redmax_edu.lie import brac

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"01_exp_log": ROOT / "exercises/01_maximal/01_exp_log.ipynb",
           "02_adjoint": ROOT / "exercises/01_maximal/02_adjoint.ipynb",
           "03_forward_dynamics": ROOT / "exercises/02_reduced/03_forward_dynamics.ipynb",
           "04_recursive": ROOT / "exercises/02_reduced/04_recursive.ipynb",
           "01_lagrangian_arm": ROOT / "exercises/04_companions/01_lagrangian_arm.ipynb"}


def solution_cells(notebook):
    """The code of the cells between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` raw cells."""
    nb = nbformat.read(notebook, as_version=4)
    found, inside = [], False
    for cell in nb.cells:
        if cell.cell_type == "raw":
            text = cell.source.strip()
            inside = text.startswith("# BEGIN SOLUTION") or (inside and not text.startswith("# END SOLUTION"))
        elif inside and cell.cell_type == "code":
            found.append(cell.source)
    return found


def reference(name):
    """The reference solutions of an assignment: a namespace with its functions."""
    nb = nbformat.read(SOURCES[name], as_version=4)
    setup = next(c.source for c in nb.cells if c.cell_type == "code")
    namespace = {"__name__": f"reference_{name}"}
    # the notebook's setup() sets numpy's printing and matplotlib's style: not for the other tests
    with contextlib.redirect_stdout(io.StringIO()), np.printoptions(), matplotlib.rc_context():
        exec(setup, namespace)
        for code in solution_cells(SOURCES[name]):
            exec(code, namespace)
    return namespace


# --- exp_se3 and log_se3 ------------------------------------------------------------------------


def _coefficients(t):
    """sin(t)/t, (1 - cos t)/t^2, (t - sin t)/t^3, by series below 1e-2 (as a student would)."""
    if t < 1e-2:
        t2 = t * t
        return 1 - t2 / 6, 0.5 - t2 / 24, 1 / 6 - t2 / 120
    return np.sin(t) / t, (1 - np.cos(t)) / t**2, (t - np.sin(t)) / t**3


def _exp(w, nu, V_of=None):
    t = np.linalg.norm(w)
    W = brac(w)
    a, b, c = _coefficients(t)
    V = np.eye(3) + b * W + c * W @ W
    E = np.eye(4)
    E[:3, :3] = np.eye(3) + a * W + b * W @ W
    E[:3, 3] = (V if V_of is None else V_of(W, b, c)) @ nu
    return E


def exp_swapped(phi):
    nu, w = phi[:3], phi[3:]  # the order (nu, omega) of some textbooks
    return _exp(w, nu)


def exp_wrong_way(phi):
    w, nu = phi[:3], phi[3:]
    t, W = np.linalg.norm(w), brac(w).T  # a transposed cross-product matrix
    a, b, c = _coefficients(t)
    E = np.eye(4)
    E[:3, :3] = np.eye(3) + a * W + b * W @ W
    E[:3, 3] = (np.eye(3) + b * W + c * W @ W) @ nu
    return E


def exp_translation_nu(phi):
    E = _exp(phi[:3], phi[3:])
    E[:3, 3] = phi[3:]
    return E


def exp_translation_R_nu(phi):
    E = _exp(phi[:3], phi[3:])
    E[:3, 3] = E[:3, :3] @ phi[3:]
    return E


def exp_V_transposed(phi):
    return _exp(phi[:3], phi[3:], lambda W, b, c: np.eye(3) - b * W + c * W @ W)


def exp_V_no_square(phi):
    return _exp(phi[:3], phi[3:], lambda W, b, c: np.eye(3) + b * W)


def exp_no_series(phi):
    w, nu = phi[:3], phi[3:]
    t, W = np.linalg.norm(w), brac(w)
    E = np.eye(4)
    E[:3, :3] = np.eye(3) + np.sin(t) / t * W + (1 - np.cos(t)) / t**2 * W @ W
    E[:3, 3] = (np.eye(3) + (1 - np.cos(t)) / t**2 * W + (t - np.sin(t)) / t**3 * W @ W) @ nu
    return E


def exp_bad_series(phi):
    w, nu = phi[:3], phi[3:]
    t, W = np.linalg.norm(w), brac(w)
    if t < 1e-2:
        a, b, c = 1 - t * t / 6, 0.5 - t * t / 12, 1 / 6  # b's second term is -t^2/24
    else:
        a, b, c = np.sin(t) / t, (1 - np.cos(t)) / t**2, (t - np.sin(t)) / t**3
    E = np.eye(4)
    E[:3, :3] = np.eye(3) + a * W + b * W @ W
    E[:3, 3] = (np.eye(3) + b * W + c * W @ W) @ nu
    return E


def exp_half_angle(phi):
    return _exp(phi[:3] / 2, phi[3:])  # no named mistake; right at phi = 0


def _axis_angle(R):
    """The textbook logarithm of a rotation: arccos of the trace, axis from the skew part."""
    t = np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))
    return t / (2 * np.sin(t)) * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])


def _vinv(w):
    t, W = np.linalg.norm(w), brac(w)
    d = 1 / 12 if t < 1e-2 else (1 - t / 2 * np.cos(t / 2) / np.sin(t / 2)) / t**2
    return np.eye(3) - W / 2 + d * W @ W


def log_textbook(E):
    w = _axis_angle(E[:3, :3])
    with np.errstate(all="ignore"):
        return np.concatenate([w, _vinv(w) @ E[:3, 3]])


def _log(E):
    """A careful logarithm (atan2, the symmetric part beyond pi/2), the base of the mutants below."""
    R, p = E[:3, :3], E[:3, 3]
    s = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    c = 0.5 * (np.trace(R) - 1)
    t = np.arctan2(np.linalg.norm(s), c)
    if c > 0:
        w = s * (1 + t * t / 6 if t < 1e-2 else t / np.sin(t))
    else:
        B = 0.5 * (R + R.T) - c * np.eye(3)
        k = np.argmax(np.diag(B))
        n = B[:, k] / np.sqrt(B[k, k] * (1 - c))
        w = t * (n if n @ s >= 0 else -n)
    return np.concatenate([w, _vinv(w) @ p])


def log_linear_p(E):
    phi = _log(E)
    phi[3:] = E[:3, 3]
    return phi


def log_linear_V_p(E):
    phi = _log(E)
    phi[3:] = _exp(phi[:3], E[:3, 3])[:3, 3]  # V p
    return phi


def log_wrong_sign(E):
    F = E.copy()
    F[:3, :3] = E[:3, :3].T  # reads (R^T - R)/2
    return _log(F)


def log_swapped(E):
    phi = _log(E)
    return np.concatenate([phi[3:], phi[:3]])


def log_vinv_sign(E):
    phi = _log(E)
    phi[3:] = _vinv(phi[:3]).T @ E[:3, 3]
    return phi


EXP_LOG_MUTANTS = {
    # name: (function graded, mutant, a fragment of the message it must get)
    "exp_swapped": ("exp_se3", exp_swapped, "omega and nu are swapped"),
    "exp_wrong_way": ("exp_se3", exp_wrong_way, "the frame turns the wrong way"),
    "exp_translation_nu": ("exp_se3", exp_translation_nu, "the translation is nu itself"),
    "exp_translation_R_nu": ("exp_se3", exp_translation_R_nu, "the translation is R nu"),
    "exp_V_transposed": ("exp_se3", exp_V_transposed, "the [omega] term of V has the wrong sign"),
    "exp_V_no_square": ("exp_se3", exp_V_no_square, "V lacks its [omega]^2 term"),
    "exp_no_series": ("exp_se3", exp_no_series, "exp_se3(phi = 0) returned NaN (not a number). At theta"),
    "exp_bad_series": ("exp_se3", exp_bad_series, "Small angles need the Taylor series"),
    "exp_half_angle": ("exp_se3", exp_half_angle, "It is right at phi = 0 and wrong elsewhere"),
    "log_textbook": ("log_se3", log_textbook, "Near pi the skew part (R - R^T)/2"),
    "log_linear_p": ("log_se3", log_linear_p, "the linear part is the translation p itself"),
    "log_linear_V_p": ("log_se3", log_linear_V_p, "the linear part is V p"),
    "log_wrong_sign": ("log_se3", log_wrong_sign, "omega has the wrong sign"),
    "log_swapped": ("log_se3", log_swapped, "omega and nu are swapped"),
    "log_vinv_sign": ("log_se3", log_vinv_sign, "the [omega]/2 term of V^-1 has the wrong sign"),
}


# --- adjoint, ad, adjoint_dot ---------------------------------------------------------------------

Z = np.zeros((3, 3))


def _Rp(E):
    return E[:3, :3], E[:3, 3]


def adjoint_transposed(E):
    R, p = _Rp(E)
    return np.block([[R, Z], [brac(p) @ R, R]]).T


def adjoint_swapped(E):
    R, p = _Rp(E)
    return np.block([[R, brac(p) @ R], [Z, R]])


def adjoint_R_p(E):
    R, p = _Rp(E)
    return np.block([[R, Z], [R @ brac(p), R]])


def adjoint_of_inverse(E):
    R, p = _Rp(E)
    return np.block([[R.T, Z], [-R.T @ brac(p), R.T]])


def adjoint_sign(E):
    R, p = _Rp(E)
    return np.block([[R, Z], [-brac(p) @ R, R]])


def adjoint_p_only(E):
    R, p = _Rp(E)
    return np.block([[R, Z], [brac(p), R]])


def adjoint_R_squared(E):
    R, p = _Rp(E)
    return np.block([[R, Z], [brac(p) @ R @ R, R]])  # no named mistake; right at E = I


def _ad(phi):
    W, N = brac(phi[:3]), brac(phi[3:])
    return np.block([[W, Z], [N, W]])


def ad_transposed(phi):
    return _ad(phi).T


def ad_swapped(phi):
    W, N = brac(phi[:3]), brac(phi[3:])
    return np.block([[W, N], [Z, W]])


def ad_nu_sign(phi):
    W, N = brac(phi[:3]), brac(phi[3:])
    return np.block([[W, Z], [-N, W]])


def _adjoint(E):
    R, p = _Rp(E)
    return np.block([[R, Z], [brac(p) @ R, R]])


def adjoint_dot_world(E, phi):
    return _ad(phi) @ _adjoint(E)


def adjoint_dot_no_R_nu(E, phi):
    R, p = _Rp(E)
    RW = R @ brac(phi[:3])
    return np.block([[RW, Z], [brac(p) @ RW, RW]])


def adjoint_dot_ad_only(E, phi):
    return _ad(phi)


def adjoint_dot_sign(E, phi):
    return -_adjoint(E) @ _ad(phi)


def adjoint_dot_ad_transposed(E, phi):
    return _adjoint(E) @ _ad(phi).T


ADJOINT_MUTANTS = {
    "adjoint_transposed": ("adjoint", adjoint_transposed, "it is the transpose of the adjoint"),
    "adjoint_swapped": ("adjoint", adjoint_swapped, "omega and nu are swapped"),
    "adjoint_R_p": ("adjoint", adjoint_R_p, "off by a frame: the bottom-left block is [p] R"),
    "adjoint_of_inverse": ("adjoint", adjoint_of_inverse, "off by a frame: it is the adjoint of the inverse"),
    "adjoint_sign": ("adjoint", adjoint_sign, "the bottom-left block has the wrong sign"),
    "adjoint_p_only": ("adjoint", adjoint_p_only, "the bottom-left block is [p]; it is [p] R"),
    "adjoint_R_squared": ("adjoint", adjoint_R_squared, "It is right at E = I and wrong elsewhere"),
    "ad_transposed": ("ad", ad_transposed, "it is the transpose of ad(phi)"),
    "ad_swapped": ("ad", ad_swapped, "omega and nu are swapped"),
    "ad_nu_sign": ("ad", ad_nu_sign, "the [nu] block has the wrong sign"),
    "adjoint_dot_world": ("adjoint_dot", adjoint_dot_world, "ad(phi) A is the rate for a twist in world"),
    "adjoint_dot_no_R_nu": ("adjoint_dot", adjoint_dot_no_R_nu,
                            "along nu_x, nu_y, nu_z; it agrees along omega_x"),
    "adjoint_dot_ad_only": ("adjoint_dot", adjoint_dot_ad_only, "ad(phi) is the rate only at E = I"),
    "adjoint_dot_sign": ("adjoint_dot", adjoint_dot_sign, "it is minus the rate of the adjoint"),
    "adjoint_dot_ad_transposed": ("adjoint_dot", adjoint_dot_ad_transposed, "it uses ad(phi)^T"),
}


# --- broken submissions (any function: they ignore their arguments) -------------------------------


def raises(*args):
    return 1 / 0


def loops(*args):
    while True:
        pass


def sleeps(*args):
    time.sleep(60)


def returns_nan(*args):
    return np.full((6, 6) if len(args) == 2 else (4, 4), np.nan)  # for adjoint_dot, exp_se3


def returns_text(*args):
    return "I do not know"


def returns_none(*args):
    return None


def recurses(*args):
    return recurses(*args)


def exits(*args):
    sys.exit(1)


def kills_the_process(*args):
    os._exit(3)


def returns_tuple(*args):
    return np.eye(4), np.eye(4)


BROKEN = {
    # name: (submission, a fragment of the message, the status)
    "raises": (raises, "raised ZeroDivisionError: division by zero", "wrong"),
    "loops": (loops, "did not return within", "timeout"),
    "sleeps": (sleeps, "did not return within", "timeout"),
    "returns_nan": (returns_nan, "returned NaN (not a number)", "wrong"),
    "returns_text": (returns_text, "returned a str; expected an array of shape", "wrong"),
    "returns_none": (returns_none, "returns None: not answered yet, or a return statement is missing",
                     "unanswered"),
    "recurses": (recurses, "exceeded Python's recursion limit", "wrong"),
    "exits": (exits, "raised SystemExit", "wrong"),
    "kills_the_process": (kills_the_process, "ended the Python process", "crashed"),
    "returns_tuple": (returns_tuple, "returned a tuple of 2 arrays", "wrong"),
}
