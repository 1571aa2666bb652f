# The two commands of the README's quickstart. Each does all of its own set-up (scripts/setup.sh).
#   make paper   # venv + Docker engine + sandbox image, then the whole pipeline (profile from params.yaml)
#   make test    # the same set-up, then the whole test suite
#   make test-fast  # the inner loop: venv only, then the tests that need no Docker, training, long runs or browser
#   make test-docker  # the middle tier: make test's set-up, then test-fast's tests and those needing the engine
#   make test-cluster  # the Slurm tests (root, Debian): a one-node cluster, a pipeline target through it
#   make bench   # make test's set-up, then `lis bench all`: one results file in benchmarks/ (ONLY=name,... for some)
VENV ?= .venv
export LIS_VENV := $(VENV)
CORES ?= all

.PHONY: paper test test-fast test-docker test-cluster bench setup lint clean-sandboxes

paper: setup
	$(VENV)/bin/snakemake --cores $(CORES) --workflow-profile workflow/profiles/local paper

# TEST_WORKERS: pytest-xdist workers of `make test`, one per core of the project's 2-core machines. Tests are
# grouped (tests/conftest.py worker_group): those that train or run the pipeline in one group, so two of them
# never share the cores; every other module in a group of its own. TEST_WORKERS=0 runs all in one process.
TEST_WORKERS ?= 2
test: setup
	$(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# The inner loop while editing: only the venv is set up (no Docker engine, no image), and the tests
# marked docker, training, slow, browser or cluster are deselected (tests/conftest.py sets the markers).
# It runs where no Docker engine answers. `make test` stays the full suite (CI), in one process.
# FAST_WORKERS: pytest-xdist worker processes, one per core of the project's 2-core machines (a third
# worker measured 196 s against 208 s with two, within a day's noise: not kept; docs/timings.md).
# `make test-fast FAST_WORKERS=0` runs them in one process; each worker's thread share: tests/conftest.py.
FAST_MARKERS := not docker and not training and not slow and not browser and not cluster
FAST_WORKERS ?= 2
test-fast:
	bash scripts/setup.sh venv
	$(VENV)/bin/python -m pytest -n $(FAST_WORKERS) -m "$(FAST_MARKERS)"

# The middle tier: the engine and the sandbox image, no training (the tiny agent is not built), nothing
# slow, no browser.
DOCKER_MARKERS := not training and not slow and not browser and not cluster
test-docker: setup
	$(VENV)/bin/python -m pytest -m "$(DOCKER_MARKERS)"

# Deselected from `make test` (marker `cluster`); .ci/run runs it when workflow/ differs from what it last
# passed on (.ci/cluster-tested, written here on success: commit it; scripts/ci-cluster-rule.sh).
test-cluster: setup
	bash scripts/setup.sh slurm
	$(VENV)/bin/python -m pytest -m cluster -s tests/cluster
	bash scripts/ci-cluster-rule.sh --record

# The benchmarks and calibrations (docs/performance.md): 25-35 minutes on 2 cores; the docs' tables are
# rendered from the results file afterwards with `lis bench render`.
ONLY ?=
bench: setup
	$(VENV)/bin/lis bench all $(if $(ONLY),--only $(ONLY))

setup:
	bash scripts/setup.sh

lint: setup
	$(VENV)/bin/snakemake --lint
