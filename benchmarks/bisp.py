"""Time per step and staggered iterations of BISP (§2.11) on the reference's friction scenes.

    python benchmarks/bisp.py [--repeats 3] [--scenes 27 28 29 30 31 33]

Runs each frictional scene of ``redmax_edu.scenes`` (27-31 and the friction car, 33) with
``Scene.simulate("euler")`` over the span of the reference's linearly implicit Euler run, each
step by bilateral staggered projections warm-started with the previous step's friction. Prints
the time per step (the best of ``--repeats`` runs), the staggered iterations per step (mean and
largest; the budget is 100), and the reference code's wall time under Octave for the same run
(``octave_wall_times.json`` next to this script, itype 3) with its ratio to ours. The iteration
counts do not depend on the machine; the times do (``benchmarks/catalogue.py`` times every scene).
"""

import argparse
import time

from catalogue import OCTAVE_TIMES, reference_runs

from redmax_edu import scenes

#: The frictional reference scenes.
FRICTION_SCENES = (27, 28, 29, 30, 31, 33)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per scene (the best counts)")
    parser.add_argument("--scenes", type=int, nargs="+", default=FRICTION_SCENES, help="scene ids")
    args = parser.parse_args()
    runs = reference_runs(OCTAVE_TIMES)
    print(f"{'scene':>5} {'steps':>5} {'ms/step':>8} {'iterations mean / max':>21} {'ours s':>7} "
          f"{'Octave s':>9} {'ratio':>7}")
    for sid in args.scenes:
        scene = scenes.scene(sid)
        span, octave = runs[sid, 3]
        scene.simulate("euler", t_span=(span[0], span[0] + 2 * scene.h))   # imports, per-model caches
        best = float("inf")
        for _ in range(max(1, args.repeats)):
            start = time.perf_counter()
            tr = scene.simulate("euler", t_span=span)
            best = min(best, time.perf_counter() - start)
        its = tr.friction_iterations
        iterations = f"{its.mean():.2f} / {its.max()}"
        print(f"{sid:>5} {tr.nsteps:>5} {1e3 * best / tr.nsteps:8.2f} {iterations:>21} {best:7.3f} "
              f"{octave:9.2f} {octave / best:6.1f}x")


if __name__ == "__main__":
    main()
