"""Classroom assignments: generate the student and autograder versions, grade a folder of submissions.

    python tools/exercises.py generate [NOTEBOOK ...]        # all of exercises/ by default
    python tools/exercises.py grade FOLDER [--out DIR] [--timeout SECONDS]

(``make exercises`` and ``make grade SUBMISSIONS=FOLDER`` run these with the grading extra
installed.)

``generate`` runs ``otter assign`` on each source notebook of ``exercises/`` (solutions and
hidden tests inside) and writes, for ``exercises/01_maximal/01_exp_log.ipynb``::

    exercises/_build/01_exp_log/student/01_exp_log.ipynb     hand this out
    exercises/_build/01_exp_log/autograder/autograder.zip    grades submissions
    exercises/_build/01_exp_log/autograder/01_exp_log.ipynb  the solutions, for the instructor

``otter assign`` also grades the solutions with the autograder and fails unless they earn
full marks. ``exercises/_build`` is ignored by git, pytest and the book.

``grade`` finds every notebook under FOLDER (any depth), recognises its assignment from the
notebook's metadata (otter writes the name into the student version) or else from its file
name, grades it with ``otter run`` against that assignment's autograder (generated first if
missing), and prints one block per submission: the score of each question and, for every
check that lost points, the grader's message. Each submission has ``--timeout`` seconds in
all (a notebook whose own cells never finish is reported as such); each check inside has
its own time limit (:data:`redmax_edu.exercises.TIME_LIMIT`). ``--jobs`` submissions are
graded at a time. The report is also written to
``DIR/report.md``, the scores to ``DIR/grades.csv`` (one row per submission and question)
and otter's results to ``DIR/results/`` (default DIR: ``exercises/_build/grades``).
"""

import argparse
import contextlib
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from redmax_edu.exercises.core import REPORT_WIDTH

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "exercises"
BUILD = SOURCE / "_build"
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")  # the kernel of this environment

#: A failed check's line in otter's output (see redmax_edu.exercises.core.CheckFailed).
CHECK_LINE = re.compile(r"CheckFailed: \[([\d.]+)/([\d.]+) points\] (.*)")


def otter_available():
    """True when otter-grader is installed (the ``grading`` extra)."""
    import importlib.util

    return importlib.util.find_spec("otter") is not None


def source_notebooks(root=SOURCE):
    """The source notebooks of the assignments: ``exercises/**/*.ipynb`` outside ``_build``."""
    return [p for p in sorted(Path(root).rglob("*.ipynb"))
            if "_build" not in p.parts and ".ipynb_checkpoints" not in p.parts]


