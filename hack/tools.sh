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

# Builds the tools the project needs (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok, helm, controller-gen, golangci-lint) from the Go
# modules pinned in hack/tools, into a cache outside the repository keyed by the
# pinned versions. A tool already in the cache is not built again.
#
# The stock job operators (training-operator, mpi-operator, kuberay-operator, spark-operator,
# workflow-controller, jobset-controller, lws-controller, trainer-controller) come from their own
# modules under hack/operators, each with a cache key of its own, so pinning an operator never
# rebuilds kube-apiserver or another operator. They are built only when named. Koordinator (koord-manager,
# koord-scheduler, v1.7.0) comes from hack/koordinator, with a key of its own
# too, and is built only when named. openapi-gen (make generate) comes from
# hack/openapi-gen, with a key of its own, pinned to the main module's
# k8s.io/kube-openapi (checked), and is built only when named.
#
#   hack/tools.sh [TOOL...]   build the named tools (default: all but the
#                             operators and Koordinator); print the bin dir of
#                             the tools, or Koordinator's when it is named and no
#                             tool is, or the operators' when only they are named,
#                             or openapi-gen's when it is named last
#   hack/tools.sh dir         print the tools' bin dir without building anything
#   hack/tools.sh operators-dir  print the operators' bin dir without building anything
#   hack/tools.sh koordinator-dir  print Koordinator's bin dir without building anything
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${KOORD_QUEUE_CACHE:-$HOME/.cache/koord-queue}

k8s_version=v1.37.2
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=37"
	ldflags+=" -X $p.gitTreeState=clean"
done
for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
	ldflags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=37"
done

# The key covers everything that decides what the binaries are: the pinned
# modules, the link flags and the Go version.
key=$( (cat "$root/hack/tools/go.mod" "$root/hack/tools/go.sum" \
	"$root/hack/tools/lint/go.mod" "$root/hack/tools/lint/go.sum"; echo "$ldflags") |
	sha256sum | cut -c1-16)
bin="$cache/tools/$(go env GOVERSION)-$key/bin"

# The operators live in one folder per Go version, each binary with a key of
# its own beside it (<name>.key: its module and link flags), so adding or
# pinning one operator rebuilds that one only.
op_ldflags="-s -w"
op_bin="$cache/operators/$(go env GOVERSION)/bin"
op_key() {
	(cat "$root/hack/$1/go.mod" "$root/hack/$1/go.sum"; echo "$op_ldflags") | sha256sum | cut -c1-16
}

# Koordinator's key: its module and link flags, and nothing of the others.
koord_ldflags="-s -w"
koord_key=$( (cat "$root/hack/koordinator/go.mod" "$root/hack/koordinator/go.sum"; echo "$koord_ldflags") |
	sha256sum | cut -c1-16)
koord_bin="$cache/koordinator/$(go env GOVERSION)-$koord_key/bin"

# openapi-gen's key: its module only. Its k8s.io/kube-openapi must be the one
# the main module serves OpenAPI with, or the generated code may not fit it.
oa_ldflags="-s -w"
oa_key=$( (cat "$root/hack/openapi-gen/go.mod" "$root/hack/openapi-gen/go.sum"; echo "$oa_ldflags") |
	sha256sum | cut -c1-16)
oa_bin="$cache/openapi-gen/$(go env GOVERSION)-$oa_key/bin"

case "${1:-}" in
dir)
	echo "$bin"
	exit 0
	;;
operators-dir)
	echo "$op_bin"
	exit 0
	;;
koordinator-dir)
	echo "$koord_bin"
	exit 0
	;;
esac

