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

# Regenerates deepcopy code and CRD manifests from the API types.
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
