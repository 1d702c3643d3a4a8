# The two commands of the README:
#   make book   set up .venv and the book's plotly.js, build the HTML book (offline, strict)
#   make test   the same set-up, then every test tier
# The daily loop: make check (lint, import contracts, notebook hygiene, the unit tests and doctests
# but those marked slow in pytest.ini; under three minutes on two cores).
# One tier alone: make lint, unit, claims, nbval, nbval-kernels, build-check.
# Other targets: make refresh (re-execute the notebooks), make clean, and for the classroom
# assignments (they install the grading extra, otter-grader): make exercises (student versions
# and Gradescope autograders into exercises/_build; BOOK_URL=... points their links at the
# published book), make grade SUBMISSIONS=folder.

SHELL := /bin/bash
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PLOTLY_JS := _offline_static/plotly/plotly.min.js

# Deterministic numerics under test: single-threaded BLAS, fixed hashing; the env's kernel.
export OMP_NUM_THREADS=1
export OPENBLAS_NUM_THREADS=1
export MKL_NUM_THREADS=1
export PYTHONHASHSEED=0
export JUPYTER_PREFER_ENV_PATH=1
export PIP_DISABLE_PIP_VERSION_CHECK=1
# Plotly figures as the book stores them: without plotly.js, which the page supplies.
export REDMAX_EDU_PLOTLY=page
# The fresh environments of the assignments' tests (a student's install, Gradescope's image),
# built once and kept, each named by a hash of what it installs.
export REDMAX_EDU_TEST_ENVS := $(CURDIR)/$(VENV)/test-envs

PYTEST = $(BIN)/python -m pytest
# Every core (pytest-xdist; JOBS=1 runs in one process): a file goes to one worker, so a test
# module's shared results are computed once and each notebook runs in its own kernel there.
JOBS ?= auto
XDIST = -n $(JOBS) --dist loadfile
# nbval's workers each wait on a kernel part of the time (its start, its messages): one worker
# more than cores keeps both cores busy (tier 3 on two cores: 212 s with two workers, 180 s with three).
# (getconf, not nproc: nproc obeys the OMP_NUM_THREADS=1 exported above.)
ifeq ($(JOBS),auto)
NBJOBS ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1 )))
else
NBJOBS ?= $(JOBS)
endif
NBXDIST = -n $(NBJOBS) --dist loadfile

# $(call tier,NAME,COMMAND): run a tier, print its wall time; pytest's exit status 5 (it collected
# nothing, for example an empty exercises/ folder) counts as success.
tier = @echo "== $(1)"; SECONDS=0; $(2); status=$$?; echo "== $(1): $${SECONDS} s"; \
	[ $$status -eq 0 ] || [ $$status -eq 5 ]

.PHONY: book test check setup build refresh lint unit claims nbval nbval-kernels build-check clean bench \
	exercises grade grading-tools

# The library's bytecode, written once: this machine sets PYTHONDONTWRITEBYTECODE=1, so without it
# every process (each notebook kernel, each graded submission) compiles redmax_edu from source
# (about 0.2 s of CPU a process). compileall only rewrites what changed.
setup: $(STAMP) $(PLOTLY_JS)
	@$(BIN)/python -m compileall -q redmax_edu >/dev/null

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" >/dev/null
	touch $(STAMP)

# The grading extra (otter-grader, about 280 MB the book never needs): exact pins in
# requirements-grading.txt, constrained by requirements.txt.
GRADING := $(VENV)/.grading-installed
$(GRADING): $(STAMP) requirements-grading.txt
	$(BIN)/python -m pip install --quiet -c requirements.txt -r requirements-grading.txt
	touch $@

# `make test` installs it too (about 15 s), so that the tests of the generated notebooks run;
# where it cannot be installed, those tests are skipped with their reason and the rest runs.
grading-tools: $(STAMP)
	@$(MAKE) --no-print-directory $(GRADING) || echo "make test: the grading extra could not be \
	installed; the tests that generate and grade the assignments will be skipped"

$(PLOTLY_JS): $(STAMP)
	$(BIN)/python tools/vendor_js.py

build: setup
	$(BIN)/jupyter-book clean . --all
	$(BIN)/jupyter-book build . -W -n --keep-going

book: build
	@echo
	@echo "The book is built: open file://$(CURDIR)/_build/html/index.html"

# The tiers, in order; each stops `make test` at its first failure.
test: setup grading-tools
	@$(MAKE) --no-print-directory lint unit claims nbval nbval-kernels build-check

check: setup
	@$(MAKE) --no-print-directory lint
	$(call tier,tier 1 without the tests marked slow in pytest.ini,\
	$(PYTEST) $(XDIST) -m "not slow" tests/unit redmax_edu)

lint: setup
	$(call tier,lint: ruff; the import contracts of ARCHITECTURE.md; notebook hygiene,\
	$(BIN)/ruff check . && $(BIN)/lint-imports --no-cache && $(BIN)/python tools/check_notebooks.py)

unit: setup
	$(call tier,tier 1: unit tests and doctests,$(PYTEST) $(XDIST) tests/unit redmax_edu)

claims: setup
	$(call tier,tier 2: the book's quantitative claims,$(PYTEST) $(XDIST) tests/claims)

nbval: setup
	$(call tier,tier 3: the notebooks' stored outputs (nbval) on this CPU's numeric kernels,\
	REDMAX_EDU_FAST=1 $(PYTEST) $(NBXDIST) book exercises)

nbval-kernels: setup
	$(call tier,tier 3b: nbval again under older computers' kernels (OpenBLAS core type and numpy SIMD level),\
	REDMAX_EDU_FAST=1 $(BIN)/python tools/numeric_kernels.py --run -- $(PYTEST) $(NBXDIST) book exercises)

build-check: setup
	$(call tier,tier 4: the strict offline book build; its offline assets; its weight; its players in a browser,\
	$(MAKE) --no-print-directory build && $(BIN)/python tools/check_offline_html.py _build/html \
	&& $(BIN)/python tools/check_weight.py _build/html && $(BIN)/python tools/check_players.py _build/html)

refresh: setup
	$(BIN)/python tools/refresh_notebooks.py

# Benchmarks in their own environment: the package (versions as tested) plus Pinocchio.
BENCH := .venv-bench
$(BENCH)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(BENCH)
	$(BENCH)/bin/python -m pip install --quiet -c requirements.txt -e '.[bench]'
	touch $@

bench: $(BENCH)/.installed
	$(BENCH)/bin/python benchmarks/forward_dynamics.py
	$(BENCH)/bin/python benchmarks/catalogue.py

# Classroom assignments: student versions and autograders of every notebook in exercises/,
# and the grading of a folder of submissions (report and grade book in exercises/_build/grades).
exercises: $(GRADING)
	$(BIN)/python tools/exercises.py generate $(if $(BOOK_URL),--book-url "$(BOOK_URL)")

grade: $(GRADING)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=folder-of-notebooks"; exit 2; }
	$(BIN)/python tools/exercises.py grade "$(SUBMISSIONS)"

clean:
	rm -rf _build _offline_static .pytest_cache
