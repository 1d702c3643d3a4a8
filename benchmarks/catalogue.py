"""Wall time of the whole scene catalogue against the reference code under Octave.

    python benchmarks/catalogue.py [--repeats 5] [--budget 1.0] [--scenes -1 0 18] [--octave FILE]

For every scene that ``redmax_edu.scenes.scene(id)`` builds and every integrator in its
``integrators``, times ``Scene.simulate(method)`` over the span of the reference run (the
best of at least ``--repeats`` runs and of as many more as fit in ``--budget`` seconds; one
run if it alone takes longer), and sets it beside the reference code's own wall time under
GNU Octave 7.3
(``octave_wall_times.json``, an unchanged copy of the workspace's
``shared/reference/redmax_scenes/octave_wall_times.json``, next to this script so that a
clean checkout runs it; ``tests/unit/test_reference_copies.py`` checks the copy). The
reference's integrator types are ``1`` = recursive hybrid dynamics + ode45
(``"rk45_recursive"`` here), ``2`` = RedMax + ode45 (``"rk45"``), ``3`` = RedMax + linearly
implicit Euler (``"euler"``).

Prints, per scene and type, the steps and evaluations of the equations of motion, our time,
Octave's time and their ratio; then the totals per type and overall, the slowest ratios, the
runs that miss the target (20x faster than Octave per run; 50x for the catalogue total), and
the reference runs not timed here (a scene not built yet, or an integrator type the scene
does not offer yet). Our times vary with the machine and its load (on a shared machine, the
best of several runs catches its quiet moments); the step and evaluation counts do not.
"""

import argparse
import json
import time
from pathlib import Path

from redmax_edu import scenes

#: The file of reference wall times (a copy of the workspace's shared one).
OCTAVE_TIMES = Path(__file__).with_name("octave_wall_times.json")

#: The reference's integrator types and the methods of ``Scene.simulate`` that run them.
METHOD_OF_TYPE = {1: "rk45_recursive", 2: "rk45", 3: "euler"}

#: Targets of the catalogue benchmark: every run, and the total, this many times faster than Octave.
TARGET_PER_RUN, TARGET_TOTAL = 20.0, 50.0


def best_time(fn, repeats, budget):
    """Best wall time of ``fn()`` and its result: at least ``repeats`` calls, more while the calls
    so far took less than ``budget`` s in all, a single call if it alone takes ``budget`` s."""
    best, total, count, result = float("inf"), 0.0, 0, None
    while count < repeats or total < budget:
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best, total, count = min(best, elapsed), total + elapsed, count + 1
        if elapsed >= budget:
            break
    return best, result


def reference_runs(path):
    """The reference runs by (scene, itype): ``(t_span, wall seconds)``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {(r["scene"], r["itype"]): (tuple(float(t) for t in r["t_span"]), float(r["wall_s"]))
            for r in data["runs"]}


def build(scene_id):
    """The scene, or the reason it is not built yet."""
    try:
        return scenes.scene(scene_id), None
    except ValueError as err:
        return None, str(err)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="least runs per simulation (the best counts)")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of runs per simulation")
    parser.add_argument("--scenes", type=int, nargs="+", default=None, help="only these scene ids")
    parser.add_argument("--octave", default=OCTAVE_TIMES, help="the reference wall times (JSON)")
    args = parser.parse_args()
    runs = reference_runs(args.octave)
    ids = sorted({sid for sid, _ in runs} if args.scenes is None else set(args.scenes))
    rows, missing, warmed = [], [], set()
    print(f"Scene.simulate over the reference span (best of at least {args.repeats} runs or of "
          f"{args.budget:g} s of runs) against the reference code under Octave 7.3")
    print(f"{'scene':33s} {'type':>4s} {'method':>14s} {'span':>5s} {'steps':>6s} {'evals':>6s} | "
          f"{'ours':>9s} {'Octave':>8s} {'ratio':>8s}")
    for sid in ids:
        types = sorted(itype for s, itype in runs if s == sid)
        scene, reason = build(sid)
        if scene is None:
            missing += [(sid, itype, "not built yet", runs[sid, itype][1]) for itype in types]
            continue
        for itype in types:
            method = METHOD_OF_TYPE[itype]
            span, octave = runs[sid, itype]
            if method not in scene.integrators:
                missing.append((sid, itype, f"{method!r} not among the scene's integrators", octave))
                continue
            if method not in warmed:  # the first run of a method imports and caches what it needs
                scene.simulate(method, t_span=(span[0], span[0] + (span[1] - span[0]) / 20))
                warmed.add(method)
            seconds, tr = best_time(lambda s=scene, m=method, t=span: s.simulate(m, t_span=t), args.repeats,
                                    args.budget)
            ratio = octave / seconds
            rows.append((sid, scene.name, itype, method, seconds, octave, ratio))
            flag = "" if ratio >= TARGET_PER_RUN else f"  < {TARGET_PER_RUN:g}x"
            print(f"{sid:3d} {scene.name[:29]:29s} {itype:4d} {method:>14s} {span[1] - span[0]:4.3g}s "
                  f"{tr.nsteps:6d} {tr.nfev:6d} | {seconds * 1e3:7.1f}ms {octave:7.2f}s {ratio:7.1f}x{flag}")
    if not rows:
        print("no reference run was timed")
        return
    print()
    print(f"{'totals':20s} {'runs':>5s} {'ours':>9s} {'Octave':>9s} {'ratio':>8s}")
    for itype in sorted({r[2] for r in rows}):
        sel = [r for r in rows if r[2] == itype]
        ours, octave = sum(r[4] for r in sel), sum(r[5] for r in sel)
        print(f"type {itype} ({METHOD_OF_TYPE[itype]}){'':{14 - len(METHOD_OF_TYPE[itype])}s} {len(sel):5d} "
              f"{ours:8.3f}s {octave:8.2f}s {octave / ours:7.1f}x")
    ours, octave = sum(r[4] for r in rows), sum(r[5] for r in rows)
    verdict = "meets" if octave / ours >= TARGET_TOTAL else "misses"
    print(f"{'all timed runs':20s} {len(rows):5d} {ours:8.3f}s {octave:8.2f}s {octave / ours:7.1f}x  "
          f"({verdict} the {TARGET_TOTAL:g}x target)")
    print()
    print("slowest ratios: " + ", ".join(f"scene {r[0]} {r[3]} {r[6]:.1f}x"
                                         for r in sorted(rows, key=lambda r: r[6])[:5]))
    below = [r for r in rows if r[6] < TARGET_PER_RUN]
    listed = ", ".join(f"scene {r[0]} {r[3]} ({r[6]:.1f}x)" for r in below)
    print(f"runs below {TARGET_PER_RUN:g}x: {listed or 'none'}")
    if missing:
        total = sum(m[3] for m in missing)
        print(f"reference runs not timed here ({len(missing)}, {total:.1f} s of Octave time):")
        for sid, itype, why, seconds in missing:
            print(f"  scene {sid:3d} type {itype}: {why} (Octave {seconds:.2f} s)")


if __name__ == "__main__":
    main()
