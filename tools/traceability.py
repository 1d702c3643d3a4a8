"""Where each numbered equation and algorithm of the writeup is computed, tested and taught.

    python tools/traceability.py                       # exit 1 if the committed page is stale
    python tools/traceability.py --write               # rewrite book/appendix/traceability.md
    python tools/traceability.py --verify-writeup TXT  # count the numbers in the writeup's text

The writeup (Sueda, *Analytically Differentiable Articulated Rigid Body Dynamics*) numbers
103 + 134 + 106 equations in its three parts and 12 algorithms (``EQUATIONS``, ``ALGORITHMS``).
Everything else is read from the repository, statically (no import of the library, no run):

* **functions**: a public function, class or method of ``redmax_edu`` computes an equation when
  its own docstring cites it ("Eq. 2.19", "Eq. (3.53)-(3.58)", "(3.30)", "Alg. 5-6",
  "Algorithms 9-10"); the graders (``redmax_edu.exercises``), the figures (``redmax_edu.viz``),
  the notebook plumbing (``redmax_edu._book``) and the argument checks (``redmax_edu._validate``)
  compute nothing of their own and are left out. The code is the single source: the only
  hand-kept table is ``DERIVATION``, the equations that are steps of a derivation with nothing
  to compute, each with its reason.
* **tests**: a test module (``test_*.py``) of ``tests/unit`` or ``tests/claims`` exercises a
  function when it names it: imports it, or reaches it as an attribute of an imported module
  (re-exports are followed to where the function is defined). A method is exercised when the
  module reads an attribute of the method's name and names its class, a class above or below
  it, or anything else of its module. A function no test names counts the tests of its nearest
  callers in the library (read the same way), so that a core behind a checking door is found.
  This reads the source; it does not trace a run (too slow for CI), so a function reached by
  another road (a callable passed in, a name built at run time) is missed, and a module that
  names a function is counted even if it only passes it along.
* **pages**: a page teaches an equation when its prose (a notebook's markdown cells, a
  Markdown page) cites it, as "Eq. (2.19)", "Eq. 2.19", "$(2.19)$" or ``\\tag{2.19}``; the map
  and the home page survey rather than teach, and an equation no page cites by number is
  taught by the page the map's row for its range links.
* **the writeup's numbers** are constants here, so that the tests need no copy of the writeup;
  ``--verify-writeup`` (and a test, where the workspace's copy is present) counts them in its text.

The page in the book's appendix is written by ``--write`` and committed;
tests/unit/test_traceability.py fails when it is stale, when a row loses what the committed
page shows, and when a citation anywhere names a number the writeup does not have.
"""

import ast
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = Path("book/appendix/traceability.md")

#: The writeup's numbered equations per part (1.1-1.103, 2.1-2.134, 3.1-3.106) and algorithms.
EQUATIONS = {1: 103, 2: 134, 3: 106}
ALGORITHMS = 12

#: Equations with nothing of their own to compute (definitions, worked examples, steps of a
#: derivation), each with its reason in one line.
_EXAMPLE = "the worked three-joint example of the Jacobian's derivative"
_ROUTE = ("a step of the writeup's route to the second derivative of R, which the library replaces by "
          "closed forms in q (`joints.exponential`: the route divides by q.q, singular at q = 0)")
DERIVATION = {
    "1.1": "a definition; a pose is the 4x4 matrix [[R, p], [0, 1]], the type of every pose in the library",
    "1.3": "a property of every rotation, not a computation (the argument checks hold each given "
           "transform to it)",
    "1.5": "a definition; a twist stacks its angular part over its linear part, in every 6-vector "
           "of the library",
    "1.17": "the identity [R nu] = R [nu] R^T, which turns Eq. (1.16) into (1.18)",
    "1.27": "the difference quotient of the acceleration that turns Eq. (1.21) into the step of Eq. (1.28)",
    "2.15": "the three-joint example of Jdot written out; its general blocks, Eq. (2.16)-(2.17), "
            "are computed",
    "3.2": f"{_EXAMPLE}: the three-joint Jacobian recalled (Algorithm 1 computes it)",
    "3.3": f"{_EXAMPLE}: a parent adjoint between two constants; the general form is Eq. (3.6)",
    "3.4": f"{_EXAMPLE}: that adjoint inverted; the general form is Eq. (3.6)",
    "3.5": f"{_EXAMPLE}: its derivative; the general form is Eq. (3.7)",
    "3.8": f"{_EXAMPLE}: the derivative of the left factor; the general form is Eq. (3.7)",
    "3.11": f"{_EXAMPLE}: the product rule over its three factors, which Algorithm 11 applies block by block",
    "3.35": _ROUTE,
    "3.36": _ROUTE,
    "3.37": _ROUTE,
    "3.38": _ROUTE,
}

