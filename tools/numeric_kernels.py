"""Run a command again under other numeric kernels, as other computers would pick them.

    python tools/numeric_kernels.py LEVEL          # print NPY_DISABLE_CPU_FEATURES for a level
    python tools/numeric_kernels.py --env LEVEL    # print the whole environment of the variant
    python tools/numeric_kernels.py --run -- CMD   # run CMD once under every variant that applies

OpenBLAS and numpy pick their kernels by CPU, so a stored output that prints round-off digits
passes on the author's machine and fails on a reader's. Each variant emulates an older
computer on this one: OpenBLAS is forced to an older core type (``OPENBLAS_CORETYPE``) and
numpy's SIMD paths above a level are switched off (``NPY_DISABLE_CPU_FEATURES``).

numpy refuses at import to disable a feature of its baseline, and ignores one it does not
dispatch, so the list is computed from numpy itself: the dispatched features above the level
that this CPU has. A variant that cannot run here (the level is above this CPU, below numpy's
baseline, or an x86 core type on an arm machine) is skipped with a printed line. pytest's exit
status 5 ("no tests collected") counts as success.
"""

import os
import platform
import subprocess
import sys

#: name -> (architecture, numpy level names (new numpy, then numpy < 2.4), OpenBLAS core type)
VARIANTS = {
    "avx2": ("x86", ("X86_V3", "AVX2"), "Haswell"),
    "sse42": ("x86", ("X86_V2", "SSE42"), "Sandybridge"),
    "arm-baseline": ("arm", ("baseline",), "ARMV8"),
}
#: the CPU feature each forced OpenBLAS core type needs (running it without would crash)
CORETYPE_NEEDS = {"Haswell": ("AVX2", "FMA3"), "Sandybridge": ("AVX",), "ARMV8": ()}


def numpy_cpu():
    """(baseline, dispatched, present features) of the running numpy."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__

    present = {name for name, on in __cpu_features__.items() if on}
    return list(__cpu_baseline__), list(__cpu_dispatch__), present


def architecture():
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i686", "i386"):
        return "x86"
    if machine.startswith(("arm", "aarch64")):
        return "arm"
    return machine


def disable_list(levels, cpu=None):
    """The dispatched features above ``levels`` that this CPU has, or a reason to skip (str).

    ``levels`` names the level in the spellings of several numpy versions; the first one numpy
    knows is used. "baseline" means: every dispatched feature (numpy's compiled minimum).
    """
    baseline, dispatch, present = cpu or numpy_cpu()
    for level in levels:
        if level == "baseline":
            return [f for f in dispatch if f in present]
        if level in baseline:
            return [f for f in dispatch if f in present]  # everything dispatched is above it
        if level in dispatch:
            if level not in present:
                return f"this CPU lacks {level}"
            return [f for f in dispatch[dispatch.index(level) + 1:] if f in present]
    return f"numpy knows none of the levels {', '.join(levels)}"


def variant_env(name, cpu=None, arch=None):
    """The environment additions of variant ``name``, or a reason (str) it does not apply here."""
    wanted_arch, levels, coretype = VARIANTS[name]
    arch = arch or architecture()
    if arch != wanted_arch:
        return f"not an {wanted_arch} machine ({arch})"
    cpu = cpu or numpy_cpu()
    missing = [f for f in CORETYPE_NEEDS[coretype] if f not in cpu[2]]
    if missing:
        return f"this CPU lacks {' '.join(missing)} for OpenBLAS core type {coretype}"
    disable = disable_list(levels, cpu)
    if isinstance(disable, str):
        return disable
    env = {"OPENBLAS_CORETYPE": coretype}
    if disable:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(disable)
    return env


def shell_words(env):
    return " ".join(f'{k}="{v}"' if " " in v else f"{k}={v}" for k, v in env.items())


def run_all(command):
    """Run ``command`` under every variant; 0 when each one passes or is skipped."""
    failed = []
    for name in VARIANTS:
        env = variant_env(name)
        if isinstance(env, str):
            print(f"numeric_kernels: skip variant {name}: {env}", flush=True)
            continue
        print(f"numeric_kernels: variant {name}: {shell_words(env)} {' '.join(command)}", flush=True)
        status = subprocess.call(command, env={**os.environ, **env})
        if status not in (0, 5):
            failed.append(f"{name} (exit {status})")
    print(f"numeric_kernels: {'failed under ' + ', '.join(failed) if failed else 'all variants passed'}")
    return 1 if failed else 0


def main(args):
    if args[:1] == ["--run"]:
        command = args[2:] if args[1:2] == ["--"] else args[1:]
        if not command:
            print("usage: numeric_kernels.py --run -- COMMAND ...")
            return 2
        return run_all(command)
    if args[:1] == ["--env"] and len(args) == 2 and args[1] in VARIANTS:
        env = variant_env(args[1])
        print(f"skip: {env}" if isinstance(env, str) else shell_words(env))
        return 0
    if len(args) == 1:
        levels = VARIANTS[args[0]][1] if args[0] in VARIANTS else (args[0],)
        disable = disable_list(levels)
        print(f"skip: {disable}" if isinstance(disable, str) else " ".join(disable))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
