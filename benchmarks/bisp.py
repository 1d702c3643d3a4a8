"""Time per step of bilateral staggered projections (BISP, §2.11) on the reference's friction scenes.

    python benchmarks/bisp.py [--octave PATH] [--repeats 3]

Builds scenes 27 (two bars on tilted hinges, mu = 0.6), 28 (two bars on ball joints, mu = 5),
29 (two blocks on an inclined slide, mu = 0.8) and 31 (two bars on hinges whose tip ball lands
on the floor, joint mu = 0.1, floor mu = 0.2) of ``shared/reference/redmax_scenes`` in SI
units, from the reference's numbers (scenes.py does not build friction scenes yet), and runs
each over its time span with its step, the previous step's friction force as warm start, and
the reference's Baumgarte gain for the floor. Prints the time per step, the staggered iterations
per step, and, when the reference's timing file is found, the ratio of the reference code's
wall time under Octave to this run's. Timings are the best of ``--repeats`` runs.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from redmax_edu.constraints import FloorContact
from redmax_edu.contact import Box, Cylinder, JointFriction, Sphere, bisp_step, external_constraints
from redmax_edu.joints import Fixed, Prismatic, Revolute, SphericalExp
from redmax_edu.lie import exp_so3
from redmax_edu.model import Body, Model

BAR = dict(mass=0.01, inertia=np.diag([1.6667e-7, 8.4167e-6, 8.4167e-6]))   # 10 x 1 x 1 cm, 10 g


def frame(rotation=(0.0, 0.0, 0.0), p=(0.0, 0.0, 0.0)):
    E = np.eye(4)
    E[:3, :3] = exp_so3(rotation)
    E[:3, 3] = p
    return E


def two_bars(joint, root, geometry, mu, centre=0.05):
    """Two bars on equal joints, the second 10 cm along the first; each bar's centre ``centre`` along x."""
    bodies = [Body(f"body{i + 1}", i - 1, joint, root if i == 0 else frame(p=(0.1, 0, 0)),
                   frame(p=(centre, 0, 0)), **BAR) for i in range(2)]
    return Model(bodies), [JointFriction(i, mu, geometry) for i in range(2)]


def scenes():
    """(id, model, friction, q0, h, steps, gamma) of the benchmarked scenes."""
    out = []
    model, friction = two_bars(Revolute([0, 0, 1.0]), frame((np.pi / 4, 0, 0)), Cylinder(0.005, 0.01), 0.6)
    out.append((27, model, friction, np.zeros(2), 0.01, 100, 5.0))
    model, friction = two_bars(SphericalExp(), np.eye(4), Sphere(0.01), 5.0)
    out.append((28, model, friction, np.zeros(6), 0.01, 100, 5.0))
    slide = Box((0.05, 0.005, 0.05))
    model, friction = two_bars(Prismatic([1.0, 0, 0]), frame((0, np.pi / 3, 0)), slide, 0.8)
    out.append((29, model, friction, np.zeros(2), 0.01, 100, 5.0))
    model, friction = two_bars(Revolute([0, 1.0, 0]), np.eye(4), Cylinder(0.01, 0.01), 0.1)
    ball = Body("body3", 1, Fixed(), frame(p=(0.1, 0, 0)), np.eye(4), 4.18879e-3, 1.6755e-7 * np.eye(3))
    model = Model(model.bodies + (ball,),
                  constraints=[FloorContact(2, radius=0.01, plane=frame(p=(0, 0, -0.15)), mu=0.2)])
    out.append((31, model, friction, np.array([np.pi / 4, -np.pi / 4]), 0.01, 200, 10.0))
    return out


def run(model, friction, q0, h, steps, gamma_):
    """One run; returns (seconds, iterations per step)."""
    q, qdot, f_beta, iterations = q0.copy(), np.zeros(model.nq), None, []
    start = time.process_time()
    for _ in range(steps):
        external = external_constraints(model, q, qdot, h, gamma_=gamma_) if model.constraints else None
        q, qdot, info = bisp_step(model, q, qdot, h, friction, external=external, f_beta=f_beta)
        f_beta = info.f_beta
        iterations.append(info.iterations)
    return time.process_time() - start, np.array(iterations)


def octave_times(path):
    """Wall seconds of the reference's linearly implicit Euler runs (itype 3) by scene, or {}."""
    if path is None or not Path(path).is_file():
        return {}
    runs = json.loads(Path(path).read_text())["runs"]
    return {r["scene"]: r["wall_s"] for r in runs if r["itype"] == 3}


def main():
    default = Path(__file__).resolve().parents[2] / "shared/reference/redmax_scenes/octave_wall_times.json"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--octave", default=str(default), help="the reference's octave_wall_times.json")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    octave = octave_times(args.octave)
    print(f"{'scene':>5} {'steps':>5} {'ms/step':>8} {'iterations mean / max':>21} {'Octave s':>9} "
          f"{'ratio':>6}")
    for sid, model, friction, q0, h, steps, gamma_ in scenes():
        best, iterations = min((run(model, friction, q0, h, steps, gamma_) for _ in range(args.repeats)),
                               key=lambda r: r[0])
        ref = octave.get(sid)
        ratio = f"{ref / best:6.0f}" if ref else "     -"
        ref_s = f"{ref:9.2f}" if ref else "        -"
        its = f"{iterations.mean():.1f} / {iterations.max()}"
        print(f"{sid:>5} {steps:>5} {1e3 * best / steps:8.2f} {its:>21} {ref_s} {ratio}")


if __name__ == "__main__":
    main()
