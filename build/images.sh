#!/usr/bin/env bash
# Builds the koord-queue and koord-queue-controllers images from build/Dockerfile
# with docker or podman, whichever has a working engine (or the one named).
# Exits non-zero, saying so, when there is no working container engine.
#
#   build/images.sh PREFIX TAG [ENGINE]
#   (BASE_IMAGE, GO_IMAGE and GOPROXY in the environment become build args)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${1:?usage: build/images.sh PREFIX TAG [ENGINE]}
tag=${2:?usage: build/images.sh PREFIX TAG [ENGINE]}
want=${3:-}

engine=""
for candidate in ${want:-docker podman}; do
	if command -v "$candidate" >/dev/null 2>&1 && "$candidate" info >/dev/null 2>&1; then
		engine=$candidate
		break
	fi
done
if [[ -z "$engine" ]]; then
	echo "build/images.sh: no container engine available (tried: ${want:-docker podman}; none is installed with a running engine): cannot build images" >&2
	exit 1
fi

args=()
for name in BASE_IMAGE GO_IMAGE GOPROXY; do
	if [[ -n "${!name:-}" ]]; then
		args+=(--build-arg "$name=${!name}")
	fi
done
for target in koord-queue koord-queue-controllers; do
	echo "build/images.sh: $engine build $prefix/$target:$tag" >&2
	"$engine" build -f "$root/build/Dockerfile" --target "$target" "${args[@]}" \
		-t "$prefix/$target:$tag" "$root"
done
