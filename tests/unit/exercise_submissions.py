"""Submissions for the tests of the graders (not a test module).

* :func:`reference` loads the reference solutions from the source notebooks of
  ``exercises/`` (the notebook is the one copy of the solutions); :func:`fill` writes them (or
  :func:`doubled`, a wrong version) into a generated student notebook;
* ``EXP_LOG_MUTANTS``, ``ADJOINT_MUTANTS`` and the later ones (``FORCE_MUTANTS``, ...): for
  every common mistake, a mutant of the solution written as a student would, with numpy and
  ``brac`` only (a mutant calling the
  library would be refused as such), and a fragment of the message the grader must give it;
* ``BROKEN``: submissions that raise, loop, sleep, return NaN or the wrong type, end the
  process, recurse without end, and the message each must get (graded as ``exp_se3`` or
  ``adjoint_dot``).
"""

import contextlib
import io
import os
import re
import sys
import time
from pathlib import Path

import matplotlib
import nbformat
import numpy as np

from redmax_edu.exercises import ASSIGNMENTS
from redmax_edu.lie import brac, gamma

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"01_exp_log": ROOT / "exercises/01_maximal/01_exp_log.ipynb",
           "02_adjoint": ROOT / "exercises/01_maximal/02_adjoint.ipynb",
           "03_force_derivatives": ROOT / "exercises/01_maximal/03_force_derivatives.ipynb",
           "04_kkt_step": ROOT / "exercises/01_maximal/04_kkt_step.ipynb",
           "05_spatial_inertia": ROOT / "exercises/01_maximal/05_spatial_inertia.ipynb",
           "06_poses_and_points": ROOT / "exercises/01_maximal/06_poses_and_points.ipynb",
           "07_step_and_contact": ROOT / "exercises/01_maximal/07_step_and_contact.ipynb",
           "01_joint_Q_S_Sdot": ROOT / "exercises/02_reduced/01_joint_Q_S_Sdot.ipynb",
           "02_jacobian": ROOT / "exercises/02_reduced/02_jacobian.ipynb",
           "03_forward_dynamics": ROOT / "exercises/02_reduced/03_forward_dynamics.ipynb",
           "04_recursive": ROOT / "exercises/02_reduced/04_recursive.ipynb",
           "05_jacobian_products": ROOT / "exercises/02_reduced/05_jacobian_products.ipynb",
           "06_joint_types": ROOT / "exercises/02_reduced/06_joint_types.ipynb",
           "07_nodes_hybrid_friction": ROOT / "exercises/02_reduced/07_nodes_hybrid_friction.ipynb",
           "01_joint_derivative": ROOT / "exercises/03_differentiable/01_joint_derivative.ipynb",
           "02_bdf1_newton_step": ROOT / "exercises/03_differentiable/02_bdf1_newton_step.ipynb",
           "03_adjoint_gradient": ROOT / "exercises/03_differentiable/03_adjoint_gradient.ipynb",
           "04_jacobian_derivative": ROOT / "exercises/03_differentiable/04_jacobian_derivative.ipynb",
           "05_mass_matrix_derivative": ROOT / "exercises/03_differentiable/05_mass_matrix_derivative.ipynb",
           "01_lagrangian_arm": ROOT / "exercises/04_companions/01_lagrangian_arm.ipynb",
           "01_discrete_euler_lagrange": ROOT / "exercises/05_variational/01_discrete_euler_lagrange.ipynb"}


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


# --- generated notebooks, filled in ------------------------------------------------------------------


def student(generated, name):
    return generated[name] / "student" / f"{name}.ipynb"


def autograder(generated, name):
    return generated[name] / "autograder" / "autograder.zip"


def answer_cells(nb):
    return [c for c in nb.cells if "otter_answer_cell" in c.metadata.get("tags", [])]


def question_of(code, functions):
    """The function of ``functions`` that a cell defines (its first ``def``, when it defines none of them)."""
    names = re.findall(r"^def (\w+)\(", code, flags=re.M)
    return next((n for n in names if n in functions), names[0] if names else None)


def fill(student, target, sources):
    """A copy of the student notebook with the answer cells that define ``sources``' functions replaced."""
    nb = nbformat.read(student, as_version=4)
    for cell in answer_cells(nb):
        name = question_of(cell.source, sources)
        if name in sources:
            cell.source = sources[name]
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