#: Modules that compute nothing of their own (graders, figures, notebook plumbing, argument checks).
NOT_COMPUTING = ("redmax_edu.exercises", "redmax_edu.viz", "redmax_edu._book", "redmax_edu._validate")
TEST_FOLDERS = ("tests/unit", "tests/claims")

# --- citations ---------------------------------------------------------------------------------

_NUM = r"\(?\$?(\d)\.(\d+)[a-z]?\$?\)?"
_EQ = re.compile(r"\b(?:Eqs?\.|Equations?)\s*" + _NUM)
_BARE = re.compile(r"(?<![\w.$\\])\$?\(([123])\.(\d+)[a-z]?\)\$?")
_NEXT = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+)" + _NUM)
_RANGE = re.compile(r"\s*[-–]\s*" + _NUM)
_TAG = re.compile(r"\\tag\{([^}]*)\}")
_TAG_RANGE = re.compile(r"(\d)\.(\d+)\s*[-–]\s*(\d)\.(\d+)")
_TAG_NUM = re.compile(r"(\d)\.(\d+)")
_ALG = re.compile(r"\b(?:Algorithms?|Alg\.)\s*(\d+)(?!\d|\.\d)")
_ALG_NEXT = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+)(\d+)(?!\d|\.\d)")
_ALG_RANGE = re.compile(r"\s*[-–]\s*(\d+)(?!\d|\.\d)")


def equation(part, number):
    """The key of an equation: ``"2.19"``."""
    return f"{part}.{number}"


def algorithm(number):
    """The key of an algorithm: ``"Algorithm 12"``."""
    return f"Algorithm {number}"


def writeup_numbers():
    """Every numbered equation and algorithm of the writeup, in the writeup's order."""
    return ([equation(p, k) for p, n in EQUATIONS.items() for k in range(1, n + 1)]
            + [algorithm(k) for k in range(1, ALGORITHMS + 1)])


def _span(first, last):
    """The equations from ``first`` to ``last`` (part, number) inclusive; both ends if the parts differ."""
    if first[0] != last[0] or last[1] < first[1]:
        return [first, last]
    return [(first[0], k) for k in range(first[1], last[1] + 1)]


def _equation_list(text, match):
    """The equations of a list that starts with ``match`` ("2.5-2.12, (2.14) and (2.16)-(2.17)"),
    and where the list ends."""
    found, pos = [(int(match.group(1)), int(match.group(2)))], match.end()
    while True:
        step = _RANGE.match(text, pos)
        if step:
            found[-1:] = _span(found[-1], (int(step.group(1)), int(step.group(2))))
        else:
            step = _NEXT.match(text, pos)
            if not step:
                return found, pos
            found.append((int(step.group(1)), int(step.group(2))))
        pos = step.end()


def citations(text):
    """The equations and algorithms ``text`` cites, as keys ("2.19", "Algorithm 12"), in order.

    Equations are cited after "Eq.", "Eqs." or "Equation", or bare in parentheses ("(3.30)",
    "$(3.30)$", parts 1-3 only: "(5.6)" is a number), or as a display's ``\\tag{2.19}``; lists
    and ranges are expanded. Part 0 is the engineer's notes, not the writeup: left out. Numbers
    the writeup does not have are kept (``unknown`` finds them).

    >>> citations("Eq. (3.53)-(3.55), 2.19 and (1.2); Alg. 5-6; Algorithms 9 and 11; notes Eq. 0.3")
    ['3.53', '3.54', '3.55', '2.19', '1.2', 'Algorithm 5', 'Algorithm 6', 'Algorithm 9', 'Algorithm 11']
    >>> citations(r"$$ x \\tag{2.5-2.7} $$ as in $(1.8)$, not f(1.5) or Algorithms B.1-B.2")
    ['2.5', '2.6', '2.7', '1.8']
    """
    found, covered = [], []
    for pattern in (_EQ, _BARE):                  # a bare number inside an "Eq." list is that list's
        for match in pattern.finditer(text):
            if any(start <= match.start() < end for start, end in covered):
                continue
            numbers, end = _equation_list(text, match)
            covered.append((match.start(), end))
            found += [(match.start(), equation(*e)) for e in numbers if e[0] != 0]
    for match in _TAG.finditer(text):
        inner = match.group(1)
        spans = [_span((int(a), int(b)), (int(c), int(d))) for a, b, c, d in _TAG_RANGE.findall(inner)]
        numbers = [e for s in spans for e in s] or [(int(a), int(b)) for a, b in _TAG_NUM.findall(inner)]
        found += [(match.start(), equation(*e)) for e in numbers if e[0] != 0]
    for match in _ALG.finditer(text):
        numbers, pos = [int(match.group(1))], match.end()
        while True:
            step = _ALG_RANGE.match(text, pos)
            if step:
                numbers += range(numbers[-1] + 1, int(step.group(1)) + 1)
            else:
                step = _ALG_NEXT.match(text, pos)
                if not step:
                    break
                numbers.append(int(step.group(1)))
            pos = step.end()
        found += [(match.start(), algorithm(k)) for k in numbers]
    return [key for _, key in sorted(found, key=lambda f: f[0])]


