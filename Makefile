# msrag: make setup | make build | make test | make bench
SHELL := /bin/bash
GO ?= go
# Packages that must build without cgo (DESIGN.md: pure Go).
PURE_PKGS := chunk tokenizer fuse eval corpus
PURE_DIRS = $(foreach p,$(PURE_PKGS),$(if $(wildcard $(p)/*.go),./$(p)/...))

.PHONY: setup check build test vet fmt bench docker-cuda

setup:
	@scripts/setup.sh

check:
	@scripts/setup.sh --check

build: setup
	$(GO) build -o bin/msrag ./cmd/msrag

test: setup
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [[ -n "$$out" ]]; then echo "gofmt -l reports:"; echo "$$out"; exit 1; fi
	$(GO) test -race ./...
	@if [[ -n "$(PURE_DIRS)" ]]; then echo "CGO_ENABLED=0 go test $(PURE_DIRS)"; CGO_ENABLED=0 $(GO) test $(PURE_DIRS); fi

bench: setup
	$(GO) test -run '^$$' -bench . -benchmem ./...

docker-cuda:
	docker build -f Dockerfile.cuda -t msrag:cuda .
