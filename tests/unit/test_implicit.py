"""The implicit integrators of §3.4 (redmax_edu.implicit): the positions-only residual of every
solve and its derivatives, Newton's method with a line search, constraints, charts, bad input.

Tolerances. The residual's Jacobian ``H`` and the stencil blocks are checked against central
differences at the best of h = 1e-4, 1e-5, 1e-6 on the five random trees that hold every joint
type, with joint springs and dampers, body damping and one force of every class: they agree to
better than 1e-8 (CENTRAL_TOL, that of the §3.3 derivatives they are built from). A wrong block
misses by orders of magnitude (the mutation tests): dropping ``dM/dq`` from ``H`` or the ``D``
term from a block, or a wrong coefficient, gives relative errors of 1e-3 to 1.
"""

import numpy as np
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.implicit import ALPHA, SCHEMES, Stencil, scheme_stencils, step_residual

from .random_trees import joint_group_trees, with_every_force

CENTRAL_TOL = 1e-8
STEPS = [1e-4, 1e-5, 1e-6]
H_STEP = 0.05          # large enough that the c h D and c h^2 K terms weigh in every block


def _trees(seed, groups=10):
    rng = np.random.default_rng(seed)
    return [(with_every_force(rng, model), q, qdot) for model, q, qdot in joint_group_trees(rng, groups)]


#: Every joint type over 10 trees, with every force.
TREES = _trees(3)
#: The tree the stencil blocks are checked on (the smallest: the blocks are made of M and D, whose
#: derivatives on every joint type test_derivatives checks; what varies here is the stencil).
SMALL = int(np.argmin([model.nq for model, _, _ in TREES]))


def _history(rng, q, stencil):
    """Random earlier positions near q for every state of the stencil."""
    return {j: q + 0.05 * rng.standard_normal(len(q)) for j in stencil.history}


def _setup(g, stencil, seed=0):
    model, q, qdot = TREES[g]
    rng = np.random.default_rng(seed)
    positions = _history(rng, q, stencil)
    q_new = q + 0.05 * rng.standard_normal(len(q))
    return model, q_new, positions, qdot.copy(), rng.standard_normal(len(q))


def _check(f, x, analytic):
    check = check_derivative(f, x, analytic, rtol=CENTRAL_TOL, steps=STEPS)
    return check


def _residual_in(model, stencil, q_new, positions, v, tau, which):
    """g as a function of one argument: "q_new", a state index j, "v" or "tau"."""
    def g(x):
        args = {"q_new": q_new, "positions": dict(positions), "v": v, "tau": tau}
        if which == "q_new":
            args["q_new"] = x
        elif which == "v":
            args["v"] = x
        elif which == "tau":
            args["tau"] = x
        else:
            args["positions"][which] = x
        return step_residual(model, stencil, args["q_new"], args["positions"], args["v"], args["tau"]).g
    return g


def _distinct_stencils():
    """One of every kind of solve: BDF1 first and steady, SDIRK2 both stages first and steady,
    BDF2's SDIRK2 start, its startup steps k = 1, 2, 3 and a steady step (Eq. 3.92, 3.103)."""
    out = []
    for scheme, picks in (("bdf1", (0, 1)), ("sdirk2", (0, 1, 2, 3)), ("bdf2", (0, 1, 2, 3, 4, 5))):
        stencils = scheme_stencils(scheme, H_STEP, 6)
        out += [pytest.param(stencils[k], id=f"{scheme}-{stencils[k].index}-{stencils[k].stage}")
                for k in picks]
    return out


# --- H and the blocks against central differences --------------------------------------------------
@pytest.mark.parametrize("g", range(len(TREES)), ids=lambda g: f"tree{g}")
def test_H_matches_central_differences_of_g_on_every_joint_type(g):
    scheme = SCHEMES[g % len(SCHEMES)]
    stencil = scheme_stencils(scheme, H_STEP, 4)[-1]
    model, q_new, positions, v, tau = _setup(g, stencil, seed=g)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "q_new"), q_new, r.H)
    assert check.ok, check.errors


