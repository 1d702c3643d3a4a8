"""Forward dynamics time against the number of bodies, dense RedMax path (and Pinocchio's ABA).

    python benchmarks/forward_dynamics.py [--sizes 4 8 16 20 32 64 128]

Builds random serial chains of revolute joints (random axes, offsets and inertias), times
``redmax_edu.dynamics.forward_dynamics`` (Eq. 2.19: Jacobian by Alg. 2, ``M_r = J^T M J``,
dense Cholesky solve), and, when Pinocchio is installed (``pip install pin``, the
``[bench]`` extra; never needed by the book or the tests), ``pinocchio.aba`` on the same
chain in the same run. Prints the times, their ratio, and the relative difference of the
two accelerations (max |a - b| / max |b|). Timings are the best of several repeats, each
long enough to dwarf the timer's resolution; they vary from machine to machine, the ratios
much less.
"""

import argparse
import time

import numpy as np

from redmax_edu.dynamics import forward_dynamics
from redmax_edu.joints import Revolute
from redmax_edu.lie import random_rotation
from redmax_edu.model import Body, Model

try:
    import pinocchio as pin
except ImportError:  # the benchmark still runs, without the yardstick
    pin = None


def random_chain(n, rng):
    """A serial chain of n revolute links with random axes, offsets and diagonal inertias."""
    bodies = []
    for i in range(n):
        T_pj = np.eye(4)
        T_pj[:3, :3] = random_rotation(rng)
        T_pj[:3, 3] = rng.uniform(-0.3, 0.3, 3) if i else 0.0
        T_jb = np.eye(4)
        T_jb[:3, :3] = random_rotation(rng)
        T_jb[:3, 3] = rng.uniform(-0.2, 0.2, 3)
        moments = rng.uniform(0.01, 0.02, 3)
        bodies.append(Body(f"link{i}", i - 1, Revolute(rng.normal(size=3)), T_pj, T_jb,
                           mass=rng.uniform(0.5, 2.0), inertia=np.diag(moments)))
    return Model(bodies)


def pinocchio_model(model):
    """The same chain as a Pinocchio model (revolute joints about unaligned axes)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    parent = 0
    for b in model.bodies:
        placement = pin.SE3(b.T_parent_joint[:3, :3].copy(), b.T_parent_joint[:3, 3].copy())
        jid = pm.addJoint(parent, pin.JointModelRevoluteUnaligned(b.joint.axis), placement, b.name)
        R, c = b.T_joint_body[:3, :3], b.T_joint_body[:3, 3]
        pm.appendBodyToJoint(jid, pin.Inertia(b.mass, c.copy(), R @ b.inertia @ R.T), pin.SE3.Identity())
        parent = jid
    return pm


def best_time(fn, repeats=5, min_time=0.2):
    """Best per-call time over ``repeats`` batches, each batch running at least ``min_time`` s."""
    number, elapsed = 1, 0.0
    while elapsed < min_time:
        number *= 2
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 20, 32, 64, 128])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("forward dynamics of a serial revolute chain, best time per call")
    if pin is None:
        print("(Pinocchio not installed: `pip install pin` adds the ABA column)")
        print(f"{'bodies':>6} {'RedMax dense':>14}")
    else:
        print(f"{'bodies':>6} {'RedMax dense':>14} {'pin.aba':>10} {'ratio':>7} {'rel. diff':>10}")
    for n in args.sizes:
        model = random_chain(n, rng)
        q, qdot, tau = rng.normal(size=(3, n))
        t_ours = best_time(lambda m=model, q=q, v=qdot, t=tau: forward_dynamics(m, q, v, t))
        if pin is None:
            print(f"{n:6d} {t_ours * 1e6:11.1f} us")
            continue
        pm = pinocchio_model(model)
        data = pm.createData()
        t_pin = best_time(lambda pm=pm, d=data, q=q, v=qdot, t=tau: pin.aba(pm, d, q, v, t))
        ours, theirs = forward_dynamics(model, q, qdot, tau), pin.aba(pm, data, q, qdot, tau)
        diff = np.abs(ours - theirs).max() / np.abs(theirs).max()
        print(f"{n:6d} {t_ours * 1e6:11.1f} us {t_pin * 1e6:7.2f} us {t_ours / t_pin:6.0f}x {diff:10.1e}")


if __name__ == "__main__":
    main()
