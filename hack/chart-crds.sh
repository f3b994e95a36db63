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

# Copies what the chart carries from elsewhere in the repository into
# charts/koord-queue, byte for byte:
#   config/crd/bases/*.yaml          -> files/crds/ (rendered by templates/crds.yaml, so that
#                                                Helm upgrades them with the release and
#                                                keeps them on uninstall)
#   config/crd/elasticquota/*.yaml   -> files/  (rendered by templates/elasticquota-crd.yaml,
#                                                behind installElasticQuotaCRD)
#   config/grafana/koord-queue.json  -> dashboards/koord-queue.json (when it exists; until
#                                                then the chart keeps its placeholder)
#
#   hack/chart-crds.sh [CHART_DIR]   write into CHART_DIR (default charts/koord-queue)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chart=${1:-$root/charts/koord-queue}

sync_dir() { # sync_dir SRC DST: DST ends up holding exactly SRC's *.yaml
	local src=$1 dst=$2
	mkdir -p "$dst"
	rm -f "$dst"/*.yaml
	cp "$src"/*.yaml "$dst"/
}
sync_dir "$root/config/crd/bases" "$chart/files/crds"
sync_dir "$root/config/crd/elasticquota" "$chart/files"
if [[ -f "$root/config/grafana/koord-queue.json" ]]; then
	mkdir -p "$chart/dashboards"
	cp "$root/config/grafana/koord-queue.json" "$chart/dashboards/koord-queue.json"
fi
