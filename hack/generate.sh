#!/usr/bin/env bash
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
