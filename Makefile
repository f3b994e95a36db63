# Copyright 2026 The Koordinator Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

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
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: tools
tools: ## Build every tool from Go modules into the cache (skips what is there).
	@hack/tools.sh >/dev/null

.PHONY: generate
generate: ## Regenerate deepcopy code, CRD manifests and the visibility API's OpenAPI definitions.
	hack/generate.sh

.PHONY: verify
verify: ## Fail on stale generated files or chart, a missing licence header, gofmt, go vet or golangci-lint findings.
	hack/verify-generated.sh
	hack/boilerplate.sh
	@hack/tools.sh helm >/dev/null
	hack/verify-chart.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	hack/tools.sh golangci-lint >/dev/null
	$(TOOLS_BIN)/golangci-lint run ./...

# What the binaries report with --version and koord_queue_build_info (package
# pkg/version): git describe of the checkout (a release tag, or
# <tag>-<n>-g<commit>, -dirty with local changes) and the commit.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
VERSION_LDFLAGS = -X github.com/koordinator-sh/koord-queue/pkg/version.version=$(VERSION) -X github.com/koordinator-sh/koord-queue/pkg/version.revision=$(REVISION)

.PHONY: build
build: ## Build the binaries into bin/ (with VERSION and REVISION).
	go build -ldflags "$(VERSION_LDFLAGS)" -o bin/ ./cmd/...

# The kubectl plugin's release (hack/plugindist): archives for each platform,
# checksums.txt and the krew manifest rendered from plugins/koord-queue.yaml.tmpl.
PLUGIN_OUTPUT ?= _output/plugin
PLUGIN_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64

.PHONY: plugin-dist
plugin-dist: ## Build kubectl-koord_queue archives for PLUGIN_PLATFORMS, their checksums and the krew manifest into PLUGIN_OUTPUT.
	go run ./hack/plugindist --output=$(PLUGIN_OUTPUT) --version=$(VERSION) --revision=$(REVISION) --source-date-epoch=$(SOURCE_DATE_EPOCH) --platforms=$(PLUGIN_PLATFORMS)

.PHONY: test
test: ## The whole suite: verify, unit, integration, chart, image, end-to-end and short chaos tests.
	@hack/tools.sh >/dev/null
	$(MAKE) verify
	$(MAKE) test-unit
	$(MAKE) test-integration
	$(MAKE) test-chart
	$(MAKE) test-images
	$(MAKE) test-e2e
	$(MAKE) test-chaos-short
	$(MAKE) test-chaos-checker
	$(MAKE) test-harness

.PHONY: test-unit
test-unit: ## Unit tests (no cluster), with -race.
	go test $(GO_TEST_FLAGS) $(UNIT_PKGS)

.PHONY: test-integration
test-integration: ## Integration tests against envtest (real kube-apiserver + etcd), with -race.
	@hack/tools.sh etcd kube-apiserver kubectl helm >/dev/null
	go test $(GO_TEST_FLAGS) -p 1 ./test/integration/...

