"""Cost of one Newton iteration of the variational integrators (Fan, Schultz, Murphey): dense vs O(n).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/variational.py [--s 1] [--max-bodies 128]

One Newton iteration of a step's discrete Euler-Lagrange equations is a residual evaluation
and a Newton direction. ``dense`` assembles the residual's Jacobian from ``M``, ``dM/dq`` (the
library's Algorithm 11 path) and the kinetic and potential Hessians, and solves it by LU;
``O(n)`` evaluates the residual by world-frame sweeps and the direction by the recursive
elimination over the tree (:func:`redmax_edu.variational.newton_direction` of a recursive
residual). Both are timed on the same control points (the predictor of a step of h = 0.01 s from
a bent state), on :func:`redmax_edu.scenes.hanging_chain` of 4 to 128 rods and on a balanced
binary tree of as many revolute bodies, CPU time per iteration, best of a few repeats, all in
one run. It prints the times, their ratio and the exponent ``a`` of ``time ~ n^a`` fitted over
n = 16 ... 128 (and over the whole range), and how the two directions compare: their relative
difference, and the backward error ``|J d + r|_inf / |r|_inf`` of each with the dense Jacobian J.
A long chain of light rods has an ill-conditioned J (condition number 1e7 at 32 rods, 4e9 at
64), so the two directions can differ by about that times the round-off while both solve
``J d = -r`` to round-off.
"""

import argparse
import time

import numpy as np
from forward_dynamics import machine

from redmax_edu.joints import Revolute
from redmax_edu.model import Body, Model
from redmax_edu.scenes import hanging_chain
from redmax_edu.variational import del_residual, discrete_momentum, lobatto, newton_direction


def binary_tree(n):
    """n rods on hinges, body i hanging from body (i - 1) // 2, hinge axes alternating y and x."""
    T = np.eye(4)
    T[2, 3] = -0.1
    bodies = []
    for i in range(n):
        parent = (i - 1) // 2
        joint = Revolute([0, 1, 0] if i % 2 else [1, 0, 0])
        bodies.append(Body(f"rod{i}", parent, joint, T if parent >= 0 else np.eye(4), T, 0.5,
                           np.diag([1.7e-3, 1.7e-3, 3e-5])))
    return Model(bodies)


def iteration(model, s, method):
    """CPU seconds of one residual evaluation plus one Newton direction, the direction and the residual."""
    rng = np.random.default_rng(0)
    q0 = 0.3 * rng.standard_normal(model.nq)
    v0 = rng.standard_normal(model.nq)
    p0 = discrete_momentum(model, q0, v0)
    h = 0.01
    X = q0[None] + np.outer(lobatto(s).c[1:], h * v0)
    start = time.process_time()
    res = del_residual(model, q0, p0, X, h, s=s, method=method)
    d = newton_direction(res)
    return time.process_time() - start, d, res


def best(model, s, method, repeats):
    runs = [iteration(model, s, method) for _ in range(repeats)]
    return min(r[0] for r in runs), runs[0][1], runs[0][2]


def backward_error(res, d):
    """``|J d + r|_inf / |r|_inf`` with the dense Jacobian of ``res``."""
    r = res.r.ravel()
    return float(np.abs(res.jacobian @ d.ravel() + r).max() / np.abs(r).max())


def fit(ns, times):
    return float(np.polyfit(np.log(ns), np.log(times), 1)[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--s", type=int, default=1, help="control points after q_k (1: trapezoidal, vi2)")
    parser.add_argument("--max-bodies", type=int, default=128)
    args = parser.parse_args()
    ns = [n for n in (4, 8, 16, 32, 64, 128) if n <= args.max_bodies]
    info = machine()
    print(f"one Newton iteration (residual + direction) of the DEL, s = {args.s}; {info['cpu']}, "
          f"numpy {info['versions']['numpy']}, threads {info['threads']}")
    for name, build in (("chain", hanging_chain), ("binary tree", binary_tree)):
        print(f"\n{name}")
        print(f"{'bodies':>6} {'dense ms':>10} {'O(n) ms':>10} {'dense/O(n)':>11} {'difference':>11} "
              f"{'backward dense':>15} {'backward O(n)':>14}")
        dense, fast = [], []
        for n in ns:
            model = build(n)
            td, dd, res = best(model, args.s, "dense", 3 if n <= 32 else 1)
            tf, df, _ = best(model, args.s, "recursive", 5)
            dense.append(td)
            fast.append(tf)
            diff = np.abs(dd - df).max() / np.abs(dd).max()
            print(f"{n:>6} {1e3 * td:>10.2f} {1e3 * tf:>10.2f} {td / tf:>11.1f} {diff:>11.1e} "
                  f"{backward_error(res, dd):>15.1e} {backward_error(res, df):>14.1e}")
        big = [i for i, n in enumerate(ns) if n >= 16]
        print(f"fitted exponent, n = 16..{ns[-1]}: dense {fit(np.array(ns)[big], np.array(dense)[big]):.2f}, "
              f"O(n) {fit(np.array(ns)[big], np.array(fast)[big]):.2f}; over n = {ns[0]}..{ns[-1]}: "
              f"dense {fit(ns, dense):.2f}, O(n) {fit(ns, fast):.2f}")
    print("\nissue 14 asks: the O(n) exponent at most 1.2")


if __name__ == "__main__":
    main()
