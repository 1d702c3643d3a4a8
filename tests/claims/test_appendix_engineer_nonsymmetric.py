"""Claims of book/appendix/engineer_nonsymmetric (ArtiSynth notes §0.23): K - K^T = A(f), symmetric at
equilibrium, the order lost by symmetrising, and what symmetrising costs in scene 23 (implicit Euler)."""

from functools import cache

import numpy as np
import pytest

from redmax_edu.lie import exp_se3, random_transform
from redmax_edu.maximal.forces import (
    Attachment,
    FrameSpring,
    Gravity,
    LinearSpringDamper,
    PointSpring,
    Spring,
    stiffness_skew_part,
)


def page_forces(rng):
    return {
        "gravity": Gravity(0, 2.0),
        "point spring": PointSpring(Attachment(0, rng.standard_normal(3)),
                                    Attachment(-1, rng.standard_normal(3)), 3.0),
        "axial spring": Spring([Attachment(0, rng.standard_normal(3)), Attachment(1, rng.standard_normal(3))],
                               LinearSpringDamper(4.0, rest_length=0.5)),
        "frame spring": FrameSpring(0, random_transform(rng), 1, random_transform(rng), 5.0, 2.0),
    }


def relative_skew(K):
    return np.abs(K - K.T).max() / np.abs(K).max()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k_is_far_from_symmetric_and_its_skew_part_is_a_of_f(seed):
    """'|K - K^T| / |K| above 0.1' and 'K - K^T = A to 1e-12' for the page's four forces."""
    rng = np.random.default_rng(seed)
    E = np.stack([random_transform(rng) for _ in range(2)])
    for name, force in page_forces(rng).items():
        t = force.evaluate(E, np.zeros((2, 6)))
        assert relative_skew(t.K) > 0.1, name
        assert np.abs(t.K - t.K.T - stiffness_skew_part(t.f)).max() < 1e-12 * np.abs(t.K).max(), name


def test_axial_spring_is_symmetric_at_rest_length_only(rng):
    for _ in range(5):
        E = np.stack([random_transform(rng) for _ in range(2)])
        a, b = Attachment(0, rng.standard_normal(3)), Attachment(1, rng.standard_normal(3))
        x = [E[0, :3, :3] @ a.r + E[0, :3, 3], E[1, :3, :3] @ b.r + E[1, :3, 3]]
        length = np.linalg.norm(x[1] - x[0])
        at_rest = Spring([a, b], LinearSpringDamper(4.0, rest_length=length)).evaluate(E, np.zeros((2, 6)))
        off = Spring([a, b], LinearSpringDamper(4.0, rest_length=length - 1e-4)).evaluate(E, np.zeros((2, 6)))
        assert np.abs(at_rest.f).max() < 1e-12 and relative_skew(at_rest.K) < 1e-12
        assert np.abs(off.f).max() > 1e-12 and relative_skew(off.K) > 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linearisation_is_second_order_with_k_and_first_order_with_its_symmetric_part(seed):
    """'slope within 0.1 of 2' with K, 'within 0.1 of 1' with (K + K^T)/2, for a frame spring."""
    rng = np.random.default_rng(seed)
    E = np.stack([random_transform(rng) for _ in range(2)])
    force = FrameSpring(0, random_transform(rng), 1, random_transform(rng), 5.0, 2.0)
    phi = np.zeros((2, 6))
    t = force.evaluate(E, phi)
    K_sym = 0.5 * (t.K + t.K.T)
    eta = rng.standard_normal(12)
    eps = np.logspace(-1, -5, 9)
    err_K, err_sym = [], []
    for e in eps:
        moved = np.stack([E[b] @ exp_se3(e * eta[6 * b: 6 * b + 6]) for b in range(2)])
        change = force.evaluate(moved, phi).f - t.f
        err_K.append(np.linalg.norm(change - e * t.K @ eta))
        err_sym.append(np.linalg.norm(change - e * K_sym @ eta))
    assert abs(np.polyfit(np.log10(eps), np.log10(err_K), 1)[0] - 2) < 0.1
    assert abs(np.polyfit(np.log10(eps), np.log10(err_sym), 1)[0] - 1) < 0.1


# --- the worked case: scene 23 in maximal coordinates, implicit Euler with K and with (K + K^T) / 2 ---

STEPS = (0.04, 0.02, 0.01, 0.005)


