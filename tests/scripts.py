"""The repository's scripts, loaded by the tests of both tiers (not a test module).

The tools (``tools/*.py``) and the book's Sphinx extension (``book/_ext``) are files, not modules
of the package, so the tests import them from their paths. Importable as ``scripts`` from
``tests/unit`` and ``tests/claims``: pytest puts ``tests/``, the folder above those packages,
on the path.
"""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_script(path):
    """The Python file at ``path`` (relative to the repository's root) as a module of its own."""
    path = ROOT / path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_tool(name):
    """``tools/NAME.py`` as a module."""
    return load_script(Path("tools") / f"{name}.py")
