# Everything runs from a local virtualenv that these targets create on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast durations cpu lint emulator bench soak clean tools docs screenshots collect

# uv resolves and downloads in parallel: the venv takes seconds where pip alone takes minutes on a
# cold index. pip stays the fallback (an index uv cannot reach, a pip.conf it does not read:
# INSTALLER=pip) and stays in the venv (a test builds the wheel with it).
# Everything a run imports is then compiled to bytecode once, on every core (.ci/bytecode.py), as
# pip does when it installs: in a shell with PYTHONDONTWRITEBYTECODE set, Python writes no
# bytecode itself, and each process (an emulator, a Lambda worker, every `awsview` the tests
# start) would compile moto, botocore and the package from source again, a second or more of CPU
# each.
INSTALLER ?= uv
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	if [ "$(INSTALLER)" = uv ] && $(BIN)/python -m pip install --quiet uv \
		&& $(BIN)/python -m uv pip install --quiet --python $(BIN)/python -e '.[test]'; then :; \
	else \
		$(BIN)/python -m pip install --quiet --no-compile -e '.[test]'; \
	fi
	$(BIN)/python .ci/bytecode.py awsview tests
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/awsview demo

emulator: $(STAMP)
	$(BIN)/awsview emulator

tools:
	@./.ci/tools.sh

# The style (ruff), the layers (import-linter contracts in pyproject.toml) and the pure modules'
# types first: a lint finding, a broken contract or a type error fails in seconds, before the
# suite's minutes.
lint: $(STAMP) tools
	$(BIN)/ruff check awsview tests
	$(BIN)/ruff format --check awsview tests
	$(BIN)/lint-imports
	$(BIN)/mypy

# Every tier (docs/testing.md), on WORKERS processes: the tests mostly wait on emulators and child
# processes, so more workers than cores pay (on 2 cores, 4 workers beat 3, and 3 beat 2). A module
# whose tests share a module fixture stays on one worker (--dist loadgroup). The longest work goes
# out first (tests/durations.json; --no-loadscope-reorder keeps that order rather than xdist's
# most-tests-first). The docs site's strict build (dead links included) comes first. Then the
# `serial` tests, alone. Exit 5 is "none selected" (a PYTEST_ARGS that picks no serial test), not a
# failure.
WORKERS ?= 4
PARALLEL := -n $(WORKERS) --dist loadgroup --no-loadscope-reorder -m "not serial" --hypothesis-profile=ci
# -O keeps each job's output together; GNU make before 4.0 (macOS's /usr/bin/make is 3.81) has no
# such option and interleaves the lines instead.
SYNC := $(if $(filter 3.%,$(MAKE_VERSION)),,-O)
test: $(STAMP)
	$(MAKE) --no-print-directory -j3 $(SYNC) lint docs collect
	$(BIN)/python -m pytest -q $(PARALLEL) $(PYTEST_ARGS)
	$(BIN)/python -m pytest -q -m serial $(PYTEST_ARGS) || [ $$? -eq 5 ]

# pytest rewrites each test module's asserts when it imports it, about 4 s of CPU for the suite,
# and caches the result beside the module's bytecode, unless PYTHONDONTWRITEBYTECODE is set (as
# in some shells and CI images): then every worker of every run rewrote every module again. The
# test targets let pytest write that cache, and `make test` fills it while lint and the docs run
# (one collection, on the core they leave free), so that its workers each start from it.
test test-fast durations collect cpu: export PYTHONDONTWRITEBYTECODE :=
collect: $(STAMP)
	$(BIN)/python -m pytest -q --collect-only > /dev/null
# tests/durations.json again from a run of the parallel tiers (it orders them; it never selects).
durations: $(STAMP)
	$(BIN)/python -m pytest -q $(PARALLEL) --store-durations tests/durations.json

