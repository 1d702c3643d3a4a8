"""Classroom assignments: generate the student versions and autograders, grade a folder of submissions.

    python tools/exercises.py generate [NOTEBOOK ...] [--book-url URL]   # all of exercises/ by default
    python tools/exercises.py grade FOLDER [--out DIR] [--timeout SECONDS] [--jobs N]

(``make exercises`` and ``make grade SUBMISSIONS=FOLDER`` run these with the grading extra
installed.)

``generate`` runs ``otter assign`` on each source notebook of ``exercises/`` (solutions
inside) for the student version, and builds the assignment's autograder. For
``exercises/01_maximal/01_exp_log.ipynb`` it writes::

    exercises/_build/01_exp_log/student/01_exp_log.ipynb     hand this out
    exercises/_build/01_exp_log/autograder/autograder.zip    the Gradescope autograder
    exercises/_build/01_exp_log/autograder/01_exp_log.ipynb  the solutions, for the instructor

The zip carries what grading needs: the library's wheel, the exact versions of its
dependencies (``requirements.txt``), ``setup.sh`` and ``run_autograder`` (``tools/gradescope/``)
and ``grading.json`` (the assignment and a secret seed, drawn anew for each zip). Links to the
book in the generated notebooks are rewritten to work from where the notebooks are written, or
to point at ``--book-url`` (the published book). The solutions are then graded by the
autograder's grader and must earn full marks. ``exercises/_build`` is ignored by git, pytest
and the book.

``grade`` finds every notebook under FOLDER (any depth) and every zip file (a zip holding one
notebook is graded; any other is named as refused), recognises its assignment from the
notebook's metadata (otter writes the name into the student version) or else from its file
name, and grades it with :func:`redmax_edu.exercises.remote.grade_notebook` at the seed of the
assignment's autograder (generated first if missing), as Gradescope does. It prints one block
per submission and writes, to DIR (default ``exercises/_build/grades``): ``report.md`` (the
blocks), ``grades.csv`` (one row per submission and question), ``gradebook.csv`` (one row per
student, a total per assignment: for a learning management system) and ``results/`` (one
JSON file per submission, Gradescope's format).
"""

import argparse
import csv
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from redmax_edu.exercises import ASSIGNMENTS, WATCHED
from redmax_edu.exercises.gradescope import notebooks_in, results
from redmax_edu.exercises.remote import Zygote, grade_notebook, slug

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "exercises"
BUILD = SOURCE / "_build"
TEMPLATES = ROOT / "tools" / "gradescope"
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")  # the kernel of this environment


def otter_available():
    """True when otter-grader is installed (the ``grading`` extra)."""
    import importlib.util

    return importlib.util.find_spec("otter") is not None


def source_notebooks(root=SOURCE):
    """The source notebooks of the assignments: ``exercises/**/*.ipynb`` outside ``_build``."""
    return [p for p in sorted(Path(root).rglob("*.ipynb"))
            if "_build" not in p.parts and ".ipynb_checkpoints" not in p.parts]


# --- the autograder's contents ---------------------------------------------------------------------


def pinned_requirements(distribution="redmax_edu"):
    """``name==version`` of every package the installed ``distribution`` needs, at any depth, as here."""
    found, stack = {}, [distribution]
    while stack:
        name = stack.pop()
        dist = metadata.distribution(name)
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in found:
            continue
        found[key] = dist.version
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                stack.append(requirement.name)
    found.pop(distribution.lower().replace("_", "-"))
    return [f"{name}=={version}" for name, version in sorted(found.items())]


def _sources_digest():
    digest = hashlib.sha256()
    for path in sorted([*(ROOT / "redmax_edu").rglob("*"), ROOT / "pyproject.toml", ROOT / "README.md"]):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def library_wheel(build=BUILD):
    """The library's wheel, built from a copy of this checkout's sources (again only when they changed)."""
    folder = Path(build) / "wheel" / _sources_digest()
    wheels = sorted(folder.glob("redmax_edu-*.whl"))
    if not wheels:
        shutil.rmtree(Path(build) / "wheel", ignore_errors=True)
        folder.mkdir(parents=True)
        with tempfile.TemporaryDirectory() as copy:  # setuptools writes build/ next to the sources
            shutil.copytree(ROOT / "redmax_edu", Path(copy) / "redmax_edu",
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            for name in ("pyproject.toml", "README.md"):
                shutil.copy(ROOT / name, copy)
            command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(folder), copy]
            done = subprocess.run(command, capture_output=True, text=True)
        wheels = sorted(folder.glob("redmax_edu-*.whl"))
        if done.returncode != 0 or not wheels:
            raise RuntimeError(f"building the library's wheel failed:\n{done.stdout}{done.stderr}")
    return wheels[-1]