def unknown(keys):
    """The keys among ``keys`` that name no equation or algorithm of the writeup."""
    known = set(writeup_numbers())
    return [k for k in keys if k not in known]


# --- the library -------------------------------------------------------------------------------


@dataclass
class Library:
    """The library read statically: its definitions, imports, classes and citing docstrings."""

    defined: dict = field(default_factory=dict)      # module -> {name: ast node}
    imports: dict = field(default_factory=dict)      # module -> {name: (module, name or None)}
    bases: dict = field(default_factory=dict)        # "module.Class" -> ["module.Base", ...]
    cites: dict = field(default_factory=dict)        # "module.qualname" -> [keys]

    def resolve(self, module, name, seen=()):
        """Where ``module.name`` is defined: "module.name", a module name, or None."""
        if (module, name) in seen:
            return None
        if name in self.defined.get(module, {}):
            return f"{module}.{name}"
        if f"{module}.{name}" in self.defined:
            return f"{module}.{name}"
        target = self.imports.get(module, {}).get(name)
        if target is None:
            return None
        if target[1] is None:
            return target[0] if target[0] in self.defined else None
        return self.resolve(target[0], target[1], (*seen, (module, name)))

    def family(self, cls):
        """``cls`` with every library class above or below it."""
        up, stack = set(), [cls]
        while stack:
            c = stack.pop()
            if c not in up:
                up.add(c)
                stack += self.bases.get(c, [])
        down = {c for c in self.bases if cls in self.ancestors(c)}
        return up | down

    def ancestors(self, cls):
        found, stack = set(), list(self.bases.get(cls, []))
        while stack:
            c = stack.pop()
            if c not in found:
                found.add(c)
                stack += self.bases.get(c, [])
        return found