def solutions(name):
    """{function: the source notebook's solution cell}: the answers filled back in."""
    functions = ASSIGNMENTS[name].functions
    return {question_of(code, functions): code for code in solution_cells(SOURCES[name])}


def doubled(name):
    """The solutions, but the first function returns twice the right answer (a wrong submission)."""
    answers = solutions(name)
    first = ASSIGNMENTS[name].functions[0]
    answers[first] = (re.sub(rf"\b{first}\(", f"right_{first}(", answers[first])
                      + f"\n\ndef {first}(*args):\n    return 2 * np.asarray(right_{first}(*args))\n")
    return answers



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


# --- spring_wrench, spring_stiffness, spring_damping ----------------------------------------------


def _spring(E, phi, r, ks, kd):
    """Rotations, material Jacobians and the world force on the first point."""
    R = [E[0, :3, :3], E[1, :3, :3]]
    x = [R[i] @ r[i] + E[i, :3, 3] for i in (0, 1)]
    v = [R[i] @ gamma(r[i]) @ phi[i] for i in (0, 1)]
    return R, [R[i] @ gamma(r[i]) for i in (0, 1)], ks * (x[1] - x[0]) + kd * (v[1] - v[0])


def wrench_world(E, phi, r, ks, kd):
    R, J, F = _spring(E, phi, r, ks, kd)
    return np.concatenate([gamma(r[0]).T @ F, -gamma(r[1]).T @ F])  # F not rotated into the body


def wrench_swapped(E, phi, r, ks, kd):
    R, J, F = _spring(E, phi, r, ks, kd)
    f = [R[0].T @ F, -R[1].T @ F]
    return np.concatenate([f[0], np.cross(r[0], f[0]), f[1], np.cross(r[1], f[1])])  # (force, torque)


def wrench_sign(E, phi, r, ks, kd):
    R, J, F = _spring(E, phi, r, ks, kd)
    return np.concatenate([-J[0].T @ F, J[1].T @ F])  # the force pushes the points apart


def wrench_no_damping(E, phi, r, ks, kd):
    R, J, F = _spring(E, np.zeros_like(phi), r, ks, kd)
    return np.concatenate([J[0].T @ F, -J[1].T @ F])


def wrench_blocks(E, phi, r, ks, kd):
    R, J, F = _spring(E, phi, r, ks, kd)
    return np.stack([J[0].T @ F, -J[1].T @ F])  # shape (2, 6)


def _stiffness(E, phi, r, ks, kd, rotation=True, velocity=True):
    R, J, F = _spring(E, phi, r, ks, kd)
    dv = [np.hstack([-R[i] @ brac(gamma(r[i]) @ phi[i]), Z]) for i in (0, 1)]
    K = np.zeros((12, 12))
    for a, Fa in ((0, F), (1, -F)):
        if rotation:
            K[6 * a:6 * a + 6, 6 * a:6 * a + 3] += gamma(r[a]).T @ brac(R[a].T @ Fa)
        for b in (0, 1):
            sign = -1.0 if a == b else 1.0
            dF = ks * J[b] + (kd * dv[b] if velocity else 0)
            K[6 * a:6 * a + 6, 6 * b:6 * b + 6] += sign * J[a].T @ dF
    return K


def stiffness_no_rotation(E, phi, r, ks, kd):
    return _stiffness(E, phi, r, ks, kd, rotation=False)


def stiffness_no_velocity(E, phi, r, ks, kd):
    return _stiffness(E, phi, r, ks, kd, velocity=False)


def stiffness_transposed(E, phi, r, ks, kd):
    return _stiffness(E, phi, r, ks, kd).T


def stiffness_one_body(E, phi, r, ks, kd):
    K = _stiffness(E, phi, r, ks, kd)
    K[:, :6] = 0.0  # forgot that moving body 0 changes the force too
    return K


def _damping(E, phi, r, ks, kd, J=None):
    J = _spring(E, phi, r, ks, kd)[1] if J is None else J
    return np.block([[-kd * J[0].T @ J[0], kd * J[0].T @ J[1]], [kd * J[1].T @ J[0], -kd * J[1].T @ J[1]]])


