"""Time of the analytic derivatives of forward dynamics (§3.3) against one forward dynamics call.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/derivatives.py [--sizes 5 10 20]

On random serial chains of revolute joints (those of ``benchmarks/forward_dynamics.py``) times,
in the same run and in CPU time of this process (the best of several repeats):

- ``redmax_edu.dynamics.forward_dynamics`` (Eq. 2.19), one call;
- ``redmax_edu.derivatives.forward_dynamics_derivatives``: ``qddot`` with ``dqddot/dq``,
  ``dqddot/dqdot`` and ``dqddot/dtau`` (Algorithm 11, Eq. 3.54-3.58);
- central differences of ``forward_dynamics`` for ``dqddot/dq`` and ``dqddot/dqdot``
  (``4 nq`` calls), what the analytic derivatives replace;
- ``pinocchio.computeABADerivatives`` when Pinocchio is installed (the ``[bench]`` extra),
  the compiled yardstick, with the largest difference of its ``dqddot/dq`` from ours.

Prints the times and the ratios derivatives / forward dynamics (the issue's aim for a 10-body
chain: at most 10), finite differences / derivatives, and derivatives / Pinocchio. The
figures vary from machine to machine, the ratios much less.
"""

import argparse

import numpy as np
from forward_dynamics import best_time, pin, pinocchio_model, random_model

from redmax_edu.derivatives import forward_dynamics_derivatives
from redmax_edu.dynamics import forward_dynamics


def central_differences(model, q, qdot, h=1e-6):
    """``dqddot/dq`` and ``dqddot/dqdot`` by central differences: 4 nq forward dynamics calls."""
    def column(dq, dv):
        plus, minus = forward_dynamics(model, q + dq, qdot + dv), forward_dynamics(model, q - dq, qdot - dv)
        return (plus - minus) / (2 * h)

    eye, zero = h * np.eye(model.nq), np.zeros(model.nq)
    return np.array([column(e, zero) for e in eye]).T, np.array([column(zero, e) for e in eye]).T


def measure(n, rng):
    """One row of the table for a random chain of n revolute links."""
    model = random_model(n, rng, lambda i: i - 1)
    q, qdot = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    t_fd = best_time(lambda: forward_dynamics(model, q, qdot))
    t_d = best_time(lambda: forward_dynamics_derivatives(model, q, qdot))
    t_cd = best_time(lambda: central_differences(model, q, qdot), repeats=3)
    row = (f"{n:>6} {t_fd * 1e6:>7.0f}us {t_d * 1e6:>7.0f}us {t_d / t_fd:>6.1f} {t_cd * 1e6:>10.0f}us "
           f"{t_cd / t_d:>6.1f}")
    if pin is not None:
        pm = pinocchio_model(model)
        data, tau = pm.createData(), np.zeros(n)
        t_pin = best_time(lambda: pin.computeABADerivatives(pm, data, q, qdot, tau))
        pin.computeABADerivatives(pm, data, q, qdot, tau)
        ours = forward_dynamics_derivatives(model, q, qdot).dqddot_dq
        diff = np.abs(ours - data.ddq_dq).max() / np.abs(data.ddq_dq).max()
        row += f" {t_pin * 1e6:>7.1f}us {t_d / t_pin:>6.0f} {diff:>8.1e}"
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20], help="bodies per chain")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'bodies':>6} {'FD call':>9} {'derivs':>9} {'ratio':>6} {'central diff':>12} {'ratio':>6} "
          f"{'Pinocchio':>9} {'ratio':>6} {'max diff':>8}")
    for n in args.sizes:
        print(measure(n, rng))


if __name__ == "__main__":
    main()
