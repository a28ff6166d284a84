# logsleuth: the commands a newcomer needs.  Everything runs from .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pytest-xdist workers for the suites.  Two per core: most tests wait (on a child process, an sshd, a follower's
# poll) more than they compute, so four workers keep 2 cores busy where two leave them idle half the time
# (make test here: 258 s with -n 2, 175 s with -n 4, same load).  TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 4
# The oracle tests compute (SGLang and vLLM validating arguments): one worker per core.  Each worker starts its
# own warm engine servers (scripts/oracle/warm.py: a private socket each, gone with the worker), so workers
# never share one, at the cost of the memory of one more set of servers.
ORACLE_WORKERS ?= 2
# --dist worksteal: an idle worker takes queued tests from a busy one, so the run does not end on one worker
# still holding a batch of slow SSH tests (make test here: 181 s with the default split, 159 s with it).
PYTEST := $(BIN)/python -m pytest --dist worksteal
# Every target writes bytecode even where the environment says not to (PYTHONDONTWRITEBYTECODE=1, common in
# containers): each of the thousands of `logsleuth` child processes that the tests and verify-fixes start
# would otherwise compile the whole package again, and pytest would rewrite every test module's asserts in
# each worker.  On a quiet 2-core machine make test took 173 s with it set and 154 s without (fresh clones,
# .venv included: 193 s and 173 s).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: engine-index engine-index-check regex-literals static-catalogs static-catalogs-check demo test test-slow test-oracle test-stress lint typecheck bench facts fixtures pattern-fixtures health-fixtures diff-fixtures verify-fixes verify-fixes-vllm oracle-setup oracle-setup-vllm fixtures-vllm docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Diagnose the shipped EAGLE-3 incident log.  Exit status 1 means "failure found".
demo: $(STAMP)
	$(BIN)/logsleuth diagnose examples/eagle3-incident.log --format text || [ $$? -eq 1 ]

# The default suite: every test but `slow` and `oracle` (pyproject.toml), on TEST_WORKERS xdist workers.
test: $(STAMP)
	$(PYTEST) -q -n $(TEST_WORKERS)

# The long tests left out of `make test` (.ci/run runs them): a 1 GiB log streamed over SSH, the generated
# pattern fixtures regenerated and compared, fuzzing, the case file of every fixture, the longest SSH
# fault, fan-out and helper tests, and the at-scale recipes (tests/scale: a real single-machine Slurm, pdsh, the
# Kubernetes recipe against a kubectl stand-in; the Ray snippet with LOGSLEUTH_RAY_PYTHON=a python with ray).
test-slow: $(STAMP)
	$(PYTEST) -q -m slow -n $(TEST_WORKERS)

# make test with every core kept busy by a CPU hog (one `yes` per core, killed however the tests end, Ctrl-C
# included): the suite must pass on a loaded machine, not only on a quiet one.  .ci/run runs it once.
test-stress: $(STAMP)
	@hogs=""; trap 'kill $$hogs 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	for _ in $$(seq "$$(nproc)"); do yes > /dev/null & hogs="$$hogs $$!"; done; \
	echo "test-stress: $$(nproc) CPU hogs (pids$$hogs)"; \
	$(PYTEST) -q -n $(TEST_WORKERS)

# The tests that run the real SGLang argument validation (`check`, on this machine and on a host over SSH):
# they need the oracle venvs, so they are left out of `make test`.
test-oracle: oracle-setup oracle-setup-vllm $(STAMP)
	$(PYTEST) -q -m oracle -n $(ORACLE_WORKERS)

lint: $(STAMP)
	$(BIN)/ruff check logsleuth tests scripts bench

typecheck: $(STAMP)
	$(BIN)/mypy logsleuth

# One table of paired, interleaved runs, also written to bench/results.md: logsleuth against ssh tail, the
# manual ssh grep, grep -c, a shell loop of ssh over 64 hosts, and python's own start, with CPU and peak RSS
# of its process tree.  Needs root and openssh-server (a private sshd on 127.0.0.1; the hosts are ssh-config
# aliases of it); writes a 1 GiB log and a sparse 10 GiB one under /tmp.  Under 10 minutes on 2 cores.
bench: $(STAMP)
	$(BIN)/python bench/bench_ssh.py

docs: $(STAMP)
	$(BIN)/python scripts/gen_pattern_docs.py

# The raise site index (logsleuth/facts/raise_sites-sglang.zip and raise_sites-vllm.zip): every assert, raise and
# logged error of each indexed SGLang and vLLM release, read with ast from its wheel; and the same for the
# flashinfer, sgl-kernel, xgrammar and transformers versions those releases pin (raise_sites-<package>.zip: ~115 MB
# more read on an empty cache, 2 to 7 s more warm).  Only the Python files are
# read, over HTTP Range requests, and only the contents not seen in an earlier release (~390 MB for 70 releases, not
# the ~25 GB of wheels); each distinct file is read with ast once, on 2 processes.  3.5 to 6 min on an empty cache
# here (load 3 to 13), 11 to 45 s warm.  The cache is ~/.cache/logsleuth/engine-index ($LOGSLEUTH_ENGINE_INDEX_CACHE
# overrides it), so a check with it filled runs offline.  engine-index-check rebuilds the index and fails when a
# shipped file differs, byte for byte (.ci/run runs it).
engine-index: $(STAMP)
	$(BIN)/python scripts/engine_index/build.py
	$(BIN)/python scripts/engine_index/classes.py
	$(BIN)/python scripts/engine_index/module_names.py
	$(BIN)/python scripts/engine_index/architectures.py
	$(BIN)/python scripts/engine_index/model_versions.py