def damping_world(E, phi, r, ks, kd):
    return _damping(E, phi, r, ks, kd, J=[gamma(r[0]), gamma(r[1])])


def damping_sign(E, phi, r, ks, kd):
    return -_damping(E, phi, r, ks, kd)


def damping_one_body(E, phi, r, ks, kd):
    D = _damping(E, phi, r, ks, kd)
    D[:, 6:] = 0.0  # only the first body's twist
    return D


FORCE_MUTANTS = {
    "wrench_world": ("spring_wrench", wrench_world,
                     "off by a frame: the force is left in world coordinates"),
    "wrench_swapped": ("spring_wrench", wrench_swapped, "omega and nu are swapped"),
    "wrench_sign": ("spring_wrench", wrench_sign, "it is minus the wrench"),
    "wrench_no_damping": ("spring_wrench", wrench_no_damping, "the damping term is missing"),
    "wrench_blocks": ("spring_wrench", wrench_blocks,
                      "returned an array of shape (2, 6); expected shape (12,). Return a flat array"),
    "stiffness_no_rotation": ("spring_stiffness", stiffness_no_rotation,
                              "it lacks the term of the rotation inside the wrench"),
    "stiffness_no_velocity": ("spring_stiffness", stiffness_no_velocity, "it lacks the velocity term"),
    "stiffness_transposed": ("spring_stiffness", stiffness_transposed,
                             "it is the transpose of the stiffness K"),
    "stiffness_one_body": ("spring_stiffness", stiffness_one_body,
                           "along body 0 omega_x, body 0 omega_y, body 0 omega_z, body 0 nu_x"),
    "damping_world": ("spring_damping", damping_world, "off by a frame: it is Gamma(r_a)^T Gamma(r_b)"),
    "damping_sign": ("spring_damping", damping_sign, "it is minus the damping D"),
    "damping_one_body": ("spring_damping", damping_one_body,
                         "twist coordinate k along body 1 omega_x"),
}


# --- kkt_matrix, kkt_step -----------------------------------------------------------------------


def _kkt(A, G, top_right, bottom_left):
    k = len(G)
    return np.block([[A, top_right], [bottom_left, np.zeros((k, k))]])


def kkt_G_for_GT(A, G):
    return _kkt(A, G, G, G.T)  # G and G^T exchanged


def kkt_library_sign(A, G):
    return _kkt(A, G, -G.T, G)  # this book's -G^T in the writeup's symmetric matrix


def kkt_bottom_sign(A, G):
    return _kkt(A, G, G.T, -G)


def kkt_no_zero_block(A, G):
    return np.block([[A, G.T]])  # the constraint rows left out: shape (m, m + k)


def kkt_identity_block(A, G):
    k = len(G)
    return np.block([[A, G.T], [G, np.eye(k)]])  # a compliance where rigid joints have none


def _solve(M, phi, f, G, g, h, gamma, b=None, r=None):
    """Phi and the writeup's lambda, from the symmetric KKT matrix."""
    m, k = len(phi), len(g)
    b = M @ phi + h * f if b is None else b
    r = -gamma * g if r is None else r
    x = np.linalg.solve(np.block([[M, G.T], [G, np.zeros((k, k))]]), np.concatenate([b, r]))
    return x[:m], x[m:]


def step_writeup_sign(M, phi, f, G, g, h, gamma):
    Phi, lam = _solve(M, phi, f, G, g, h, gamma)
    return np.concatenate([Phi, lam])  # the writeup's lambda, not this book's


def step_no_baumgarte(M, phi, f, G, g, h, gamma):
    Phi, lam = _solve(M, phi, f, G, g, h, gamma, r=np.zeros(len(g)))
    return np.concatenate([Phi, -lam])


def step_baumgarte_sign(M, phi, f, G, g, h, gamma):
    Phi, lam = _solve(M, phi, f, G, g, h, gamma, r=gamma * g)
    return np.concatenate([Phi, -lam])


def step_no_momentum(M, phi, f, G, g, h, gamma):
    Phi, lam = _solve(M, phi, f, G, g, h, gamma, b=h * f)
    return np.concatenate([Phi, -lam])


