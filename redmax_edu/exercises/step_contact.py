"""Grader of the assignment "A time step, a contact's rows and projected Gauss-Seidel" (§1.8, §1.11-1.13).

The students write, with numpy and a few building blocks of the library:

* ``symplectic_euler_step(M, E, phi, h, g)``: one step of symplectic Euler of a free rigid
  body at pose ``E`` with body twist ``phi``, spatial inertia ``M = diag(I1, I2, I3, m, m, m)``
  (its frame at the centre of mass on the principal axes) under gravity ``g`` (world): the new
  twist from ``M phi+ = M phi + h (ad(phi)^T M phi + f(E))`` with the weight ``f(E) = (0, R^T m g)``
  (Eq. 1.28, 1.34), then the new pose ``E+ = E exp(h [phi+])`` (Eq. 1.29), returned together,
  ``np.concatenate([phi+, E+.ravel()])`` (22,);
* ``contact_rows(E, x, n)``: the rows of a ground contact at the body point ``x`` (body
  coordinates) of a body at pose ``E``, ground normal ``n`` (world): the normal row
  ``n^T R Gamma(x)`` (Eq. 1.90-1.91) over the four friction-pyramid rows ``t_k^T R Gamma(x)``
  (§1.13), shape (5, 6);
* ``projected_gauss_seidel(M, q, lower, upper, sweeps)``: ``sweeps`` sweeps of projected
  Gauss-Seidel from ``z = 0`` on the box LCP ``w = M z + q`` (the ArtiSynth notes §0.15), each row
  updated with the latest values of the others and clamped to ``[lower_i, upper_i]``.

``brac``, ``ad``, ``exp_se3`` and ``pyramid_directions`` are allowed. The checks compare with
the library: :func:`redmax_edu.maximal.simulate.step` on a one-body
:class:`~redmax_edu.maximal.system.System`, the rows of
:class:`~redmax_edu.maximal.constraints.GroundContact` and
:func:`redmax_edu.maximal.solve.projected_gauss_seidel` at the same number of sweeps; the contact
row is also compared with a central difference of the point's height, and many sweeps with the
LCP's conditions. They name the usual slips: the Coriolis wrench left out, with the wrong sign
or not transposed, the weight in world axes, ``h`` left out, the pose moved with the old twist
(explicit Euler) or by an exponential on the wrong side; R left out or transposed, Gamma's
blocks swapped or ``[x]`` with the wrong sign; Jacobi's old values, no clamp, the clamp on the
wrong side, the diagonal not divided, the sign of ``q``.

Examples
--------
>>> from redmax_edu.maximal import solve
>>> def projected_gauss_seidel(M, q, lower, upper, sweeps):
...     return solve.projected_gauss_seidel(M, q, lower, upper, iterations=sweeps, tol=0.0)[0]
>>> print(check("projected_gauss_seidel", projected_gauss_seidel).results[0].message)
projected_gauss_seidel calls maximal.solve.projected_gauss_seidel, which this assignment does not
let you call (see its list at the top of the notebook): write it yourself.

Taught in book/01_maximal/08_integration, 11_contact and 12_solvers.
"""

import numpy as np

from .. import lie
from ..checks import numerical_derivative
from ..inertia import cuboid
from ..maximal import solve
from ..maximal.body import RigidBody
from ..maximal.constraints import GroundContact, pyramid_directions
from ..maximal.forces import coriolis_terms, gravity_terms
from ..maximal.simulate import step
from ..maximal.system import System
from ..units import GRAVITY
from .calls import call, describe
from .compare import judge_cases, max_error
from .core import Assignment, Verdict, entry_points
from .inputs import pose_label, random_pose