def write_autograder(target, name, wheel, seed):
    """The Gradescope autograder zip of assignment ``name`` (see the module docstring)."""
    config = {"assignment": name, "seed": seed, "time_limit": 5.0, "timeout": 600.0, "visibility": "visible"}
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for script in ("setup.sh", "run_autograder"):
            info = zipfile.ZipInfo(script)
            info.external_attr = 0o755 << 16
            archive.writestr(info, (TEMPLATES / script).read_text(encoding="utf-8"))
        archive.writestr("requirements.txt", "\n".join(pinned_requirements()) + "\n")
        archive.write(wheel, wheel.name)
        archive.writestr("grading.json", json.dumps(config, indent=2) + "\n")
    return target


def autograder_config(autograder):
    """``grading.json`` of an autograder zip."""
    with zipfile.ZipFile(autograder) as archive:
        return json.loads(archive.read("grading.json"))


# --- links in the generated notebooks --------------------------------------------------------------

LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)\s]+)\)")


def rewrite_links(notebook, source_dir, book_url=None):
    """Make the relative links of a generated notebook work from where it is written.

    Each link is read relative to ``source_dir`` (where its source notebook lives) and
    written relative to the generated notebook's folder, or, with ``book_url``, as the
    address of that page of the published book (``.ipynb`` and ``.md`` become ``.html``).
    """
    notebook = Path(notebook)
    data = json.loads(notebook.read_text(encoding="utf-8"))

    def fix(match):
        target = (Path(source_dir) / match.group(1).split("#")[0]).resolve()
        anchor = match.group(1)[len(match.group(1).split("#")[0]):]
        if book_url and target.is_relative_to(ROOT):
            page = target.relative_to(ROOT).with_suffix(".html").as_posix()
            return f"]({book_url.rstrip('/')}/{page}{anchor})"
        return f"]({os.path.relpath(target, notebook.parent)}{anchor})"

    for cell in data["cells"]:
        if cell.get("cell_type") == "markdown":
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = LINK.sub(fix, text)
    notebook.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# --- generate --------------------------------------------------------------------------------------


def otter_assign(notebook, out):
    """``otter assign`` in this process (its command costs a second of start-up per notebook), quietly."""
    import contextlib
    import io
    import logging

    from otter.assign import main as assign

    here, otter_log = os.getcwd(), logging.getLogger("otter")
    level = otter_log.level
    os.chdir(notebook.parent)
    otter_log.setLevel(logging.ERROR)  # its warning that the notebook has no tests: it has none, by design
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assign(notebook.name, str(out), no_pdfs=True, no_run_tests=True)
    finally:
        os.chdir(here)
        otter_log.setLevel(level)


def generate(notebook, build=BUILD, check_solutions=True, seed=None, book_url=None, zygote=None):
    """Student version and autograder of one source notebook; the assignment's output folder.

    ``seed``: the autograder's grading seed (default: a new secret one). With
    ``check_solutions`` the solutions are graded by the new autograder's grader and must earn
    full marks.
    """
    notebook = Path(notebook).resolve()
    name = notebook.stem
    out = Path(build) / name
    if out.exists():
        shutil.rmtree(out)
    student = out / "student" / notebook.name
    solutions = out / "autograder" / notebook.name
    try:
        otter_assign(notebook, out)
    except Exception as exc:  # otter's own errors: said with the notebook's name
        raise RuntimeError(f"otter assign failed on {notebook.name}: {type(exc).__name__}: {exc}") from exc
    if not student.exists():
        raise RuntimeError(f"otter assign made no student version of {notebook.name}")
    for leftover in [*(out / "autograder").glob("*.zip"), out / "autograder" / "otter_config.json"]:
        leftover.unlink(missing_ok=True)  # otter's own autograder: replaced by ours
    for generated in (student, solutions):
        rewrite_links(generated, notebook.parent, book_url)
    seed = secrets.randbits(62) if seed is None else seed
    write_autograder(out / "autograder" / "autograder.zip", name, library_wheel(build), seed)
    if check_solutions:
        owned = zygote is None
        zygote = zygote or Zygote(WATCHED)
        try:
            graded = grade_notebook(solutions, ASSIGNMENTS[name], seed=seed, zygote=zygote)
        finally:
            if owned:
                zygote.close()
        if graded.error or graded.points < graded.max_points:
            shown = graded.error or "\n".join(str(r) for r in graded.reports.values())
            raise RuntimeError(f"the solutions of {name} do not earn full marks:\n{shown}")
    return out