def step_no_h(M, phi, f, G, g, h, gamma):
    Phi, lam = _solve(M, phi, f, G, g, h, gamma, b=M @ phi + f)
    return np.concatenate([Phi, -lam])


def step_twists_only(M, phi, f, G, g, h, gamma):
    return _solve(M, phi, f, G, g, h, gamma)[0]


KKT_MUTANTS = {
    "kkt_G_for_GT": ("kkt_matrix", kkt_G_for_GT, "the off-diagonal blocks are exchanged"),
    "kkt_library_sign": ("kkt_matrix", kkt_library_sign, "the top-right block is -G^T: that is the sign"),
    "kkt_bottom_sign": ("kkt_matrix", kkt_bottom_sign, "K is not symmetric: K["),
    "kkt_no_zero_block": ("kkt_matrix", kkt_no_zero_block,
                          "returned an array of shape (18, 33); expected"),
    "kkt_identity_block": ("kkt_matrix", kkt_identity_block,
                           "the bottom-right block (zero) is wrong; the top-left"),
    "step_writeup_sign": ("kkt_step", step_writeup_sign, "the multipliers have the writeup's sign"),
    "step_no_baumgarte": ("kkt_step", step_no_baumgarte, "the Baumgarte term is missing"),
    "step_baumgarte_sign": ("kkt_step", step_baumgarte_sign, "the Baumgarte term has the wrong sign"),
    "step_no_momentum": ("kkt_step", step_no_momentum, "the right-hand side lacks the momentum M phi"),
    "step_no_h": ("kkt_step", step_no_h, "the force is not multiplied by the step"),
    "step_twists_only": ("kkt_step", step_twists_only, "np.concatenate([Phi, lam])"),
}


# --- universal_Q, universal_S, universal_Sdot ---------------------------------------------------


def _rot_x(a):
    return np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])


def _rot_y(a):
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def _pose(R):
    Q = np.eye(4)
    Q[:3, :3] = R
    return Q


def universal_Q_order(q):
    return _pose(_rot_y(q[1]) @ _rot_x(q[0]))


def universal_Q_transposed(q):
    return _pose(_rot_x(q[0]) @ _rot_y(q[1])).T


def universal_Q_y_sign(q):
    return _pose(_rot_x(q[0]) @ _rot_y(q[1]).T)


def universal_Q_half(q):
    return _pose(_rot_x(q[0]) @ _rot_y(q[1] / 2))  # no named mistake; right at q = 0


def _universal_S(q):
    S = np.zeros((6, 2))
    S[:3, 0] = [np.cos(q[1]), 0.0, np.sin(q[1])]
    S[1, 1] = 1.0
    return S


def universal_S_constant(q):
    return np.vstack([np.eye(3)[:, :2], np.zeros((3, 2))])  # the axes at q = 0


def universal_S_swapped(q):
    return np.vstack([np.zeros((3, 2)), _universal_S(q)[:3]])


def universal_S_parent(q):
    S = np.zeros((6, 2))
    S[:3, 0] = [1.0, 0.0, 0.0]
    S[:3, 1] = [0.0, np.cos(q[0]), np.sin(q[0])]  # the axes in the parent's frame
    return S


def universal_S_transposed(q):
    return _universal_S(q).T


def universal_S_columns(q):
    return _universal_S(q)[:, ::-1]


def universal_S_sign(q):
    S = _universal_S(q)
    S[2, 0] = -S[2, 0]  # R_y(q_2) e_x instead of R_y(q_2)^T e_x
    return S


def _dS(q):
    top = np.array([[-np.sin(q[1]), 0.0], [0.0, 0.0], [np.cos(q[1]), 0.0]])
    return np.vstack([top, np.zeros((3, 2))])


def universal_Sdot_no_rate(q, qdot):
    return _dS(q)


def universal_Sdot_wrong_rate(q, qdot):
    return _dS(q) * qdot[0]


def universal_Sdot_sign(q, qdot):
    Sd = _dS(q) * qdot[1]
    Sd[0, 0] = -Sd[0, 0]  # d cos / dq = +sin
    return Sd


def universal_Sdot_swapped(q, qdot):
    return np.vstack([np.zeros((3, 2)), _dS(q)[:3] * qdot[1]])


def universal_Sdot_S(q, qdot):
    return _universal_S(q) * qdot[1]  # S times the rate, not its derivative


