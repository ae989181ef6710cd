#!/usr/bin/env bash
# Installs the Debian packages RustyTorch++ builds and tests with (DESIGN.md §5).
# Idempotent and quiet: when everything is present it only checks, in a second or two.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ pkg-config
  libopenblas-openmp-dev libdnnl-dev libsleef-dev libfmt-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libsqlite3-dev zlib1g-dev
  python3-dev pybind11-dev python3-numpy python3-pytest python3-torch python3-nbformat
  catch2
  qt6-base-dev libqt6opengl6-dev libqscintilla2-qt6-dev libimgui-dev libgraphviz-dev
  xvfb xauth libgl1-mesa-dri fonts-dejavu-core python3-matplotlib python3-pil
  libgloo-dev libopenmpi-dev openmpi-bin
  liblz4-dev libssl-dev openssh-client openssh-server iproute2 clang faketime
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/rt-setup.log 2>&1; then
  $SUDO apt-get update -qq >>/tmp/rt-setup.log 2>&1
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/rt-setup.log 2>&1 || {
    echo "setup: apt-get install failed; see /tmp/rt-setup.log" >&2
    tail -20 /tmp/rt-setup.log >&2
    exit 1
  }
fi
echo "setup: done"