def module_name(path, root):
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(module, is_package, node):
    """The module a ``from ... import`` names, made absolute."""
    if not node.level:
        return node.module
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(tree, module, is_package):
    """{local name: (module, name or None)} of every import of the library in ``tree``."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "redmax_edu":
                    if alias.asname:
                        found[alias.asname] = (alias.name, None)
                    else:
                        found["redmax_edu"] = ("redmax_edu", None)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_package, node)
            if source and source.split(".")[0] == "redmax_edu":
                for alias in node.names:
                    found[alias.asname or alias.name] = (source, alias.name)
    return found


def _public(name):
    return not name.startswith("_") or name == "__call__"


def read_library(root=ROOT):
    """The library under ``root``/redmax_edu, read with ``ast``."""
    lib = Library()
    for path in sorted((Path(root) / "redmax_edu").rglob("*.py")):
        module = module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lib.imports[module] = _imports(tree, module, path.name == "__init__.py")
        lib.defined[module] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                lib.defined[module][node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        lib.defined[module][target.id] = node
    for module, names in lib.defined.items():
        computing = not module.startswith(NOT_COMPUTING)
        for name, node in names.items():
            if isinstance(node, ast.ClassDef):
                bases = (lib.resolve(module, base.id) for base in node.bases if isinstance(base, ast.Name))
                lib.bases[f"{module}.{name}"] = [b for b in bases if b]
            if not computing or not _public(name) or not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            lib.cites[f"{module}.{name}"] = citations(ast.get_docstring(node) or "")
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, ast.FunctionDef) and _public(member.name):
                        doc = ast.get_docstring(member) or ""
                        lib.cites[f"{module}.{name}.{member.name}"] = citations(doc)
    lib.cites = {k: v for k, v in lib.cites.items() if v}
    return lib


# --- the tests ---------------------------------------------------------------------------------


def _named(tree, lib, bindings, module=None):
    """The library definitions the code of ``tree`` names, and the attribute names it reads.

    ``bindings`` are its imports of the library; in a library module (``module`` given) its own
    top-level names count too.
    """
    named, attributes = set(), set()

    def target(node):
        if isinstance(node, ast.Name):
            if node.id in bindings:
                source, name = bindings[node.id]
                return source if name is None else lib.resolve(source, name)
            if module is not None and node.id in lib.defined[module]:
                return f"{module}.{node.id}"
        if isinstance(node, ast.Attribute):
            owner = target(node.value)
            if owner in lib.defined:
                return lib.resolve(owner, node.attr)
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            attributes.add(node.attr)
        if isinstance(node, (ast.Name, ast.Attribute)):
            found = target(node)
            if found and found not in lib.defined:
                named.add(found)
    if module is None:  # in a test module an import is a reference, used below or not
        for source, name in bindings.values():
            found = source if name is None else lib.resolve(source, name)
            if found and found not in lib.defined:
                named.add(found)
    return named, attributes


def _exercises(lib, function, named, attributes):
    """Whether code that names ``named`` and reads ``attributes`` exercises ``function``.

    A method counts when the code reads an attribute of its name and names its class, a class
    above or below it, or anything else of the class's module.
    """
    if function in named:
        return True
    owner, _, member = function.rpartition(".")
    if owner not in lib.bases or member not in attributes:
        return False
    module = owner.rpartition(".")[0]
    return bool(lib.family(owner) & named) or any(n.rpartition(".")[0] == module for n in named)


def test_modules(root=ROOT):
    """Every test module of ``TEST_FOLDERS``, as paths relative to ``root``."""
    return sorted(p.relative_to(root) for folder in TEST_FOLDERS
                  for p in (Path(root) / folder).glob("test_*.py"))


def _functions(lib):
    """Every function and method the library defines: {"module.qualname": ast node}."""
    found = {}
    for module, names in lib.defined.items():
        for name, node in names.items():
            if isinstance(node, ast.FunctionDef):
                found[f"{module}.{name}"] = node
            elif isinstance(node, ast.ClassDef):
                found[f"{module}.{name}"] = node
                for member in node.body:
                    if isinstance(member, ast.FunctionDef):
                        found[f"{module}.{name}.{member.name}"] = member
    return found


def callers(lib):
    """{"module.qualname": the library functions, methods and module constants whose code names it}.

    Module constants count as callers: a table of functions (the generated Euler charts'
    ``DERIVATIVES``) calls what it lists when its users look it up.
    """
    found = defaultdict(set)
    functions = _functions(lib)
    nodes = dict(functions)
    for module, names in lib.defined.items():
        constants = {n: node for n, node in names.items() if isinstance(node, (ast.Assign, ast.AnnAssign))}
        nodes.update({f"{module}.{n}": node for n, node in constants.items()})
    methods = defaultdict(list)
    for name in functions:
        owner, _, member = name.rpartition(".")
        if owner in lib.bases:
            methods[member].append(name)
    for caller, node in nodes.items():
        module = next(m for m in sorted(lib.defined, key=len, reverse=True) if caller.startswith(m + "."))
        named, attributes = _named(node, lib, lib.imports[module], module)
        for callee in named:
            if callee != caller:
                found[callee].add(caller)
        for attribute in attributes:
            for method in methods.get(attribute, ()):
                if method != caller and _exercises(lib, method, named, attributes):
                    found[method].add(caller)
    return found


def exercising_tests(lib, root=ROOT):
    """{"module.qualname" of a citing function: ([test modules], via)}.

    The test modules that name the function; if none does, those that name its nearest callers
    in the library (``via`` lists those callers), so that a core behind a checking door (a
    ``*_unchecked`` function, ``implicit.integrate`` behind ``simulate``) is found.
    """
    direct = defaultdict(set)
    for rel in test_modules(root):
        tree = ast.parse((Path(root) / rel).read_text(encoding="utf-8"))
        named, attributes = _named(tree, lib, _imports(tree, "tests", False))
        for function in set(lib.cites) | named:
            if _exercises(lib, function, named, attributes):
                direct[function].add(rel.as_posix())
    calls = callers(lib)
    found = {}
    for function in lib.cites:
        level, seen = {function}, {function}
        while level and not any(direct.get(f) for f in level):
            level = {c for f in level for c in calls.get(f, ()) if c not in seen}
            seen |= level
        tests = sorted({t for f in level for t in direct.get(f, ())})
        via = sorted(f for f in level if f != function and direct.get(f))
        found[function] = (tests, via)
    return found


# --- the pages ---------------------------------------------------------------------------------


def _page_texts(root=ROOT):
    """(page path without suffix, title, prose) of every page of the book but this one and the API's."""
    pages = []
    for path in sorted((Path(root) / "book").rglob("*")):
        rel = path.relative_to(root)
        if "_build" in rel.parts or ".ipynb_checkpoints" in rel.parts or rel.parts[1] == "api":
            continue
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            prose = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        elif path.suffix == ".md" and rel != PAGE:
            prose = path.read_text(encoding="utf-8")
        else:
            continue
        title = next((line[2:].strip() for line in prose.splitlines() if line.startswith("# ")), rel.stem)
        pages.append((rel.with_suffix("").as_posix(), title, prose))
    return pages


