#!/usr/bin/env bash
# Configures and builds the release tree in build/ (run.sh and test.sh share it).
#   scripts/build.sh [TARGET...]    everything, or only the named targets
# The CUDA backend follows the machine, one line says which (RT_CUDA=ON|OFF|EMULATED in the
# environment overrides it):
#   a GPU (nvidia-smi lists one) and nvcc   ON: the kernels compiled by nvcc
#   the toolkit's headers, no GPU           EMULATED: the same kernels run on the CPU by the CUDA
#                                           emulator (kernels/cuda_emulator/), for the tests; Python
#                                           sees no device unless RT_CUDA_EMULATED_DEVICES=N is set
#   no toolkit                              OFF: the backend is left out, its tests skip saying why
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/ccache_env.sh
source scripts/ccache_env.sh

cuda_mode() {
  if [[ -n ${RT_CUDA:-} ]]; then
    echo "$RT_CUDA"
  elif [[ -x /usr/local/cuda/bin/nvcc ]] && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo ON
  elif [[ -f /usr/local/cuda/include/cuda_runtime.h ]]; then
    echo EMULATED
  else
    echo OFF
  fi
}
mode=$(cuda_mode)
case $mode in
  ON) echo "build: CUDA backend compiled with nvcc for this machine's GPU" ;;
  EMULATED) echo "build: CUDA kernels run on the CPU emulator (no GPU here; a GPU machine builds them with nvcc)" ;;
  OFF) echo "build: no CUDA toolkit in /usr/local/cuda: the CUDA backend is left out, its tests are skipped" ;;
  *) echo "build: RT_CUDA=$mode is not ON, OFF or EMULATED" >&2; exit 2 ;;
esac
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRT_CUDA="$mode" \
  -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
if [[ $# -gt 0 ]]; then
  cmake --build build -j "$(nproc)" --target "$@"
else
  cmake --build build -j "$(nproc)"
fi
