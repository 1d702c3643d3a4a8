"""Forward dynamics time against the number of bodies: dense RedMax, recursive (Alg. 9), Pinocchio's ABA.

    python benchmarks/forward_dynamics.py [--sizes 4 8 16 32 64 128 256] [--quick]
                                          [--json benchmarks/results/forward_dynamics.json --note TEXT]

Builds random serial chains and random binary trees of revolute joints (random axes, offsets
and inertias) and times, on each, in the same run:

- ``redmax_edu.dynamics.forward_dynamics`` (Eq. 2.19: the Jacobian by Alg. 2,
  ``M_r = J^T M J``, a dense solve): O(n^2) to fill ``J``, O(n^3) to form and solve ``M_r``;
- ``redmax_edu.recursive.recursive_forward_dynamics`` (Alg. 9): O(n), a Python loop over the
  bodies, so a fixed cost per body;
- ``pinocchio.aba`` when Pinocchio is installed (``pip install pin``, the ``[bench]`` extra;
  never needed by the book or the tests), the compiled yardstick.

Prints the times, the exponent ``p`` of ``time ~ n^p`` fitted by least squares on log-log axes
over the sizes from 16 bodies up (below that the fixed cost per call dominates), the body count
from which the recursive algorithm is faster than the dense one, the ratio recursive / ABA at
each size, and the largest relative difference between the three accelerations
(max |a - b| / max |b|). Timings are the best of several repeats, each long enough to dwarf the
timer's resolution, in CPU time of this process (``time.process_time``): on a machine shared
with other work it is far steadier than the wall clock, and with single-threaded BLAS it is
what the wall clock of an idle machine shows. So run it as
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/forward_dynamics.py``. The
figures vary from machine to machine, the exponents and ratios much less.

With ``--json PATH`` the measurements are also written to a file (sizes, times, fitted
exponents, crossover, ratios, differences, the date, the machine and ``--note``): the book's
scaling figure (book/02_reduced/12_recursive_dynamics) is drawn from the committed
``benchmarks/results/forward_dynamics.json``, so that the page shows one measured run and
its output stays the same when the notebook runs again. Produce it with ``make bench``'s
environment (which has Pinocchio)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv-bench/bin/python benchmarks/forward_dynamics.py \\
        --json benchmarks/results/forward_dynamics.json --note "what else ran on the machine"
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from redmax_edu.dynamics import forward_dynamics
from redmax_edu.joints import Revolute
from redmax_edu.lie import random_rotation
from redmax_edu.model import Body, Model
from redmax_edu.recursive import recursive_forward_dynamics

try:
    import pinocchio as pin
except ImportError:  # the benchmark still runs, without the yardstick
    pin = None

SHAPES = {"chain": lambda i: i - 1, "binary tree": lambda i: (i - 1) // 2}
FIT_FROM = 16  # smallest size in the fitted exponents


def random_model(n, rng, parent_of):
    """n revolute links (random axes, offsets, diagonal inertias); body i hangs from ``parent_of(i)``."""
    bodies = []
    for i in range(n):
        T_pj = np.eye(4)
        T_pj[:3, :3] = random_rotation(rng)
        T_pj[:3, 3] = rng.uniform(-0.3, 0.3, 3) if i else 0.0
        T_jb = np.eye(4)
        T_jb[:3, :3] = random_rotation(rng)
        T_jb[:3, 3] = rng.uniform(-0.2, 0.2, 3)
        moments = rng.uniform(0.01, 0.02, 3)
        bodies.append(Body(f"link{i}", parent_of(i) if i else -1, Revolute(rng.normal(size=3)), T_pj, T_jb,
                           mass=rng.uniform(0.5, 2.0), inertia=np.diag(moments)))
    return Model(bodies)


def pinocchio_model(model):
    """The same tree as a Pinocchio model (revolute joints about unaligned axes; joint i + 1 is body i)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    for b in model.bodies:
        placement = pin.SE3(b.T_parent_joint[:3, :3].copy(), b.T_parent_joint[:3, 3].copy())
        jid = pm.addJoint(b.parent + 1, pin.JointModelRevoluteUnaligned(b.joint.axis), placement, b.name)
        R, c = b.T_joint_body[:3, :3], b.T_joint_body[:3, 3]
        pm.appendBodyToJoint(jid, pin.Inertia(b.mass, c.copy(), R @ b.inertia @ R.T), pin.SE3.Identity())
    return pm