MAP = "book/00_intro/map"
#: Pages that survey the whole writeup rather than teach an equation: the map and the home page.
OVERVIEWS = (MAP, "book/index")


def _map_rows(root=ROOT):
    """(keys, [(page, title)]) of each row of the map's tables: the range it cites, the pages it links."""
    titles = {page: title for page, title, _ in _page_texts(root)}
    rows = []
    for line in (Path(root) / f"{MAP}.md").read_text(encoding="utf-8").splitlines():
        cells = line.split("|")
        if len(cells) < 5:
            continue
        links = re.findall(r"\]\(\.\./([\w/]+)\.(?:ipynb|md)\)", cells[3])
        pages = [(f"book/{link}", titles.get(f"book/{link}", link)) for link in links]
        rows.append((citations(cells[1]), pages))
    return rows


def teaching_pages(root=ROOT):
    """{key: [(page, title)]}: the pages whose prose cites the key, in the book's order.

    The map (``MAP``) cites whole ranges in its table and the home page names a few algorithms:
    they survey, they do not teach. An equation that no page cites by number is taught by the
    page the map's row links it to.
    """
    found = defaultdict(list)
    for page, title, prose in _page_texts(root):
        if page not in OVERVIEWS:
            for key in dict.fromkeys(citations(prose)):
                found[key].append((page, title))
    for keys, pages in _map_rows(root):
        for key in keys:
            if not found.get(key):
                found[key] = list(pages)
    return dict(found)


# --- the registry and its page -----------------------------------------------------------------


@dataclass
class Row:
    """One numbered equation or algorithm: who computes, tests and teaches it."""

    key: str
    functions: list
    tests: list
    pages: list
    via: dict                  # function tested only through its callers -> those callers
    reason: str = ""
    untested: list = field(default_factory=list)   # functions no test exercises, not even through callers

    @property
    def complete(self):
        return bool(self.functions and self.tests and self.pages)


def registry(root=ROOT):
    """One :class:`Row` per numbered equation and algorithm of the writeup, in its order."""
    lib = read_library(root)
    tests = exercising_tests(lib, root)
    pages = teaching_pages(root)
    by_key = defaultdict(list)
    for function, keys in lib.cites.items():
        for key in dict.fromkeys(keys):
            by_key[key].append(function)
    rows = []
    for key in writeup_numbers():
        functions = sorted(by_key.get(key, []))
        covering = sorted({t for f in functions for t in tests[f][0]})
        via = {f: tests[f][1] for f in functions if tests[f][1]}
        untested = [f for f in functions if not tests[f][0]]
        rows.append(Row(key, functions, covering, pages.get(key, []), via, DERIVATION.get(key, ""), untested))
    return rows


# --- the API reference ---------------------------------------------------------------------------

_AUTOMODULE = re.compile(r"\.\. automodule:: ([\w.]+)\n((?:[ \t]+:[^\n]*\n)*)")