# name -> module dir and package. Order matters: what envtest needs comes first.
declare -A pkg=(
	[etcd]="tools go.etcd.io/etcd/server/v3"
	[kube-apiserver]="tools k8s.io/kubernetes/cmd/kube-apiserver"
	[controller-gen]="tools sigs.k8s.io/controller-tools/cmd/controller-gen"
	[kubectl]="tools k8s.io/kubernetes/cmd/kubectl"
	[kube-controller-manager]="tools k8s.io/kubernetes/cmd/kube-controller-manager"
	[kube-scheduler]="tools k8s.io/kubernetes/cmd/kube-scheduler"
	[kwok]="tools sigs.k8s.io/kwok/cmd/kwok"
	[helm]="tools helm.sh/helm/v3/cmd/helm"
	[golangci-lint]="tools/lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	[training-operator]="operators/training-operator github.com/kubeflow/training-operator/cmd/training-operator.v1"
	[mpi-operator]="operators/mpi-operator github.com/kubeflow/mpi-operator/cmd/mpi-operator"
	[kuberay-operator]="operators/kuberay github.com/ray-project/kuberay/ray-operator"
	[spark-operator]="operators/spark-operator github.com/kubeflow/spark-operator/v2/cmd/operator"
	[workflow-controller]="operators/argo github.com/argoproj/argo-workflows/v3/cmd/workflow-controller"
	[jobset-controller]="operators/jobset sigs.k8s.io/jobset"
	[lws-controller]="operators/lws sigs.k8s.io/lws/cmd"
	[trainer-controller]="operators/trainer github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"
	[koord-manager]="koordinator github.com/koordinator-sh/koordinator/cmd/koord-manager"
	[koord-scheduler]="koordinator github.com/koordinator-sh/koordinator/cmd/koord-scheduler"
	[openapi-gen]="openapi-gen k8s.io/kube-openapi/cmd/openapi-gen"
)
all=(etcd kube-apiserver controller-gen kubectl kube-controller-manager kube-scheduler kwok helm golangci-lint)
operators=(training-operator mpi-operator kuberay-operator spark-operator workflow-controller jobset-controller lws-controller trainer-controller)
koordinator=(koord-manager koord-scheduler)

want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=("${all[@]}")

print=$op_bin
for name in "${want[@]}"; do
	if [[ -z "${pkg[$name]:-}" ]]; then
		echo "hack/tools.sh: unknown tool '$name' (known: ${all[*]} ${operators[*]} ${koordinator[*]} openapi-gen)" >&2
		exit 2
	fi
	read -r dir path <<<"${pkg[$name]}"
	out=$bin flags=$ldflags
	if [[ $dir == operators/* ]]; then
		out=$op_bin flags=$op_ldflags
	elif [[ $dir == openapi-gen ]]; then
		out=$oa_bin flags=$oa_ldflags print=$oa_bin
		kube_openapi() { awk '$1 == "k8s.io/kube-openapi" { print $2 }' "$1"; }
		if [[ "$(kube_openapi "$root/go.mod")" != "$(kube_openapi "$root/hack/openapi-gen/go.mod")" ]]; then
			echo "hack/tools.sh: k8s.io/kube-openapi in hack/openapi-gen/go.mod ($(kube_openapi "$root/hack/openapi-gen/go.mod")) differs from go.mod's ($(kube_openapi "$root/go.mod")): pin the same version" >&2
			exit 1
		fi
	elif [[ $dir == koordinator ]]; then
		out=$koord_bin flags=$koord_ldflags
		[[ $print == "$bin" ]] || print=$koord_bin
	else
		print=$bin
	fi
	want=""
	if [[ $dir == operators/* ]]; then
		want=$(op_key "$dir")
		[[ -x "$out/$name" && "$(cat "$out/$name.key" 2>/dev/null)" == "$want" ]] && continue
	else
		[[ -x "$out/$name" ]] && continue
	fi
	mkdir -p "$out"
	echo "hack/tools.sh: building $name ($path) into $out" >&2
	start=$SECONDS
	# Build to a temporary name first so an interrupted build never leaves a
	# half-written binary that a later run would take as done.
	(cd "$root/hack/$dir" && go build -trimpath -ldflags "$flags" -o "$out/.$name.tmp" "$path")
	mv "$out/.$name.tmp" "$out/$name"
	[[ -z $want ]] || echo "$want" >"$out/$name.key"
	echo "hack/tools.sh: built $name in $((SECONDS - start))s" >&2
done
echo "$print"