# What each test costs the machine in CPU (tests/support/cpu.py): the parallel tiers one test at a
# time (-n 0), the machine's busy time per test, summed by module at the end; each test in
# .cpu.json. As long as the suite's CPU (15-20 min here): run it on an otherwise idle machine.
cpu: $(STAMP)
	$(BIN)/python -m pytest -q -n 0 -m "not serial" --hypothesis-profile=ci --store-cpu .cpu.json $(PYTEST_ARGS)

# The pure tier only (no emulator, no child process) after the same checks, each generated-input
# test on a quarter of its examples (tests/support/examples.py; `make test` draws them all). The
# `serial` ones are left to `make test`: they need the machine to themselves. Handed out as
# `make test` hands its work out, longest first and one unit at a time (xdist's plain `load`
# sends each worker a run of the list at once: the longest tests all went to one worker, which
# finished 20 s after the other). One worker more than cores: the apps' tests wait on timers.
FAST_WORKERS ?= 3
test-fast: lint
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) --dist loadgroup --no-loadscope-reorder -m "pure and not serial" --hypothesis-profile=dev $(PYTEST_ARGS)

# bench_all: machine yardsticks, then AWS View against its baselines on the emulator (change feed)
# and on stock moto (polled), keypress and first paint (median of 5 fresh runs), docs, each figure
# as a ratio; bench_lambda: Lambda invocations; bench_class: learners one class view follows;
# bench_recording: a recording's size per lab hour (a minute of q05 played in a loop) and how fast
# one opens; bench_cost: per API the
# viewer's mean and peak calls/s against AWS's refill rate (polled, as on AWS; each lab played for
# 15 s, no idle phase: the highest mean is while a lab moves); bench_labs: `lab check --twice` of
# every lab in labs/ against its 60 s budget; then the one table of every section's rows
# (summary). BENCH_ARGS: --quick (shorter), --busy N (N processes burning a core each beside the
# measured ones; the table says busy); one section alone: python -m tests.benchmarks.bench_all
# --only emulator|stock|keypress|paint|docs, or the bench module of the others.
BENCH_OUT ?= .bench
bench: $(STAMP)
	rm -rf $(BENCH_OUT)
	$(BIN)/python -m tests.benchmarks.bench_all --out $(BENCH_OUT) $(BENCH_ARGS)
	$(BIN)/python -m tests.benchmarks.bench_lambda
	$(BIN)/python -m tests.benchmarks.bench_class --out $(BENCH_OUT) $(BENCH_ARGS)
	$(BIN)/python -m tests.benchmarks.bench_recording --minutes 1
	$(BIN)/python -m tests.benchmarks.bench_cost 15 0 --polled --out $(BENCH_OUT) $(BENCH_ARGS)
	$(BIN)/python -m tests.benchmarks.bench_labs --out $(BENCH_OUT) $(BENCH_ARGS)
	$(BIN)/python -m tests.benchmarks.summary $(BENCH_OUT)

# The docs site (mkdocs.yml, pages under docs/, the reference generated from the parser) into
# site/; --strict: a dead link or a missing page fails it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The docs' screenshots: a copy of the ev04 lab folder played on a fresh embedded emulator, the
# viewer after each step, each execution's graph and the replay of the run in docs/ev04/assets/,
# the links in its step texts, index.md listing them all. Made aside (in a folder named as the
# lab: the copy's name is the lab's); only the texts and the shots go into docs/ev04 (the lab's
# scripts and files stay in labs/ev04).
screenshots: $(STAMP)
	rm -rf build/screenshots
	$(BIN)/awsview docs ev04 -o build/screenshots/ev04
	rm -rf docs/ev04 && mkdir -p docs/ev04/assets
	cp build/screenshots/ev04/*.md docs/ev04/
	cp build/screenshots/ev04/assets/awsview-*.svg docs/ev04/assets/

MINUTES ?= 30
soak: $(STAMP)
	$(BIN)/python -m tests.soak --minutes $(MINUTES)

clean:
	rm -rf $(VENV) .pytest_cache build dist site
