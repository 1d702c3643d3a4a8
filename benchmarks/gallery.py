"""Wall time of every gallery scene under both integrators, at the reference time span.

    python benchmarks/gallery.py [--repeats 3] [--scenes -1 0 5]

For every scene that ``redmax_edu.scenes`` builds, times ``Scene.simulate`` with RK45 (the
reference's ode45 path, rtol 1e-4 and atol 1e-6 on cm and rad) and with linearly implicit
Euler at the reference step, best of ``--repeats`` runs. Prints the steps each took, the
evaluations of the equations of motion (right-hand sides for RK45, linear solves for Euler),
and the ratio of the Euler time to the RK45 time. A dash marks an integrator the reference
does not run the scene with (scenes 3 and 24). Times vary from machine to machine; the
step and evaluation counts do not.
"""

import argparse
import time

from redmax_edu import scenes


def best_time(fn, repeats):
    """Best wall time of ``repeats`` calls of ``fn`` and the result of the last call."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scenes", type=int, nargs="+", default=None)
    args = parser.parse_args()
    ids = args.scenes or [e.id for e in scenes.catalogue() if e.supported]
    print(f"Scene.simulate at the reference span, best of {args.repeats}")
    print(f"{'scene':31s} {'span':>5s} | {'RK45':>8s} {'steps':>6s} {'evals':>6s} | "
          f"{'Euler':>8s} {'h':>6s} {'steps':>6s} | {'Euler/RK45':>10s}")
    total = {"rk45": 0.0, "euler": 0.0}
    for sid in ids:
        s = scenes.scene(sid)
        cols = {}
        for method in ("rk45", "euler"):
            if method not in s.integrators:
                continue
            seconds, tr = best_time(lambda m=method, s=s: s.simulate(m), args.repeats)
            cols[method] = (seconds, tr)
            total[method] += seconds
        rk = (f"{cols['rk45'][0]:7.3f}s {cols['rk45'][1].nsteps:6d} {cols['rk45'][1].nfev:6d}"
              if "rk45" in cols else f"{'-':>8s} {'-':>6s} {'-':>6s}")
        eu = f"{cols['euler'][0]:7.3f}s {s.h:6.3f} {cols['euler'][1].nsteps:6d}"
        ratio = f"{cols['euler'][0] / cols['rk45'][0]:9.2f}x" if "rk45" in cols else f"{'-':>10s}"
        span = s.t_span[1] - s.t_span[0]
        print(f"{sid:3d} {s.name[:27]:27s} {span:4.0f}s | {rk} | {eu} | {ratio}")
    print(f"total: RK45 {total['rk45']:.2f} s, Euler {total['euler']:.2f} s")


if __name__ == "__main__":
    main()