# --- grade ------------------------------------------------------------------------------------------


def assignment_of(notebook, names):
    """The assignment a submission belongs to: from its metadata, else from its file name."""
    try:
        with open(notebook, encoding="utf-8") as f:
            data = json.load(f)
        name = data.get("metadata", {}).get("otter", {}).get("assignment_name")
    except (OSError, ValueError, AttributeError):
        name = None
    if name in names:
        return name
    matches = [n for n in names if n in Path(notebook).name]
    return max(matches, key=len) if matches else None


def student_of(submission, assignment):
    """Who handed in ``submission`` (a path relative to the folder): its first folder, else its file's
    name without the assignment's name (``ada_01_exp_log.ipynb``, ``ada-01_exp_log.zip``: ``ada``)."""
    first = Path(submission).parts[0]
    if len(Path(submission).parts) > 1 and not first.endswith(".zip"):
        return first
    stem = first.split(".")[0]
    rest = stem.replace(assignment, "").strip("_- ") if assignment else stem
    return rest or stem


def grade(folder, out=BUILD / "grades", timeout=600.0, build=BUILD, stream=sys.stdout, jobs=None,
          zygote=None):
    """Grade every notebook and zip file under ``folder``; the list of graded submissions.

    ``jobs`` submissions are graded at a time (default: the number of processors, at most 4).
    """
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise SystemExit(f"grade: {folder} is not a folder")
    owned = zygote is None
    zygote = zygote or Zygote(WATCHED)  # before any seed is read: the notebooks' processes are its copies
    sources = {p.stem: p for p in source_notebooks()}
    submissions = [p for p in sorted([*folder.rglob("*.ipynb"), *folder.rglob("*.zip")])
                   if ".ipynb_checkpoints" not in p.parts and "__MACOSX" not in p.parts]
    out = Path(out)
    (out / "results").mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="redmax_edu_submissions_"))
    seeds = {}

    def seed_of(name):
        if name not in seeds:
            autograder = Path(build) / name / "autograder" / "autograder.zip"
            if not autograder.exists():
                generate(sources[name], build, zygote=zygote)
            seeds[name] = autograder_config(autograder)["seed"]
        return seeds[name]

    def unpack(index, path):
        """The submission's entry and the notebook to grade (None when there is none to grade)."""
        shown = path.relative_to(folder).as_posix()
        entry = {"submission": shown, "assignment": None}
        try:
            notebook = notebooks_in(path, workdir / str(index))
        except ValueError as exc:
            return {**entry, "error": f"refused: {exc}"}, None
        if path.suffix == ".zip":
            entry["submission"] = f"{shown}/{notebook.relative_to(workdir / str(index)).as_posix()}"
        name = assignment_of(notebook, list(sources))
        if name is None:
            known = ", ".join(sources)
            return {**entry, "error": f"not graded, not an assignment of exercises/ (known: {known})"}, None
        return {**entry, "assignment": name}, notebook

    def one(found):
        entry, notebook = found
        if notebook is None:
            return entry
        graded = grade_notebook(notebook, ASSIGNMENTS[entry["assignment"]], seed=seeds[entry["assignment"]],
                                zygote=zygote, timeout=timeout)
        result = json.dumps(results(graded), indent=2)
        (out / "results" / f"{slug(entry['submission'])}.json").write_text(result, encoding="utf-8")
        entry = {**entry, "graded": graded}
        return {**entry, "error": f"not graded, {graded.error}"} if graded.error else entry

    graded, blocks = [], []
    jobs = jobs or min(4, os.cpu_count() or 1)
    try:
        # zips unpacked and assignments recognised first, and missing autograders generated one at a
        # time (otter works in the notebook's folder), before the submissions are graded in parallel
        found = [unpack(index, path) for index, path in enumerate(submissions)]
        for name in sorted({entry["assignment"] for entry, notebook in found if notebook is not None}):
            seed_of(name)
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for entry in pool.map(one, found):
                graded.append(entry)
                blocks.append(format_entry(entry))
                print(blocks[-1], file=stream, flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if owned:
            zygote.close()
    if not submissions:
        print(f"grade: no notebooks or zip files under {folder}", file=stream)
    (out / "report.md").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    write_csv(graded, out / "grades.csv")
    write_gradebook(graded, out / "gradebook.csv")
    print(f"\ngraded {len(submissions)} submissions: {out / 'report.md'}, {out / 'grades.csv'}, "
          f"{out / 'gradebook.csv'}", file=stream)
    return graded


def format_entry(entry):
    """The report block of one graded submission: its total, then each function's report."""
    head = f"{entry['submission']} ({entry['assignment'] or 'unknown assignment'})"
    if "error" in entry:
        return f"{head}: {entry['error']}"
    graded = entry["graded"]
    lines = [f"{head}: {_num(graded.points)} of {_num(graded.max_points)} points"]
    for report in graded.reports.values():
        lines += ["  " + line for line in str(report).splitlines()]
    lines += [f"  note: {note}" for note in graded.notes]
    return "\n".join(lines)


def write_csv(graded, path):
    """One row per submission and question: ``submission, assignment, question, score, max_score, note``."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "assignment", "question", "score", "max_score", "note"])
        for entry in graded:
            if "error" in entry:
                writer.writerow([entry["submission"], entry["assignment"] or "", "", 0, "", entry["error"]])
                continue
            for function, report in entry["graded"].reports.items():
                writer.writerow([entry["submission"], entry["assignment"], function, _num(report.points),
                                 _num(report.max_points), ""])


def write_gradebook(graded, path):
    """One row per student, one column per assignment (its total; a student's best submission), and the total.

    The header names each assignment with its points, ``01_exp_log (14)``: the columns a
    learning management system imports.
    """
    assignments = sorted({e["assignment"] for e in graded if e.get("assignment")},
                         key=lambda n: list(ASSIGNMENTS).index(n))
    book = {}
    for entry in graded:
        name = entry.get("assignment")
        student = student_of(entry["submission"], name)
        row = book.setdefault(student, {})
        if name and "graded" in entry:
            row[name] = max(row.get(name, 0.0), entry["graded"].points)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        columns = [f"{n} ({_num(ASSIGNMENTS[n].points())})" for n in assignments]
        writer.writerow(["student", *columns, "total"])
        for student in sorted(book):
            row = book[student]
            writer.writerow([student, *(_num(row[n]) if n in row else "" for n in assignments),
                             _num(sum(row.values()))])


def _num(x):
    return f"{float(x):.2f}".rstrip("0").rstrip(".")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="student versions and autograders of the assignments")
    gen.add_argument("notebooks", nargs="*", help="source notebooks (default: all of exercises/)")
    gen.add_argument("--build", default=str(BUILD), help="output folder (default exercises/_build)")
    gen.add_argument("--book-url", default=os.environ.get("BOOK_URL"),
                     help="address of the published book: links in the notebooks point there (default: "
                     "relative links into this repository; or set BOOK_URL)")
    grd = sub.add_parser("grade", help="grade every notebook and zip file in a folder of submissions")
    grd.add_argument("folder")
    grd.add_argument("--out", default=str(BUILD / "grades"), help="where the report goes")
    grd.add_argument("--timeout", type=float, default=600.0, help="seconds per submission (default 600)")
    grd.add_argument("--jobs", type=int, default=None, help="submissions graded at a time (default: "
                     "the number of processors, at most 4)")
    args = parser.parse_args(argv)
    if args.command == "generate":
        if not otter_available():
            print("otter-grader is not installed: run `make exercises` (it installs the grading extra, "
                  "requirements-grading.txt) or `pip install -r requirements-grading.txt`", file=sys.stderr)
            return 2
        zygote = Zygote(WATCHED)
        try:
            for notebook in args.notebooks or source_notebooks():
                out = generate(notebook, args.build, book_url=args.book_url, zygote=zygote)
                shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
                print(f"{Path(notebook).name}: student version {shown}/student/, autograder "
                      f"{shown}/autograder/autograder.zip")
        finally:
            zygote.close()
        return 0
    grade(args.folder, Path(args.out), args.timeout, Path(BUILD), jobs=args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
