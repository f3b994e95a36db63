#!/usr/bin/env bash
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

# Regenerates deepcopy code, CRD manifests and the visibility API's OpenAPI
# definitions from the API types.
#   hack/generate.sh [ROOT]   generate in ROOT (default: this repository)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${1:-$here}
bin=$("$here/hack/tools.sh" controller-gen)
cd "$root"
"$bin/controller-gen" object:headerFile=hack/boilerplate.go.txt paths=./apis/...
rm -rf config/crd/bases config/crd/elasticquota
"$bin/controller-gen" crd paths=./apis/scheduling/... output:crd:artifacts:config=config/crd/bases
"$bin/controller-gen" crd paths=./apis/thirdparty/... output:crd:artifacts:config=config/crd/elasticquota
# The visibility API's OpenAPI definitions (kubectl explain), with those of
# the apimachinery types they refer to. API rule violations are not fatal: the
# types keep the original project's field names.
oa_bin=$("$here/hack/tools.sh" openapi-gen)
rm -f apis/visibility/openapi/zz_generated.openapi.go
"$oa_bin/openapi-gen" --go-header-file hack/boilerplate.go.txt --report-filename /dev/null \
	--output-dir apis/visibility/openapi --output-file zz_generated.openapi.go \
	--output-pkg github.com/koordinator-sh/koord-queue/apis/visibility/openapi \
	./apis/visibility/v1alpha1 k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/api/resource \
	k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/version
