# Two commands on a fresh Debian machine: `make demo` and `make test`.
SWIFT ?= swift
APT_PACKAGES := libsodium-dev pkg-config python3-venv libsqlite3-dev
# What only `make test` (and bench-keyservice) needs besides: PostgreSQL and nginx, which the key service's PostgreSQL
# and multi-instance suites start (issue 22; without them those suites fail, they do not skip), nginx also as the TLS
# front of the interop suite's django-oauth-toolkit (issue 23), and curl, which bench-keyservice uses. fcgiwrap runs
# `git http-backend` behind nginx for the git helper's clone over https (issue 24, GitCredentialTests). glewlwyd is the
# real DPoP server (and device-grant server) the Glewlwyd suites start (issue 25); without it they fail, they do not skip.
APT_TEST_PACKAGES := postgresql nginx curl fcgiwrap glewlwyd
LINT_PATHS := Package.swift Sources KeyService KeyServiceMock Tests

.PHONY: all deps build test demo lint format proof-crash-long

all: build

# Installs what a fresh machine lacks when run as root; otherwise says exactly what to install.
define install-packages
	@missing=""; \
	for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else \
			echo "missing system packages:$$missing"; \
			echo "install them with: sudo apt-get install -y$$missing"; \
			exit 1; \
		fi; \
	fi
endef

deps:
	$(call install-packages,$(APT_PACKAGES))

.PHONY: test-deps
test-deps: deps
	$(call install-packages,$(APT_TEST_PACKAGES))

build: deps
	$(SWIFT) build

# The tiers of `make test` live in the tests (Tests/VaultTestSupport/Tier.swift), each suite naming its own with a
# Swift Testing tag; a suite that names none is in the fast tier. Tests/tiers.py turns a tier into that tier's
# suites (Swift Testing 6.3 cannot select by tag on the command line: it asks the built test binary for its tests and
# their tags) and runs `CREDENTIAL_VAULT_TIER=TIER swift test --skip-build` on them, so no suite name is written here
# and a renamed suite keeps its tier. The tiers, in the order make test runs them:
#   fast   everything that names no tier, in parallel.
#   cli    the suites that run the built `credential-vault` against a server in the test process (.tags(.cli)); the
#          binary waits 15 s for an answer, so they run on their own, where the CPU-heavy suites cannot hold that
#          server back past the timeout on a busy two-core machine. A bare `swift test` runs them too.
#   alone  the suites that flood one process on purpose (a thousand concurrent callers or requests against an
#          in-process server, every Argon2id place held, the waiting queue filled, the PostgreSQL hammers of issues
#          22 and 27 through four instances and nginx), one test at a time: on two cores a flood starves whatever
#          else that process serves at the same moment.
#   proof  the proofs of issues 15 and 21: 300 kills of a child, each disk fault on a store (one a 60-second lock
#          wait), SIGINT/SIGTERM/SIGHUP to a refresh loop, a refresh on a full tmpfs; after the alone tier, so the
#          kills land on children that are not starved, each printing its `PROOF crash:`/`disk:`/`signals:` line.
#   fuzz   the hostile-input suite (make proof-fuzz), which keeps both cores busy for its whole run.
# alone, proof and fuzz are heavy: their suites also carry `.enabled(inTier:)`, so a bare `swift test` (the fast and
# cli tiers) skips them. `make test-tiers-check` (the first step of make test after the build) fails when a test is in
# two tiers, when a heavy suite would run in a bare `swift test`, or when a condition lacks its tag, and prints each
# tier's count; within a tier, the suites that must run alone say why with `.serialized`.
TIER := env SWIFT=$(SWIFT) Tests/tiers.py

# Each phase of `make test` runs under a time limit in seconds (Tests/phase-limit.sh NAME SECONDS COMMAND): a hang fails
# the run with a line naming the phase. The limits are about three times what each phase takes on a two-core machine
# (the build a fresh clone's, proof-races with its ThreadSanitizer build), so that one hang is caught well inside CI's
# 90 minutes: they catch hangs, not slow code. Each phase's wall time is printed at the end (MAKE_TEST_TIMES).
LIMIT := Tests/phase-limit.sh

