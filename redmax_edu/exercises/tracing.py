"""Which library functions a student's code calls, seen while it runs.

An assignment lets its students call a few functions of the library (its allow-list: ``brac``
in the assignment on ``exp_se3``); any other function of ``redmax_edu`` that the student's
code calls would do the work for it. A static look at the code cannot see every route
(``getattr(importlib.import_module("redmax_" + "edu.lie"), "exp_" + "se3")``, a function of
the library handed to numpy as a callback, another public function that returns the answer
as a by-product), so the graders watch the calls themselves while the student's function
runs: a profiler (``sys.setprofile``) that sees every Python function entered and every
C function called.

* :func:`library_index` names every function, method and property of the loaded
  ``redmax_edu`` modules by the identity of its code object (and a few functions outside
  the library that an assignment forbids, such as ``scipy.linalg.expm``).
* :func:`start_tracing` installs the profiler. It reports (``emit``) each **entry** into the
  library from outside it, that is, a library function whose caller is not library code:
  the student's code, numpy calling back a library function, the grader's trampoline
  calling a student "function" that is the library's own. Calls inside the library (an
  allowed function using its helpers) are not entries. A library function handed as an
  argument to an entered one (a callback) counts as an entry too. It also reports every
  call of a C function that would blind or bypass it (:data:`TAMPERING`: ``sys.setprofile``,
  threads, ``fork``, ``gc.get_objects``, ...) and any use of ``ctypes``.
* :func:`call_student` calls the student's function through a trampoline that is not library
  code, so that a student "function" that *is* a library function is an entry too.
* :class:`Policy` (an assignment's allow-list) turns the reported events into a verdict
  message (:meth:`Policy.violation`).

In a notebook's "check your answer" cell the profiler runs only during each call of the
student's function and keeps its events in a list. In the trusted grading of
:mod:`~redmax_edu.exercises.remote` it runs for the whole life of the student's process, from
before the first line of the notebook, and writes every event to the grader's process at
once: code that runs later cannot take back an event, and the only way to stop the profiler
is a call it reports first.

The profiler touches only objects it captured when it was installed (no global, builtin or
attribute lookup that the student's code could replace) and never calls the student's code.
"""

import _thread
import functools
import gc
import os
import sys
import sysconfig
import types

PACKAGE = __name__.split(".")[0]
PACKAGE_DIR = os.path.dirname(sys.modules[PACKAGE].__file__) + os.sep

#: C functions whose call, anywhere while the student's code runs, would blind the tracer
#: (another profiler, a thread or process it does not follow, a handle on its own objects).
TAMPERING = {
    sys.setprofile: "sys.setprofile", sys.settrace: "sys.settrace", sys.getprofile: "sys.getprofile",
    _thread.start_new_thread: "a new thread (_thread.start_new_thread)",
    gc.get_objects: "gc.get_objects", gc.get_referrers: "gc.get_referrers",
    gc.get_referents: "gc.get_referents",
    os.fork: "os.fork", os.system: "os.system", os.setsid: "os.setsid",
    **{getattr(os, n): f"os.{n}" for n in ("forkpty", "posix_spawn", "posix_spawnp", "execv", "execve")
       if hasattr(os, n)},
}
for _name in ("start_joinable_thread",):  # Python 3.13
    if hasattr(_thread, _name):
        TAMPERING[getattr(_thread, _name)] = f"a new thread (_thread.{_name})"
try:
    import _posixsubprocess

    TAMPERING[_posixsubprocess.fork_exec] = "a new process (subprocess)"
except ImportError:  # not POSIX
    pass