def api_targets(lib, root=ROOT):
    """{"module.qualname": the name the API reference documents it under}, as autodoc does.

    ``book/api/*.md`` document modules with ``automodule`` and ``:members:`` (every public
    definition with a docstring, or the module's ``__all__``, re-exports included; a class with
    its public methods that have docstrings) or ``:members: a, b``. The strict build (``-n``)
    fails on a link this gets wrong.
    """
    targets, functions = {}, _functions(lib)
    for page in sorted((Path(root) / "book" / "api").glob("*.md")):
        for module, options in _AUTOMODULE.findall(page.read_text(encoding="utf-8")):
            members = re.search(r":members:(.*)", options)
            if module not in lib.defined or not members:
                continue
            listed = [m.strip() for m in members.group(1).split(",") if m.strip()]
            if not listed:
                exported = lib.defined[module].get("__all__")
                if exported is not None:
                    listed = ast.literal_eval(exported.value)
                else:
                    definitions = (ast.FunctionDef, ast.ClassDef)
                    listed = [n for n, node in lib.defined[module].items()
                              if _public(n) and n != "__call__" and isinstance(node, definitions)
                              and ast.get_docstring(node)]
            for name in listed:
                found = lib.resolve(module, name)
                node = functions.get(found)
                if found is None or node is None or found in targets:
                    continue
                targets[found] = f"{module}.{name}"
                if isinstance(node, ast.ClassDef):
                    for member in node.body:
                        if (isinstance(member, ast.FunctionDef) and not member.name.startswith("_")
                                and ast.get_docstring(member)):
                            targets[f"{found}.{member.name}"] = f"{module}.{name}.{member.name}"
    return targets


# --- the page ------------------------------------------------------------------------------------

SHOWN_TESTS = 2


def _short(name):
    return name.removeprefix("redmax_edu.")


SHOWN_CALLERS = 2


SHOWN_PER_MODULE = 3


def _function_cell(row, targets):
    """The functions of a row, linked where the API reference has them; a generated module's
    dozens of undocumented functions in brief."""
    by_module = defaultdict(list)
    for f in row.functions:
        by_module[f.rpartition(".")[0]].append(f)
    cells = []
    for module, functions in by_module.items():
        if len(functions) > SHOWN_PER_MODULE and not any(f in targets or f in row.via for f in functions):
            names = ", ".join(f"`{f.rpartition('.')[2]}`" for f in functions[:2])
            more = len(functions) - 2
            cells.append(f"{len(functions)} functions of `{_short(module)}` ({names} and {more} more)")
            continue
        for f in functions:
            cell = f"{{py:obj}}`{_short(f)} <{targets[f]}>`" if f in targets else f"`{_short(f)}`"
            callers = row.via.get(f, [])
            if callers:
                cell += " (tested through " + ", ".join(f"`{_short(c)}`" for c in callers[:SHOWN_CALLERS])
                cell += f" and {len(callers) - SHOWN_CALLERS} more)" if len(callers) > SHOWN_CALLERS else ")"
            cells.append(cell)
    return ", ".join(cells)


def _tests_cell(row):
    names = [Path(t).stem for t in row.tests]           # plain text, so that a narrow column wraps
    text = ", ".join(names[:SHOWN_TESTS])
    if len(names) > SHOWN_TESTS:
        text += f" and {len(names) - SHOWN_TESTS} more"
    return text


def _page_cell(pages):
    links = []
    for page, title in pages:
        number = re.match(r"(?:Appendix [A-Z]|\d+(?:\.\d+)*(?:(?:-| and )\d+(?:\.\d+)*)?)\b", title)
        label = number.group(0) if number else title
        links.append(f"[{label}](../{page.removeprefix('book/')}{_suffix(page)})")
    return ", ".join(links)


def _suffix(page, root=ROOT):
    return ".ipynb" if (Path(root) / f"{page}.ipynb").exists() else ".md"


def status(row):
    """What a row has: "complete", "derivation" (with its reason), or what it lacks."""
    if row.reason:
        return "derivation"
    if row.complete:
        return "complete"
    return "no " + " and no ".join(w for w, have in (("function", row.functions), ("test", row.tests),
                                                       ("page", row.pages)) if not have)


def counts(rows):
    """{"equations": (complete, derivation, total), "algorithms": (...), "without": [keys]}."""
    found = {}
    for kind, pick in (("equations", lambda r: not r.key.startswith("Algorithm")),
                       ("algorithms", lambda r: r.key.startswith("Algorithm"))):
        chosen = [r for r in rows if pick(r)]
        statuses = [status(r) for r in chosen]
        found[kind] = (statuses.count("complete"), statuses.count("derivation"), len(chosen))
    found["without"] = [r.key for r in rows if status(r) not in ("complete", "derivation")]
    return found