# The local cluster of `make run` (package test/cluster): real etcd, kube-apiserver,
# controller-manager, scheduler and kwok processes, stopped by PID with `make down`.
RUN_STATE_DIR ?= $(or $(KOORD_QUEUE_CACHE),$(HOME)/.cache/koord-queue)/run
POD_RUN_TIME ?= 30s
# Job extensions of koord-queue-controllers for `make run`; the quick start needs only job.
RUN_EXTENSIONS ?= job
RUN_FLAGS ?=
CLUSTER_TOOLS = etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl helm
# The stock job operators (hack/tools.sh builds them into a cache of their own).
OPERATOR_TOOLS = training-operator mpi-operator kuberay-operator spark-operator workflow-controller jobset-controller lws-controller trainer-controller
# RUN_OPERATORS=1 (every operator) or a comma-separated list of them also
# starts the stock operators with `make run`, so TFJobs, RayJobs... really run
# on the fake nodes; enable their extensions with RUN_EXTENSIONS.
RUN_OPERATORS ?=
# KOORDINATOR=1 runs Koordinator v1.7.0 with `make run`: its CRDs, koord-manager
# (webhooks on loopback) and koord-scheduler in place of kube-scheduler, built
# from hack/koordinator into a cache of their own. koord-scheduler always takes
# port 10251, so one such cluster at a time.
KOORDINATOR ?=
KOORDINATOR_TOOLS = koord-manager koord-scheduler
RUN_OPERATOR_LIST = $(if $(filter 1 all,$(RUN_OPERATORS)),$(OPERATOR_TOOLS),$(subst $(comma), ,$(RUN_OPERATORS)))
# The trainer controller's TrainJobs run as JobSets: it brings the jobset controller.
RUN_OPERATOR_TOOLS = $(RUN_OPERATOR_LIST) $(if $(filter trainer-controller,$(RUN_OPERATOR_LIST)),$(filter-out $(RUN_OPERATOR_LIST),jobset-controller))
comma := ,
LOCALCLUSTER = go run ./test/cluster/cmd/localcluster
E2E_TIMEOUT ?= 20m
# The e2e tests' kept output: the web view's screenshots go to E2E_OUTPUT/webview.
E2E_OUTPUT ?= _output/e2e

.PHONY: run
run: ## Start a local cluster with koord-queue and play the guide's quick start (POD_RUN_TIME=30s; KOORDINATOR=1 with Koordinator).
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	@$(if $(RUN_OPERATORS),hack/tools.sh $(RUN_OPERATOR_TOOLS) >/dev/null)
	@$(if $(KOORDINATOR),hack/tools.sh $(KOORDINATOR_TOOLS) >/dev/null)
	@$(LOCALCLUSTER) up --tools-dir $(TOOLS_BIN) --state-dir $(RUN_STATE_DIR) --pod-run-time $(POD_RUN_TIME) --extensions $(RUN_EXTENSIONS) $(if $(RUN_OPERATORS),--operators-dir $(shell hack/tools.sh operators-dir) --operators $(subst $(eval) ,$(comma),$(strip $(RUN_OPERATOR_TOOLS)))) $(if $(KOORDINATOR),--koordinator-dir $(shell hack/tools.sh koordinator-dir)) $(RUN_FLAGS)
	@KUBECONFIG=$(RUN_STATE_DIR)/kubeconfig STATE_DIR=$(RUN_STATE_DIR) POD_RUN_TIME=$(POD_RUN_TIME) hack/cluster-quickstart.sh

.PHONY: down
down: ## Stop the local cluster of `make run` (every process, the operators too, by PID).
	@$(LOCALCLUSTER) down --state-dir $(RUN_STATE_DIR)

.PHONY: test-e2e
test-e2e: ## End-to-end tests on a fresh local cluster with both binaries and the stock operators, then the guide and quota cases again with Koordinator.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	@hack/tools.sh $(OPERATOR_TOOLS) >/dev/null
	@hack/tools.sh $(KOORDINATOR_TOOLS) >/dev/null
	@hack/chromium.sh >/dev/null
	E2E_OUTPUT=$(abspath $(E2E_OUTPUT)) go test $(GO_TEST_FLAGS) -p 1 -timeout $(E2E_TIMEOUT) ./test/cluster/... ./test/e2e/...
	E2E_KOORDINATOR=1 go test $(GO_TEST_FLAGS) -p 1 -timeout $(E2E_TIMEOUT) -run '$(E2E_KOORDINATOR_RUN)' ./test/e2e/

