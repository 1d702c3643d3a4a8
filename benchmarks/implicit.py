"""Cost of the implicit integrators of §3.4: a 10-body chain over 100 BDF2 steps.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/implicit.py [--bodies 10] [--steps 100]

The chain is :func:`redmax_edu.scenes.hanging_chain` (ten 0.2 m rods, released at q = (0.8, 0.1,
..., 0.1) rad). In one run it prints, for each of BDF1, SDIRK2 and BDF2 (the issue's figure is
BDF2's), the CPU time per step (best of three runs), the mean and largest number of Newton
iterations per step, the residual evaluations per step, and the share of the time spent in the
dynamics and their derivatives (one call of ``redmax_edu.derivatives.dynamics_derivatives``'s
core per residual evaluation: M, dM/dq, f, K, D), measured by timing those calls inside the
same run. The figures vary from machine to machine, the shares and iteration counts much less.
"""

import argparse
import time

import numpy as np
from forward_dynamics import machine

import redmax_edu.implicit as implicit
from redmax_edu.integrators import simulate
from redmax_edu.scenes import hanging_chain


def run(model, q0, scheme, steps, h):
    """One timed run: (CPU seconds, seconds inside the dynamics derivatives, Trajectory)."""
    inside = [0.0]
    terms = implicit.dynamics_derivatives_unchecked

    def timed(*args):
        start = time.process_time()
        try:
            return terms(*args)
        finally:
            inside[0] += time.process_time() - start

    implicit.dynamics_derivatives_unchecked = timed
    try:
        start = time.process_time()
        tr = simulate(model, q0, np.zeros(model.nq), (0.0, steps * h), scheme, h=h)
        total = time.process_time() - start
    finally:
        implicit.dynamics_derivatives_unchecked = terms
    return total, inside[0], tr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=10)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--h", type=float, default=0.01)
    args = parser.parse_args()
    model = hanging_chain(args.bodies)
    q0 = np.r_[0.8, np.full(args.bodies - 1, 0.1)]
    info = machine()
    print(f"{args.bodies}-body chain, {args.steps} steps of h = {args.h} s; {info['cpu']}, "
          f"numpy {info['versions']['numpy']}, threads {info['threads']}")
    header = ("scheme", "ms/step", "Newton mean", "max", "evals/step", "derivatives share")
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, (7, 8, 12, 4, 11, 18), strict=True)))
    for scheme in implicit.SCHEMES:
        best = min((run(model, q0, scheme, args.steps, args.h) for _ in range(3)), key=lambda r: r[0])
        total, inside, tr = best
        iterations = tr.implicit.iterations
        print(f"{scheme:>7} {1e3 * total / args.steps:>8.2f} {iterations.mean():>12.2f} "
              f"{iterations.max():>4d} {tr.nfev / args.steps:>11.2f} {inside / total:>18.0%}")
    print("issue 11 asks: mean Newton iterations per BDF2 step at most 4")


if __name__ == "__main__":
    main()
