#!/usr/bin/env bash
# Configures and builds the release tree in build/ (used by run.sh and test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across checkouts (CI clones to a new folder each time).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build -j "$(nproc)"