@cache
def scene23_runs():
    """The page's runs: RK45 reference centres, and both implicit-Euler runs at each step."""
    from redmax_edu import scenes
    from redmax_edu.kinematics import forward_kinematics
    from redmax_edu.maximal.simulate import simulate
    from redmax_edu.maximal_model import system_from_model

    chain = scenes.scene(23)
    system, E0, phi0 = system_from_model(chain.model, chain.q0, chain.qdot0)
    T, samples = chain.t_span[1], 50
    reference = chain.simulate("rk45", rtol=1e-10, atol=1e-12, sample_dt=T / samples)
    x_ref = np.array([forward_kinematics(chain.model, q).E_wi[:, :3, 3] for q in reference.q])
    runs = {(h, kind): simulate(system, E0, phi0, h, round(T / h), "implicit", baumgarte=10.0, stiffness=kind)
            for h in STEPS for kind in ("full", "symmetric")}
    return system, E0, phi0, T, x_ref, runs


def centres(run, samples=50):
    return run.E[:: (len(run.t) - 1) // samples, :, :3, 3]


def test_scene23_k_is_far_from_symmetric_but_h2_k_is_small():
    """'along the run, |K - K^T| / |K| stays above 0.5' (measured min 0.56); 'at h = 0.04 s, h^2 |K - K^T|
    stays below 2% of |M|' (measured 1.8%), so what symmetrising changes, h^2 (K - K^T) / 2, 'is at these
    steps under one per cent of the mass matrix'."""
    system, *_, runs = scene23_runs()
    run = runs[0.04, "full"]
    K_run = [system.evaluate(E, phi).K for E, phi in zip(run.E, run.phi, strict=True)]
    assert min(relative_skew(K) for K in K_run) > 0.5
    assert max(0.04**2 * np.abs(K - K.T).max() for K in K_run) < 0.02 * np.abs(system.mass_matrix()).max()
    for h in STEPS[1:]:  # and at the smaller steps, along their own runs
        run = runs[h, "full"]
        Ks = [system.evaluate(E, phi).K for E, phi in zip(run.E, run.phi, strict=True)]
        skew = max(np.abs(K - K.T).max() for K in Ks)
        assert 0.5 * h**2 * skew < 0.01 * np.abs(system.mass_matrix()).max()


def test_scene23_symmetrising_costs_no_accuracy_or_energy():
    """'errors against RK45 differ by under 5% at every h' (measured at most 3.8%); 'the gap between the
    runs is under a fifth of either run's error' (measured 0.11-0.15) 'and halves with h (ratios within
    1.6-2.2)' (measured 1.73, 1.82, 1.82); 'energy drift ... within 5%' (measured at most 3.4%); the stable
    runs drift 'about 0.002 J' (measured 0.0010-0.0024 J)."""
    *_, x_ref, runs = scene23_runs()
    error = {key: np.abs(centres(run) - x_ref).max() for key, run in runs.items()}
    drift = {key: np.abs(run.energy - run.energy[0]).max() for key, run in runs.items()}
    gap = np.array([np.abs(centres(runs[h, "full"]) - centres(runs[h, "symmetric"])).max() for h in STEPS])
    for g, h in zip(gap, STEPS, strict=True):
        assert abs(error[h, "full"] - error[h, "symmetric"]) < 0.05 * error[h, "full"]
        assert g < 0.2 * min(error[h, "full"], error[h, "symmetric"])
        assert abs(drift[h, "full"] - drift[h, "symmetric"]) < 0.05 * drift[h, "full"]
        assert 0.0008 < drift[h, "full"] < 0.003
    assert all(1.6 < r < 2.2 for r in gap[:-1] / gap[1:])


def test_scene23_symmetric_part_lowers_the_stability_limit_by_about_5_percent():
    """'largest stable step with K: T/42 = 0.0476 s'; 'with its symmetric part: T/44 = 0.0455 s' (on the
    grid T/N, N = 40..46; stable means energy drift below 0.01 J, the unstable runs reach 1e2-1e9 J);
    'a stability limit about 5% lower' (42/44 = 0.955)."""
    from redmax_edu.maximal.simulate import simulate

    system, E0, phi0, T, *_ = scene23_runs()

    def stable(N, kind):
        try:
            run = simulate(system, E0, phi0, T / N, N, "implicit", baumgarte=10.0, stiffness=kind)
        except ValueError:
            return False
        return np.abs(run.energy - run.energy[0]).max() < 0.01

    assert [stable(N, "full") for N in (40, 42, 44, 46)] == [False, True, True, True]
    assert [stable(N, "symmetric") for N in (40, 42, 44, 46)] == [False, False, True, True]
    assert 0.04 < 1 - 42 / 44 < 0.06
