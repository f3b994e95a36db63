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

# Installs headless Chromium from the Debian packages when it is missing, for
# the web view's browser test (test/e2e/webview_test.go), and prints its path.
# CHROMIUM names another browser binary to use instead.
set -euo pipefail

bin="${CHROMIUM:-/usr/bin/chromium}"
if [[ -x "$bin" ]]; then
	echo "$bin"
	exit 0
fi
if [[ -n "${CHROMIUM:-}" ]]; then
	echo "CHROMIUM=$bin is not an executable file" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null; then
	echo "chromium is missing at $bin and apt-get is not here to install it: install Chromium and set CHROMIUM to its binary" >&2
	exit 1
fi
sudo=()
if [[ "$(id -u)" != 0 ]]; then
	if ! command -v sudo >/dev/null; then
		echo "installing chromium needs root: run as root, or install the Debian package chromium first" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "installing chromium from the Debian packages" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-liberation >&2
echo "$bin"