UNIVERSAL_MUTANTS = {
    "universal_Q_order": ("universal_Q", universal_Q_order, "the rotations are in the wrong order"),
    "universal_Q_transposed": ("universal_Q", universal_Q_transposed, "it is the transpose of Q(q)"),
    "universal_Q_y_sign": ("universal_Q", universal_Q_y_sign, "the rotation about y turns the wrong way"),
    "universal_Q_half": ("universal_Q", universal_Q_half, "It is right at q = (0, 0) and wrong elsewhere"),
    "universal_S_constant": ("universal_S", universal_S_constant,
                             "It is right at q = (0, 0) and wrong elsewhere"),
    "universal_S_swapped": ("universal_S", universal_S_swapped, "omega and nu are swapped"),
    "universal_S_parent": ("universal_S", universal_S_parent, "off by a frame: these are the joint's axes"),
    "universal_S_transposed": ("universal_S", universal_S_transposed, "Rows and columns are exchanged"),
    "universal_S_columns": ("universal_S", universal_S_columns, "the columns are exchanged"),
    "universal_S_sign": ("universal_S", universal_S_sign, "along q_1; it agrees along q_2"),
    "universal_Sdot_no_rate": ("universal_Sdot", universal_Sdot_no_rate, "multiply by qdot_2"),
    "universal_Sdot_wrong_rate": ("universal_Sdot", universal_Sdot_wrong_rate,
                                  "it uses qdot_1 where qdot_2"),
    "universal_Sdot_sign": ("universal_Sdot", universal_Sdot_sign, "along q_2; it agrees along q_1"),
    "universal_Sdot_swapped": ("universal_Sdot", universal_Sdot_swapped, "omega and nu are swapped"),
    "universal_Sdot_S": ("universal_Sdot", universal_Sdot_S,
                         "qdot = e_k) differs from the central difference"),
}


# --- body_twists, jacobian ----------------------------------------------------------------------


def _adj(E):
    R, p = E[:3, :3], E[:3, 3]
    return np.block([[R, Z], [brac(p) @ R, R]])


def _inv_pose(E):
    R, p = E[:3, :3], E[:3, 3]
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = R.T, -R.T @ p
    return out


def _twists(parents, E_ij, E_ip, S, qdot, joint=_adj, parent=_adj, with_parent=True):
    phi, start = np.zeros((len(parents), 6)), 0
    for i, p in enumerate(parents):
        k = S[i].shape[1]
        phi[i] = joint(E_ij[i]) @ S[i] @ qdot[start:start + k]
        if p >= 0 and with_parent:
            phi[i] += parent(E_ip[i]) @ phi[p]
        start += k
    return phi


def twists_inverse_joint(parents, E_ij, E_ip, S, qdot):
    return _twists(parents, E_ij, E_ip, S, qdot, joint=lambda E: _adj(_inv_pose(E)))


def twists_inverse_parent(parents, E_ij, E_ip, S, qdot):
    return _twists(parents, E_ij, E_ip, S, qdot, parent=lambda E: _adj(_inv_pose(E)))


def twists_no_parent(parents, E_ij, E_ip, S, qdot):
    return _twists(parents, E_ij, E_ip, S, qdot, with_parent=False)


def twists_parent_as_is(parents, E_ij, E_ip, S, qdot):
    return _twists(parents, E_ij, E_ip, S, qdot, parent=lambda E: np.eye(6))


def twists_flat(parents, E_ij, E_ip, S, qdot):
    return _twists(parents, E_ij, E_ip, S, qdot).ravel()  # (6n,) for (n, 6)


def _jacobian(parents, E_ij, E_ip, S, joint=_adj, parent=_adj, with_parent=True, reverse=False):
    n, nq = len(parents), sum(s.shape[1] for s in S)
    J = np.zeros((n, 6, nq))
    end = nq
    start = 0
    for i, p in enumerate(parents):
        k = S[i].shape[1]
        cols = slice(end - k, end) if reverse else slice(start, start + k)
        J[i][:, cols] = joint(E_ij[i]) @ S[i]
        if p >= 0 and with_parent:
            J[i] += parent(E_ip[i]) @ J[p]
        start, end = start + k, end - k
    return J.reshape(6 * n, nq)