# Every Swift test in exactly one of the five tiers above, each a phase; then the concurrency suites again under
# ThreadSanitizer (proof-races), and the planted race that shows that proof can fail. The ThreadSanitizer build starts
# in the background at the lowest priority once the debug build is done (proof-races.sh prebuild), so it is built
# while the tiers run rather than after them; a run that fails or is interrupted before proof-races stops it (the
# EXIT trap). No test asserts on elapsed time: speed lives in the benchmarks. The interop suite needs a venv from PyPI;
# where PyPI cannot be reached, every other test still runs and the interop suite is reported as skipped, naming the
# reason. CI (CI=true) never skips it: there a failed venv build fails the run.
test: test-deps
	@if $(MAKE) --no-print-directory interop-deps; then \
		skip=""; \
	elif [ -n "$$CI" ]; then \
		echo "make test: the interop suite's venv could not be built from PyPI; CI does not skip it"; exit 1; \
	else \
		skip="the django-oauth-toolkit venv could not be built from PyPI (run make interop-deps to see why)"; \
		echo "make test: SKIPPING the interop suite: $$skip"; \
	fi; \
	mkdir -p .build; MAKE_TEST_TIMES=$$PWD/.build/make-test-times; : > $$MAKE_TEST_TIMES; export MAKE_TEST_TIMES; \
	trap 'Tests/Races/proof-races.sh prebuild-stop' EXIT; trap 'exit 130' INT TERM; \
	$(LIMIT) build 1800 $(SWIFT) build --build-tests && \
	SWIFT=$(SWIFT) Tests/Races/proof-races.sh prebuild && \
	$(LIMIT) tiers-check 300 $(TIER) check && \
	CREDENTIAL_VAULT_SKIP_INTEROP="$$skip" $(LIMIT) fast 900 $(TIER) run fast && \
	$(LIMIT) cli 1800 $(TIER) run cli && \
	$(LIMIT) alone 600 $(TIER) run alone --no-parallel && \
	$(LIMIT) proof 900 $(TIER) run proof && \
	$(LIMIT) fuzz 600 $(MAKE) --no-print-directory proof-fuzz-run && \
	$(LIMIT) proof-races 1800 $(MAKE) --no-print-directory proof-races && \
	$(LIMIT) proof-races-planted 600 $(MAKE) --no-print-directory proof-races-planted; \
	status=$$?; \
	cat $$MAKE_TEST_TIMES; \
	awk '{ total += $$5 } END { printf "make test: all phases %d s (%dm%02ds)\n", total, total / 60, total % 60 }' \
		$$MAKE_TEST_TIMES; \
	if [ -n "$$skip" ]; then echo "make test: the interop suite was SKIPPED: $$skip"; fi; \
	exit $$status

# Every test in exactly one tier (see TIER above), each tier's count printed.
.PHONY: test-tiers-check
test-tiers-check: deps
	$(SWIFT) build --build-tests
	@$(TIER) check

# The crash proof's deeper run: 3000 kills by default (KILLS=n for another number), some 15 minutes on two cores.
proof-crash-long: deps
	$(SWIFT) build --build-tests && \
	CREDENTIAL_VAULT_TIER=proof CREDENTIAL_VAULT_PROOF_KILLS=$(or $(KILLS),3000) \
		$(SWIFT) test --skip-build --filter 'CredentialVaultTests\.CrashProofTests'

# The hostile-input suite: every parser of untrusted bytes (JWT, envelope, key-service and token-endpoint answers,
# discovery documents, JWKS, the loopback listener's requests and client's answers, the config file) under
# CREDENTIAL_VAULT_FUZZ_INPUTS generated and mutated inputs each (100,000 by default), then one total line over the
# PROOF lines. A failure prints its input's seed; CREDENTIAL_VAULT_FUZZ_SEED='<seed>' runs that input alone again.
# proof-fuzz-long runs ten times as many inputs. A seed that crashed a parser (a `PROOF fuzz: CRASH candidate <parser>
# input #n seed <seed>` line) becomes a named case of Tests/HostileInputTests/CrashRegressionTests.swift (its parser,
# its seed and the fingerprint the suite prints for it): this phase, and so every `make test`, replays each of them.
.PHONY: proof-fuzz proof-fuzz-long proof-fuzz-run

proof-fuzz: deps
	$(SWIFT) build --build-tests
	@$(MAKE) --no-print-directory proof-fuzz-run

proof-fuzz-long: deps
	$(SWIFT) build --build-tests
	@CREDENTIAL_VAULT_FUZZ_INPUTS=$${CREDENTIAL_VAULT_FUZZ_INPUTS:-1000000} $(MAKE) --no-print-directory proof-fuzz-run

# Runs the built suite (the fuzz tier); the exit status is swift test's, kept across the pipe through tee.
proof-fuzz-run:
	@mkdir -p .build; \
	{ $(TIER) run fuzz; echo $$? > .build/proof-fuzz.status; } 2>&1 | tee .build/proof-fuzz.log; \
	awk '/^PROOF fuzz: [a-z-]+ [0-9]+ inputs/ { parsers++; inputs += $$4; untyped += $$8; hangs += $$11; violations += $$13 } \
		/^PROOF fuzz: CRASH \(/ { crashes++ } \
		END { printf "PROOF fuzz: total %d parsers, %d inputs, %d crashes, %d untyped errors, %d hangs, %d property violations\n", \
			parsers, inputs, crashes, untyped, hangs, violations }' .build/proof-fuzz.log; \
	exit $$(cat .build/proof-fuzz.status)

# The concurrency suites the issue names (single flight with 1,000 callers, simultaneous wrong passwords, two
# processes logging in at once on one store, logout during a refresh; each tagged `races`, each in its own tier) built
# with ThreadSanitizer in .build-tsan and run with any report fatal: prints `PROOF races: N tests in M suites under
# ThreadSanitizer, 0 races`.
.PHONY: proof-races proof-races-planted
proof-races: deps
	SWIFT=$(SWIFT) Tests/Races/proof-races.sh

