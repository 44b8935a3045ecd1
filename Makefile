# The README's commands: `make demo` and `make test` do all the set-up.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
MACHINES ?= 20
DEMO_ARGS ?=

# Bytecode for the package, the lab and the tests, written ahead: this
# environment may set PYTHONDONTWRITEBYTECODE, and then every process the
# tests start compiled the package from source again (about 0.15 s of CPU
# per start; pip compiles an installed package the same way). Files whose
# bytecode is current are skipped.
BYTECODE = $(BIN)/python -m compileall -q -j 0 inspector lab tools tests > /dev/null

.PHONY: all venv packages image demo bench bench-pxe bench-scale bench-rules test lint unit functional integration genconfig docs clean

all: test

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Debian packages the tests need (PostgreSQL, etcd, RabbitMQ, Apache with
# mod_wsgi, systemd-analyze, wrk, Graphviz, podman, runc, mmdebstrap),
# installed when missing.
packages:
	tools/ensure-packages.sh

# the container images localhost/ironic-inspector/NAME:latest (standalone,
# api, conductor, pxe-filter; doc/containers.md) from this checkout's wheel,
# on a Debian base mmdebstrap makes once (about 2.5 minutes; the tarball is
# kept in ~/.cache/ironic-inspector-lab); podman runs with runc and
# containers/containers.conf
image: venv packages
	$(BIN)/python -m tools.images

# split mode (DEMO_ARGS="--split N") needs etcd, RabbitMQ and PostgreSQL;
# --oob the Redfish emulator's libvirt binding
demo: venv $(if $(findstring --split,$(DEMO_ARGS)),packages) $(if $(findstring --oob,$(DEMO_ARGS)),packages)
	$(BYTECODE)
	$(BIN)/python -m lab demo --machines $(MACHINES) $(DEMO_ARGS)

lint: venv
	$(BIN)/ruff check inspector lab tools tests ironic-push-hook
	$(BIN)/ruff format --check inspector lab tools tests ironic-push-hook
	$(BIN)/mypy inspector lab tools tests ironic-push-hook/inspector_push_hook
	$(BIN)/shellcheck -s bash devstack/plugin.sh devstack/settings tools/*.sh .ci/run

# Test processes per layer (pytest-xdist; 0 runs in one process). Unit and
# functional tests are CPU-bound: one per core. Integration tests mostly
# wait on servers and timeouts: more processes than cores, each with its
# own Ironic and PostgreSQL; a module (a cluster shape) stays on one, the
# longest first (tests/integration/conftest.py).
TEST_WORKERS ?= 2
INTEGRATION_WORKERS ?= 4

# packages: the state diagram's tests run Graphviz's dot
unit: venv packages
	$(BYTECODE)
	$(BIN)/pytest tests/unit tests/tooling -q -p no:cacheprovider -n $(TEST_WORKERS)

functional: venv packages
	$(BYTECODE)
	$(BIN)/pytest tests/functional -q -p no:cacheprovider -n $(TEST_WORKERS)

integration: venv packages
	$(BYTECODE)
	$(BIN)/pytest tests/integration -q -p no:cacheprovider --durations=15 \
		-n $(INTEGRATION_WORKERS) --dist loadscope

# lint (mypy, on one core) beside the unit tests, each one's output printed
# whole when it ends: 66 s instead of 92 s on 2 cores; then the layers that
# need both cores to themselves, in order
test:
	$(MAKE) --no-print-directory -j 2 --output-sync=target lint unit
	$(MAKE) --no-print-directory functional
	$(MAKE) --no-print-directory integration

# the sample configuration and policy, regenerated from the code
genconfig: venv
	$(BIN)/oslo-config-generator --config-file etc/ironic-inspector/config-generator.conf
	$(BIN)/oslopolicy-sample-generator --config-file etc/ironic-inspector/policy-generator.conf

# generated documentation: the configuration reference and the state diagram
# (drawn by Graphviz's dot: make packages installs it)
docs: venv
	$(BIN)/python -m tools.config_reference doc/config-reference.md
	$(BIN)/python -m tools.upstream_options doc doc/upgrade.md
	$(BIN)/python -m tools.states_diagram doc/images/states.svg

# the benchmark (not part of test): standalone and split with 2 conductors;
# BENCH_UPSTREAM=1 adds upstream ironic-inspector 12.5 in the same lab
BENCH_SHAPES ?= standalone,split-2
# BENCH_SCALE=fleet: 10,000 nodes, 1,000 introspections in bursts of 200
# (BENCH_IRONIC=real enrolls the fleet into the lab's Ironic once, slowly)
# BENCH_SCALE=history: the fleet view (inventory endpoints, /fleet) over
# 10,000 nodes x 20 hardware runs written straight into SQLite and PostgreSQL
# BENCH_SCALE=redfish: 100 (BENCH_MACHINES) emulated machines out of band, and
# Ironic's own redfish inspection of 20 more in the same run;
# BENCH_SCALE=redfish-1000: 1,000 (BENCH_MACHINES) out of band against one
# static BMC each and the Ironic stand-in, 20 + 20 in-band against auto, and
# Ironic's own inspection of 20 in the real Ironic (doc/benchmarks.md);
# BENCH_SPLIT=N runs it on the split shape (an API, N conductors, JSON-RPC)
# BENCH_SCALE=follow: following Ironic's own inspections (issue 47): the
# lab's real Ironic holding 10,000 inspected nodes written straight into its
# database, the catch-up, Ironic's CPU per poll, two bursts of 500
# inspections within a minute, the fleet endpoints (20-25 minutes; the seeded
# database is kept in the lab's cache)
BENCH_IRONIC ?= $(if $(filter fleet,$(BENCH_SCALE)),standin,real)
bench: venv packages
ifeq ($(BENCH_SCALE),history)
	$(BIN)/python -m lab bench-history --output history.json
else ifeq ($(BENCH_SCALE),redfish)
	$(BIN)/python -m lab bench-redfish --machines $(or $(BENCH_MACHINES),100) --with-ironic --output redfish.json
else ifeq ($(BENCH_SCALE),redfish-1000)
	$(BIN)/python -m lab bench-redfish --machines $(or $(BENCH_MACHINES),1000) --bmcs fleet --ironic standin --compare 20 --with-ironic --database postgresql $(if $(BENCH_SPLIT),--split $(BENCH_SPLIT)) $(if $(BENCH_PROFILE),--profile $(BENCH_PROFILE)) --output redfish-1000.json
else ifeq ($(BENCH_SCALE),fleet)
	$(BIN)/python -m lab bench-fleet --ironic $(BENCH_IRONIC) --output fleet.json
else ifeq ($(BENCH_SCALE),follow)
	$(BIN)/python -m lab bench-follow --output follow.json
else
	$(BIN)/python -m lab bench --machines $(or $(BENCH_MACHINES),50) --shapes $(BENCH_SHAPES) --ironic $(BENCH_IRONIC) $(if $(BENCH_UPSTREAM),--with-upstream) $(if $(BENCH_PROFILE),--profile $(BENCH_PROFILE)) --output bench.json
endif

# the PXE filter's costs at 1k, 10k and 50k MACs, both dnsmasq backends
bench-pxe: venv packages
	$(BIN)/python -m lab bench-pxe

# the CPU of 200 introspection rules for one machine, compiled once and
# compiled per call (lab/bench/rules.py; no server, a few seconds)
bench-rules: venv
	$(BIN)/python -m lab bench-rules

# listing, metrics and sweeps at 1k and 200k records, SQLite and PostgreSQL
bench-scale: venv packages
	$(BIN)/python -m lab bench-scale

clean:
	rm -rf $(VENV) .work .mypy_cache .ruff_cache