def summary_sentence(rows):
    """The sentence of the home page (and of the table's page) that says what the table shows."""
    c = counts(rows)
    eq_done, eq_derivation, eq_total = c["equations"]
    alg_done, _, alg_total = c["algorithms"]
    other = "the other" if eq_done + eq_derivation == eq_total else "and"
    algorithms = f"All {alg_total}" if alg_done == alg_total else f"{alg_done} of the {alg_total}"
    return (f"Of the writeup's {eq_total} numbered equations, {eq_done} are computed by a function of "
            f"the library that a test exercises and a page teaches; {other} {eq_derivation} are "
            f"definitions or steps of a derivation, with nothing of their own to compute. "
            f"{algorithms} of its algorithms are functions, tested and taught.")


_PARTS = {1: "Part 1: maximal coordinates", 2: "Part 2: reduced coordinates",
          3: "Part 3: differentiable RedMax"}


def render(rows, root=ROOT):
    """The appendix page: the counts, then one table row per numbered equation and algorithm."""
    lib = read_library(root)
    targets = api_targets(lib, root)
    c = counts(rows)
    lines = [
        "# Every equation, the function that computes it, its tests and its page",
        "",
        "After this page you will be able to take any numbered equation or algorithm of the writeup",
        "{cite:p}`sueda2021` and find the library function that computes it, the test modules that",
        "exercise that function, and the page of this book that teaches it.",
        "",
        "<!-- Written by tools/traceability.py --write; tests/unit/test_traceability.py keeps it "
        "current. -->",
        "",
        summary_sentence(rows),
    ]
    if c["without"]:
        lines += ["", "Without a function, a test or a page: " + ", ".join(c["without"]) + "."]
    lines += [
        "",
        "## How the table is made",
        "",
        "Nothing here is kept by hand but the reasons of the rows with nothing to compute. The table",
        "is written from the repository by `tools/traceability.py`, without running anything:",
        "",
        "- **Computed by**: the public functions, classes and methods of `redmax_edu` whose own",
        "  docstring cites the equation (\"Eq. (2.19)\", \"Eq. 3.53-3.58\", \"Alg. 5-6\"). The graders,",
        "  the figures, the notebook plumbing and the argument checks are left out: they compute",
        "  nothing of their own. A name in blue links to the API reference.",
        "- **Tests**: the test modules of `tests/unit` and `tests/claims` that name one of those",
        "  functions (import it, or reach it through an imported module), or, for a method, read an",
        "  attribute of its name and name its class or its module. A function that no test names",
        "  counts the tests of its nearest callers in the library, named after \"tested through\"",
        "  (a core behind a checking door, such as `implicit.integrate` behind `simulate`). This is a",
        "  reading of the source, not a record of a run: a function reached by another road (a",
        "  callable passed in) is missed, and a module that names a function counts even where it",
        "  only passes it along. The doctests of the docstrings are not counted.",
        "- **Taught on**: the pages whose prose cites the equation (\"Eq. (2.19)\", \"$(2.19)$\", a",
        "  display's tag); where no page cites it by number, the page the [map](../00_intro/map.md)",
        "  gives its range.",
        "- **Nothing to compute**: a definition, a worked example or an intermediate line of a",
        "  derivation says so in place of a function, with the reason; where a result follows, it",
        "  has a row of its own. These reasons are the one table kept by hand.",
        "",
        "A test (`tests/unit/test_traceability.py`) fails when a docstring, a test or a page cites a",
        "number the writeup does not have, when a function cited here is named by no test, when a row",
        "loses its function, its tests or its page, and when this page is not what the code gives today.",
    ]
    for part, title in _PARTS.items():
        lines += ["", f"## {title}", "", "| Eq. | Taught on | Computed by | Tests |", "|---|---|---|---|"]
        for row in rows:
            if row.key.startswith(f"{part}."):
                lines.append(_table_row(row, targets))
    lines += ["", "## Algorithms", "", "| Algorithm | Taught on | Computed by | Tests |", "|---|---|---|---|"]
    lines += [_table_row(row, targets) for row in rows if row.key.startswith("Algorithm")]
    lines += [
        "",
        "## What to take away",
        "",
        "- Each equation the writeup asks you to compute is a named function of the library, and each",
        "  of those functions is named by a test: when you read an equation, you can run it.",
        "- The rows with nothing to compute are the writeup's definitions, worked examples and",
        "  intermediate lines; the function of the result they lead to is in the row of that result.",
        "- The table is generated from the docstrings: a new citation in the code appears here, and a",
        "  wrong one (an equation the writeup does not have) fails the tests.",
        "",
    ]
    return "\n".join(lines)


