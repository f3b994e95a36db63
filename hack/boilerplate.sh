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

# Checks that every hand-written Go file, shell script and Makefile carries the
# licence header of hack/boilerplate.go.txt (as # comments outside Go).
#   hack/boilerplate.sh          list the files without it; exit 1 if any
#   hack/boilerplate.sh --fix    add it where it is missing
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
fix=false
[[ ${1:-} == --fix ]] && fix=true

go_header=$(cat hack/boilerplate.go.txt)
# The same text as # comments: the block's inner lines, "# " before each.
hash_header=$(sed -e '1d;$d' -e 's/^/# /' -e 's/ *$//' hack/boilerplate.go.txt)

has_header() { head -n 25 "$1" | grep -q 'Licensed under the Apache License, Version 2.0'; }

add_go() { # the header goes after any //go:build line, before the rest
	local f=$1 tmp
	tmp=$(mktemp)
	if head -n 1 "$f" | grep -q '^//go:build'; then
		{ head -n 1 "$f"; echo; echo "$go_header"; echo; tail -n +2 "$f" | sed '1{/^$/d}'; } >"$tmp"
	else
		{ echo "$go_header"; echo; cat "$f"; } >"$tmp"
	fi
	cat "$tmp" >"$f" && rm -f "$tmp"
}

add_hash() { # after a #! line, if any
	local f=$1 tmp
	tmp=$(mktemp)
	if head -n 1 "$f" | grep -q '^#!'; then
		{ head -n 1 "$f"; echo "$hash_header"; echo; tail -n +2 "$f"; } >"$tmp"
	else
		{ echo "$hash_header"; echo; cat "$f"; } >"$tmp"
	fi
	cat "$tmp" >"$f" && rm -f "$tmp"
}

missing=()
while IFS= read -r f; do
	[[ -f $f ]] || continue
	has_header "$f" && continue
	if $fix; then
		case $f in
		*.go) add_go "$f" ;;
		*) add_hash "$f" ;;
		esac
		echo "added the licence header to $f"
	else
		missing+=("$f")
	fi
done < <({ git ls-files --cached --others --exclude-standard -- '*.go' '*.sh' 'Makefile' '.ci/run'; } | sort -u)

if ((${#missing[@]} > 0)); then
	echo "files without the licence header of hack/boilerplate.go.txt (run 'hack/boilerplate.sh --fix'):" >&2
	printf '  %s\n' "${missing[@]}" >&2
	exit 1
fi
$fix || echo "every hand-written file carries the licence header"
