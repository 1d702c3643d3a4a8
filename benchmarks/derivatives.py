"""Time of the analytic derivatives of forward dynamics (§3.3) against one forward dynamics call.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/derivatives.py [--sizes 5 10 20]
        [--json benchmarks/results/derivatives.json --note TEXT]

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

With ``--json PATH`` the measurements (sizes, times, ratios, the date, the machine and
``--note``) are also written to a file: page 3.1 (book/03_differentiable/01_why_analytic)
quotes the committed ``benchmarks/results/derivatives.json``, and
tests/claims/test_ch3_derivatives_pages.py checks its sentences against it.
"""

import argparse

import numpy as np
from forward_dynamics import best_time, pin, pinocchio_model, random_model, write_record

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
    """The times (CPU seconds per call) for a random chain of n revolute links, as stored with --json."""
    model = random_model(n, rng, lambda i: i - 1)
    q, qdot = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    row = {"forward_dynamics": best_time(lambda: forward_dynamics(model, q, qdot)),
           "derivatives": best_time(lambda: forward_dynamics_derivatives(model, q, qdot)),
           "central_differences": best_time(lambda: central_differences(model, q, qdot), repeats=3)}
    if pin is not None:
        pm = pinocchio_model(model)
        data, tau = pm.createData(), np.zeros(n)
        row["pinocchio"] = best_time(lambda: pin.computeABADerivatives(pm, data, q, qdot, tau))
        pin.computeABADerivatives(pm, data, q, qdot, tau)
        ours = forward_dynamics_derivatives(model, q, qdot).dqddot_dq
        row["pinocchio_difference"] = float(np.abs(ours - data.ddq_dq).max() / np.abs(data.ddq_dq).max())
    return row


def report(n, row):
    t_fd, t_d, t_cd = row["forward_dynamics"], row["derivatives"], row["central_differences"]
    line = (f"{n:>6} {t_fd * 1e6:>7.0f}us {t_d * 1e6:>7.0f}us {t_d / t_fd:>6.1f} {t_cd * 1e6:>10.0f}us "
            f"{t_cd / t_d:>6.1f}")
    if "pinocchio" in row:
        t_pin = row["pinocchio"]
        line += f" {t_pin * 1e6:>7.1f}us {t_d / t_pin:>6.0f} {row['pinocchio_difference']:>8.1e}"
    print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20], help="bodies per chain")
    parser.add_argument("--json", metavar="PATH", help="also write the measurements to this JSON file")
    parser.add_argument("--note", default="", help="a note on the machine for the JSON file")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'bodies':>6} {'FD call':>9} {'derivs':>9} {'ratio':>6} {'central diff':>12} {'ratio':>6} "
          f"{'Pinocchio':>9} {'ratio':>6} {'max diff':>8}")
    rows = []
    for n in args.sizes:
        rows.append(measure(n, rng))
        report(n, rows[-1])
    if args.json:
        seconds = {key: [row[key] for row in rows] for key in rows[0] if key != "pinocchio_difference"}
        write_record(args.json, "benchmarks/derivatives.py", args.note,
                     timer="CPU time per call (time.process_time), best of 5 batches (3 for central "
                           "differences) of at least 0.2 s each",
                     models="random serial chains of revolute joints (random axes, offsets and inertias), "
                            "numpy seed 0, at a random state",
                     sizes=list(args.sizes), seconds=seconds,
                     derivatives_over_forward_dynamics=[d / f for d, f in zip(
                         seconds["derivatives"], seconds["forward_dynamics"], strict=True)],
                     central_difference_calls=[4 * n for n in args.sizes])
        print(f"\nmeasurements written to {args.json}")


if __name__ == "__main__":
    main()
