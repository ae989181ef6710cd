#!/usr/bin/env bash
# Installs what is missing, builds, then runs the main job. Until the studio exists, that is
# the C++ digits sample: an MLP trained on the 8x8 digits, printing per-epoch loss and accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/bin/digits_mlp "$@"
