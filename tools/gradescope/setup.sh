#!/usr/bin/env bash
# The autograder's set-up, run once by Gradescope (as root) when it builds the autograder's
# image: a virtual environment with exactly the pinned requirements and the library's wheel
# that this zip carries, nothing from elsewhere. AUTOGRADER (default /autograder),
# REDMAX_EDU_GRADING_VENV (default $AUTOGRADER/venv) and PYTHON (default python3) can be set,
# for example to run it outside Gradescope.
set -euo pipefail
AUTOGRADER="${AUTOGRADER:-/autograder}"
SOURCE="$AUTOGRADER/source"
VENV="${REDMAX_EDU_GRADING_VENV:-$AUTOGRADER/venv}"
PYTHON="${PYTHON:-python3}"
recent_python() { "$PYTHON" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }
if ! recent_python && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -q && apt-get install -y -q python3 python3-venv python3-pip
fi
if ! recent_python; then
    echo "redmax_edu needs Python 3.11 or later with venv: choose Gradescope's Ubuntu 24.04 base image" >&2
    exit 1
fi
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$SOURCE/requirements.txt"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$SOURCE"/redmax_edu-*.whl
"$VENV/bin/python" -m pip check --disable-pip-version-check
# The grading seed is secret: the student's notebook runs as nobody and cannot read it.
chmod -R go-rwx "$SOURCE"