def best_time(fn, repeats=5, min_time=0.2):
    """Best per-call CPU time over ``repeats`` batches, each batch running at least ``min_time`` s."""
    number, elapsed = 1, 0.0
    while elapsed < min_time:
        number *= 2
        start = time.process_time()
        for _ in range(number):
            fn()
        elapsed = time.process_time() - start
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            fn()
        times.append((time.process_time() - start) / number)
    return min(times)


def fitted_exponent(sizes, times):
    """Slope of log(time) against log(n), least squares over the sizes >= FIT_FROM."""
    sizes, times = np.asarray(sizes, dtype=float), np.asarray(times)
    keep = sizes >= FIT_FROM
    return float(np.polyfit(np.log(sizes[keep]), np.log(times[keep]), 1)[0])


def crossover(sizes, dense, recursive):
    """``(n_k, n_x)``: the smallest measured size from which recursive stays faster than dense,
    and where the two time curves cross, interpolated on log-log axes between the sizes
    that bracket it (``n_x = n_k`` when recursive is faster at every size; None if never)."""
    faster = [r < d for d, r in zip(dense, recursive, strict=True)]
    for k in range(len(sizes)):
        if all(faster[k:]):
            if k == 0:
                return sizes[0], sizes[0]
            log_n = np.log(sizes[k - 1: k + 1])
            gap = np.log(np.asarray(recursive[k - 1: k + 1]) / np.asarray(dense[k - 1: k + 1]))
            return sizes[k], float(np.exp(log_n[0] - gap[0] * (log_n[1] - log_n[0]) / (gap[1] - gap[0])))
    return None, None


def relative_difference(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def measure(shape, sizes, rng, timing):
    """Times (s) of dense, recursive and ABA (None without Pinocchio) per size; the largest
    relative difference of each pair of accelerations."""
    rows, worst = [], {}
    for n in sizes:
        model = random_model(n, rng, SHAPES[shape])
        q, qdot, tau = rng.normal(size=(3, n))
        dense = forward_dynamics(model, q, qdot, tau)
        recursive = recursive_forward_dynamics(model, q, qdot, tau)
        pairs = {"recursive vs dense": (recursive, dense)}
        t_dense = best_time(lambda m=model, q=q, v=qdot, t=tau: forward_dynamics(m, q, v, t), **timing)
        t_rec = best_time(lambda m=model, q=q, v=qdot, t=tau: recursive_forward_dynamics(m, q, v, t),
                          **timing)
        t_aba = None
        if pin is not None:
            pm = pinocchio_model(model)
            data = pm.createData()
            aba = pin.aba(pm, data, q, qdot, tau).copy()
            pairs.update({"recursive vs pin.aba": (recursive, aba), "dense vs pin.aba": (dense, aba)})
            t_aba = best_time(lambda pm=pm, d=data, q=q, v=qdot, t=tau: pin.aba(pm, d, q, v, t), **timing)
        rows.append((n, t_dense, t_rec, t_aba))
        for pair, (a, b) in pairs.items():
            worst[pair] = max(worst.get(pair, 0.0), relative_difference(a, b))
    return rows, worst


def summary(rows, worst):
    """The measurements of one shape as a dict (what ``--json`` writes, and ``report`` prints)."""
    sizes = [r[0] for r in rows]
    seconds = {"dense": [r[1] for r in rows], "recursive": [r[2] for r in rows]}
    if pin is not None:
        seconds["pin.aba"] = [r[3] for r in rows]
    n_faster, n_cross = crossover(sizes, seconds["dense"], seconds["recursive"])
    out = {"sizes": sizes, "seconds": seconds,
           "exponents": {name: fitted_exponent(sizes, times) for name, times in seconds.items()},
           "recursive_faster_from": n_faster, "curves_cross_near": n_cross,
           "largest_relative_difference": worst}
    if pin is not None:
        out["recursive_over_aba"] = [r / a for r, a in zip(seconds["recursive"], seconds["pin.aba"],
                                                           strict=True)]
    return out


def machine():
    """What the figures were measured on: processor, cores, versions, BLAS threads."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    if pin is not None:
        versions["pinocchio"] = pin.__version__
    threads = {name: os.environ.get(name, "unset") for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    return {"cpu": cpu, "cores": os.cpu_count(), "system": platform.system(), "versions": versions,
            "threads": threads}


def library_commit():
    """The git commit the measured library was at (with "+changes" when the tree is dirty), or None."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "../redmax_edu"], cwd=here,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+changes" if dirty else "")


