# msrag: make setup | make build | make install | make test | make bench
SHELL := /bin/bash
GO ?= go
# What make setup fetches goes to msrag's own cache, the one the msrag command
# uses: $MSRAG_CACHE when set, else $XDG_CACHE_HOME/msrag or ~/.cache/msrag.
CACHE := $(or $(MSRAG_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/msrag)
# make install puts msrag in $(PREFIX)/bin and the ONNX Runtime library it
# loads in $(PREFIX)/lib/msrag.
PREFIX ?= /usr/local
# Packages that must build without cgo (docs/architecture.md: the pure packages).
PURE_PKGS := chunk tokenizer fuse eval corpus embed remote hub router lexical mteb
PURE_DIRS = $(foreach p,$(PURE_PKGS),$(if $(wildcard $(p)/*.go),./$(p)/...))

.PHONY: setup check build install test cgocheck fuzz vet fmt bench docker-cuda demo check-gpu-build suite-seed suite-quick go-env

# FAISS, which make setup installs and make build links:
#   default     FAISS 1.15.0's CPU library from the faiss-cpu wheel (sha256-pinned), with the
#               OpenBLAS and libgomp it was built with, in CACHE/faiss-cpu/lib, and FAISS
#               1.15.0's headers from its release archive, checked header by header against
#               scripts/faiss-headers-v1.15.0.sha256 (scripts/setup-gpu.sh --cpu-wheel)
#   GPU=1       FAISS 1.15.0's GPU library from the faiss-gpu wheel with CUDA 12's runtime and
#               cuBLAS, CUDA's headers and the GPU ONNX Runtime, into CACHE/gpu (docs/gpu.md);
#               build links bin/msrag with the tag gpu
#   FAISS=debian  Debian's libfaiss-dev 1.7.3 and OpenBLAS (apt-get, root or sudo), from the
#               system's directories
# A wheel's libraries are copied into bin/lib (bin/msrag's rpath), so it runs from any directory.
GPU ?=
FAISS ?= wheel
BIN ?= bin
ifeq ($(GPU),1)
SETUP_FLAGS := --gpu
BUILD_TAGS := -tags gpu
WHEEL_LIB := $(CACHE)/gpu/lib
ORT_DIR := $(CACHE)/gpu/onnxruntime
else ifeq ($(FAISS),wheel)
WHEEL_LIB := $(CACHE)/faiss-cpu/lib
ORT_DIR := $(CACHE)/onnxruntime
else ifeq ($(FAISS),debian)
SETUP_FLAGS := --faiss-debian
ORT_DIR := $(CACHE)/onnxruntime
else
$(error FAISS=$(FAISS): want wheel (the default) or debian)
endif
# A wheel's libfaiss.so and the OpenBLAS and libgomp it was built with are linked by their
# link-time names in WHEEL_LIB (scripts/setup-gpu.sh makes them), so the -lopenblas and
# -fopenmp of faiss/index.go take the wheel's copies and the process holds one of each.
# DT_RPATH (--disable-new-dtags), not DT_RUNPATH, so that the libraries these load find
# theirs beside them too: bin/lib after make build, PREFIX/lib/msrag after make install.
# Test binaries (make test, cgocheck, fuzz, bench) run from go's temporary directories and
# find the libraries in WHEEL_LIB itself.
HEADERS := $(CACHE)/gpu/headers
# The wheels' library was compiled with FAISS_ENABLE_DD (its compile options say "DD":
# kernels chosen at run time), a macro FAISS's headers read: the binding sees them as the
# library did.
WHEEL_CPPFLAGS = -I$(HEADERS)/faiss$(if $(BUILD_TAGS), -I$(HEADERS)/cuda) -DFAISS_ENABLE_DD
WHEEL_LINK = -L$(WHEEL_LIB) -Wl,-rpath-link,$(WHEEL_LIB) -Wl,--disable-new-dtags
WHEEL_LDFLAGS = $(WHEEL_LINK) -Wl,-rpath,$$ORIGIN/lib:$$ORIGIN/../lib/msrag
BUILD_ENV = $(if $(WHEEL_LIB),CGO_CPPFLAGS='$(WHEEL_CPPFLAGS)' CGO_LDFLAGS='$(WHEEL_LDFLAGS)')
WHEEL_TEST_LDFLAGS = $(WHEEL_LINK) -Wl,-rpath,$(WHEEL_LIB)
TEST_ENV = $(if $(WHEEL_LIB),CGO_CPPFLAGS='$(WHEEL_CPPFLAGS)' CGO_LDFLAGS='$(WHEEL_TEST_LDFLAGS)')
# The ONNX Runtime files copied beside bin/msrag: the library, and a GPU build's providers.
ORT_FILES = libonnxruntime.so.1 $(if $(BUILD_TAGS),libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so)

setup:
	@scripts/setup.sh $(SETUP_FLAGS)

# The cgo flags that link FAISS as make build does, for go build and go test run by hand or
# by a script (binaries find the wheel's libraries by their path in the cache):
#   eval "$(make -s go-env)" && go test ./faiss
go-env:
	@echo "export CGO_CPPFLAGS='$(if $(WHEEL_LIB),$(WHEEL_CPPFLAGS))' CGO_LDFLAGS='$(if $(WHEEL_LIB),$(WHEEL_TEST_LDFLAGS))'"

check:
	@scripts/setup.sh --check $(SETUP_FLAGS)

# The source revision and whether the tree was modified, for results and
# manifests (internal/provenance): go stamps neither in a git worktree or
# with -buildvcs=false. Empty outside a git checkout. bin/msrag finds the ONNX
# Runtime library copied beside it, so it runs from any directory.
PROVENANCE := github.com/msrag/msrag/internal/provenance
GIT_REVISION = $(shell git rev-parse HEAD 2>/dev/null)
GIT_MODIFIED = $(shell git status --porcelain >/dev/null 2>&1 && { test -z "$$(git status --porcelain)" && echo false || echo true; })

# NO_SETUP=1: build without running make setup first (Dockerfile.cuda, which runs
# scripts/setup-gpu.sh alone).
# BIN: where build puts msrag and its libraries (scripts/check-gpu-build-run.sh builds
# both kinds side by side). The wheels' libraries are large (cuBLAS alone is 850 MB): bin/ gets hard links to the
# cache's copies where the file system allows, else copies.
build: $(if $(NO_SETUP),,setup)
	$(BUILD_ENV) $(GO) build $(BUILD_TAGS) -ldflags "-X $(PROVENANCE).revision=$(GIT_REVISION) -X $(PROVENANCE).modified=$(GIT_MODIFIED)" -o $(BIN)/msrag ./cmd/msrag
	rm -rf $(BIN)/lib $(BIN)/libonnxruntime*.so*
	$(if $(WHEEL_LIB),mkdir -p $(BIN)/lib && { cp -al $(WHEEL_LIB)/lib*.so* $(BIN)/lib/ 2>/dev/null || cp -a $(WHEEL_LIB)/lib*.so* $(BIN)/lib/; })
	for f in $(ORT_FILES); do cp -l $(ORT_DIR)/$$f $(BIN)/$$f 2>/dev/null || install -m 0644 $(ORT_DIR)/$$f $(BIN)/$$f; done

install: build
	install -D -m 0755 $(BIN)/msrag $(DESTDIR)$(PREFIX)/bin/msrag
	for f in $(ORT_FILES); do install -D -m 0644 $(BIN)/$$f $(DESTDIR)$(PREFIX)/lib/msrag/$$f; done
	$(if $(WHEEL_LIB),cp -a $(BIN)/lib/. $(DESTDIR)$(PREFIX)/lib/msrag/)

# -timeout 30m: cmd/msrag's real processes under the race detector take 9 minutes alone on 2 shared
# cores, past go test's default 10 minutes once other packages run beside it.
test: setup
	$(TEST_ENV) $(GO) vet ./...
	@out=$$(gofmt -l .); if [[ -n "$$out" ]]; then echo "gofmt -l reports:"; echo "$$out"; exit 1; fi
	$(TEST_ENV) $(GO) test -race -timeout 30m ./...
	@if [[ -n "$(PURE_DIRS)" ]]; then echo "CGO_ENABLED=0 go test $(PURE_DIRS)"; CGO_ENABLED=0 $(GO) test $(PURE_DIRS); fi
	$(MAKE) cgocheck

# The ONNX path's runs (one and several sessions, padded and single batching, token states,
# a failing run, Close during a call, the cleanup of a dropped Embedder) with cgo's full
# pointer checks, which Go builds in only under GOEXPERIMENT=cgocheck2 (GODEBUG=cgocheck=2
# before Go 1.21). The first run compiles the standard library once more that way.
CGOCHECK_TESTS := TestConcurrentEmbed|TestSessionsHandStatesInOrder|TestSingleBatchingExact|TestBatchIndependence|TestCloseWhileEmbedding|TestSessionFailsMidRun|TestPoolSharesBatches|TestEmbedTokenStatesErrors|TestDroppedEmbedderIsClosed
cgocheck: setup
	$(TEST_ENV) GOEXPERIMENT=cgocheck2 $(GO) test -count=1 -run '^($(CGOCHECK_TESTS))$$' ./onnx/

# Every fuzz target for FUZZTIME each (default 10s), one after another (CI runs it).
fuzz: setup
	$(TEST_ENV) scripts/fuzz-short.sh

bench: setup
	$(TEST_ENV) $(GO) test -run '^$$' -bench . -benchmem ./...

# The GPU code (build tag gpu) vetted against the headers make build GPU=1 compiles it
# with: FAISS 1.15.0's and CUDA 12.9's (scripts/setup-gpu.sh --headers); go vet runs cgo and
# the C++ compiler over faiss/gpu.cpp. scripts/check-gpu-build-run.sh links and runs it.
check-gpu-build: setup
	scripts/setup-gpu.sh --headers
	CGO_CPPFLAGS="-I$(HEADERS)/faiss -I$(HEADERS)/cuda -DFAISS_ENABLE_DD" $(GO) vet -tags gpu ./...

# The image takes FAISS's headers from a named build context (the wheels have none): the
# headers make setup installed, checked against scripts/faiss-headers-v1.15.0.sha256.
docker-cuda:
	scripts/setup-gpu.sh --faiss-headers
	docker build -f Dockerfile.cuda --build-context faiss-headers=$(HEADERS)/faiss -t msrag:cuda .

# make demo: every window, RRF, MaxP, the full document and the oracle on SciFact's test
# split (index built once into DEMO_OUT/index and reused), then the summary. The model is
# all-MiniLM-L6-v2 int8, the fastest built-in one: SciFact at three window sizes and the full
# documents is 6.3 million tokens to embed, one ONNX Runtime session per core (docs/setup.md has
# the runs and how to read the rate msrag eval prints; docs/performance.md "Embedder").
# DEMO_DOCS=N indexes a subset instead (the documents judged in the test split plus the
# first N others), for a quicker look. Windows must fit the model: all-MiniLM-L6-v2 takes
# 256 tokens (254 of content); models of 512 tokens take 100,200,500.
DEMO_MODEL ?= all-minilm-l6-v2-int8
DEMO_DOCS ?= all
demo_windows_256 := 64,128,254
demo_windows_512 := 100,200,500
DEMO_WINDOWS ?= $(if $(findstring all-minilm,$(DEMO_MODEL)),$(demo_windows_256),$(demo_windows_512))
DEMO_DATA = $(if $(filter all,$(DEMO_DOCS)),$(CACHE)/data/scifact,$(CACHE)/data/scifact-demo$(DEMO_DOCS))
DEMO_OUT ?= out/$(notdir $(DEMO_DATA))-$(DEMO_MODEL)
# The fusion model msrag ships (learned on training splits) is reported beside the rules when
# the windows are the ones it was fitted for (all-MiniLM-L6-v2's 64,128,254 and the full window).
DEMO_FLAGS ?= $(if $(filter $(demo_windows_256),$(DEMO_WINDOWS)),--fusion-model transfer)

demo: build
	scripts/fetch-data.sh scifact
	scripts/fetch-model.sh $(DEMO_MODEL)
	@if [[ "$(DEMO_DOCS)" != all ]]; then scripts/subset-dataset.sh $(CACHE)/data/scifact $(DEMO_DATA) test $(DEMO_DOCS); fi
	bin/msrag eval --dataset $(DEMO_DATA) --split test --model $(DEMO_MODEL) \
		--windows $(DEMO_WINDOWS) --out $(DEMO_OUT) $(DEMO_FLAGS)
	@echo "report: $(DEMO_OUT)/report.md, plots: $(DEMO_OUT)/*.png"

# Benchmark suites (msrag bench, docs/suites.md); SUITE_FLAGS go to msrag bench (--check,
# --out DIR, --device cuda, ...). Indices are kept in the suite's output directory and
# reused by the next run, which then costs the queries only.
#
# make suite-seed: suites/seed.json, what the method's authors ran that can be run here:
# SciFact, NFCorpus, QMSum (dev) and LongEmbed's QMSum, each with e5-small-v2 (windows
# 100,200,500) and all-MiniLM-L6-v2 (100,200,254), every configuration. About 3 h 15 min on
# 2 cores, estimated from the measured runs of docs/results.md (docs/suites.md has the
# estimate per run); a few minutes once its indices exist.
# make suite-quick: suites/quick.json, subsets of SciFact (300 queries, 1,283 documents) and
# NFCorpus (50 queries, 1,347 documents) with all-MiniLM-L6-v2 int8 at 64,128,254: 2 min measured
# on 2 idle cores (docs/suites.md).
SUITE_FLAGS ?=
SUITE_DATA := .cache/data

# The seed suite's data sets, from the cache (scripts/fetch-data.sh: QMSum's sets need a
# local mirror, MSRAG_DATA_MIRROR), linked where suites/seed.json names them.
suite-seed: build
	scripts/fetch-model.sh e5-small-v2 all-minilm-l6-v2
	scripts/fetch-data.sh scifact nfcorpus qmsum qmsum-lembed
	mkdir -p $(SUITE_DATA) && for d in scifact nfcorpus qmsum qmsum-lembed; do ln -sfn $(abspath $(CACHE))/data/$$d $(SUITE_DATA)/$$d; done
	bin/msrag bench --suite suites/seed.json $(SUITE_FLAGS)

suite-quick: build
	scripts/fetch-model.sh all-minilm-l6-v2-int8
	scripts/fetch-data.sh scifact nfcorpus
	scripts/subset-dataset.sh $(CACHE)/data/scifact $(SUITE_DATA)/scifact-quick1000 test 1000
	scripts/subset-dataset.sh $(CACHE)/data/nfcorpus $(SUITE_DATA)/nfcorpus-quick300-q50 test 300 50
	bin/msrag bench --suite suites/quick.json $(SUITE_FLAGS)