#: Where the code of Python itself and of installed packages lives (and frozen modules, code made
#: by ``exec`` in them such as a dataclass's methods): a call from there into the library is
#: attributed to whoever called that code.
NEUTRAL_DIRS = tuple(sorted({os.path.join(path, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")
                             if (path := sysconfig.get_paths().get(key))} | {"<frozen ", "<string>"}))


def _codes(code):
    """``code`` and the code objects nested in it (lambdas, comprehensions, inner functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _add_function(index, fn, name):
    """Index the code of ``fn`` under ``name``, and the code nested in it under its own qualified name."""
    fn = getattr(fn, "__func__", fn)  # staticmethod, classmethod
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return
    module = getattr(fn, "__module__", None) or name.rsplit(".", 1)[0]
    for inner in _codes(code):
        index.setdefault(id(inner), (inner, name if inner is code else f"{module}.{inner.co_qualname}"))


def _add_class(index, cls, prefix, seen):
    if id(cls) in seen:
        return
    seen.add(id(cls))
    for attr, value in vars(cls).items():
        name = f"{prefix}.{attr}"
        if isinstance(value, property):
            for accessor in (value.fget, value.fset, value.fdel):
                if accessor is not None:
                    _add_function(index, accessor, name)
        elif isinstance(value, type) and value.__module__ == cls.__module__:
            _add_class(index, value, name, seen)
        else:
            _add_function(index, value, name)


def library_index(extra=()):
    """The library's code objects, named: ``{id(code): (code, "redmax_edu.lie.exp_se3")}``.

    Walks every loaded ``redmax_edu`` module: its functions, its classes' methods and
    properties (under the name of the class that defines them), and the code nested in
    them. ``extra`` adds functions outside the library by their public dotted names
    (``"scipy.linalg.expm"``), so that a grader can watch them too.

    Examples
    --------
    >>> from redmax_edu import lie
    >>> index = library_index()
    >>> index[id(lie.exp_se3.__code__)][1]
    'redmax_edu.lie.exp_se3'
    """
    index, seen = {}, set()
    for module_name, module in sorted(sys.modules.items()):
        if module is None or not (module_name == PACKAGE or module_name.startswith(PACKAGE + ".")):
            continue
        for attr, value in list(vars(module).items()):
            if getattr(value, "__module__", None) != module_name:
                continue  # imported from elsewhere: indexed under its own module
            if isinstance(value, type):
                _add_class(index, value, f"{module_name}.{value.__qualname__}", seen)
            elif isinstance(value, types.FunctionType):
                _add_function(index, value, f"{module_name}.{attr}")
    for dotted in extra:
        module_name, attr = dotted.rsplit(".", 1)
        __import__(module_name)
        _add_function(index, getattr(sys.modules[module_name], attr), dotted)
    return index


def ctypes_codes():
    """The code objects of ``ctypes`` (imported here): entering one is tampering."""
    import ctypes
    import ctypes.util

    found = set()
    for module in (ctypes, ctypes.util):
        for value in vars(module).values():
            if isinstance(value, types.FunctionType):
                found.update(id(c) for c in _codes(value.__code__))
            elif isinstance(value, type) and value.__module__ == module.__name__:
                for member in vars(value).values():
                    member = getattr(member, "__func__", member)
                    if isinstance(member, types.FunctionType):
                        found.update(id(c) for c in _codes(member.__code__))
    return found


def start_tracing(emit, index, forbidden_codes=frozenset(), alive=None):
    """Install the call tracer on this thread; ``emit(kind, text)`` receives its events.

    Events: ``("call", name)`` for an entry into the library from outside it (``name`` from
    ``index``; a library file's code missing from the index, loaded or made after the
    index was built, is named from its file and reported as ``("new", name)``),
    ``("tamper", what)`` for a call of :data:`TAMPERING` or an entry into
    ``forbidden_codes`` (the code of ``ctypes``), and, with ``alive = (code, token)``,
    ``("alive", token)`` each time the function of ``code`` is entered: proof that the
    tracer still runs, with a token that only the tracer and its reader know.

    Returns ``stop()``, which puts the previous profile function back (the trusted grading
    never calls it).
    """
    get = index.get
    tampering_get = {id(f): what for f, what in TAMPERING.items()}.get
    seen = {}  # id(code) -> (code, name or None, new?): codes met outside the index
    seen_get = seen.get
    package_dir, startswith, rsplit = PACKAGE_DIR, str.startswith, str.rsplit
    function_type, method_type, partial_type = types.FunctionType, types.MethodType, functools.partial
    list_type, tuple_type, dict_type, dict_values = list, tuple, dict, dict.values
    code_of = types.FunctionType.__dict__["__code__"].__get__
    func_of = types.MethodType.__dict__["__func__"].__get__
    partial_func = functools.partial.__dict__["func"].__get__
    type_of, id_of, frozen_forbidden = type, id, frozenset(forbidden_codes)
    replace = str.replace
    state = {"active": True}
    neutral_dirs = NEUTRAL_DIRS
    alive_code, alive_token = alive if alive is not None else (None, "")

    def classify(code):
        """(name, new) of a library code object, or None for code outside the library."""
        key = id_of(code)
        found = get(key)
        if found is not None:
            return found[1], False
        cached = seen_get(key)
        if cached is None:
            filename = code.co_filename
            if type_of(filename) is str and startswith(filename, package_dir):
                module = replace(rsplit(filename[len(package_dir):], ".", 1)[0], os.sep, ".")
                name = replace(f"{PACKAGE}.{module}.{code.co_qualname}", "\n", " ")
                cached = (code, name, True)
            else:  # outside the library: Python's own and installed packages' code is neutral
                neutral = type_of(filename) is str and startswith(filename, neutral_dirs)
                cached = (code, None, neutral)
            seen[key] = cached
        return (cached[1], True) if cached[1] is not None else None

    def neutral(code):
        """True for code of Python itself or of an installed package (numpy, functools): not the student's."""
        cached = seen_get(id_of(code))
        if cached is None:
            classify(code)
            cached = seen_get(id_of(code))
        return cached is not None and cached[1] is None and cached[2]

    def callback_names(frame):
        """Library functions handed to an entered library function as arguments."""
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        values = [frame.f_locals.get(n) for n in code.co_varnames[:count]]
        found, queue = [], list(values)
        for depth in range(2):
            nested = []
            for value in queue:
                kind = type_of(value)
                if kind is method_type:
                    value, kind = func_of(value), None
                    kind = type_of(value)
                if kind is partial_type:
                    value = partial_func(value)
                    kind = type_of(value)
                if kind is function_type:
                    named = classify(code_of(value))
                    if named is not None:
                        found.append(named)
                elif depth == 0 and (kind is list_type or kind is tuple_type):
                    nested.extend(value)
                elif depth == 0 and kind is dict_type:
                    nested.extend(dict_values(value))
            queue = nested
        return found

    def profiler(frame, event, arg):
        if not state["active"]:
            return
        if event == "call":
            code = frame.f_code
            if code is alive_code:
                emit("alive", alive_token)
                return
            if frozen_forbidden and id_of(code) in frozen_forbidden:
                emit("tamper", "ctypes")
                return
            named = classify(code)
            if named is None:
                return
            back = frame.f_back  # who called it, past Python's and other packages' code in between
            while back is not None and neutral(back.f_code):
                back = back.f_back
            if back is not None and classify(back.f_code) is not None:
                return  # the library calling itself (directly, or through functools, numpy, ...)
            emit("new" if named[1] else "call", named[0])
            for name, new in callback_names(frame):
                emit("new" if new else "call", name)
        elif event == "c_call":
            what = tampering_get(id_of(arg))
            if what is not None:
                emit("tamper", what)

    previous, setprofile = sys.getprofile(), sys.setprofile

    def stop():
        state["active"] = False
        setprofile(previous)

    setprofile(profiler)
    return stop


_TRAMPOLINE = {}
exec(compile("def call_student(fn, args):\n    return fn(*args)\n", "<the student's call>", "exec"),
     {"__name__": "<the student's call>"}, _TRAMPOLINE)
#: ``call_student(fn, args)`` is ``fn(*args)``, from code that is not the library's (see the module
#: docstring); not indexed, since it is made outside any module of the library.
call_student = _TRAMPOLINE["call_student"]


class Policy:
    """What the student's code of an assignment may call: its allow-list.

    Parameters
    ----------
    allowed : iterable
        The library functions the students may call: functions, classes (every method and
        property of the class and of its library bases) and modules (all of it).
    forbidden_outside : iterable of str
        Functions outside the library that they may not call either (``"scipy.linalg.expm"``,
        watched through :func:`library_index`'s ``extra``).
    strict : bool
        Library code missing from the index counts as tampering (the trusted grading, where
        every module was loaded before the student's code ran); otherwise it is judged by the
        name made from its file (a module loaded later in a notebook).

    Examples
    --------
    >>> from redmax_edu import lie
    >>> policy = Policy([lie.brac])
    >>> [policy.forbids(n) for n in ("redmax_edu.lie.brac", "redmax_edu.lie.exp_se3", "numpy.eye")]
    [False, True, False]
    """

    def __init__(self, allowed=(), forbidden_outside=(), strict=False):
        names, prefixes, shown = set(), set(), []
        for item in allowed:
            if isinstance(item, types.ModuleType):
                prefixes.add(item.__name__ + ".")
                shown.append(_short(item.__name__) + " (all of it)")
            elif isinstance(item, type):
                for cls in item.__mro__:
                    if cls.__module__.split(".")[0] == PACKAGE:
                        prefixes.add(f"{cls.__module__}.{cls.__qualname__}.")
                shown.append(_short(f"{item.__module__}.{item.__qualname__}") + " (its methods)")
            else:
                name = f"{item.__module__}.{item.__qualname__}"
                names.add(name)
                prefixes.add(name + ".<locals>.")
                shown.append(_short(name))
        self.names, self.prefixes = frozenset(names), tuple(sorted(prefixes))
        self.shown = tuple(shown)
        self.forbidden_outside = frozenset(forbidden_outside)
        self.strict = strict

    def strict_copy(self):
        """The same policy for the trusted grading (see ``strict``)."""
        copy = Policy(forbidden_outside=self.forbidden_outside, strict=True)
        copy.names, copy.prefixes, copy.shown = self.names, self.prefixes, self.shown
        return copy

    def forbids(self, name):
        """True when the student's code may not call the function named ``name``."""
        if name in self.names or name.startswith(self.prefixes):
            return False
        return name.startswith(PACKAGE + ".") or name in self.forbidden_outside

    def violation(self, function, events):
        """``(message, status)`` for the first event that breaks the policy, or None.

        ``status``: ``"tampered"`` (something that would hide calls from the grader) or
        ``"forbidden"`` (a call outside the allow-list).
        """
        for kind, text in events:  # tampering first: it says more than a call it hid or made
            if kind == "tamper":
                return (f"{function} called {text}, which would hide its calls from the grader: it is not "
                        "graded.", "tampered")
            if kind == "new" and self.strict:
                return (f"{function} ran {text}, library code made while the notebook ran (a module "
                        "reloaded or rewritten): it is not graded.", "tampered")
        for kind, text in events:
            if kind == "new" and text.endswith(".<module>"):
                continue  # a library module imported for the first time: its functions are what counts
            if kind in ("call", "new") and self.forbids(text):
                return (f"{function} calls {_short(text)}, which this assignment does not let you call "
                        f"({self.describe()}): write it yourself.", "forbidden")
        return None

    def describe(self):
        """The allow-list in a few words, for a message."""
        if not self.shown:
            return "it lets you call no function of the library"
        listed = ", ".join(self.shown)
        short = len(listed) <= 40
        return f"it lets you call only {listed}" if short else "see its list at the top of the notebook"


def _short(name):
    """``redmax_edu.lie.brac`` -> ``lie.brac``."""
    return name.split(".", 1)[1] if name.startswith(PACKAGE + ".") else name