@pytest.mark.parametrize("stencil", _distinct_stencils())
def test_every_stencil_block_matches_central_differences(stencil):
    model, q_new, positions, v, tau = _setup(SMALL, stencil, seed=stencil.index)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "q_new"), q_new, r.H)
    assert check.ok, ("H", check.errors)
    for j, block in r.dg_dq.items():
        check = _check(_residual_in(model, stencil, q_new, positions, v, tau, j), positions[j], block)
        assert check.ok, (j, check.errors)
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "v"), v, r.dg_dv)
    if stencil.uses_velocity:
        assert check.ok, ("v", check.errors)
    else:  # v does not enter: g does not change with it and the block is zero
        assert not np.any(r.dg_dv) and check.error == 0.0
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "tau"), tau, r.dg_dtau)
    assert check.ok, ("tau", check.errors)


# --- mutants: each check catches a wrong derivative ----------------------------------------------------
def test_H_without_the_dM_dq_term_is_caught():
    stencil = scheme_stencils("bdf2", H_STEP, 4)[-1]
    model, q_new, positions, v, tau = _setup(SMALL, stencil)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    wrong = r.M - stencil.c * stencil.h * stencil.b_new * r.D - stencil.c * stencil.h ** 2 * r.K
    check = _check(_residual_in(model, stencil, q_new, positions, v, tau, "q_new"), q_new, wrong)
    assert not check.ok and check.error > 1e3 * CENTRAL_TOL


@pytest.mark.parametrize("mutation", ["no D term", "wrong coefficient", "flipped sign"])
def test_a_wrong_block_is_caught(mutation):
    stencil = scheme_stencils("bdf2", H_STEP, 4)[-1]    # the startup step k = 2 (Eq. 3.102)
    model, q_new, positions, v, tau = _setup(SMALL, stencil)
    r = step_residual(model, stencil, q_new, positions, v, tau)
    j = max(stencil.b)                                  # q_k: both M and D enter
    right = r.dg_dq[j]
    wrong = {"no D term": -stencil.a[j] * r.M,
             "wrong coefficient": right - 0.1 * r.M,
             "flipped sign": -right}[mutation]
    f = _residual_in(model, stencil, q_new, positions, v, tau, j)
    assert _check(f, positions[j], right).ok
    check = _check(f, positions[j], wrong)
    assert not check.ok and check.error > 1e3 * CENTRAL_TOL


# --- the stencils are the writeup's equations -------------------------------------------------------------
def _g_coefficients(stencil):
    """The coefficients of the positions in ``M(...)`` as the writeup prints them (``-a_j``)."""
    return {j: -a for j, a in stencil.a.items()}


def test_the_stencils_reproduce_the_writeups_coefficients():
    """Eq. (3.91), (3.97), (3.99), (3.101), (3.102): the positions-only forms, with the SDIRK2
    velocity in the first two BDF2 steps. States: 0 = q0, 1 = q_alpha, 2 = q1, 3 = q2, ..."""
    A, h = ALPHA, 0.1
    bdf1 = scheme_stencils("bdf1", h, 3)
    assert _g_coefficients(bdf1[0]) == {0: -1.0} and bdf1[0].a_v == 1.0 and bdf1[0].b == {0: -1.0}
    assert _g_coefficients(bdf1[2]) == {2: -2.0, 1: 1.0} and bdf1[2].a_v == 0.0      # Eq. (3.91)
    s = scheme_stencils("bdf2", h, 6)
    final = s[1]                                                                      # Eq. (3.97)
    assert np.isclose(final.a[1], 2 * (1 - A) / A) and np.isclose(final.a_v, 2 * A - 1)
    assert np.isclose(final.b_new, 1 / A) and np.isclose(final.b[1], -(1 - A) / A ** 2)
    assert np.isclose(final.b[0], (1 / A - 2) / A)
    k1 = _g_coefficients(s[2])                                                        # Eq. (3.101)
    assert np.isclose(k1[2], -(8 / (9 * A) + 4 / 3)) and np.isclose(k1[1], -8 * (A - 1) / (9 * A ** 2))
    assert np.isclose(k1[0], (3 * A ** 2 + 16 * A - 8) / (9 * A ** 2)) and np.isclose(s[2].a_v, -2 / 9)
    k2 = _g_coefficients(s[3])                                                        # Eq. (3.102)
    assert np.isclose(k2[3], -8 / 3) and np.isclose(k2[2], 2 / (9 * A) + 19 / 9)
    assert np.isclose(k2[1], 2 * (A - 1) / (9 * A ** 2))
    assert np.isclose(k2[0], -(4 * A ** 2 + 4 * A - 2) / (9 * A ** 2)) and s[3].a_v == 0.0
    steady = _g_coefficients(s[-1])                                                   # Eq. (3.99)
    n = s[-1].index
    assert np.allclose([steady[n - 1], steady[n - 2], steady[n - 3], steady[n - 4]],
                       [-8 / 3, 22 / 9, -8 / 9, 1 / 9])
    assert s[-1].b == {n - 1: -2.0, n - 2: 0.5} and s[-1].b_new == 1.5 and np.isclose(s[-1].c, 4 / 9)


