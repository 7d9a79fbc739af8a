# PyStream's Makefile: thin on purpose. Every target is .PHONY and loops over
# MODULES; longer logic lives in .ci/. Run `make help` for the list.

MODULES := docs log topic client cluster server tools
# LAYERS are the library modules a learner may depend on alone; APPS the
# programs. docs (the Markdown pages, embedded for the server to serve) is
# neither: its tests run in the first pass, and the per-module pass tests
# it alone like a layer.
LAYERS := docs log topic client cluster
APPS := server tools
# Modules outside go.work that use PyStream as an outside program would: each
# is built and tested on its own (GOWORK=off), through its replace line.
EXAMPLES := docs/examples/onelayer
GO      ?= go

# staticcheck 2026.2.2, which supports Go 1.26. Run with `go run`, so it is
# never added to a library module's go.mod.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Both binaries print VERSION (pystream-server --version, pystream version).
SERVER_LDFLAGS := -X github.com/pystream/pystream/server.Version=$(VERSION)
BENCHTIME    ?= 500ms
FUZZTIME     ?= 10s
SOAK_TIMEOUT ?= 2h
COVERPROFILE ?= coverage.out
COVERPKG     := github.com/pystream/pystream/...
# make chaos: MINUTES of faults, SEED (0 draws one, printed to replay the
# run), the nodes' PYSTREAM_FAILOVER_AFTER, cluster or embedded mode, and
# the evidence directory (docs/chaos.md).
MINUTES        ?= 5
SEED           ?= 0
FAILOVER_AFTER ?= 1s
CHAOS_MODE     ?= cluster
CHAOS_OUT      ?= chaos-out

.PHONY: help run cluster chaos build test lint fmt-check vet staticcheck layers docrefs bench cover fuzz soak install release

help:
	@echo "make run      build and start the server on its defaults (http://127.0.0.1:8000)"
	@echo "make cluster  build and start three server processes, one broker and Raft voter each (ports 8001-8003)"
	@echo "make chaos    the chaos suite: a real cluster, faults for MINUTES=$(MINUTES), then the checker (SEED=, FAILOVER_AFTER=, CHAOS_MODE=)"
	@echo "make test     every module's tests with -race, then each module and docs/examples alone (GOWORK=off)"
	@echo "make lint     gofmt, go vet, staticcheck $(STATICCHECK_VERSION), the layer and docrefs checks"
	@echo "make layers   check module imports against the module graph, and the server's packages against theirs (docs/README.md)"
	@echo "make docrefs  check that every .md reference and design citation leads into the repository"
	@echo "make bench    every module's benchmarks, briefly (BENCHTIME=$(BENCHTIME))"
	@echo "make cover    one merged coverage figure for all modules"
	@echo "make fuzz     every fuzz target for FUZZTIME=$(FUZZTIME)"
	@echo "make soak     the long tests (PYSTREAM_SOAK=1), timeout $(SOAK_TIMEOUT)"
	@echo "make install  go install pystream-server (and the pystream CLI when present)"
	@echo "make release VERSION=vX.Y.Z  test, commit go.mod files requiring vX.Y.Z, gorelease, tag every module (no push)"

run:
	$(GO) build -ldflags "$(SERVER_LDFLAGS)" -o bin/pystream-server ./server/cmd/pystream-server
	./bin/pystream-server

cluster:
	$(GO) build -ldflags "$(SERVER_LDFLAGS)" -o bin/pystream-server ./server/cmd/pystream-server
	$(GO) build -o bin/pystream ./tools/cmd/pystream
	bash .ci/cluster

# The chaos suite (tools/chaos, docs/chaos.md): exits 1 on a violation,
# keeping the evidence in CHAOS_OUT.
chaos:
	$(GO) build -ldflags "$(SERVER_LDFLAGS)" -o bin/pystream-server ./server/cmd/pystream-server
	$(GO) build -o bin/pystream ./tools/cmd/pystream
	$(GO) build -o bin/pystream-chaos ./tools/cmd/pystream-chaos
	./bin/pystream-chaos -duration $(MINUTES)m -seed $(SEED) -failover-after $(FAILOVER_AFTER) -mode $(CHAOS_MODE) \
		-out $(CHAOS_OUT) -server bin/pystream-server -cli bin/pystream

build:
	$(GO) build work