def jacobian_inverse_joint(parents, E_ij, E_ip, S):
    return _jacobian(parents, E_ij, E_ip, S, joint=lambda E: _adj(_inv_pose(E)))


def jacobian_inverse_parent(parents, E_ij, E_ip, S):
    return _jacobian(parents, E_ij, E_ip, S, parent=lambda E: _adj(_inv_pose(E)))


def jacobian_adjoint_transposed(parents, E_ij, E_ip, S):
    return _jacobian(parents, E_ij, E_ip, S, joint=lambda E: _adj(E).T, parent=lambda E: _adj(E).T)


def jacobian_no_parent(parents, E_ij, E_ip, S):
    return _jacobian(parents, E_ij, E_ip, S, with_parent=False)


def jacobian_reversed(parents, E_ij, E_ip, S):
    return _jacobian(parents, E_ij, E_ip, S, reverse=True)


def jacobian_blocks(parents, E_ij, E_ip, S):
    J = _jacobian(parents, E_ij, E_ip, S)
    return J.reshape(len(parents), 6, -1)


JACOBIAN_MUTANTS = {
    "twists_inverse_joint": ("body_twists", twists_inverse_joint,
                             "the joint's twist S_i qdot_i is carried with"),
    "twists_inverse_parent": ("body_twists", twists_inverse_parent,
                              "the parent's twist is carried with Ad(E_p_i)"),
    "twists_no_parent": ("body_twists", twists_no_parent, "the parent's twist is missing"),
    "twists_parent_as_is": ("body_twists", twists_parent_as_is,
                            "the parent's twist is added without Ad(E_i_p)"),
    "twists_flat": ("body_twists", twists_flat,
                    "returned an array of shape (18,); expected shape (3, 6). It has the right number"),
    "jacobian_inverse_joint": ("jacobian", jacobian_inverse_joint, "the joint's columns use Ad(E_j_i)"),
    "jacobian_inverse_parent": ("jacobian", jacobian_inverse_parent,
                                "the parent's columns are carried with Ad(E_p_i)"),
    "jacobian_adjoint_transposed": ("jacobian", jacobian_adjoint_transposed, "the transpose of the adjoint"),
    "jacobian_no_parent": ("jacobian", jacobian_no_parent, "the parent's columns are missing"),
    "jacobian_reversed": ("jacobian", jacobian_reversed, "the columns are in the wrong order"),
    "jacobian_blocks": ("jacobian", jacobian_blocks, "It has the right entries in blocks"),
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


# --- spatial_inertia, composite_spatial_inertia (05_spatial_inertia) ------------------------------


def _spatial(mass, com, inertia, parallel=-1.0, coupling=1.0):
    C = brac(com)
    return np.block([[inertia + parallel * mass * C @ C, coupling * mass * C],
                     [-coupling * mass * C, mass * np.eye(3)]])


def spatial_no_parallel_axis(mass, com, inertia):
    return _spatial(mass, com, inertia, parallel=0.0)


def spatial_parallel_sign(mass, com, inertia):
    return _spatial(mass, com, inertia, parallel=1.0)


def spatial_coupling_signs(mass, com, inertia):
    return _spatial(mass, com, inertia, coupling=-1.0)


def spatial_linear_first(mass, com, inertia):
    M = _spatial(mass, com, inertia)
    return np.block([[M[3:, 3:], M[3:, :3]], [M[:3, 3:], M[:3, :3]]])  # (nu, omega) order


def _adjoint_of(E):
    R, p = E[:3, :3], E[:3, 3]
    return np.block([[R, Z], [brac(p) @ R, R]])


def composite_wrong_frame(inertias, frames):
    return sum(_adjoint_of(E).T @ M @ _adjoint_of(E) for M, E in zip(inertias, frames, strict=True))


def composite_not_moved(inertias, frames):
    return np.sum(inertias, axis=0)


def composite_ad_m_adt(inertias, frames):
    return sum(_adjoint_of(_inv_pose(E)) @ M @ _adjoint_of(_inv_pose(E)).T
               for M, E in zip(inertias, frames, strict=True))


SPATIAL_INERTIA_MUTANTS = {
    "spatial_no_parallel_axis": ("spatial_inertia", spatial_no_parallel_axis,
                                 "the parallel-axis term is missing"),
    "spatial_parallel_sign": ("spatial_inertia", spatial_parallel_sign,
                              "the parallel-axis term has the wrong sign"),
    "spatial_coupling_signs": ("spatial_inertia", spatial_coupling_signs,
                               "the coupling blocks have their signs exchanged"),
    "spatial_linear_first": ("spatial_inertia", spatial_linear_first, "omega and nu are swapped"),
    "composite_wrong_frame": ("composite_spatial_inertia", composite_wrong_frame,
                              "the adjoint of the wrong frame"),
    "composite_not_moved": ("composite_spatial_inertia", composite_not_moved,
                            "the parts are summed without being moved to c"),
    "composite_ad_m_adt": ("composite_spatial_inertia", composite_ad_m_adt, "it is Ad M Ad^T"),
}


# --- jacobian_transpose_product, mass_matrix_product (05_jacobian_products) -------------------------


def _starts(S):
    return np.concatenate([[0], np.cumsum([s.shape[1] for s in S])])


def _backward(parents, E_ij, E_ip, S, y, order=None, joint=_adj, parent=lambda E: _adj(E).T, hand_on=True,
              reverse_entries=False):
    w = np.array(y, dtype=float)
    starts = _starts(S)
    out = np.zeros(starts[-1])
    blocks = []
    for i in order if order is not None else range(len(parents) - 1, -1, -1):
        blocks.append((i, (joint(E_ij[i]) @ S[i]).T @ w[i]))
        if parents[i] >= 0 and hand_on:
            w[parents[i]] += parent(E_ip[i]) @ w[i]
    if reverse_entries:
        return np.concatenate([b for _, b in sorted(blocks, reverse=True)])
    for i, b in blocks:
        out[starts[i]:starts[i + 1]] = b
    return out


def transpose_forward_loop(parents, E_ij, E_ip, S, y):
    return _backward(parents, E_ij, E_ip, S, y, order=range(len(parents)))  # parents before children


def transpose_no_hand_on(parents, E_ij, E_ip, S, y):
    return _backward(parents, E_ij, E_ip, S, y, hand_on=False)


def transpose_not_transposed(parents, E_ij, E_ip, S, y):
    return _backward(parents, E_ij, E_ip, S, y, joint=lambda E: _adj(E).T, parent=_adj)


def transpose_inverse_joint(parents, E_ij, E_ip, S, y):
    return _backward(parents, E_ij, E_ip, S, y, joint=lambda E: _adj(_inv_pose(E)))


def transpose_reversed(parents, E_ij, E_ip, S, y):
    return _backward(parents, E_ij, E_ip, S, y, reverse_entries=True)


def _twists_of(parents, E_ij, E_ip, S, x, with_parent=True):
    starts = _starts(S)
    phi = np.zeros((len(parents), 6))
    for i, p in enumerate(parents):
        phi[i] = _adj(E_ij[i]) @ S[i] @ x[starts[i]:starts[i + 1]]
        if p >= 0 and with_parent:
            phi[i] += _adj(E_ip[i]) @ phi[p]
    return phi


def product_no_inertia(parents, E_ij, E_ip, S, inertias, x):
    return _backward(parents, E_ij, E_ip, S, _twists_of(parents, E_ij, E_ip, S, x))


def product_forward_no_parent(parents, E_ij, E_ip, S, inertias, x):
    phi = _twists_of(parents, E_ij, E_ip, S, x, with_parent=False)
    return _backward(parents, E_ij, E_ip, S, np.einsum("nij,nj->ni", inertias, phi))


def product_backward_no_hand_on(parents, E_ij, E_ip, S, inertias, x):
    phi = _twists_of(parents, E_ij, E_ip, S, x)
    return _backward(parents, E_ij, E_ip, S, np.einsum("nij,nj->ni", inertias, phi), hand_on=False)


JACOBIAN_PRODUCT_MUTANTS = {
    "transpose_forward_loop": ("jacobian_transpose_product", transpose_forward_loop,
                               "a child's wrench is not handed to its parent"),
    "transpose_no_hand_on": ("jacobian_transpose_product", transpose_no_hand_on,
                             "a child's wrench is not handed to its parent"),
    "transpose_not_transposed": ("jacobian_transpose_product", transpose_not_transposed,
                                 "it carries wrenches with Ad where Ad^T belongs"),
    "transpose_inverse_joint": ("jacobian_transpose_product", transpose_inverse_joint,
                                "the joint's columns use Ad(E_j_i)"),
    "transpose_reversed": ("jacobian_transpose_product", transpose_reversed,
                           "the joints' entries are in the wrong order"),
    "product_no_inertia": ("mass_matrix_product", product_no_inertia, "the inertias are left out"),
    "product_forward_no_parent": ("mass_matrix_product", product_forward_no_parent,
                                  "in the forward sweep, the parent's twist is missing"),
    "product_backward_no_hand_on": ("mass_matrix_product", product_backward_no_hand_on,
                                    "in the backward sweep, a child's wrench is not handed to its parent"),
}


# --- inv_se3, twist_bracket, point_velocity (06_poses_and_points) ------------------------------------


def _with(R, p):
    E = np.eye(4)
    E[:3, :3], E[:3, 3] = R, p
    return E


def inverse_minus_p(E):
    return _with(E[:3, :3].T, -E[:3, 3])


def inverse_R_p(E):
    R = E[:3, :3]
    return _with(R.T, -R @ E[:3, 3])


def inverse_sign(E):
    R = E[:3, :3]
    return _with(R.T, R.T @ E[:3, 3])


def inverse_transposed(E):
    return E.T


def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def bracket_skew_wrong_way(phi):
    out = np.zeros((4, 4))
    out[:3, :3], out[:3, 3] = _skew(phi[:3]).T, phi[3:]
    return out


def bracket_nu_in_row(phi):
    out = np.zeros((4, 4))
    out[:3, :3], out[3, :3] = _skew(phi[:3]), phi[3:]
    return out


def bracket_swapped(phi):
    out = np.zeros((4, 4))
    out[:3, :3], out[:3, 3] = _skew(phi[3:]), phi[:3]
    return out


def bracket_pose_corner(phi):
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = _skew(phi[:3]), phi[3:]
    return out


def velocity_in_body(E, phi, r):
    return np.cross(phi[:3], r) + phi[3:]


def velocity_cross_reversed(E, phi, r):
    return E[:3, :3] @ (np.cross(r, phi[:3]) + phi[3:])


def velocity_no_nu(E, phi, r):
    return E[:3, :3] @ np.cross(phi[:3], r)


def velocity_plus_position(E, phi, r):
    return E[:3, :3] @ (np.cross(phi[:3], r) + phi[3:]) + E[:3, 3]


def velocity_R_transposed(E, phi, r):
    return E[:3, :3].T @ (np.cross(phi[:3], r) + phi[3:])  # no named mistake: against the motion


POSES_MUTANTS = {
    "inverse_minus_p": ("inv_se3", inverse_minus_p, "the translation is -p"),
    "inverse_R_p": ("inv_se3", inverse_R_p, "the translation is -R p"),
    "inverse_sign": ("inv_se3", inverse_sign, "the translation has the wrong sign"),
    "inverse_transposed": ("inv_se3", inverse_transposed, "its inverse is not its transpose"),
    "bracket_skew_wrong_way": ("twist_bracket", bracket_skew_wrong_way, "[omega] turns the wrong way"),
    "bracket_nu_in_row": ("twist_bracket", bracket_nu_in_row, "nu is in the bottom row"),
    "bracket_swapped": ("twist_bracket", bracket_swapped, "omega and nu are swapped"),
    "bracket_pose_corner": ("twist_bracket", bracket_pose_corner, "the bottom-right entry is 1"),
    "velocity_in_body": ("point_velocity", velocity_in_body, "it is in body coordinates"),
    "velocity_cross_reversed": ("point_velocity", velocity_cross_reversed,
                                "the cross product is the wrong way round"),
    "velocity_no_nu": ("point_velocity", velocity_no_nu, "it lacks the body's own velocity R nu"),
    "velocity_plus_position": ("point_velocity", velocity_plus_position, "the position p is added"),
    "velocity_R_transposed": ("point_velocity", velocity_R_transposed,
                              "differs from the central difference of the point's world position"),
}
