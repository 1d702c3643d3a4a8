"""Cost of one Newton iteration of the variational integrators (Fan, Schultz, Murphey): dense vs O(n).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/variational.py [--s 1] [--max-bodies 128]
        [--json benchmarks/results/variational.json --note TEXT]

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
It also prints the condition number of J (2-norm). A long chain of light rods has an
ill-conditioned J (condition number 1e7 at 32 rods, 4e9 at 64), so the two directions can differ
by far more than round-off while both solve ``J d = -r`` closely; the balanced trees stay well
conditioned.

With ``--json PATH`` the measurements (sizes, times, ratios, fitted exponents, differences,
backward errors, condition numbers, the date, the machine and ``--note``) are also written to a
file: page 5.2 (book/05_variational/02_newton_direction) draws and quotes the committed
``benchmarks/results/variational.json``, and tests/claims/test_ch5_variational_pages.py checks
its sentences against it.
"""

import argparse
import time

import numpy as np
from forward_dynamics import machine, write_record

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


def measure(build, ns, s):
    """Times, differences, backward errors and condition numbers of one shape, as stored with --json."""
    rows = {key: [] for key in ("dense", "recursive", "difference", "backward_dense", "backward_recursive",
                                "condition")}
    for n in ns:
        model = build(n)
        td, dd, res = best(model, s, "dense", 3 if n <= 32 else 1)
        tf, df, _ = best(model, s, "recursive", 5)
        rows["dense"].append(td)
        rows["recursive"].append(tf)
        rows["difference"].append(float(np.abs(dd - df).max() / np.abs(dd).max()))
        rows["backward_dense"].append(backward_error(res, dd))
        rows["backward_recursive"].append(backward_error(res, df))
        rows["condition"].append(float(np.linalg.cond(res.jacobian)))
    seconds = {method: rows.pop(method) for method in ("dense", "recursive")}
    big = [i for i, n in enumerate(ns) if n >= 16]
    return {"sizes": list(ns), "seconds": seconds, **rows,
            "exponents": {m: fit(np.array(ns)[big], np.array(t)[big]) for m, t in seconds.items()},
            "exponents_from_4": {m: fit(ns, t) for m, t in seconds.items()}}


def report(name, run):
    print(f"\n{name}")
    print(f"{'bodies':>6} {'dense ms':>10} {'O(n) ms':>10} {'dense/O(n)':>11} {'difference':>11} "
          f"{'backward dense':>15} {'backward O(n)':>14} {'cond(J)':>9}")
    for k, n in enumerate(run["sizes"]):
        td, tf = run["seconds"]["dense"][k], run["seconds"]["recursive"][k]
        print(f"{n:>6} {1e3 * td:>10.2f} {1e3 * tf:>10.2f} {td / tf:>11.1f} {run['difference'][k]:>11.1e} "
              f"{run['backward_dense'][k]:>15.1e} {run['backward_recursive'][k]:>14.1e} "
              f"{run['condition'][k]:>9.1e}")
    fitted, whole = run["exponents"], run["exponents_from_4"]
    first, last = run["sizes"][0], run["sizes"][-1]
    print(f"fitted exponent, n = 16..{last}: dense {fitted['dense']:.2f}, O(n) {fitted['recursive']:.2f}; "
          f"over n = {first}..{last}: dense {whole['dense']:.2f}, O(n) {whole['recursive']:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--s", type=int, default=1, help="control points after q_k (1: trapezoidal, vi2)")
    parser.add_argument("--max-bodies", type=int, default=128)
    parser.add_argument("--json", metavar="PATH", help="also write the measurements to this JSON file")
    parser.add_argument("--note", default="", help="a note on the machine for the JSON file")
    args = parser.parse_args()
    ns = [n for n in (4, 8, 16, 32, 64, 128) if n <= args.max_bodies]
    info = machine()
    print(f"one Newton iteration (residual + direction) of the DEL, s = {args.s}; {info['cpu']}, "
          f"numpy {info['versions']['numpy']}, threads {info['threads']}")
    shapes = {}
    for name, build in (("chain", hanging_chain), ("binary tree", binary_tree)):
        shapes[name] = measure(build, ns, args.s)
        report(name, shapes[name])
    print("\nissue 14 asks: the O(n) exponent at most 1.2")
    if args.json:
        write_record(args.json, "benchmarks/variational.py", args.note,
                     timer="CPU time per iteration (time.process_time), best of 3 (dense, 1 from 64 bodies "
                           "on) and of 5 (O(n)) repeats",
                     s=args.s, fit_from=16,
                     models="hanging_chain(n) of light rods, and a balanced binary tree of n hinged rods; "
                            "control points: the predictor of a step of h = 0.01 s from a bent state "
                            "(numpy seed 0)",
                     shapes=shapes)
        print(f"\nmeasurements written to {args.json}")


if __name__ == "__main__":
    main()
