# agentvcr — see README.md. Every target works on a fresh clone with Go installed.
GO      ?= go
BIN     := bin
PKGS    := ./...
# The packages with benchmarks: go test builds a test binary for each
# package it is given, and most have none (make bench BENCH_PKGS=./normalize).
BENCH_PKGS ?= $(shell grep -rl --include='*_test.go' --exclude-dir=testdata '^func Benchmark' . | xargs -n1 dirname | sort -u)
BENCH   ?= .
FUZZTIME ?= 20s

.PHONY: all build test race demo bench record update fuzz lint clean realagents sdkclients acpclients upgrades dist dist-check

all: build

build:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/agentvcr ./cmd/agentvcr
	CGO_ENABLED=0 $(GO) build -o $(BIN)/agentvcr-standin ./cmd/agentvcr-standin
	$(GO) build -o $(BIN)/cursor-agent-sim ./cmd/cursor-agent-sim

# The whole suite: formatting, vet, unit tests, fuzz seeds, testscript scripts, examples.
# The timeout is far above a quiet run (the user-module tests build scratch
# modules): a loaded machine must not fail the suite by being slow.
# lint has run go vet over the same packages, whose checks include every one
# go test would run before each package: -vet=off does not vet them twice.
# -trimpath (here, in lint and in the user-module tests' go runs): what is
# compiled does not depend on where the clone is, so a fresh clone, another
# worktree or a CI checkout finds it in the Go cache. (go test links its
# test binaries without DWARF and symbol table, -s -w, of its own.)
# go test starts the packages in the order it is given them, at most
# GOMAXPROCS at once: the longest first (the user-module tests of the root
# package, then cli, view and normalize; ./... names them again, and go
# test runs each once), so that the short ones fill the end of the run
# rather than a long one starting last, alone.
# The test binaries (and the user-module tests' scratch ones) are linked
# through scripts/linkcache, which keeps each in LINKCACHE_DIR, beside the
# Go build cache: go caches the packages it compiles but links every test
# binary again, a CPU-second or two each, and a link of the same inputs is
# the same file. The newest LINKCACHE_KEEP entries are kept (a run and a
# half: some 70 links a run, 5 to 20 MB each, 700 MB in all); LINKCACHE_DIR=
# links as go does, and so does a LINKCACHE_DIR that cannot be made
# (GOCACHE=/gocache, say).
# No cgo (here and in lint), as agentvcr is released: the test binaries are
# linked statically, and the tests start them hundreds of times as stand-ins
# with no dynamic loader to run first; what is compiled is what make build,
# make bench and the tests' own builds of the commands find in the Go cache.
SLOW_PKGS := . ./internal/tools/cli ./internal/tools/view ./normalize
ifeq ($(origin LINKCACHE_DIR),undefined)
# Asked of go when a recipe first uses it, once, not for every target.
LINKCACHE_DIR = $(eval LINKCACHE_DIR := $(shell d=$$($(GO) env GOCACHE) && [ "$$d" != off ] && echo "$${d%/*}/agentvcr-links"))$(LINKCACHE_DIR)
endif
LINKCACHE_KEEP ?= 100
test: lint
	@if [ -n "$(LINKCACHE_DIR)" ] && mkdir -p "$(LINKCACHE_DIR)" 2>/dev/null; then cd "$(LINKCACHE_DIR)" && ls -t | tail -n +$$(($(LINKCACHE_KEEP) + 1)) | xargs rm -f; fi
	CGO_ENABLED=0 LINKCACHE_DIR="$(LINKCACHE_DIR)" $(GO) test -trimpath $(if $(LINKCACHE_DIR),"-toolexec='$(CURDIR)/scripts/linkcache'") -count=1 -vet=off -timeout 60m $(if $(filter ./...,$(PKGS)),$(SLOW_PKGS)) $(PKGS)
	@CGO_ENABLED=0 $(GO) run -trimpath ./internal/testsupport/corpus/cmd/realworld

# The suite under the race detector (needs cgo; about a minute on 2 cores).
race:
	$(GO) test -race -count=1 $(PKGS)

lint:
	@out=$$(gofmt -l . 2>&1); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet -trimpath $(PKGS)

# Record, replay and inspect a run of the built-in simulated agent in each format.
demo: build
	@scripts/demo.sh

# Benchmarks print their figures (MB/s, x-tee-speed, overhead-%, ms/call, x-vs-baseline), each
# run once (the heavy ones time many calls or a large input inside), and perftable prints the
# performance table from them; a whole run (BENCH=.) writes it to docs/performance.md.
# go test builds every package's benchmarks, then runs them one package at a
# time (so that none skews another's figures); without the vet pass it adds
# (make lint runs vet), and the run's time counts from the first step. No cgo,
# as agentvcr is released (make build, make dist): the benchmarks that build
# it to run as a process then find every package compiled, not built twice.
BENCH_TEST := CGO_ENABLED=0 $(GO) test -vet=off -run '^$$' -bench '$(BENCH)' -benchtime 1x -benchmem $(BENCH_PKGS)
bench:
	@start=$$(date +%s) && $(GO) build -o $(BIN)/perftable ./internal/tools/perftable/cmd/perftable && \
	echo "$(BENCH_TEST)" && \
	$(BENCH_TEST) 2>&1 | $(BIN)/perftable -start $$start $(if $(filter .,$(BENCH)),-o docs/performance.md)

# Re-record every cassette of the suite (AGENT=path/to/cursor-agent for a real one).
record: build
	@scripts/record.sh

# Rewrite the golden snapshots from the current cassettes.
update:
	@scripts/update.sh

# Run each fuzz target for FUZZTIME.
fuzz:
	@scripts/fuzz.sh $(FUZZTIME)

# The real agent CLIs from npm, offline against a fake model: do two runs normalise alike?
realagents:
	@scripts/realagents.sh

# The official agent SDKs from npm, recorded through the stand-in and replayed offline: same messages?
sdkclients:
	@scripts/sdkclients.sh

# An agent upgrade tested offline: older and newer npm builds of Claude Code, Codex,
# Gemini CLI, Qwen Code and OpenCode; recorded with the older (its model's exchanges
# included), rerun with both builds against the recorded answers, the fake model down.
upgrades:
	@scripts/upgrades.sh

# The ACP agents and codex app-server from npm, driven by a Go ACP client through the
# stand-in: recorded against the fake model, replayed offline in a fresh directory.
acpclients:
	@scripts/acpclients.sh

# Release files in dist/: an archive per platform (linux, darwin, windows on
# amd64 and arm64), checksums.txt, the npm packages and the Python wheels,
# versioned from git describe (VERSION=v1.2.3 to choose).
dist:
	$(GO) run ./internal/tools/dist -out dist $(if $(VERSION),-version $(VERSION))

# Checks make dist's files as users get them: archives and checksums, npm
# install (no Go on PATH) with the Claude Agent SDK recorded and replayed,
# the wheel in a venv. Needs node, npm and python3-venv.
dist-check:
	@scripts/distcheck.sh

clean:
	rm -rf $(BIN) dist .demo .realagents .sdkclients .acpclients .upgrades
