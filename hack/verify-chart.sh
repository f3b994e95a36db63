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

# Fails when charts/koord-queue is out of step with the repository:
#   - files/ (with files/crds/) or dashboards/ differ from config/crd and config/grafana
#     (what `make chart-crds` copies),
#   - the README's values table differs from values.yaml (`make chart-docs`),
#   - `helm lint` finds a problem.
# Works on a scratch copy, so the working tree is never touched.
#
#   hack/verify-chart.sh [CHART_DIR]   (default charts/koord-queue)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chart=$(cd "${1:-$root/charts/koord-queue}" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

status=0
cp -R "$chart" "$scratch/chart"
"$root/hack/chart-crds.sh" "$scratch/chart"
for dir in files dashboards; do
	if ! diff -r -u "$chart/$dir" "$scratch/chart/$dir"; then
		echo "$chart/$dir differs from config/: run 'make chart-crds' and commit the result" >&2
		status=1
	fi
done
if ! "$root/hack/chart-docs.sh" --check "$chart"; then
	status=1
fi
helm=${HELM:-$("$root/hack/tools.sh" dir)/helm}
if [[ ! -x "$helm" ]]; then
	echo "helm not found at $helm: build it with 'hack/tools.sh helm' or set HELM" >&2
	exit 1
fi
if ! "$helm" lint --strict "$chart" >"$scratch/lint.log" 2>&1; then
	cat "$scratch/lint.log" >&2
	echo "helm lint failed on $chart" >&2
	status=1
fi
if [[ $status -ne 0 ]]; then
	exit 1
fi
echo "chart is up to date with config/ and values.yaml, and lints clean"