engine-index-check: $(STAMP)
	$(BIN)/python scripts/engine_index/build.py --check
	$(BIN)/python scripts/engine_index/classes.py --check
	$(BIN)/python scripts/engine_index/module_names.py --check
	$(BIN)/python scripts/engine_index/architectures.py --check
	$(BIN)/python scripts/engine_index/model_versions.py --check
	$(BIN)/python scripts/engine_index/cross_imports.py --check

# The static flag catalogs (logsleuth/fixes/catalogs/static.json.gz): the flags of every SGLang release from 0.3.0
# and vLLM release from 0.6.0, read with ast from each wheel.  Only the argument files are read, over HTTP Range
# requests (scripts/wheel_files.py): ~75 MB for all 177 releases, not the ~22 GB of wheels; ~3 min on an empty
# cache, ~2 min of it the ast reading a warm cache pays too.  They are kept in ~/.cache/logsleuth/static-catalog
# ($LOGSLEUTH_STATIC_CATALOG_CACHE overrides it).  static-catalogs-check rebuilds the shipped releases from that
# cache (offline once it is filled) and fails when the file differs.
static-catalogs: $(STAMP)
	$(BIN)/python scripts/static_catalog/build.py

static-catalogs-check: $(STAMP)
	$(BIN)/python scripts/static_catalog/build.py --check

# The facts the dependency rule reads (logsleuth/facts/): each SGLang and vLLM release's Requires-Dist, read from
# its wheel with `pip download --no-deps` (releases the file lacks; --refresh reads all again: ~25 GB of vLLM
# wheels, each deleted once read), then the module -> distribution table from the files they install.
facts: $(STAMP)
	$(BIN)/python scripts/facts/requires_dist.py
	$(BIN)/python scripts/facts/import_names.py
	$(BIN)/python scripts/facts/torch_builds.py

# The literals each facts table regex needs (logsleuth/facts/regex_literals.json), so that a run compiles a table's
# regex only for a text that holds one: run it after editing a regex in categories.toml, divisibility.toml or
# model_files.toml (tests/test_regex_literals.py fails until then; a stale file only costs speed).
regex-literals: $(STAMP)
	$(BIN)/python scripts/facts/regex_literals.py

# Steady-state logs for `logsleuth health`, from the three releases' own batch-line wordings (seconds).
health-fixtures: $(STAMP)
	$(BIN)/python scripts/health_fixtures/generate.py

# Launch logs for `logsleuth diff`, their server_args= lines printed by the real SGLang 0.5.9 and 0.5.23.
diff-fixtures: oracle-setup $(STAMP)
	$(BIN)/python scripts/diff_fixtures/make_diff_fixtures.py

# Runtime-failure fixtures: real CPython raising the engine's exceptions from a mirror of its paths.
pattern-fixtures: $(STAMP)
	$(BIN)/python scripts/make_pattern_fixtures.py

# The real SGLang argument validation (0.4.10.post2, 0.5.9, 0.5.23) in cached venvs under
# ~/.cache/logsleuth/oracle (first setup ~5 min, then seconds).  The scripts manage their own
# venvs, so they run with the system python; verify-fixes drives this checkout's logsleuth.
oracle-setup:
	bash scripts/oracle/setup.sh

# The vLLM oracle (scripts/oracle_vllm/README.md): vllm 0.11.2 and 0.33.0 sharing oracle-setup's torch (~1.5 min).
oracle-setup-vllm: oracle-setup
	bash scripts/oracle_vllm/setup.sh

# Regenerate tests/fixtures/vllm/ and the vLLM flag catalogs from real `vllm serve` runs (~6 min).
fixtures-vllm: oracle-setup-vllm
	python3 scripts/oracle_vllm/make_fixtures.py --jobs 2
	python3 scripts/oracle_vllm/dump_flags.py

# Regenerate tests/fixtures/sglang/ and the flag catalogs from real runs (~20 min).
fixtures: oracle-setup
	python3 scripts/oracle/make_fixtures.py --jobs 2
	python3 scripts/oracle/dump_flags.py

# Every argument-error fixture: the original fails, logsleuth names the expected pattern, and
# each corrected command it prints passes SGLang's own validation; then the advice given WITHOUT
# the command, applied by hand to the fixture's command, passes too or says what it needs (~35 min).
verify-fixes: oracle-setup $(STAMP) verify-fixes-vllm
	python3 scripts/oracle/verify_fixes.py --jobs 2 --check all --cli $(CURDIR)/$(BIN)/logsleuth

# The same proof on the real vLLM 0.11.2 and 0.33.0: every vLLM argument-error fixture fail -> pass (~2 min; runs are forks of a warm vLLM, scripts/oracle/warm.py).
verify-fixes-vllm: oracle-setup-vllm $(STAMP)
	python3 scripts/oracle_vllm/verify_fixes.py --jobs 2 --cli $(CURDIR)/$(BIN)/logsleuth

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