ASSIGNMENT = Assignment(
    "07_step_and_contact", "A time step, a contact's rows and projected Gauss-Seidel",
    allowed=[lie.brac, lie.ad, lie.exp_se3, pyramid_directions],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- symplectic_euler_step (Eq. 1.28-1.29) -------------------------------------------------------


def _body(rng):
    """The spatial inertia ``diag(I1, I2, I3, m, m, m)`` of a random box (Eq. 1.24)."""
    mass, sides = float(rng.uniform(0.5, 3.0)), rng.uniform(0.2, 1.0, 3)
    return cuboid(sides, mass=mass).spatial_inertia()


def step_reference(M, E, phi, h, g):
    """``(phi+, E+.ravel())`` by :func:`~redmax_edu.maximal.simulate.step` on a one-body system."""
    body = RigidBody("body", M[3, 3], np.diag(M)[:3])
    E1, phi1, _ = step(System([body], gravity=g), E[None], phi[None], h)
    return np.concatenate([phi1[0], E1[0].ravel()])


def _moved(E, new_phi, h, left=False, along=None):
    """``(phi+, E+.ravel())`` with E+ = E exp(h [phi+]), or exp(h [phi+]) E (``left``).

    ``along``: the twist the pose moves with, when it is not phi+ (a mistake).
    """
    move = lie.exp_se3(h * (new_phi if along is None else along))
    return np.concatenate([new_phi, (move @ E if left else E @ move).ravel()])


def step_mistakes(M, E, phi, h, g):
    """The usual wrong steps, with what went wrong."""
    right = step_reference(M, E, phi, h, g)
    new_phi = right[:6]
    coriolis = coriolis_terms(M[None], phi[None], derivatives=False)[0][0]
    weight = gravity_terms(E[None, :3, :3], (M[3, 3] * g)[None])[0][0]

    def twist_from(wrench, scale=h):
        return phi + scale * np.linalg.solve(M, wrench)

    world_weight = np.r_[np.zeros(3), M[3, 3] * g]
    return [
        ("the pose moves with the old twist, E exp(h [phi]): that is explicit Euler. Symplectic Euler "
         "moves it with the new twist, E+ = E exp(h [phi+]) (Eq. (1.29)).",
         lambda: _moved(E, new_phi, h, along=phi)),
        ("the exponential is on the wrong side: exp(h [phi+]) E moves the body along a twist in world "
         "coordinates; phi is a body twist, so E+ = E exp(h [phi+]) (Eq. (1.29)).",
         lambda: _moved(E, new_phi, h, left=True)),
        ("the pose moves by exp([phi+]): phi+ is a rate, and one step moves by h phi+, E+ = E exp(h "
         "[phi+]) (Eq. (1.29)).", lambda: _moved(E, new_phi, 1.0)),
        ("the Coriolis wrench ad(phi)^T M phi is missing from Eq. (1.28): in body coordinates the "
         "momentum of a spinning body turns even without forces.",
         lambda: _moved(E, twist_from(weight), h)),
        ("the Coriolis wrench has the wrong sign: it is +ad(phi)^T M phi, which at the centre of mass is "
         "-(omega x I omega, omega x m nu) (Eq. (1.21), (1.23)).",
         lambda: _moved(E, twist_from(weight - coriolis), h)),
        ("it uses ad(phi) M phi: the Coriolis wrench is ad(phi)^T M phi, with the transpose (Eq. (1.21)).",
         lambda: _moved(E, twist_from(weight + lie.ad(phi) @ M @ phi), h)),
        ("the wrench is not multiplied by the step: the impulse over one step is h (ad(phi)^T M phi + "
         "f) (Eq. (1.28)).", lambda: _moved(E, twist_from(weight + coriolis, 1.0), h)),
        ("the weight is taken in world axes, (0, m g): the body's equations are in body coordinates, "
         "where the weight is (0, R^T m g) (Eq. (1.34)).",
         lambda: _moved(E, twist_from(world_weight + coriolis), h)),
        ("the weight lacks the mass: the wrench of gravity is (0, R^T m g) (Eq. (1.34)); divided by the "
         "mass in M^-1, it gives the acceleration g.",
         lambda: _moved(E, twist_from(weight / M[3, 3] + coriolis), h)),
    ]


STEP_PARTS = {"the new twist's angular part (entries 0-2)": np.s_[:3],
              "the new twist's linear part (entries 3-5)": np.s_[3:6],
              "the new pose E+ (entries 6-21)": np.s_[6:]}
STEP_SHAPE = (22,)


def _step_label(M, E, phi, h, g):
    gravity = "no gravity" if not np.any(g) else f"g = {describe(g)}"
    return (f"a box of mass {M[3, 3]:.3g} and moments {describe(np.diag(M)[:3])}, {pose_label(E)}, "
            f"phi = {describe(phi)}, h = {h:g}, {gravity}")


def _step_cases(fn, cases, **kwargs):
    return judge_cases(fn, [(args, _step_label(*args)) for args in cases], name="symplectic_euler_step",
                       shape=STEP_SHAPE, reference=step_reference, mistakes=step_mistakes,
                       what="(phi+, E+.ravel())", parts=STEP_PARTS,
                       stacked="the new twist and the new pose together, "
                               "np.concatenate([phi_new, E_new.ravel()])",
                       **kwargs)


NO_GRAVITY = np.zeros(3)


def _twist(rng, spin=True):
    phi = rng.standard_normal(6)
    if not spin:
        phi[:3] = 0.0
    return phi


@check_of("symplectic_euler_step", "coasting", "a body moving without spin or gravity", 1)
def step_coasting(fn, rng):
    cases = [(_body(rng), random_pose(rng), _twist(rng, spin=False), h, NO_GRAVITY) for h in (0.01, 0.05)]
    return _step_cases(fn, cases)


@check_of("symplectic_euler_step", "falling", "a body falling from rest", 1)
def step_falling(fn, rng):
    cases = [(_body(rng), random_pose(rng), np.zeros(6), h, GRAVITY.copy()) for h in (0.01, 0.05)]
    return _step_cases(fn, cases, hint="(From rest only the weight acts: phi+ = h (0, R^T g), and E+ = E "
                       "exp(h [phi+]).)")


@check_of("symplectic_euler_step", "tumbling", "a body tumbling without gravity", 2)
def step_tumbling(fn, rng):
    cases = [(_body(rng), random_pose(rng), 2 * _twist(rng), h, NO_GRAVITY) for h in (0.01, 0.02, 0.05)]
    return _step_cases(fn, cases)


@check_of("symplectic_euler_step", "general", "a body spinning and falling", 2)
def step_general(fn, rng):
    cases = [(_body(rng), random_pose(rng), _twist(rng), h, GRAVITY.copy()) for h in (0.01, 0.02, 0.05)]
    return _step_cases(fn, cases)


@check_of("symplectic_euler_step", "rigid", "the new pose is a rigid transform", 1)
def step_rigid(fn, rng):
    M, E, phi, h, g = _body(rng), random_pose(rng), 5 * _twist(rng), 0.05, GRAVITY.copy()
    label = _step_label(M, E, phi, h, g)
    got = call(fn, M, E, phi, h, g, name="symplectic_euler_step", shape=STEP_SHAPE, label=label)
    E1 = got[6:].reshape(4, 4)
    R = E1[:3, :3]
    drift = max(max_error(R.T @ R, np.eye(3)), max_error(E1[3], [0.0, 0.0, 0.0, 1.0]))
    if drift <= 1e-9 and np.linalg.det(R) > 0:
        return None
    return Verdict(f"symplectic_euler_step({label}): the new pose is not a rigid transform (R^T R or "
                   f"the bottom row is off by {drift:.2g}): move the pose with the exponential, E exp(h "
                   "[phi+]) (Eq. (1.29)); E + h E [phi+] leaves SE(3).")


# --- contact_rows (Eq. 1.90-1.91, §1.13) ----------------------------------------------------------


def rows_reference(E, x, n):
    """The normal row over the four pyramid rows, by :meth:`GroundContact.rows` (the point on the ground)."""
    on_ground = E[:3, :3] @ x + E[:3, 3]
    N, T, _ = GroundContact(0, x[None], plane_point=on_ground, plane_normal=n).rows(E[None])
    return np.vstack([N, T])


def _turned(E, R):
    E = E.copy()
    E[:3, :3] = R
    return E


def rows_mistakes(E, x, n):
    """The usual wrong contact rows, with what went wrong."""
    R = E[:3, :3]
    right = rows_reference(E, x, n)
    flipped_normal = right.copy()
    flipped_normal[0] *= -1
    return [
        ("the rotation R is missing: Gamma(x) phi is the point's velocity in body coordinates and n is "
         "in world coordinates, so the rows are n^T R Gamma(x) (Eq. (1.90)-(1.91)).",
         lambda: rows_reference(_turned(E, np.eye(3)), x, n)),
        ("it uses R^T where R belongs: R turns the body velocity Gamma(x) phi into world coordinates, "
         "where n is (Eq. (1.90)).", lambda: rows_reference(_turned(E, R.T), x, n)),
        ("Gamma's blocks are swapped: Gamma(x) = ([x]^T, I), the angular block first (a twist is "
         "(omega, nu); Eq. (1.12)).", lambda: right[:, [3, 4, 5, 0, 1, 2]]),
        ("the sign of [x] is flipped: the point moves with omega x x + nu = [x]^T omega + nu, so Gamma(x) = "
         "([x]^T, I) = (-[x], I) (Eq. (1.12)).", lambda: rows_reference(E, -x, n)),
        ("the normal row has the wrong sign: n points out of the ground, and the row asks n^T xdot >= 0 "
         "(Eq. (1.91)).", flipped_normal),
    ]


ROWS_PARTS = {"the normal row (row 0)": np.s_[0], "the four pyramid rows (rows 1-4)": np.s_[1:],
              "the angular columns (0-2)": np.s_[:, :3], "the linear columns (3-5)": np.s_[:, 3:]}


def _rows_label(E, x, n):
    return f"{pose_label(E)}, x = {describe(x)}, n = {describe(n)}"


def _rows_cases(fn, cases, **kwargs):
    return judge_cases(fn, [(args, _rows_label(*args)) for args in cases], name="contact_rows", shape=(5, 6),
                       reference=rows_reference, mistakes=rows_mistakes, what="the contact rows",
                       parts=ROWS_PARTS, **kwargs)


def _normal(rng):
    n = rng.standard_normal(3) + [0.0, 0.0, 2.0]  # a tilted ground, mostly facing up
    return n / np.linalg.norm(n)


UP = np.array([0.0, 0.0, 1.0])


@check_of("contact_rows", "origin", "a contact at the body's origin", 1)
def rows_origin(fn, rng):
    return _rows_cases(fn, [(random_pose(rng), np.zeros(3), _normal(rng)) for _ in range(2)])


@check_of("contact_rows", "unturned", "a body at the world origin on level ground", 1)
def rows_unturned(fn, rng):
    return _rows_cases(fn, [(np.eye(4), rng.standard_normal(3), UP) for _ in range(2)])


@check_of("contact_rows", "general", "turned bodies on tilted ground", 2)
def rows_general(fn, rng):
    cases = [(random_pose(rng), rng.standard_normal(3), _normal(rng)) for _ in range(4)]
    E, x, n = cases[0]
    return _rows_cases(fn, cases, zero_case=((_turned(E, np.eye(3)), x, n), "the same, unturned (R = I)"))


@check_of("contact_rows", "speed", "the normal row gives the point's normal speed", 1)
def rows_speed(fn, rng):
    E, x, n, phi = random_pose(rng), rng.standard_normal(3), _normal(rng), rng.standard_normal(6)
    label = _rows_label(E, x, n)

    def height(t):  # the point's height above a plane of normal n through the world origin
        return n @ (E @ lie.exp_se3(t[0] * phi) @ np.append(x, 1.0))[:3]

    numeric = float(numerical_derivative(height, [0.0])[0])
    rows = call(fn, E, x, n, name="contact_rows", shape=(5, 6), label=label)
    got = float(rows[0] @ phi)
    if abs(got - numeric) <= 1e-6 * max(1.0, abs(numeric)):
        return None
    return Verdict(f"contact_rows({label}): for phi = {describe(phi)} the normal row gives the speed "
                   f"{got:.4g}, but the point's height n^T x rises at {numeric:.4g} (a central difference "
                   "along E exp(t [phi])): the normal row is the rate of the point's height, n^T R Gamma(x).")


# --- projected_gauss_seidel (ArtiSynth notes §0.15) ---------------------------------------------


def pgs_reference(M, q, lower, upper, sweeps):
    """``sweeps`` sweeps of :func:`~redmax_edu.maximal.solve.projected_gauss_seidel` from z = 0."""
    return solve.projected_gauss_seidel(M, q, lower, upper, iterations=sweeps, tol=0.0)[0]


def _unusual_sweeps(M, q, lower, upper, sweeps, *, jacobi=False, divide=True):
    """The wrong sweeps the library cannot make: Jacobi's (old values), or without the division."""
    z = np.zeros(len(q))
    scale = np.diag(M) if divide else np.ones(len(q))
    for _ in range(sweeps):
        source = z.copy() if jacobi else z
        for i in range(len(q)):
            z[i] = min(max(z[i] - (M[i] @ source + q[i]) / scale[i], lower[i]), upper[i])
    return z


def pgs_mistakes(M, q, lower, upper, sweeps):
    """The usual wrong sweeps, with what went wrong."""
    free = np.full(len(q), np.inf)
    return [
        ("each row uses the values of the previous sweep: that is Jacobi's method. Gauss-Seidel uses "
         "the latest values, the entries already updated in this sweep.",
         lambda: _unusual_sweeps(M, q, lower, upper, sweeps, jacobi=True)),
        ("the update is not clamped: projected Gauss-Seidel clamps each new z_i to [lower_i, upper_i] "
         "(z_i >= 0 for the LCP) before the next row.", lambda: pgs_reference(M, q, -free, free, sweeps)),
        ("the clamp keeps the wrong side: z_i must stay in [lower_i, upper_i] (z >= 0 for the LCP); this "
         "z is clamped to the mirrored range [-upper_i, -lower_i].",
         lambda: pgs_reference(M, q, -upper, -lower, sweeps)),
        ("the residual is not divided by the diagonal: row i is solved for z_i by z_i - (M_i z + q_i) / "
         "M_ii.", lambda: _unusual_sweeps(M, q, lower, upper, sweeps, divide=False)),
        ("the sign of q is flipped: w = M z + q, so row i's residual is M_i z + q_i (it solves M z = -q "
         "where nothing is clamped).", lambda: pgs_reference(M, -q, lower, upper, sweeps)),
        ("it stops after one sweep: run `sweeps` sweeps over the rows.",
         lambda: pgs_reference(M, q, lower, upper, 1)),
    ]


def _lcp(rng, k, diagonal=False):
    """A random symmetric positive definite M (k, k) and q (k,) with some rows pushing, some not."""
    if diagonal:
        return np.diag(rng.uniform(0.5, 3.0, k)), rng.standard_normal(k)
    B = rng.standard_normal((k, k))
    return B @ B.T / k + np.eye(k), rng.standard_normal(k)


def _pgs_label(M, q, lower, upper, sweeps):
    kind = "a diagonal" if not np.any(M - np.diag(np.diag(M))) else "a symmetric positive definite"
    if np.all(lower == 0) and np.all(np.isinf(upper)):
        bounds = "z >= 0"
    elif np.all(np.isinf(lower)) and np.all(np.isinf(upper)):
        bounds = "no bounds"
    else:
        bounds = f"lower = {describe(lower)}, upper = {describe(upper)}"
    return f"{kind} {len(q)} x {len(q)} M, q = {describe(q)}, {bounds}, {sweeps} sweep{'s' * (sweeps > 1)}"


def _pgs_cases(fn, cases, **kwargs):
    k = len(cases[0][1])
    return judge_cases(fn, [(args, _pgs_label(*args)) for args in cases], name="projected_gauss_seidel",
                       shape=(k,), reference=pgs_reference, mistakes=pgs_mistakes, what="z", **kwargs)


def _standard(k):
    return np.zeros(k), np.full(k, np.inf)


@check_of("projected_gauss_seidel", "diagonal", "one sweep with a diagonal M", 1)
def pgs_diagonal(fn, rng):
    M, q = _lcp(rng, 4, diagonal=True)
    return _pgs_cases(fn, [(M, q, *_standard(4), 1)],
                      hint="With M diagonal the rows are independent: z_i = max(0, -q_i / M_ii).")


@check_of("projected_gauss_seidel", "lcp", "a few sweeps of the LCP (z >= 0)", 2)
def pgs_lcp(fn, rng):
    cases = [(*_lcp(rng, 4), *_standard(4), sweeps) for sweeps in (2, 3, 5)]
    return _pgs_cases(fn, cases)


@check_of("projected_gauss_seidel", "box", "a few sweeps with box bounds", 2)
def pgs_box(fn, rng):
    cases = []
    for sweeps in (2, 4):
        M, q = _lcp(rng, 4)
        width = rng.uniform(0.05, 0.3, 4)
        lower = np.where(rng.random(4) < 0.5, -width, 0.0)  # friction-like boxes and one-sided rows
        cases.append((M, q, lower, width, sweeps))
    return _pgs_cases(fn, cases)


@check_of("projected_gauss_seidel", "unbounded", "without bounds it is Gauss-Seidel", 1)
def pgs_unbounded(fn, rng):
    M, q = _lcp(rng, 4)
    free = np.full(4, np.inf)
    return _pgs_cases(fn, [(M, q, -free, free, 3)])


@check_of("projected_gauss_seidel", "solves", "many sweeps solve the LCP", 1)
def pgs_solves(fn, rng):
    M, q = _lcp(rng, 5)
    lower, upper = _standard(5)
    label = _pgs_label(M, q, lower, upper, 200)
    z = call(fn, M, q, lower, upper, 200, name="projected_gauss_seidel", shape=(5,), label=label)
    w = M @ z + q
    w[np.abs(w) < 1e-12] = 0.0  # round-off of a solved row, not worth printing
    worst = max(-z.min(), -w.min(), float(np.abs(z * w).max()))
    if worst <= 1e-8:
        return None
    return Verdict(f"projected_gauss_seidel({label}) does not solve the LCP: z = {describe(z)} and w = M z "
                   f"+ q = {describe(w)}; after many sweeps z >= 0, w >= 0 and z_i w_i = 0 for every row "
                   f"(off by {worst:.2g}).")