def test_the_blocks_are_the_writeups_eq_3_103():
    """dg/dq_j = -a_j M - c h b_j D against the typeset blocks of Eq. (3.98) and (3.103)."""
    A, h = ALPHA, 0.1
    M, D = np.diag([2.0, 3.0]), np.array([[-0.5, 0.1], [0.2, -0.7]])
    s = scheme_stencils("bdf2", h, 6)

    def block(stencil, j):
        from redmax_edu.implicit import StepResidual
        z = np.zeros(2)
        return StepResidual(stencil, z, z, z, M, M, D, M).dg_dq_j(j)

    # Eq. (3.98) prints (1 - alpha) / alpha h D; differentiating its own Eq. (3.97) gives (1 - alpha) h D
    # (dqdot1/dq_alpha = -(1 - alpha) / (alpha^2 h), times -alpha^2 h^2 D), which central differences
    # confirm (test_every_stencil_block_matches_central_differences)
    assert np.allclose(block(s[1], 1), -2 * (1 - A) / A * M + (1 - A) * h * D)
    assert np.allclose(block(s[2], 2), -(8 / (9 * A) + 4 / 3) * M + 8 / 9 * h * D)         # k = 1
    assert np.allclose(block(s[2], 1), -(8 * (A - 1) / (9 * A ** 2)) * M)
    assert np.allclose(block(s[3], 3), -8 / 3 * M + 8 / 9 * h * D)                           # k = 2
    assert np.allclose(block(s[3], 2), (2 / (9 * A) + 19 / 9) * M - 2 / 9 * h * D)
    assert np.allclose(block(s[3], 1), 2 * (A - 1) / (9 * A ** 2) * M)
    assert np.allclose(block(s[4], 2), -8 / 9 * M)                                           # k = 3
    n = s[-1].index                                                                          # k >= 4
    assert np.allclose(block(s[-1], n - 1), -8 / 3 * M + 8 / 9 * h * D)
    assert np.allclose(block(s[-1], n - 2), 22 / 9 * M - 2 / 9 * h * D)
    assert np.allclose(block(s[-1], n - 3), -8 / 9 * M) and np.allclose(block(s[-1], n - 4), M / 9)
    bdf1 = scheme_stencils("bdf1", h, 3)[2]                                                  # Eq. (3.92)
    assert np.allclose(block(bdf1, 2), -2 * M + h * D) and np.allclose(block(bdf1, 1), M)


# --- bad input to step_residual ------------------------------------------------------------------------
def test_step_residual_refuses_bad_input_by_name():
    model, q, qdot = TREES[0]
    first = scheme_stencils("bdf1", 0.01, 1)[0]
    with pytest.raises(ValueError, match="argument 'v'"):
        step_residual(model, first, q, {0: q})
    with pytest.raises(ValueError, match="argument 'positions'"):
        step_residual(model, first, q, {}, v=qdot)
    with pytest.raises(ValueError, match="argument 'stencil'"):
        step_residual(model, "bdf1", q, {0: q}, v=qdot)
    with pytest.raises(ValueError, match="'q_new'"):
        step_residual(model, first, q[:-1], {0: q}, v=qdot)
    with pytest.raises(ValueError, match="argument 'scheme'"):
        scheme_stencils("bdf3", 0.01, 1)
    assert isinstance(first, Stencil)
