#!/usr/bin/env bash
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