def run(command, timeout=None, cwd=None):
    """Run ``command``; (exit status, output), with a status of None on time-out.

    On time-out the command is killed with every process it started: ``otter run`` starts a
    Jupyter kernel in a session of its own, which would otherwise go on running a
    submission's endless loop after otter is gone.
    """
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=cwd, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in [*_descendants(process.pid), process.pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:  # a process that escaped would hold the pipe open: do not wait for it for ever
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.stdout.close()
        return None, ""
    return process.returncode, output


def _descendants(pid):
    """The processes started by ``pid``, at any depth (psutil when present, else /proc)."""
    try:
        import psutil

        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except ImportError:
        pass
    except Exception:
        return []
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, stack = [], [pid]
    while stack:
        children = parents.get(stack.pop(), [])
        found += children
        stack += children
    return found


def generate(notebook, build=BUILD, check_solutions=True):
    """Student and autograder versions of one source notebook; the assignment's output folder.

    With ``check_solutions`` otter grades the solutions with the new autograder and fails
    unless they earn full marks (a few seconds per assignment).
    """
    notebook = Path(notebook).resolve()
    out = Path(build) / notebook.stem
    if out.exists():
        shutil.rmtree(out)
    command = [sys.executable, "-m", "otter", "assign", str(notebook), str(out)]
    status, output = run(command + ([] if check_solutions else ["--no-run-tests"]), cwd=notebook.parent)
    zips = sorted((out / "autograder").glob("*.zip")) if out.exists() else []
    if status != 0 or not zips:
        raise RuntimeError(f"otter assign failed on {notebook.name}:\n{_tail(output)}")
    zips[-1].rename(out / "autograder" / "autograder.zip")  # otter stamps the name with the time
    return out


def assignment_of(notebook, names):
    """The assignment a submission belongs to: from its metadata, else from its file name."""
    try:
        with open(notebook, encoding="utf-8") as f:
            metadata = json.load(f).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        metadata = {}
    name = metadata.get("otter", {}).get("assignment_name") if isinstance(metadata, dict) else None
    if name in names:
        return name
    matches = [n for n in names if n in Path(notebook).name]
    return max(matches, key=len) if matches else None


def grade_one(notebook, autograder, timeout, results_dir=None):
    """Grade one submission: a dict with its questions' scores and the checks' messages."""
    with tempfile.TemporaryDirectory() as tmp:
        status, output = run([sys.executable, "-m", "otter", "run", "-a", str(autograder), "-o", tmp,
                              "--no-logo", str(notebook)], timeout=timeout)
        if status is None:
            return {"error": f"grading did not finish within {timeout:g} s: does a cell of the "
                             "notebook itself run forever?"}
        path = Path(tmp) / "results.json"
        if not path.exists():
            return {"error": f"otter could not grade it ({_reason(output)})"}
        text = path.read_text(encoding="utf-8")
        if results_dir is not None:
            Path(results_dir).mkdir(parents=True, exist_ok=True)
            (Path(results_dir) / f"{_slug(notebook)}.json").write_text(text, encoding="utf-8")
    questions = []
    for test in json.loads(text).get("tests", []):
        if "score" not in test:  # otter's summary of public tests: none here
            continue
        failures = [(float(a), float(b), msg) for a, b, msg in CHECK_LINE.findall(test.get("output", ""))]
        checks = test.get("output", "").count(" result:")  # one per test case (= per check)
        questions.append({"name": test["name"], "score": float(test["score"]),
                          "max_score": float(test["max_score"]), "failures": failures, "checks": checks})
    if not questions:
        return {"error": f"otter found no questions to grade ({_reason(output)})"}
    return {"questions": questions}


def grade(folder, out=BUILD / "grades", timeout=600.0, build=BUILD, stream=sys.stdout, jobs=None):
    """Grade every notebook under ``folder``; the list of graded submissions (see the module docstring).

    ``jobs`` submissions are graded at a time (default: the number of processors, at most 4).
    """
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise SystemExit(f"grade: {folder} is not a folder")
    sources = {p.stem: p for p in source_notebooks()}
    submissions = [p for p in sorted(folder.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = [assignment_of(notebook, list(sources)) for notebook in submissions]
    for name in sorted({n for n in names if n is not None}):
        if not (Path(build) / name / "autograder" / "autograder.zip").exists():
            generate(sources[name], build)

    def one(notebook, name):
        shown = notebook.relative_to(folder).as_posix()
        if name is None:
            return {"submission": shown, "assignment": None,
                    "error": f"not an assignment of exercises/ (known: {', '.join(sources)})"}
        autograder = Path(build) / name / "autograder" / "autograder.zip"
        result = grade_one(notebook, autograder, timeout, out / "results")
        return {"submission": shown, "assignment": name, **result}

    graded, lines = [], []
    jobs = jobs or min(4, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # each job waits on its own `otter run` process
        for entry in pool.map(one, submissions, names):
            graded.append(entry)
            lines.append(format_entry(entry))
            print(lines[-1], file=stream, flush=True)
    if not submissions:
        print(f"grade: no notebooks under {folder}", file=stream)
    (out / "report.md").write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    write_csv(graded, out / "grades.csv")
    print(f"\ngraded {len(submissions)} notebooks: {out / 'report.md'}, {out / 'grades.csv'}", file=stream)
    return graded


def format_entry(entry, width=REPORT_WIDTH):
    """The report block of one graded submission."""
    head = f"{entry['submission']} ({entry['assignment'] or 'unknown assignment'})"
    if "error" in entry:
        return f"{head}: not graded, {entry['error']}"
    questions = entry["questions"]
    total = sum(q["score"] for q in questions)
    possible = sum(q["max_score"] for q in questions)
    lines = [f"{head}: {_num(total)} of {_num(possible)} points"]
    for q in questions:
        lines.append(f"  {q['name']}: {_num(q['score'])} of {_num(q['max_score'])}")
        failures = q["failures"]
        reasons = {message.split(": ", 1)[-1] for _, _, message in failures}
        if len(failures) > 1 and len(reasons) == 1 and len(failures) == q.get("checks", len(failures)):
            failures = [(0, q["max_score"], f"every check: {reasons.pop()}")]  # one cause, said once
        for got, out_of, message in failures:
            lines += textwrap.wrap(f"{_num(got)}/{_num(out_of)}  {message}", width, initial_indent="    ",
                                   subsequent_indent="        ", break_on_hyphens=False)
    return "\n".join(lines)


def write_csv(graded, path):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "assignment", "question", "score", "max_score", "note"])
        for entry in graded:
            if "error" in entry:
                writer.writerow([entry["submission"], entry["assignment"] or "", "", 0, "", entry["error"]])
                continue
            for q in entry["questions"]:
                writer.writerow([entry["submission"], entry["assignment"], q["name"], _num(q["score"]),
                                 _num(q["max_score"]), ""])


def _num(x):
    return f"{float(x):.2f}".rstrip("0").rstrip(".")


def _slug(path):
    return re.sub(r"[^\w.-]+", "_", Path(path).with_suffix("").as_posix()).strip("_")[-120:]


def _reason(output):
    """The last meaningful line of otter's output (its error)."""
    lines = [line for line in output.splitlines() if line.strip() and "TCP without encryption" not in line]
    return lines[-1].strip() if lines else "no output"


def _tail(output, count=15):
    lines = [line for line in output.splitlines() if "TCP without encryption" not in line]
    return "\n".join(lines[-count:])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="student and autograder versions of the assignments")
    gen.add_argument("notebooks", nargs="*", help="source notebooks (default: all of exercises/)")
    gen.add_argument("--build", default=str(BUILD), help="output folder (default exercises/_build)")
    grd = sub.add_parser("grade", help="grade every notebook in a folder of submissions")
    grd.add_argument("folder")
    grd.add_argument("--out", default=str(BUILD / "grades"), help="where the report goes")
    grd.add_argument("--timeout", type=float, default=600.0, help="seconds per submission (default 600)")
    grd.add_argument("--jobs", type=int, default=None, help="submissions graded at a time (default: "
                     "the number of processors, at most 4)")
    args = parser.parse_args(argv)
    if not otter_available():
        print("otter-grader is not installed: run `make exercises` (it installs the grading extra, "
              "requirements-grading.txt) or `pip install -r requirements-grading.txt`", file=sys.stderr)
        return 2
    if args.command == "generate":
        for notebook in args.notebooks or source_notebooks():
            out = generate(notebook, args.build)
            shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
            print(f"{Path(notebook).name}: student version {shown}/student/, autograder "
                  f"{shown}/autograder/autograder.zip")
        return 0
    grade(args.folder, Path(args.out), args.timeout, Path(BUILD), jobs=args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