def write_record(path, benchmark, note, **fields):
    """Write one stored run to ``path`` as JSON: which script, the date, the library's commit, the
    machine, ``note`` (what else ran on it), then ``fields``. Every benchmark's ``--json`` writes
    through here; the book's pages draw and quote these files, and the claims tests check the
    pages' sentences against them."""
    record = {"benchmark": benchmark, "date": datetime.date.today().isoformat(),
              "commit": library_commit(), "machine": machine(), "note": note, **fields}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def write_json(path, results, timing, note):
    """Write the measurements of every shape, with the date, the machine and ``note``, to ``path``."""
    timing = {"repeats": 5, "min_time": 0.2, **timing}
    write_record(path, "benchmarks/forward_dynamics.py", note,
                 timer=(f"CPU time per call (time.process_time), best of {timing['repeats']} batches of at "
                        f"least {timing['min_time']} s each"),
                 fit_from=FIT_FROM,
                 models="random revolute joints (random axes, offsets and inertias), numpy seed 0",
                 shapes=results)


def report(shape, result):
    """Print the measurements of one shape (a :func:`summary`)."""
    seconds = result["seconds"]
    print(f"\n{shape}: forward dynamics")
    header = f"{'bodies':>6} {'dense':>11} {'recursive':>11} {'dense/rec':>9}"
    print(header + (f" {'pin.aba':>10} {'rec/aba':>8}" if "pin.aba" in seconds else ""))
    for k, n in enumerate(result["sizes"]):
        t_dense, t_rec = seconds["dense"][k], seconds["recursive"][k]
        line = f"{n:6d} {t_dense * 1e3:8.3f} ms {t_rec * 1e3:8.3f} ms {t_dense / t_rec:9.2f}"
        if "pin.aba" in seconds:
            line += f" {seconds['pin.aba'][k] * 1e6:7.2f} us {result['recursive_over_aba'][k]:7.0f}x"
        print(line)
    print(f"fitted exponent p of time ~ n^p (sizes >= {FIT_FROM}):",
          ", ".join(f"{name} {p:.2f}" for name, p in result["exponents"].items()))
    n_faster, n_cross = result["recursive_faster_from"], result["curves_cross_near"]
    if n_faster is None:
        print("recursive faster than dense: at no size measured")
    else:
        print(f"recursive faster than dense from {n_faster} bodies on (curves cross near n = {n_cross:.0f})")
    print("largest relative difference of the accelerations:",
          ", ".join(f"{pair} {value:.1e}" for pair, value in result["largest_relative_difference"].items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32, 64, 128, 256])
    parser.add_argument("--quick", action="store_true", help="short timing batches (a rough check)")
    parser.add_argument("--json", metavar="PATH", help="also write the measurements to this JSON file")
    parser.add_argument("--note", default="", help="a note on the machine for the JSON file")
    args = parser.parse_args()
    timing = dict(repeats=2, min_time=0.02) if args.quick else {}
    threads = {name: os.environ.get(name, "unset") for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    print("CPU time per call, best of several batches;", ", ".join(f"{k}={v}" for k, v in threads.items()))
    if pin is None:
        print("(Pinocchio not installed: `pip install pin` adds the pin.aba column)")
    rng = np.random.default_rng(0)
    results = {}
    for shape in SHAPES:
        results[shape] = summary(*measure(shape, args.sizes, rng, timing))
        report(shape, results[shape])
    if args.json:
        write_json(args.json, results, timing, args.note)
        print(f"\nmeasurements written to {args.json}")


if __name__ == "__main__":
    main()
