# koord-queue. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Built tools live outside the repository, keyed by their pinned versions.
TOOLS_BIN = $(shell hack/tools.sh dir)
export KUBEBUILDER_ASSETS = $(TOOLS_BIN)
export KUBECTL = $(TOOLS_BIN)/kubectl
GO_TEST_FLAGS ?= -race -count=1
UNIT_PKGS = $(shell go list ./... | grep -v -e /test/)

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: tools
tools: ## Build every tool from Go modules into the cache (skips what is there).
	@hack/tools.sh >/dev/null

.PHONY: generate
generate: ## Regenerate deepcopy code and CRD manifests.
	hack/generate.sh

.PHONY: verify
verify: ## Fail on stale generated files, gofmt, go vet or golangci-lint findings.
	hack/verify-generated.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	hack/tools.sh golangci-lint >/dev/null
	$(TOOLS_BIN)/golangci-lint run ./...

.PHONY: build
build: ## Build the binaries into bin/.
	go build -o bin/ ./cmd/...

.PHONY: test
test: ## The whole suite: verify, unit, integration (real kube-apiserver + etcd).
	@hack/tools.sh >/dev/null
	$(MAKE) verify
	$(MAKE) test-unit
	$(MAKE) test-integration

.PHONY: test-unit
test-unit: ## Unit tests (no cluster), with -race.
	go test $(GO_TEST_FLAGS) $(UNIT_PKGS)

.PHONY: test-integration
test-integration: ## Integration tests against envtest (real kube-apiserver + etcd), with -race.
	@hack/tools.sh etcd kube-apiserver kubectl >/dev/null
	go test $(GO_TEST_FLAGS) -p 1 ./test/integration/...