# The cases of the second e2e run, with Koordinator (koord-manager and
# koord-scheduler v1.7.0): the whole guide played, its examples, and the quota
# cases that must keep one book with koord-scheduler (docs/protocol.md,
# "Beside Koordinator"). koord-scheduler's fixed port 10251 allows one such
# run at a time.
E2E_KOORDINATOR_RUN = ^(TestUserGuide|TestQuickStart|TestQueuesFromElasticQuotaExamples|TestQueueExamples|TestQueueUnitPriorityExample|TestKubeflowExamples|TestWorkflowExample|TestMaxWaitReservesForABigJob|TestRunningJobIsNotPreemptedByDefault|TestPreemptionOptIn|TestBlockedHighPriorityJobOnEachPolicy|TestBlockHoldsBackSmallerJob|TestPriorityAdmitsSmallerJob|TestQuotaThatDoesNotLendKeepsItsMin|TestSharedWeightSharesTheParent|TestKoordinatorSystemQuotasGetNoQueue|TestKoordinatorPlainPodCountsAgainstQuota|TestReclaimHasOneVictim)$$

.PHONY: test-e2e-koordinator
test-e2e-koordinator: ## Only the second e2e run: the guide and quota cases beside Koordinator.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	@hack/tools.sh $(OPERATOR_TOOLS) >/dev/null
	@hack/tools.sh $(KOORDINATOR_TOOLS) >/dev/null
	E2E_KOORDINATOR=1 go test $(GO_TEST_FLAGS) -p 1 -timeout $(E2E_TIMEOUT) -v -run '$(E2E_KOORDINATOR_RUN)' ./test/e2e/

# The Chinese guide holds the English guide's blocks (a unit test of package
# docs, in `make test`), so playing it plays the same; this target does, apart
# from `make test`.
.PHONY: test-e2e-guide-zh
test-e2e-guide-zh: ## Play the Chinese user guide (docs/user-guide.zh.md) on a fresh local cluster, as test-e2e plays the English one.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	@hack/tools.sh $(OPERATOR_TOOLS) >/dev/null
	KOORD_QUEUE_GUIDE=docs/user-guide.zh.md go test $(GO_TEST_FLAGS) -p 1 -timeout $(E2E_TIMEOUT) -v -run '^TestUserGuide$$' ./test/e2e/

# The chaos run (test/chaos, docs/reliability.md): two replicas of each
# binary on the local cluster, a fault schedule, and the invariant checker of
# test/chaos/invariants; the report goes to CHAOS_OUTPUT/<full|short>.
CHAOS_OUTPUT ?= _output/chaos

.PHONY: test-chaos
test-chaos: ## The full chaos run: 3,000 jobs, the fault schedule twice, zero violations; report in CHAOS_OUTPUT/full.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	KOORD_QUEUE_CHAOS=full KOORD_QUEUE_CHAOS_OUTPUT=$(abspath $(CHAOS_OUTPUT))/full go test $(GO_TEST_FLAGS) -p 1 -timeout 45m -v -run '^TestChaos$$' ./test/chaos/

.PHONY: test-chaos-short
test-chaos-short: ## The short chaos run of `make test`: 450 jobs, each fault once; report in CHAOS_OUTPUT/short.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	KOORD_QUEUE_CHAOS=short KOORD_QUEUE_CHAOS_OUTPUT=$(abspath $(CHAOS_OUTPUT))/short go test $(GO_TEST_FLAGS) -p 1 -timeout 15m -v -run '^TestChaos$$' ./test/chaos/

.PHONY: test-chaos-checker
test-chaos-checker: ## The checker's own test in `make test`: 40 jobs with one admission in ten lost (a planted bug); passes only if the checker finds them lost.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	KOORD_QUEUE_CHAOS=checker KOORD_QUEUE_CHAOS_OUTPUT=$(abspath $(CHAOS_OUTPUT))/checker go test $(GO_TEST_FLAGS) -p 1 -timeout 10m -v -run '^TestChaos$$' ./test/chaos/

# A planted bug (pkg/util/mutation) in the short run: MUTATION=no-fence,
# no-catch-up, lost-admission, eviction-keeps-pods or double-admission. The
# run passes only if the checker catches it (docs/reliability.md).
MUTATION ?= no-fence