# Passes only when ThreadSanitizer reports the data race PlantedRaceTests plants (a test no other target runs).
proof-races-planted: deps
	SWIFT=$(SWIFT) Tests/Races/proof-races.sh planted

# The demo runs the keyservice-mock executable beside credential-vault as a child process: both are built first.
demo: deps
	$(SWIFT) build --product keyservice-mock && $(SWIFT) run credential-vault demo

lint:
	$(SWIFT) format lint --strict --recursive $(LINT_PATHS)

format:
	$(SWIFT) format format --in-place --recursive $(LINT_PATHS)

# The real OpenID Connect provider the interop tests start: django-oauth-toolkit from PyPI in
# a venv under .build-interop/, at the exact versions Tests/Interop/dot/requirements.txt pins.
# The stamp lives inside the venv, so deleting the venv reinstalls it.
INTEROP_VENV := .build-interop/venv
INTEROP_REQUIREMENTS := Tests/Interop/dot/requirements.txt
INTEROP_STAMP := $(INTEROP_VENV)/.installed

.PHONY: interop-deps

interop-deps: $(INTEROP_STAMP)

$(INTEROP_STAMP): $(INTEROP_REQUIREMENTS) | deps
	rm -rf $(INTEROP_VENV)
	python3 -m venv $(INTEROP_VENV)
	$(INTEROP_VENV)/bin/python -m pip install --quiet --no-deps -r $(INTEROP_REQUIREMENTS)
	$(INTEROP_VENV)/bin/python -m pip check
	touch $@

# The release build: every product of the package (credential-vault, keyservice-mock, the test children) in
# .build-release, and every benchmark program (the Benchmarks package: login, heartbeat, the echo server) in
# .build-benchmarks, built and not run. CI runs it after make test, so a change that breaks a release build or a
# benchmark fails the run; the bench-* targets below reuse both builds.
RELEASE_SCRATCH := .build-release
BENCHMARK_SCRATCH := .build-benchmarks
.PHONY: build-release
build-release: deps
	$(SWIFT) build -c release --scratch-path $(RELEASE_SCRATCH)
	$(SWIFT) build -c release --package-path Benchmarks --scratch-path $(BENCHMARK_SCRATCH)

# keyservice-mock's POST /key against a plain Hummingbird JSON echo, with wrk (installed when missing and root).
.PHONY: bench-keyservice
bench-keyservice: test-deps
	@command -v wrk >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; \
		else \
			echo "wrk is missing: install it with: sudo apt-get install -y wrk"; exit 1; \
		fi; \
	}
	SWIFT=$(SWIFT) RELEASE_SCRATCH=$(RELEASE_SCRATCH) BENCHMARK_SCRATCH=$(BENCHMARK_SCRATCH) \
		Benchmarks/keyservice-throughput/run.sh

# Password login split into its steps next to a floor (the same two HTTP requests with a bare client
# plus one fsync'd atomic write), over plain http and over https (the https floor a bare AsyncHTTPClient), and
# getAccessToken next to a bare actor call; release build. Then the size of the credential-vault release binary.
.PHONY: bench-login
bench-login: deps
	$(SWIFT) run -c release --package-path Benchmarks --scratch-path $(BENCHMARK_SCRATCH) login-benchmark
	@$(SWIFT) build -c release --scratch-path $(RELEASE_SCRATCH) --product credential-vault >/dev/null
	@Benchmarks/login/binary-size.sh "$$($(SWIFT) build -c release --scratch-path $(RELEASE_SCRATCH) --show-bin-path)/credential-vault"

# The largest pause a task sees while 8 concurrent 64 MiB Argon2id derivations run, beside a baseline measured in
# the same run (the same heartbeat with no KDF running); release build.
.PHONY: bench-heartbeat
bench-heartbeat: deps
	$(SWIFT) run -c release --package-path Benchmarks --scratch-path $(BENCHMARK_SCRATCH) heartbeat-benchmark

# SIGKILL `credential-vault token` at random moments (300 by default) and count logins lost in the window between the
# issuer's rotation and the sealed write, and unreadable envelopes; release build.
.PHONY: bench-kill
bench-kill: deps
	SWIFT=$(SWIFT) RELEASE_SCRATCH=$(RELEASE_SCRATCH) Benchmarks/kill-window/run.sh $(KILLS)

# Every entry point `credential-vault agent` serves (token, git-credential, kubectl-credential, docker-credential, fhir get)
# next to `credential-vault --version` (the floor) and next to a password unlock, medians from one run, and the
# token-endpoint requests 100 agent-backed calls of each cause while the token is fresh; release build.
.PHONY: bench-cli
bench-cli: deps
	SWIFT=$(SWIFT) RELEASE_SCRATCH=$(RELEASE_SCRATCH) Benchmarks/cli-agent/run.sh $(RUNS)