# The race detector runs once, over the whole workspace, four packages at a
# time: the multi-node tests mostly wait for elections and timeouts, so
# they overlap with the packages that use the CPU. The per-module pass
# without it proves that each go.mod works on its own. The layers a learner
# may depend on alone (LAYERS) run their tests again there, with -short
# (the multi-node cluster tests, which wait for elections, and the long
# crash-at-every-step runs ran in the first pass); the applications
# (server, tools) have every package and test type-checked and vetted
# there, and their tests are not run a second time. The packages whose
# tests take longest are named first (SLOW_TESTS, measured on a 2-core
# machine), so that they start first and no long package is left running
# alone at the end.
SLOW_TESTS := ./server/cmd/pystream-server ./cluster ./server ./server/kafka ./tools/cmd/pystream ./server/explorer ./server/httpapi
test:
	$(GO) test -race -count=1 -p 4 $(SLOW_TESTS) work
	@set -e; for m in $(LAYERS); do \
		echo "== $$m (GOWORK=off)"; \
		(cd $$m && GOWORK=off $(GO) test -short -count=1 ./...); \
	done
	@set -e; for m in $(APPS); do \
		echo "== $$m (GOWORK=off, build and vet)"; \
		(cd $$m && GOWORK=off $(GO) vet ./...); \
	done
	@set -e; for e in $(EXAMPLES); do \
		echo "== $$e (GOWORK=off, outside go.work)"; \
		(cd $$e && GOWORK=off $(GO) test -count=1 ./...); \
	done

lint: fmt-check vet staticcheck layers docrefs

# gofmt -l exits 0 even when it lists files, so check its output.
fmt-check:
	@out="$$(gofmt -l $(MODULES) $(EXAMPLES))"; \
	if [ -n "$$out" ]; then echo "gofmt: these files are not formatted (run gofmt -w):"; echo "$$out"; exit 1; fi; \
	echo "gofmt: ok"

# vet and staticcheck report every module's findings before failing.
vet:
	@fail=""; for m in $(MODULES) $(EXAMPLES); do \
		echo "go vet: $$m"; \
		(cd $$m && GOWORK=off $(GO) vet ./...) || fail="$$fail $$m"; \
	done; \
	if [ -n "$$fail" ]; then echo "go vet failed in:$$fail"; exit 1; fi

staticcheck:
	@fail=""; for m in $(MODULES) $(EXAMPLES); do \
		echo "staticcheck: $$m"; \
		(cd $$m && GOWORK=off $(GO) run $(STATICCHECK) ./...) || fail="$$fail $$m"; \
	done; \
	if [ -n "$$fail" ]; then echo "staticcheck failed in:$$fail"; exit 1; fi

# The server's package check has a test of its own (a small module with
# broken layers), run first.
layers:
	@bash .ci/packagelayers_test
	@MODULES="$(MODULES)" bash .ci/layers

# The check's own test (a small repository with dead references) runs first.
docrefs:
	@bash .ci/docrefs_test
	@bash .ci/docrefs

bench:
	@set -e; for m in $(MODULES); do \
		echo "== bench $$m"; \
		(cd $$m && GOWORK=off $(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) ./...); \
	done

cover:
	$(GO) test -count=1 -covermode=atomic -coverpkg=$(COVERPKG) -coverprofile=$(COVERPROFILE) work
	@$(GO) tool cover -func=$(COVERPROFILE) | tail -n 1

fuzz:
	@MODULES="$(MODULES)" FUZZTIME="$(FUZZTIME)" bash .ci/fuzz

soak:
	PYSTREAM_SOAK=1 $(GO) test -race -count=1 -timeout=$(SOAK_TIMEOUT) work

install:
	$(GO) install -ldflags "$(SERVER_LDFLAGS)" ./server/cmd/pystream-server
	$(GO) install -ldflags "-X main.version=$(VERSION)" ./tools/cmd/pystream
	@bin="$$($(GO) env GOBIN)"; [ -n "$$bin" ] || bin="$$($(GO) env GOPATH)/bin"; \
	echo "installed into $$bin"; \
	case ":$$PATH:" in *":$$bin:"*) ;; *) echo "note: $$bin is not on your PATH; add it with: export PATH=\"$$bin:\$$PATH\"";; esac

# Tags log/VERSION, topic/VERSION, ... on a release commit whose go.mod files
# require the siblings at VERSION, after a clean-tree check, make test and
# gorelease; pushes nothing. See docs/releasing.md.
# VERSION must come from the command line (or the environment): the default
# above, from git describe, is for install and is never released.
release:
	@case "$(origin VERSION)" in command\ line|environment*) ;; \
	*) echo "usage: make release VERSION=vX.Y.Z" >&2; exit 2;; esac
	@MODULES="$(MODULES)" bash .ci/release "$(VERSION)"
