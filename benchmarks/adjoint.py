"""Cost of the adjoint gradient of §3.5: a 10-body chain over 100 BDF2 steps.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/adjoint.py [--bodies 10] [--steps 100]
        [--json benchmarks/results/adjoint.json --note TEXT]

The chain is :func:`redmax_edu.scenes.hanging_chain` (ten 0.2 m rods released at q = (0.8, 0.1,
..., 0.1) rad, every hinge damped), driven by small random per-step torques; the objective is
an end-effector target plus a torque regulariser (Eq. 3.82). In one run it prints the CPU time
(best of three) of

* the forward solve (:func:`redmax_edu.adjoint.simulate_run`, which keeps every step's blocks
  and LU factors);
* the adjoint gradient (:func:`redmax_edu.adjoint.adjoint_gradient`) in the initial state and
  every step's torques (2 nq + steps nq parameters at once), and again with 2 n model
  parameters (every rod's mass and hinge damping) added, with its ratio to the forward solve;
* central differences of the whole simulation (two forward runs per parameter) for 20, 40, ...
  of the torque entries, and their ratio to forward + adjoint.

Issue 11 asks: the adjoint at most 3x the forward solve, and at least 10x faster than finite
differences from 20 parameters on. The figures vary from machine to machine, the ratios much less.

With ``--json PATH`` the measurements (times, ratios, the date, the machine and ``--note``) are
also written to a file: page 3.5 (book/03_differentiable/05_adjoint) quotes the committed
``benchmarks/results/adjoint.json``, and tests/claims/test_ch3_adjoint_pages.py checks its
sentences against it.
"""

import argparse
import time

import numpy as np
from forward_dynamics import machine, write_record

from redmax_edu.adjoint import adjoint_gradient, run_states, simulate_run
from redmax_edu.objectives import EndEffectorTarget, Regularizer
from redmax_edu.parameters import model_parameters
from redmax_edu.scenes import hanging_chain


def best_of(f, repeat=3):
    """(smallest CPU seconds over ``repeat`` calls, the last result)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        out = f()
        times.append(time.process_time() - start)
    return min(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=10)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--h", type=float, default=0.01)
    parser.add_argument("--fd", type=int, nargs="+", default=[20, 40],
                        help="numbers of parameters differentiated by central differences")
    parser.add_argument("--json", metavar="PATH", help="also write the measurements to this JSON file")
    parser.add_argument("--note", default="", help="a note on the machine for the JSON file")
    args = parser.parse_args()
    n, steps, h = args.bodies, args.steps, args.h
    model = hanging_chain(n, damping=0.05)
    q0, qdot0 = np.r_[0.8, np.full(n - 1, 0.1)], np.zeros(n)
    tau = 0.05 * np.random.default_rng(0).standard_normal((steps, n))
    objective = EndEffectorTarget(model.names[-1], [0, 0, -0.1], [0.5, 0.0, -1.5]) + Regularizer(1e-3)
    params = model_parameters(model, ["mass", "damping"])
    info = machine()
    print(f"{n}-body chain, {steps} BDF2 steps of h = {h} s; {info['cpu']}, "
          f"numpy {info['versions']['numpy']}, threads {info['threads']}")

    t_fwd, run = best_of(lambda: simulate_run(model, q0, qdot0, h, steps, "bdf2", tau))
    t_adj, g = best_of(lambda: adjoint_gradient(run, objective))
    t_adj_p, _ = best_of(lambda: adjoint_gradient(run, objective, params))
    count = 2 * n + steps * n
    print(f"forward solve                         {1e3 * t_fwd:9.1f} ms")
    print(f"adjoint gradient, {count:4d} parameters     {1e3 * t_adj:9.1f} ms   "
          f"{t_adj / t_fwd:5.2f} x forward")
    print(f"  with {len(params)} model parameters too     {1e3 * t_adj_p:9.1f} ms   "
          f"{t_adj_p / t_fwd:5.2f} x forward")

    def psi(tau):
        return objective(run_states(simulate_run(model, q0, qdot0, h, steps, "bdf2", tau))).value

    e = 1e-6
    differences = []
    for m in args.fd:
        start = time.process_time()
        fd = np.zeros(m)
        for k in range(m):
            d = np.zeros(tau.size)
            d[k] = e
            d = d.reshape(tau.shape)
            fd[k] = (psi(tau + d) - psi(tau - d)) / (2 * e)
        t_fd = time.process_time() - start
        agree = np.abs(fd - g.tau.ravel()[:m]).max() / np.abs(g.tau.ravel()[:m]).max()
        print(f"central differences, {m:4d} parameters  {1e3 * t_fd:9.1f} ms   "
              f"{t_fd / (t_fwd + t_adj):5.1f} x forward + adjoint   (agree to {agree:.0e}: the differences "
              "carry Newton's tolerance over the step)")
        differences.append({"parameters": m, "seconds": t_fd, "agreement": float(agree),
                            "over_forward_and_adjoint": t_fd / (t_fwd + t_adj)})
    print("issue 11 asks: adjoint at most 3x forward; at least 10x faster than finite differences "
          "from 20 parameters on")
    if args.json:
        write_record(args.json, "benchmarks/adjoint.py", args.note,
                     timer="CPU time (time.process_time), best of 3 for the forward solve and the adjoint "
                           "gradients, one timed loop for the central differences",
                     model=f"hanging_chain({n}, damping=0.05), {steps} BDF2 steps of h = {h} s, "
                           "small random torques",
                     bodies=n, steps=steps, h=h,
                     forward_seconds=t_fwd,
                     adjoint={"parameters": count, "seconds": t_adj, "over_forward": t_adj / t_fwd},
                     adjoint_with_model_parameters={"parameters": count + len(params), "seconds": t_adj_p,
                                                    "over_forward": t_adj_p / t_fwd},
                     central_differences=differences)
        print(f"\nmeasurements written to {args.json}")


if __name__ == "__main__":
    main()
