"""The library's shape, as ARCHITECTURE.md states it: checks the import-linter contracts do not make.

(`lint-imports`, in the lint tier, checks the layers and that no package has an import cycle.)

* No module imports another module's private name (an underscore name, by ``from m import _x``
  or as ``m._x`` on an imported module): what two modules share is public in the lower one.
* No library module is over 800 lines (the generated Euler-angle module aside), and the median is
  under 400: a module reads as one idea.
* ``simulate`` is a door: its code, without the docstring, is under 40 lines.
* ARCHITECTURE.md names every module of the library, and no module or function that does not exist.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from statistics import median

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "redmax_edu"
GENERATED = {"redmax_edu/joints/_euler_generated.py"}


def modules():
    """``{dotted name: path}`` of every module of the library."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = modules()


def _target(module, path, node):
    """The dotted module an ``ImportFrom`` node imports from."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def private_imports(module, path):
    """``(line, text)`` of every private name this module takes from another library module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, module_aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _target(module, path, node)
            if not source.startswith("redmax_edu"):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in MODULES:                       # a module: remember its local name
                    module_aliases[alias.asname or alias.name] = full
                elif alias.name.startswith("_") and not alias.name.startswith("__") and source != module:
                    found.append((node.lineno, f"from {source} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.asname:
                    module_aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in module_aliases and node.attr.startswith("_")
                and not node.attr.startswith("__") and module_aliases[node.value.id] != module):
            found.append((node.lineno, f"{module_aliases[node.value.id]}.{node.attr}"))
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_takes_another_modules_private_name(module):
    assert private_imports(module, MODULES[module]) == []


def test_the_private_name_check_catches_both_forms(tmp_path):
    fake = tmp_path / "integrators.py"                    # read as the module redmax_edu.integrators
    fake.write_text("from .dynamics import _secret\nfrom . import kinematics\n"
                    "x = kinematics._tree\nfrom .lie import adjoint\n")
    found = [text for _, text in private_imports("redmax_edu.integrators", fake)]
    assert found == ["from redmax_edu.dynamics import _secret", "redmax_edu.kinematics._tree"]


def code_lines(path):
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_800_lines_and_the_median_is_under_400():
    sizes = {str(p.relative_to(ROOT)): code_lines(p) for p in MODULES.values()
             if str(p.relative_to(ROOT)) not in GENERATED and p.name != "__init__.py"}
    assert {name: n for name, n in sizes.items() if n > 800} == {}
    assert median(sizes.values()) < 400, median(sizes.values())


def test_simulate_is_a_door_under_40_lines_of_code():
    tree = ast.parse((PACKAGE / "integrators.py").read_text(encoding="utf-8"))
    simulate = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "simulate")
    body = simulate.body[1:] if isinstance(simulate.body[0], ast.Expr) else simulate.body  # no docstring
    lines = set()
    for statement in body:
        lines.update(range(statement.lineno, statement.end_lineno + 1))
    assert 0 < len(lines) < 40, len(lines)


#: Packages ARCHITECTURE.md describes as a whole (their modules are figures and graders, one each).
WHOLE = ("redmax_edu.viz", "redmax_edu.exercises")


def test_architecture_md_names_every_module_and_no_other():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(redmax_edu(?:\.\w+)+)`", text))
    missing = sorted(m for m in MODULES if m != "redmax_edu" and m not in named
                     and not m.startswith(tuple(f"{pkg}." for pkg in WHOLE)))
    unknown = sorted(name for name in named if name not in MODULES and not _defined(name))
    assert missing == [], f"ARCHITECTURE.md does not name {missing}"
    assert unknown == [], f"ARCHITECTURE.md names modules or functions that do not exist: {unknown}"


def _defined(name):
    """Whether ``module.attribute`` names a function, class or constant defined in that module."""
    module, _, attribute = name.rpartition(".")
    if module not in MODULES:
        return False
    return re.search(rf"^(def |class )?{attribute}\b", MODULES[module].read_text(encoding="utf-8"),
                     re.MULTILINE) is not None


def _lint_imports(root):
    """Run import-linter on the package under ``root`` with the project's contracts; (status, output)."""
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("import-linter is not installed (pip install -r requirements.txt)")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = subprocess.run([str(exe), "--no-cache"], cwd=root, env=env, capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


@pytest.mark.parametrize(("module", "line", "named"), [
    ("lie.py", "from . import dynamics\n", "redmax_edu.lie -> redmax_edu.dynamics"),
    ("model.py", "from .integrators import simulate\n", "redmax_edu.model -> redmax_edu.integrators"),
    ("friction/patterns.py", "from .bisp import REG\n",
     "redmax_edu.friction.patterns -> redmax_edu.friction.bisp"),
])
def test_the_import_contracts_fail_on_a_back_arrow_and_name_it(tmp_path, module, line, named):
    """The contracts of pyproject.toml are not vacuous: one import up the layers breaks them, by name."""
    shutil.copytree(PACKAGE, tmp_path / "redmax_edu", ignore=shutil.ignore_patterns("__pycache__"))
    status, _ = _lint_imports(tmp_path)
    assert status == 0, "the contracts should hold on the library as it is"
    target = tmp_path / "redmax_edu" / module
    target.write_text(line + target.read_text())
    status, output = _lint_imports(tmp_path)
    assert status != 0 and named in output, output[-2000:]
