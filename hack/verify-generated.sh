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

# Fails when generated code or manifests differ from what the API types give.
# Generates into a scratch copy, so the working tree is never touched.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$root"
# The files generation reads and writes: the module, the APIs, the manifests.
tar -cf - go.mod go.sum hack apis config | tar -xf - -C "$scratch"
"$root/hack/generate.sh" "$scratch" >/dev/null
status=0
for dir in apis config; do
	if ! diff -r -q "$root/$dir" "$scratch/$dir"; then
		status=1
	fi
done
if [[ $status -ne 0 ]]; then
	echo "generated files are stale or were edited by hand: run 'make generate' and commit the result" >&2
	exit 1
fi
echo "generated files are up to date"