.PHONY: test-chaos-mutation
test-chaos-mutation: ## The short chaos run with the bug MUTATION planted: passes only if the checker catches it; report in CHAOS_OUTPUT/mutation-MUTATION.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	KOORD_QUEUE_CHAOS=short KOORD_QUEUE_CHAOS_MUTATION=$(MUTATION) KOORD_QUEUE_CHAOS_OUTPUT=$(abspath $(CHAOS_OUTPUT))/mutation-$(MUTATION) go test $(GO_TEST_FLAGS) -p 1 -timeout 15m -v -run '^TestChaos$$' ./test/chaos/

# The Helm chart (charts/koord-queue) and the container images (hack/imagebuild).
# Prefix of the image names: the chart's default image is
# $(IMAGE_PREFIX)/koord-queue:<appVersion>; `make push` needs your registry in it.
IMAGE_PREFIX ?= koordinator-sh
# The chart's appVersion is the tag of the images it runs by default.
CHART_APP_VERSION = $(shell sed -n 's/^appVersion: *//p' charts/koord-queue/Chart.yaml | tr -d "\"'")
IMAGE_TAG ?= $(CHART_APP_VERSION)
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
# The OCI image layouts of `make images`, one folder per image.
IMAGE_OUTPUT ?= _output/images
# Every file time in the images and their creation time: the commit's time.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGEBUILD = go run ./hack/imagebuild --output=$(IMAGE_OUTPUT) --tag=$(IMAGE_TAG)

.PHONY: chart-crds
chart-crds: ## Copy config/crd (and config/grafana) into the chart.
	hack/chart-crds.sh

.PHONY: chart-docs
chart-docs: ## Regenerate the chart README's values table from values.yaml.
	hack/chart-docs.sh

.PHONY: verify-chart
verify-chart: ## Fail when the chart's CRDs, dashboard or values table are stale, or helm lint fails.
	@hack/tools.sh helm >/dev/null
	hack/verify-chart.sh

.PHONY: test-chart
test-chart: ## Chart tests: helm lint/template, server-side apply and RBAC on a real kube-apiserver; the upgrade from v1.8 on the local cluster.
	@hack/tools.sh $(CLUSTER_TOOLS) >/dev/null
	go test $(GO_TEST_FLAGS) -p 1 -timeout 15m -skip '^TestImages$$' ./test/chart/...

.PHONY: images
images: ## Build both images (linux/amd64 and arm64) as OCI layouts in _output/images; no container engine needed.
	$(IMAGEBUILD) --version=$(VERSION) --revision=$(REVISION) --source-date-epoch=$(SOURCE_DATE_EPOCH) --platforms=$(IMAGE_PLATFORMS)

.PHONY: push
push: ## Push the images of `make images` to IMAGE_PREFIX/<name>:IMAGE_TAG (credentials of docker login).
	$(IMAGEBUILD) --push --image-prefix=$(IMAGE_PREFIX)

.PHONY: test-images
test-images: ## Check the images (config, files, no shell) and run their binaries through the quick start; builds them when absent or stale.
	@hack/tools.sh etcd kube-apiserver kubectl helm >/dev/null
	@grep -qF ' version=$(VERSION) revision=$(REVISION)' $(IMAGE_OUTPUT)/digests.txt 2>/dev/null || $(MAKE) images
	KOORD_QUEUE_IMAGES=$(abspath $(IMAGE_OUTPUT)) KOORD_QUEUE_IMAGE_TAG=$(IMAGE_TAG) go test $(GO_TEST_FLAGS) -p 1 -timeout 15m -run '^TestImages$$' ./test/chart/...

# Performance harness (test/performance): envtest control plane, koord-queue as
# a separate process, QueueUnits from a generator config, execution faked.
# Not part of `make test`; see docs/performance.md.
PERF_QPS ?= 100
PERF_BURST ?= 200
PERF_OUTPUT ?=
PERF_FLAGS ?=
PERF_COMPARE_PAIR ?= baseline
PERF_COMPARE_RUNS ?= 2
PERF_COMPARE_QPS ?= 50
PERF_COMPARE_BURST ?= 100
PERF_COMPARE_KUEUE ?= v0.17.0
PERF_RUN = go run ./test/performance/runner --qps $(PERF_QPS) --burst $(PERF_BURST) $(if $(PERF_OUTPUT),--output $(PERF_OUTPUT)) $(PERF_FLAGS)

