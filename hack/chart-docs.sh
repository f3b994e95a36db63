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

# Generates the values table of charts/koord-queue/README.md from the "# --"
# comments of values.yaml: each such comment documents the key on the next
# line, by its dotted path. The table sits between the values-table markers
# of the README; everything else in the README is written by hand.
#
#   hack/chart-docs.sh [CHART_DIR]           rewrite the table
#   hack/chart-docs.sh --check [CHART_DIR]   fail when the table is stale
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=false
if [[ "${1:-}" == "--check" ]]; then
	check=true
	shift
fi
chart=${1:-$root/charts/koord-queue}
readme=$chart/README.md
begin='<!-- values-table:begin (hack/chart-docs.sh writes this table from values.yaml) -->'
end='<!-- values-table:end -->'

table() {
	echo '| Key | Default | Description |'
	echo '|---|---|---|'
	awk '
	function path(   p, i) {
		p = keys[1]
		for (i = 2; i <= depth; i++) p = p "." keys[i]
		return p
	}
	/^[[:space:]]*# -- / {
		desc = $0
		sub(/^[[:space:]]*# -- /, "", desc)
		next
	}
	/^[[:space:]]*[A-Za-z0-9_.-]+:([[:space:]]|$)/ {
		match($0, /^[[:space:]]*/)
		indent = RLENGTH
		while (depth > 0 && indents[depth] >= indent) depth--
		line = substr($0, indent + 1)
		key = line
		sub(/:.*/, "", key)
		value = line
		sub(/^[^:]*:[[:space:]]*/, "", value)
		depth++
		keys[depth] = key
		indents[depth] = indent
		if (desc != "") {
			if (value == "") value = "see values.yaml"
			else value = "`" value "`"
			gsub(/\|/, "\\|", desc)
			gsub(/\|/, "\\|", value)
			printf "| `%s` | %s | %s |\n", path(), value, desc
			desc = ""
		}
		next
	}
	' "$chart/values.yaml"
}

[[ -f "$readme" ]] || { echo "hack/chart-docs.sh: $readme is missing" >&2; exit 1; }
grep -qxF "$begin" "$readme" && grep -qxF "$end" "$readme" ||
	{ echo "hack/chart-docs.sh: $readme lacks the values-table markers" >&2; exit 1; }

want=$(mktemp)
trap 'rm -f "$want"' EXIT
{
	awk -v m="$begin" '{ print } $0 == m { exit }' "$readme"
	table
	awk -v m="$end" '$0 == m { on = 1 } on { print }' "$readme"
} >"$want"

if $check; then
	if ! diff -u "$readme" "$want"; then
		echo "$readme: the values table differs from values.yaml: run 'make chart-docs' and commit the result" >&2
		exit 1
	fi
	exit 0
fi
cp "$want" "$readme"
