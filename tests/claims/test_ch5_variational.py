"""Claims of book/05_variational (seed 003): what the variational integrators preserve, and their orders.

* Observed order, from a step sweep on a chain of three 1 m rods (0.5 s from q = (0.5, -0.3, 0.2)
  rad at rest) against RK45 at rtol 1e-12, Newton to 1e-13: the trapezoidal scheme ``vi2``
  (s = 1) is second order, the Lobatto schemes ``vi4`` (s = 2) fourth and ``vi6`` (s = 3) sixth,
  each within 0.2 (measured 2.00, 4.00, 5.94; the largest error over q and qdot at the end,
  fitted over the three smallest steps).
* Momentum: a free chain (a box on a free3d_euler joint, chart ZYX, carrying three links on
  revolute joints; no gravity, no springs) keeps the components of its world-frame spatial
  momentum whose symmetry shifts or linearly maps the coordinates -- the linear momentum and the
  angular momentum about the world z axis (the chart's first axis) -- to round-off under ``vi2``
  and ``vi4``: each step changes them by less than 2e-12 of the momentum (measured 7.7e-13 and
  1.8e-13 with Newton to 1e-13), and 500 steps of 0.02 s by less than 1e-10 (measured 1.8e-11).
  The angular momentum about x and y is *not* conserved exactly (rotations about those axes act
  nonlinearly on Euler angles, so the discrete Lagrangian with linear interpolation in the
  coordinates is not invariant): it wanders by 8e-3 (vi2, 10 s) and 1e-5 (vi4, 4 s) of the momentum.
  A joint damper inside the chain keeps the conserved components; a force on the root's
  x coordinate does not.
* Energy: the ten thousand steps of ``vi2`` on a chain of two rods are checked, in one run, with
  the claims of the page that shows them (tests/claims/test_ch5_variational_pages.py).
"""

from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from redmax_edu.integrators import observed_order, reference_run, simulate
from redmax_edu.joints import Free3DEuler, Revolute
from redmax_edu.lie import random_transform
from redmax_edu.model import Body, Model
from redmax_edu.scenes import hanging_chain
from redmax_edu.variational import momentum_map

ROD_CHAIN = hanging_chain(3, length=1.0)
Q0 = np.array([0.5, -0.3, 0.2])
SWEEPS = {"vi2": [0.02, 0.01, 0.005, 0.0025],
          "vi4": [0.05, 0.025, 0.0125, 0.00625],
          "vi6": [0.1, 0.05, 0.025, 0.0125]}
TIGHT = 1e-13                # Newton tolerance (rad/s): below the errors the claims measure
ORDERS = {"vi2": 2.0, "vi4": 4.0, "vi6": 6.0}


@cache
def _reference(T=0.5):
    return reference_run(ROD_CHAIN, Q0, np.zeros(3), T)


def observed_order_of(scheme, T=0.5):
    """The slope of log error against log h over the last two halvings of the sweep."""
    return observed_order(ROD_CHAIN, Q0, np.zeros(3), T, scheme, SWEEPS[scheme], reference=_reference(T),
                          fit=3, newton_tol=TIGHT).order


@pytest.mark.parametrize("scheme", list(ORDERS))
def test_observed_order_of_each_quadrature(scheme):
    assert abs(observed_order_of(scheme) - ORDERS[scheme]) < 0.2


def free_chain():
    rng = np.random.default_rng(7)
    box = Body("box", -1, Free3DEuler("ZYX"), np.eye(4), np.eye(4), 2.0, np.diag([0.2, 0.3, 0.4]))
    links = [Body(f"link{i}", i, Revolute(rng.standard_normal(3)), random_transform(rng, 0.4),
                  random_transform(rng, 0.3), 1.0, np.diag([0.05, 0.06, 0.02])) for i in range(3)]
    return Model([box] + links, gravity=[0, 0, 0]), rng


#: The momentum components a ZYX free root conserves exactly: angular about z, and linear.
CONSERVED = [2, 3, 4, 5]


def momenta(model, run):
    return np.array([momentum_map(model, q, p) for q, p in zip(run.q, run.p, strict=True)])


@pytest.mark.parametrize("scheme, span", [("vi2", 10.0), ("vi4", 4.0)])
def test_a_free_chain_keeps_its_momentum_to_round_off(scheme, span):
    model, rng = free_chain()
    q0, v0 = 0.3 * rng.standard_normal(model.nq), rng.standard_normal(model.nq)
    run = simulate(model, q0, v0, (0.0, span), scheme, h=0.02, sample_dt=span, newton_tol=TIGHT).variational
    h = momenta(model, run)
    size = np.abs(h[0]).max()
    kept = h[:, CONSERVED]
    assert np.abs(np.diff(kept, axis=0)).max() < 2e-12 * size
    assert np.abs(kept - kept[0]).max() < 1e-10 * size
    assert np.abs(h[:, :2] - h[0, :2]).max() > 1e-6 * size       # about x and y: not exactly
    assert np.abs(run.q[-1] - run.q[0]).max() > 1.0                 # and the chain did move


def test_an_internal_damper_keeps_the_momentum_and_an_external_force_does_not():
    model, rng = free_chain()
    q0, v0 = 0.3 * rng.standard_normal(model.nq), rng.standard_normal(model.nq)
    damped = Model([replace(b, damping=0.5) if i else b for i, b in enumerate(model.bodies)], model.gravity)
    tau = np.zeros(model.nq)
    tau[0] = 1e-3
    for m, t in ((damped, None), (model, tau)):
        run = simulate(m, q0, v0, (0.0, 1.0), "vi2", h=0.02, tau=t, newton_tol=TIGHT).variational
        kept = momenta(m, run)[:, CONSERVED]
        leak = np.abs(kept - kept[0]).max() / np.abs(kept[0]).max()
        assert (leak < 1e-11) if t is None else (leak > 1e-6)