.PHONY: test-harness
test-harness: ## The dashboard check and the performance harness's own tests (a small run end to end).
	@hack/tools.sh etcd kube-apiserver >/dev/null
	@# The comparison's smoke test builds Kueue's harness on a cold cache (minutes).
	go test $(GO_TEST_FLAGS) -p 1 -timeout 25m ./test/dashboard/... ./test/performance/...

.PHONY: perf-baseline
perf-baseline: ## Performance run, 15,000 units (PERF_QPS, PERF_BURST, PERF_OUTPUT).
	@hack/tools.sh etcd kube-apiserver >/dev/null
	$(PERF_RUN) --config test/performance/configs/baseline.yaml

.PHONY: perf-baseline-no-preemption
perf-baseline-no-preemption: ## The baseline with preemption and reclaim off (the writes-per-admission target).
	@hack/tools.sh etcd kube-apiserver >/dev/null
	$(PERF_RUN) --config test/performance/configs/baseline-no-preemption.yaml

.PHONY: perf-large
perf-large: ## Performance run, 50,000 units (PERF_QPS, PERF_BURST, PERF_OUTPUT).
	@hack/tools.sh etcd kube-apiserver >/dev/null
	$(PERF_RUN) --config test/performance/configs/large.yaml

.PHONY: perf-compare
perf-compare: ## Kueue's harness (module at PERF_COMPARE_KUEUE) and ours in Kueue mode, interleaved, one table (PERF_COMPARE_PAIR=baseline|large-scale|1000-queues|smoke, PERF_OUTPUT; PERF_COMPARE_QPS/PERF_COMPARE_BURST for both, 50/100 by default, else minimalkueue is patched to them).
	@hack/tools.sh etcd kube-apiserver >/dev/null
	go run ./test/performance/compare --pair $(PERF_COMPARE_PAIR) --runs $(PERF_COMPARE_RUNS) --kueue-version $(PERF_COMPARE_KUEUE) --qps $(PERF_COMPARE_QPS) --burst $(PERF_COMPARE_BURST) $(if $(PERF_OUTPUT),--output $(PERF_OUTPUT))

.PHONY: perf-check
perf-check: ## Regression gate: a run's summary against the measured ranges: SUMMARY=.../summary.yaml RANGES=test/performance/ranges/baseline.yaml.
	@test -n "$(SUMMARY)" || { echo "set SUMMARY=path/to/summary.yaml"; exit 2; }
	go run ./test/performance/checker --summary $(SUMMARY) --ranges $(or $(RANGES),test/performance/ranges/baseline.yaml)

.PHONY: perf-goals
perf-goals: ## A run's summary against the goals not reached yet: SUMMARY=.../summary.yaml GOALS=test/performance/goals/baseline.yaml.
	@test -n "$(SUMMARY)" || { echo "set SUMMARY=path/to/summary.yaml"; exit 2; }
	go run ./test/performance/checker --summary $(SUMMARY) --ranges $(or $(GOALS),test/performance/goals/baseline.yaml)

.PHONY: perf-calibrate
perf-calibrate: ## Print ranges calibrated from at least three runs of one binary (each figure at its mean, 25 % worse allowed; figures that spread wider are left ungated): SUMMARY="a/summary.yaml b/summary.yaml c/summary.yaml".
	@test -n "$(SUMMARY)" || { echo "set SUMMARY to three or more summary.yaml of one binary"; exit 2; }
	@go run ./test/performance/checker --calibrate --summary $(firstword $(SUMMARY)) $(wordlist 2,$(words $(SUMMARY)),$(SUMMARY))
