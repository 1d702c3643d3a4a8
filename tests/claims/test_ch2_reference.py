"""Claims of book/02_reduced (§2.1-2.3): the reduced-coordinate core reproduces Pinocchio.

"M_r matches the reference vectors in shared/reference/": for every case in
``shared/reference/pinocchio/*.json`` (produced by Pinocchio's CRBA, RNEA, ABA and frame
Jacobians through ``pin_oracle.py``, converted to this library's conventions) and every state
stored there, each quantity is compared on its own, so a failure names case, state and
quantity. Error measure: ``max|a - b| / max(1, max|b|)``. The library reaches ~1e-14 on all of
them; 1e-10 leaves room for platform round-off while any wrong term (a sign, a missing
Coriolis wrench) shows up at O(1e-2) or more.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from redmax_edu.dynamics import (
    forward_dynamics,
    inverse_dynamics,
    kinetic_energy,
    mass_matrix,
    maximal_forces,
    potential_energy,
    reduced_forces,
)
from redmax_edu.jacobian import jacobian_and_derivative
from redmax_edu.kinematics import body_twists, forward_kinematics
from redmax_edu.model import model_from_dict

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "pinocchio"  # copies, see its README
CASES = sorted(REFERENCE.glob("*.json"))
TOL = 1e-10


def _load(path):
    data = json.loads(path.read_text())
    return model_from_dict(data["model"]), data["states"]


_MODELS = {path.stem: _load(path) for path in CASES}


def _block_diagonal(model):
    M = np.zeros((6 * model.n, 6 * model.n))
    for i, Mi in enumerate(model.spatial_inertias):
        M[6 * i: 6 * i + 6, 6 * i: 6 * i + 6] = Mi
    return M


#: quantity -> (what the library computes from (model, state), the reference key) with the
#: section of the writeup that defines it.
QUANTITIES = {
    "M": lambda m, s: mass_matrix(m, s["q"]),                                   # Eq. (2.19)
    "nle": lambda m, s: -reduced_forces(m, s["q"], s["qdot"]),                  # Eq. (2.19)
    "qddot": lambda m, s: forward_dynamics(m, s["q"], s["qdot"], s["tau"]),     # Eq. (2.19)
    "tau_id": lambda m, s: inverse_dynamics(m, s["q"], s["qdot"], s["qddot_in"]),
    "T": lambda m, s: kinetic_energy(m, s["q"], s["qdot"]),
    "V": lambda m, s: potential_energy(m, s["q"]),
    "E_wi": lambda m, s: forward_kinematics(m, s["q"]).E_wi,                     # Eq. (2.23)
    "phi": lambda m, s: body_twists(m, s["q"], s["qdot"]).ravel(),              # Eq. (2.8)-(2.12)
    "J_mr": lambda m, s: jacobian_and_derivative(m, s["q"], s["qdot"])[0],      # Alg. 1
    "Jdot_mr": lambda m, s: jacobian_and_derivative(m, s["q"], s["qdot"])[1],   # Alg. 2
    "M_m": lambda m, s: _block_diagonal(m),                                     # Eq. (1.24)
    "f_m": lambda m, s: maximal_forces(m, forward_kinematics(m, s["q"]).E_wi,
                                       body_twists(m, s["q"], s["qdot"])),      # Eq. (1.21)
}

PARAMS = [pytest.param(case, k, name, id=f"{case}-state{k}-{name}")
          for case, (_, states) in _MODELS.items() for k in range(len(states)) for name in QUANTITIES]


def relative_error(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def test_the_reference_cases_are_there():
    """The claim is about four cases (planar arm, two serial chains, a branching tree)."""
    assert len(CASES) >= 4, f"no reference vectors found in {REFERENCE}"


@pytest.mark.parametrize("case, k, name", PARAMS)
def test_s2_3_reduced_core_matches_pinocchio(case, k, name):
    """§2.1-2.3: 'M_r, f_r, forward and inverse dynamics, the energies, the body frames, the body
    twists, J_mr and Jdot_mr agree with Pinocchio to 1e-10 relative' (book/02_reduced/03_redmax)."""
    model, states = _MODELS[case]
    state = {key: np.asarray(value, dtype=float) for key, value in states[k].items()}
    value = QUANTITIES[name](model, state)
    assert relative_error(value, state[name]) < TOL


def test_the_comparison_can_fail():
    """A wrong Coriolis term (the quadratic velocity vector dropped) is far outside 1e-10."""
    from redmax_edu.dynamics import quadratic_velocity_vector

    model, states = _MODELS["serial_n7_revprism"]
    s = {key: np.asarray(value, dtype=float) for key, value in states[0].items()}
    wrong = -(reduced_forces(model, s["q"], s["qdot"]) - quadratic_velocity_vector(model, s["q"], s["qdot"]))
    assert relative_error(wrong, s["nle"]) > 1e-3


@pytest.mark.parametrize("case, k", [pytest.param(case, k, id=f"{case}-state{k}")
                                     for case, (_, states) in _MODELS.items() for k in range(len(states))])
def test_recursive_inverse_dynamics_matches_pinocchio(case, k):
    """Companion chapter (book/04_companions/01_lagrangian_arm): the two-pass recursive
    Newton-Euler gives Pinocchio's RNEA torques to 1e-10 relative, like the dense path."""
    from redmax_edu.recursive import recursive_inverse_dynamics

    model, states = _MODELS[case]
    s = {key: np.asarray(value, dtype=float) for key, value in states[k].items()}
    tau = recursive_inverse_dynamics(model, s["q"], s["qdot"], s["qddot_in"])
    assert relative_error(tau, s["tau_id"]) < TOL


@pytest.mark.parametrize("case, k", [pytest.param(case, k, id=f"{case}-state{k}")
                                     for case, (_, states) in _MODELS.items() for k in range(len(states))])
def test_recursive_forward_dynamics_and_inverse_inertia_match_pinocchio(case, k):
    """§2.12-2.13: recursive forward dynamics (Alg. 9) gives Pinocchio's ABA accelerations, and
    the inverse inertia (Alg. 10) of identity columns its ``dqddot/dtau = M^-1``, to 1e-10."""
    from redmax_edu.recursive import inverse_inertia, recursive_forward_dynamics

    model, states = _MODELS[case]
    s = {key: np.asarray(value, dtype=float) for key, value in states[k].items()}
    assert relative_error(recursive_forward_dynamics(model, s["q"], s["qdot"], s["tau"]), s["qddot"]) < TOL
    M_inv = inverse_inertia(model, s["q"]) @ np.eye(model.nq)
    assert relative_error(M_inv, s["dqddot_dtau"]) < TOL