def _table_row(row, targets):
    number = row.key.replace("Algorithm ", "")
    if row.reason:
        computed = f"*nothing to compute*: {row.reason}"
    else:
        computed = _function_cell(row, targets) or "**none**"
    tests = _tests_cell(row) or ("-" if row.reason else "**none**")
    return f"| {number} | {_page_cell(row.pages) or '**none**'} | {computed} | {tests} |"


def page_rows(text):
    """{key: (function, tests, page)} read back from the page: whether each row shows each one.

    A derivation step shows its reason in place of a function; it counts as having one.
    """
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) != 6 or not re.fullmatch(r"\d+(?:\.\d+)?", cells[1]):
            continue
        key = cells[1] if "." in cells[1] else algorithm(cells[1])
        page, function, tests = (bool(c) and c != "**none**" for c in cells[2:5])
        found[key] = (function, tests, page)
    return found


def losses(before, rows):
    """What ``rows`` lack that the page ``before`` (from :func:`page_rows`) showed: ["2.19: test", ...]."""
    now = {r.key: (bool(r.functions or r.reason), bool(r.tests or r.reason), bool(r.pages)) for r in rows}
    lost = []
    for key, had in before.items():
        has = now.get(key, (False, False, False))
        lost += [f"{key}: {what}" for what, h, n in zip(("function", "test", "page"), had, has, strict=True)
                 if h and not n]
    return lost


def page_text(root=ROOT):
    """The page as the code gives it today."""
    return render(registry(root), root)


# --- the writeup's own text ----------------------------------------------------------------------


def count_writeup(text):
    """The highest equation label per part, the algorithms' numbers, and the numbers with no label.

    The transcription labels displays ``\\tag{2.19}``, or ``(2.19)`` after or beside them; a few
    labels were lost in the transcription. Citations ("Eq. (2.19)", "Eqs. (3.6), (3.7)") are
    removed first; every other ``(p.n)`` is a label.
    """
    original = text
    text = _EQ.sub(lambda m: " " * (_equation_list(original, m)[1] - m.start()), original)
    labels = {(int(p), int(n)) for p, n in re.findall(r"\\tag\{([123])\.(\d+)[a-z]?\}", text)}
    labels |= {(int(p), int(n)) for p, n in re.findall(r"\(([123])\.(\d+)[a-z]?\)", text)}
    highest = {part: max(n for p, n in labels if p == part) for part in EQUATIONS}
    gaps = {part: [k for k in range(1, highest[part] + 1) if (part, k) not in labels] for part in EQUATIONS}
    algorithms = sorted({int(n) for n in re.findall(r"(?m)^\W*Algorithm (\d+)\W", text)})
    return highest, algorithms, gaps


# --- citations anywhere --------------------------------------------------------------------------


def cited_anywhere(root=ROOT):
    """(where, key) of every citation in the library's source, the tests' source and the pages' prose."""
    found = []
    sources = [p for folder in ("redmax_edu", "tests") for p in sorted((Path(root) / folder).rglob("*.py"))]
    for path in sources:
        where = path.relative_to(root).as_posix()
        found += [(where, key) for key in citations(path.read_text(encoding="utf-8"))]
    for page, _, prose in _page_texts(root):
        found += [(page, key) for key in citations(prose)]
    return found


def main(argv):
    path = ROOT / PAGE
    if argv[:1] == ["--write"]:
        path.write_text(page_text(), encoding="utf-8")
        print(f"wrote {PAGE}")
        return 0
    if argv[:1] == ["--verify-writeup"]:
        highest, algorithms, gaps = count_writeup(Path(argv[1]).read_text(encoding="utf-8"))
        print("highest label per part:", highest, "(EQUATIONS:", EQUATIONS, ")")
        print("algorithms:", algorithms)
        print("numbers with no label in the transcription (lost in it):", gaps)
        return 0 if highest == EQUATIONS and algorithms == list(range(1, ALGORITHMS + 1)) else 1
    if not path.exists() or path.read_text(encoding="utf-8") != page_text():
        print(f"{PAGE} is stale: run python tools/traceability.py --write")
        return 1
    print(f"{PAGE} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

