#!/usr/bin/env bash
# scripts/gpu-check.sh — the one-call GPU check of the CUDA backend (issue 7).
#
#   scripts/gpu-check.sh --prepare          # on the Debian 12 build machine (apt works there)
#   scripts/gpu-check.sh [OUT_DIR]          # on the GPU machine; OUT_DIR defaults to out/gpu-check/
#   scripts/gpu-check.sh --isolate [OUT_DIR]  # verification run on the build machine (see below)
#   scripts/gpu-check.sh --sanitize FILTER [OUT_DIR]  # memcheck of op-check cases (a second call, see below)
#
# The device-tool call (from the repository root, after `scripts/gpu-check.sh --prepare` here):
#
#   run(command='scripts/gpu-check.sh "$OUT"', carry=[".gpu-deps"], timeout_s=480)
#
# --prepare downloads (`apt-get download`) the Debian packages the C++ build needs — dev headers and
# runtime libraries of OpenBLAS (OpenMP), fmt, nlohmann-json, SQLite, simdjson, zlib, Catch2, plus
# what configure alone asks for (graphviz and imgui headers, pkgconf) — into .gpu-deps/debs/
# (git-ignored, about 19 MB; the device tool carries at most 64 MiB). The GPU machine has nvcc, CMake,
# ninja and python3 with CUDA PyTorch but no package registry and none of those -dev packages.
#
# The run mode, in at most RT_GPU_CHECK_BUDGET_S seconds (default 450, under the issue's 8 minutes):
#   1. unpacks .gpu-deps/debs/*.deb (dpkg-deb -x, or ar + tar) into a private prefix
#      (<build>/deps-prefix, never /) and points CMake at it (CMAKE_PREFIX_PATH, explicit paths, a
#      pkg-config wrapper); without .gpu-deps it uses the system's packages;
#   2. configures <build> (Ninja, Release, RT_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=90, no Python, no
#      studio) and builds, with every core, only what the GPU steps run: the engine, the profiler,
#      tests/cuda, tests/kernels and bench/gpu (the visualizers are configured, never built or linked);
#   3. with a usable GPU: ctest -L cuda (the CUDA-vs-CPU op check), the plugin ops' CUDA kernels against their
#      CPU ones (tests/plugins/test_ops_checks, step plugin_ops), then the nccl backend's tests
#      (tests/dist/test_nccl_group: one GPU, world size 1, wait/watchdog timeouts and aborts, an init
#      timeout; step nccl_tests, skipped with the reason when this toolkit has no NCCL), the profiled training run
#      (bench/gpu/gpu_train_trace: MLP and char transformer, Chrome traces with kernels linked to ops),
#      the timings (bench/gpu/gpu_bench, then bench/gpu/torch_gpu_bench.py with the same shapes),
#      then, with the time left: the Python module built against the machine's python3 (its own
#      pybind11 and headers; RT_BUILD_PYTHON=ON, RT_BUILD_CLI=OFF) and tests/python/test_cuda.py's
#      GPU tests under pytest, then the engine tests (ctest -L engine);
#   4. prints the table (bench/gpu/gpu_table.py) LAST.
# Without a usable GPU every GPU step says "skipped: no CUDA device (<reason>)" and the table says
# "pending: no GPU".
#
# OUT_DIR receives at most 6 files, all at its top level (the device tool returns at most 8 files,
# no deeper than 2 folders): gpu-check.log (every step's log), table.md (markdown for
# bench/RESULTS.md), results-ours.json, results-torch.json, trace_mlp.json.gz,
# trace_char_transformer.json.gz.
#
# Exit status: 0 when every step that ran passed (GPU steps skipped for lack of a device count as
# passed: the table then says "pending: no GPU"); 1 when a step failed or ran out of time (the
# summary names it); 2 on a usage or setup error (missing tool, failed download).
#
# --sanitize FILTER (a second call in the same lease, once the first has built): builds what is missing,
# then runs only the op-check cases whose name contains FILTER ("all": every case) under
# compute-sanitizer's memcheck, which reports out-of-bounds and misaligned accesses with the kernel and
# the faulting thread (exit 1 when it finds any). It runs with PYTORCH_NO_CUDA_MEMORY_CACHING=1, so every
# tensor and scratch buffer is a cudaMalloc of its exact size and an access one element past its end is
# reported (inside the caching allocator's shared segments it would land in a neighbour unnoticed).
# Memcheck slows kernels down many times: pick a filter
# (an op name such as softmax, or "split") that fits the budget. It works on Firecracker GPU machines, not
# on gVisor ones (KINDS.md). The device-tool call:
#
#   run(command='scripts/gpu-check.sh --sanitize softmax "$OUT"', carry=[".gpu-deps"], timeout_s=300)
#
# --isolate (verification on the build machine): CMake ignores the /usr prefix in its searches
# (CMAKE_SYSTEM_IGNORE_PREFIX_PATH), so configure succeeds only if the prefix provides every
# dependency, as on the GPU machine.
#
# Environment: RT_GPU_CHECK_BUILD_DIR (default build-gpucheck), RT_GPU_CHECK_BUDGET_S (default 450;
# each step's own limit scales with it, e.g. 7200 on a 2-core machine), RT_GPU_CHECK_JOBS (default:
# every core).
# shellcheck disable=SC2317  # the step functions run through `bash -c` (run_step), which shellcheck cannot see
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
DEPS_DIR=$ROOT/.gpu-deps
# What the build needs from Debian 12 (bookworm). Runtime libraries come with their -dev packages:
# the .so links of a -dev package point into them. libgfortran5/libquadmath0 are OpenBLAS's.
# graphviz, imgui/stb and pkgconf serve configure only (visualizers/CMakeLists.txt's pkg_check_modules).
DEB_PACKAGES=(
  libopenblas-openmp-dev libopenblas0-openmp libgfortran5 libquadmath0
  libfmt-dev libfmt9 nlohmann-json3-dev
  libsqlite3-dev libsqlite3-0 libsimdjson-dev libsimdjson14 zlib1g-dev zlib1g
  catch2 pybind11-dev
  libgraphviz-dev libgvc6 libcgraph6 libcdt5 libimgui-dev libstb-dev libstb0
  pkgconf-bin libpkgconf3
)
MULTIARCH=x86_64-linux-gnu

say() { echo "[gpu-check] $*"; }
die() { echo "[gpu-check] error: $*" >&2; exit 2; }

# ---- --prepare ---------------------------------------------------------------------------------
prepare() {
  command -v apt-get >/dev/null || die "--prepare needs apt-get (run it on the Debian 12 build machine)"
  local debs=$DEPS_DIR/debs tmp
  tmp=$(mktemp -d)
  # apt's sandbox user cannot write into a root-owned temp dir; download as the caller.
  if ! (cd "$tmp" && apt-get download -o APT::Sandbox::User=root "${DEB_PACKAGES[@]}" >"$tmp/apt.log" 2>&1); then
    cat "$tmp/apt.log" >&2
    rm -rf "$tmp"
    die "apt-get download failed (see above); 'apt-get update' may help"
  fi
  rm -rf "$debs"
  mkdir -p "$debs"
  : >"$DEPS_DIR/MANIFEST"
  local f pkg
  for f in "$tmp"/*.deb; do
    pkg=$(dpkg-deb -f "$f" Package)
    # Plain names (no '%3a' epochs or '+'): they travel and unpack the same anywhere.
    mv "$f" "$debs/$pkg.deb"
    printf '%s %s %s\n' "$pkg" "$(dpkg-deb -f "$debs/$pkg.deb" Version)" \
      "$(sha256sum "$debs/$pkg.deb" | cut -d' ' -f1)" >>"$DEPS_DIR/MANIFEST"
  done
  rm -rf "$tmp"
  if ! git -C "$ROOT" check-ignore -q "$DEPS_DIR" 2>/dev/null; then
    mkdir -p "$ROOT/.git/info" && echo "/.gpu-deps/" >>"$ROOT/.git/info/exclude"
  fi
  local count size_kib
  count=$(find "$debs" -name '*.deb' | wc -l)
  size_kib=$(du -sk "$DEPS_DIR" | cut -f1)
  say "prepared $count packages in .gpu-deps/ ($((size_kib / 1024)) MiB; the device tool carries at most 64 MiB)"
  say "next: run(command='scripts/gpu-check.sh \"\$OUT\"', carry=[\".gpu-deps\"], timeout_s=480)"
}

# ---- the private prefix ------------------------------------------------------------------------
# Unpacks the .debs into $PREFIX (a copy of their /usr tree), merges /lib into /usr/lib as Debian's
# usrmerge does, re-points absolute links into the prefix and writes a pkg-config wrapper that
# rewrites the .pc files' /usr paths into the prefix.
make_prefix() {
  local stamp
  stamp=$(sha256sum <"$DEPS_DIR/MANIFEST" | cut -d' ' -f1)
  if [[ -f $PREFIX/.stamp && $(cat "$PREFIX/.stamp") == "$stamp" ]]; then
    echo "prefix $PREFIX is up to date ($(wc -l <"$DEPS_DIR/MANIFEST") packages)"
    return 0
  fi
  rm -rf "$PREFIX" && mkdir -p "$PREFIX"
  local f link target member zip
  for f in "$DEPS_DIR"/debs/*.deb; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$f" "$PREFIX" || { echo "cannot unpack $f"; return 1; }
    else  # a .deb is an ar archive holding data.tar.{xz,zst,gz}
      member=$(ar t "$f" | grep '^data\.tar') || { echo "no dpkg-deb, and ar cannot read $f"; return 1; }
      case $member in
        *.xz) zip=--xz ;; *.zst) zip=--zstd ;; *.gz) zip=--gzip ;; *) zip=--no-auto-compress ;;
      esac
      ar p "$f" "$member" | tar -x "$zip" -C "$PREFIX" -f - || { echo "cannot unpack $f"; return 1; }
    fi
    echo "unpacked $(basename "$f")"
  done
  if [[ -d $PREFIX/lib && ! -L $PREFIX/lib ]]; then
    cp -a "$PREFIX/lib/." "$PREFIX/usr/lib/" && rm -rf "${PREFIX:?}/lib"
  fi
  while IFS= read -r link; do
    target=$(readlink "$link")
    target=${target#/usr}
    ln -sfn "$PREFIX/usr$target" "$link"
  done < <(find "$PREFIX/usr" -type l -lname '/*')
  mkdir -p "$PREFIX/bin"
  cat >"$PREFIX/bin/pkg-config" <<EOF
#!/bin/sh
# pkg-config over the unpacked .pc files only; PKG_CONFIG_SYSROOT_DIR maps their /usr into the prefix.
export PKG_CONFIG_LIBDIR="$PREFIX/usr/lib/$MULTIARCH/pkgconfig:$PREFIX/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$PREFIX"
export LD_LIBRARY_PATH="$PREFIX/usr/lib/$MULTIARCH\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
exec "$PREFIX/usr/bin/pkgconf" "\$@"
EOF
  chmod +x "$PREFIX/bin/pkg-config"
  "$PREFIX/bin/pkg-config" --cflags libgvc >/dev/null || { echo "the prefix's pkgconf does not run"; return 1; }
  echo "$stamp" >"$PREFIX/.stamp"
  echo "prefix ready: $PREFIX"
}

# CUPTI ships with the toolkit; when this one lacks it, PyTorch's wheel (nvidia-cuda-cupti) has it.
cupti_hints() {
  local nvcc root py dir inc lib
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  root=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
  if [[ -f $root/include/cupti.h || -f $root/extras/CUPTI/include/cupti.h ]]; then return 0; fi
  [[ -n $PYTHON ]] || return 0
  for dir in $("$PYTHON" -c 'import nvidia; print(" ".join(nvidia.__path__))' 2>/dev/null); do
    inc=$(find "$dir" -name cupti.h -path '*include*' 2>/dev/null | head -1)
    lib=$(find "$dir" -name 'libcupti.so*' 2>/dev/null | sort | head -1)
    if [[ -n $inc && -n $lib ]]; then
      echo "-DCUDAToolkit_CUPTI_INCLUDE_DIR=$(dirname "$inc")"
      echo "-DCUDA_cupti_LIBRARY=$lib"
      return 0
    fi
  done
}

# ---- steps -------------------------------------------------------------------------------------
declare -a SUMMARY=()
FAILED=0
LOGDIR=""
LOG=""

remaining() { echo $((BUDGET - SECONDS)); }

# run_step NAME CAP_S CMD...: runs CMD with a timeout of min(CAP_S scaled by BUDGET / 450, time left
# - 20 s), its output in
# $LOGDIR/NAME.log and appended to the combined log. Exit 77 from CMD means "skipped" (its last line
# says why).
run_step() {
  local name=$1 cap=$(( $2 * BUDGET / 450 )) limit rc start line
  shift 2
  limit=$(( $(remaining) - 20 ))
  (( limit > cap )) && limit=$cap
  if (( limit < 10 )); then
    SUMMARY+=("$name|FAILED|out of time budget (${BUDGET} s)")
    FAILED=1
    say "$name: FAILED: out of time budget"
    return 1
  fi
  start=$SECONDS
  say "$name ..."
  # Steps may be this script's functions (exported below): run them in a child bash.
  timeout --kill-after=10 "$limit" bash -c '"$@"' "$name" "$@" >"$LOGDIR/$name.log" 2>&1
  rc=$?
  {
    echo "===== $name: exit $rc after $((SECONDS - start)) s (limit $limit s): $*"
    cat "$LOGDIR/$name.log"
  } >>"$LOG"
  line=$(grep -v '^\s*$' "$LOGDIR/$name.log" | tail -1)
  if (( rc == 0 )); then
    SUMMARY+=("$name|ok|$((SECONDS - start)) s")
    say "$name: ok ($((SECONDS - start)) s)"
  elif (( rc == 77 )); then
    SUMMARY+=("$name|skipped|$line")
    say "$name: $line"
  else
    (( rc == 124 || rc == 137 )) && line="timed out after $limit s"
    SUMMARY+=("$name|FAILED|exit $rc: $line")
    FAILED=1
    say "$name: FAILED (exit $rc); last lines of its log:"
    tail -25 "$LOGDIR/$name.log" | sed 's/^/    /'
  fi
  return "$rc"
}

skip_step() {  # skip_step NAME REASON
  SUMMARY+=("$1|skipped|$2")
  echo "===== $1: $2" >>"$LOG"
  say "$1: $2"
}

configure() {
  local args=(-S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
    -DRT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DRT_BUILD_PYTHON=OFF -DRT_BUILD_STUDIO=OFF
    -DRT_BUILD_TESTS=ON
    # CMake 4 refuses cmake_policy(VERSION 2.x) in old packages' config files without this; 3.x ignores it.
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5 --no-warn-unused-cli)
  if [[ -n $PREFIX_USED ]]; then
    local lib=$PREFIX/usr/lib/$MULTIARCH
    # CMAKE_PREFIX_PATH finds everything on a multiarch (Debian/Ubuntu) compiler; the explicit
    # paths below also hold where CMake does not search lib/x86_64-linux-gnu.
    args+=(-DCMAKE_PREFIX_PATH="$PREFIX/usr"
      -Dfmt_DIR="$lib/cmake/fmt" -Dsimdjson_DIR="$lib/cmake/simdjson"
      -Dnlohmann_json_DIR="$PREFIX/usr/share/cmake/nlohmann_json" -DCatch2_DIR="$PREFIX/usr/lib/cmake/Catch2"
      -DSQLite3_INCLUDE_DIR="$PREFIX/usr/include" -DSQLite3_LIBRARY="$lib/libsqlite3.so"
      -DZLIB_INCLUDE_DIR="$PREFIX/usr/include" -DZLIB_LIBRARY="$lib/libz.so"
      -DPKG_CONFIG_EXECUTABLE="$PREFIX/bin/pkg-config"
      -DOPENBLAS_INCLUDE_DIR="$PREFIX/usr/include/$MULTIARCH/openblas-openmp"
      -DOPENBLAS_LIBRARY="$lib/openblas-openmp/libopenblas.so"
      # OpenBLAS's own needs (libgfortran) are found at link time here, and at run time through
      # LD_LIBRARY_PATH (set for the steps that run our programs).
      -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$lib:$lib/openblas-openmp"
      -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath-link,$lib:$lib/openblas-openmp")
  fi
  (( ISOLATE )) && args+=(-DCMAKE_SYSTEM_IGNORE_PREFIX_PATH=/usr)
  local hint
  while IFS= read -r hint; do [[ -n $hint ]] && args+=("$hint"); done < <(cupti_hints)
  echo "cmake ${args[*]}"
  # NCCL: the toolkit's, else the one pip's nvidia-nccl-cu* (PyTorch's wheels) put next to the machine's python.
  if [[ ! -f /usr/local/cuda/include/nccl.h && -n ${PYTHON:-} ]]; then
    local nccl_root
    nccl_root=$(env -u LD_LIBRARY_PATH "$PYTHON" -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null) || nccl_root=""
    [[ -n $nccl_root && -f $nccl_root/include/nccl.h ]] && args+=(-DRT_NCCL_ROOT="$nccl_root")
  fi
  cmake "${args[@]}" || return 1
  if grep -q '^RT_WITH_NCCL:INTERNAL=ON' "$BUILD/CMakeCache.txt"; then
    echo "nccl backend: built (tests/dist/test_nccl_group runs in the nccl_tests step)"
  else
    echo "nccl backend: not built (no nccl.h and libnccl in this CUDA toolkit or in pip's nvidia-nccl): its tests are skipped"
  fi
  # Where each dependency came from (with a prefix, every path below should lie in it).
  grep -E '^(fmt_DIR|nlohmann_json_DIR|simdjson_DIR|Catch2_DIR|SQLite3_INCLUDE_DIR|SQLite3_LIBRARY|ZLIB_INCLUDE_DIR|ZLIB_LIBRARY|ZLIB_LIBRARY_RELEASE|OPENBLAS_INCLUDE_DIR|OPENBLAS_LIBRARY|PKG_CONFIG_EXECUTABLE|pkgcfg_lib_RT_GRAPHVIZ_gvc|pkgcfg_lib_IMGUI_imgui|CUDA_cupti_LIBRARY|CUDAToolkit_CUPTI_INCLUDE_DIR|CMAKE_CUDA_COMPILER):' \
    "$BUILD/CMakeCache.txt" | sed 's/^/  dependency: /'
  if [[ -n $PREFIX_USED ]]; then
    local outside
    outside=$(grep -E '^(fmt_DIR|nlohmann_json_DIR|simdjson_DIR|Catch2_DIR|SQLite3_INCLUDE_DIR|SQLite3_LIBRARY|ZLIB_INCLUDE_DIR|ZLIB_LIBRARY|ZLIB_LIBRARY_RELEASE|OPENBLAS_INCLUDE_DIR|OPENBLAS_LIBRARY|pkgcfg_lib_RT_GRAPHVIZ_gvc|pkgcfg_lib_IMGUI_imgui):' \
      "$BUILD/CMakeCache.txt" | grep -v "=$PREFIX/")
    if [[ -n $outside ]]; then
      echo "dependencies found outside the prefix $PREFIX:"
      echo "$outside"
      return 1
    fi
    echo "every dependency came from the prefix $PREFIX"
  fi
}

# What the GPU steps need: the libraries, tests/cuda (the op check), tests/kernels and bench/gpu.
# Folders' phony targets (tests/cuda/all ...) build every target CMake defines below them.
build() {
  local targets=(rt_engine rt_profiler) dir all
  all=$(ninja -C "$BUILD" -t targets all 2>/dev/null)
  for dir in tests/cuda tests/kernels bench/gpu; do
    if grep -q "^$dir/all:" <<<"$all"; then targets+=("$dir/all"); fi
  done
  # The nccl backend's test (defined only when NCCL was found).
  if grep -q "^test_nccl_group:" <<<"$all"; then targets+=(test_nccl_group); fi
  echo "ninja -j$JOBS ${targets[*]}"
  ninja -C "$BUILD" -j"$JOBS" "${targets[@]}"
}

# The Python module against the GPU machine's python3 (the one with PyTorch), then pytest on
# tests/python/test_cuda.py. Skipped (77) when that python has no headers, pybind11 or pytest.
# The build directory is reconfigured with the module and, whatever happens, back without it.
python_tests() {
  [[ -n $PYTHON ]] || { echo "skipped: no python3 with PyTorch"; return 77; }
  local inc pybind_dir rc
  inc=$(env -u LD_LIBRARY_PATH "$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [[ -f $inc/Python.h ]] || { echo "skipped: $PYTHON has no development headers (no Python.h in $inc)"; return 77; }
  pybind_dir=$(env -u LD_LIBRARY_PATH "$PYTHON" -m pybind11 --cmakedir 2>/dev/null) || pybind_dir=""
  if [[ -z $pybind_dir && -n $PREFIX_USED && -d $PREFIX/usr/lib/cmake/pybind11 ]]; then pybind_dir=$PREFIX/usr/lib/cmake/pybind11; fi
  [[ -n $pybind_dir ]] || { echo "skipped: no pybind11 for $PYTHON (pip's pybind11 or .gpu-deps' pybind11-dev)"; return 77; }
  env -u LD_LIBRARY_PATH "$PYTHON" -c 'import pytest, numpy' 2>/dev/null || { echo "skipped: $PYTHON lacks pytest or numpy"; return 77; }
  echo "python: $PYTHON, headers $inc, pybind11 $pybind_dir"
  # The machine's python is not in the prefix: --isolate's ignored /usr must not hide it.
  cmake "$BUILD" -DRT_BUILD_PYTHON=ON -DRT_BUILD_CLI=OFF -DPython_EXECUTABLE="$PYTHON" -Dpybind11_DIR="$pybind_dir" \
    -DCMAKE_SYSTEM_IGNORE_PREFIX_PATH= &&
    ninja -C "$BUILD" -j"$JOBS" rt_python_ext &&
    PYTHONPATH="$BUILD/python" PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4 \
      "$PYTHON" -m pytest -q -p no:cacheprovider -rs "$ROOT/tests/python/test_cuda.py"
  rc=$?
  configure_without_python
  return "$rc"
}

# The build directory as `configure` left it (the Python step may have been stopped mid-way).
configure_without_python() {
  grep -q '^RT_BUILD_PYTHON:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null || return 0
  local restore=(-DRT_BUILD_PYTHON=OFF)
  (( ISOLATE )) && restore+=(-DCMAKE_SYSTEM_IGNORE_PREFIX_PATH=/usr)
  cmake "$BUILD" "${restore[@]}" >/dev/null || echo "warning: could not configure $BUILD back without Python"
}

# The engine's CPU tests (CI runs them too), built and run last with the time that is left.
engine_tests() {
  local targets=() src
  for src in "$ROOT"/tests/engine/test_*.cpp; do targets+=("$(basename "$src" .cpp)"); done
  echo "ninja -j$JOBS ${targets[*]}"
  ninja -C "$BUILD" -j"$JOBS" "${targets[@]}" && ctest_label engine "$JOBS"
}

# Exit 77 with "skipped: ..." when no GPU is usable (the probe's reason), else the command's status.
gpu_only() {
  if [[ -n $NO_GPU ]]; then echo "skipped: no CUDA device ($NO_GPU)"; return 77; fi
  "$@"
}

# The op check's cases matching $1 ("all": every one) under compute-sanitizer's memcheck.
sanitize_op_check() {
  local tool filter=()
  tool=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  [[ -x $tool ]] || { echo "skipped: compute-sanitizer not found (on PATH or in /usr/local/cuda/bin)"; return 77; }
  [[ $1 == all ]] || filter=("$1")
  echo "PYTORCH_NO_CUDA_MEMORY_CACHING=1 $tool --tool memcheck --error-exitcode 3 --leak-check no --print-limit 20" \
    "rt_cuda_op_check ${filter[*]}"
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$tool" --tool memcheck --error-exitcode 3 --leak-check no --print-limit 20 "$BUILD/bin/rt_cuda_op_check" "${filter[@]}"
  local rc=$?
  case $rc in
    0) echo "memcheck: no errors; every case passed" ;;
    3) echo "memcheck found memory errors (see its report above)" ;;
    1) echo "memcheck: no errors, but op-check cases failed their comparison (see FAIL lines above)" ;;
  esac
  return "$rc"
}

torch_bench() {
  [[ -n $PYTHON ]] || { echo "skipped: no python3 with PyTorch (import torch failed)"; return 77; }
  env -u LD_LIBRARY_PATH PYTHONUNBUFFERED=1 "$PYTHON" "$ROOT/bench/gpu/torch_gpu_bench.py" --json "$OUT_DIR/results-torch.json"
}

# The plugin ops' CUDA kernels (plugins/fused-bias-gelu, the ops fixture) against their CPU kernels, gradients
# included: tests/plugins/test_ops_checks ("cpu vs cuda" is skipped without a device, so only a GPU runs it).
plugin_op_checks() {
  ninja -C "$BUILD" -j"$JOBS" test_ops_checks fused_bias_gelu ops_fixture &&
    (cd "$BUILD" && ctest -R '^test_ops_checks: ' -j1 --output-on-failure --timeout 120 --no-tests=error)
}

ctest_label() {  # ctest_label LABEL JOBS [ctest options]
  local label=$1 jobs=$2
  shift 2
  (cd "$BUILD" && ctest -L "$label" -j"$jobs" --output-on-failure --timeout 300 --no-tests=error "$@")
}

# tests/dist/test_nccl_group (labels cuda and dist), one ctest entry per tag; 77 when NCCL was not built.
nccl_tests() {
  grep -q '^RT_WITH_NCCL:INTERNAL=ON' "$BUILD/CMakeCache.txt" ||
    { echo "skipped: the nccl backend is not built (no NCCL in this CUDA toolkit; see the configure step)"; return 77; }
  ctest_label cuda 1 -R '^test_nccl_group: '
}

run_check() {
  mkdir -p "$OUT_DIR" || die "cannot create $OUT_DIR"
  OUT_DIR=$(cd "$OUT_DIR" && pwd)
  rm -f "$OUT_DIR"/{gpu-check.log,table.md,results-ours.json,results-torch.json,trace_mlp.json.gz,trace_char_transformer.json.gz}
  mkdir -p "$BUILD" || die "cannot create $BUILD"
  BUILD=$(cd "$BUILD" && pwd)
  PREFIX=$BUILD/deps-prefix
  export OUT_DIR BUILD PREFIX
  LOGDIR=$BUILD/gpu-check-logs
  rm -rf "$LOGDIR" && mkdir -p "$LOGDIR"
  LOG=$OUT_DIR/gpu-check.log
  : >"$LOG"
  for tool in cmake ninja timeout; do command -v $tool >/dev/null || die "$tool not found on PATH"; done

  PYTHON=""
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then PYTHON=$(command -v "$p"); break; fi
  done
  export PYTHON

  {
    echo "===== machine"
    date -u
    uname -a
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1 || echo "nvidia-smi: not available"
    if command -v nvcc >/dev/null; then nvcc --version; else /usr/local/cuda/bin/nvcc --version; fi 2>&1 | tail -2
    cmake --version | head -1
    c++ --version 2>&1 | head -1
    echo "python with torch: ${PYTHON:-none}"
    [[ -n $PYTHON ]] && "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1
  } >>"$LOG" 2>&1
  say "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo "no nvidia-smi"), $(nproc) cores; log: $LOG"

  export PREFIX_USED=""
  if compgen -G "$DEPS_DIR/debs/*.deb" >/dev/null; then
    run_step deps 120 make_prefix && PREFIX_USED=1
    [[ -n $PREFIX_USED ]] || print_summary
  else
    (( ISOLATE )) && die "--isolate needs .gpu-deps (run scripts/gpu-check.sh --prepare first)"
    skip_step deps "no .gpu-deps/ (run --prepare on the build machine): using the system's packages"
  fi

  run_step configure 180 configure || print_summary
  run_step build 400 build || print_summary

  # Our programs find the prefix's libraries (and OpenBLAS's libgfortran) here; python3 runs without.
  if [[ -n $PREFIX_USED ]]; then
    export LD_LIBRARY_PATH="$PREFIX/usr/lib/$MULTIARCH/openblas-openmp:$PREFIX/usr/lib/$MULTIARCH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  export NO_GPU=""
  local probe
  probe=$("$BUILD/bin/gpu_bench" --probe 2>&1)
  case $? in
    0) say "device: $probe" ;;
    77) NO_GPU=${probe#no CUDA device: } ;;
    *) NO_GPU="the probe failed"
       SUMMARY+=("probe|FAILED|gpu_bench --probe: $probe")
       FAILED=1
       say "probe: FAILED: $probe" ;;
  esac
  echo "===== probe: $probe" >>"$LOG"

  if [[ -n $SANITIZE ]]; then  # --sanitize: only the memcheck run
    run_step sanitize 240 gpu_only sanitize_op_check "$SANITIZE"  # its log comes back within timeout_s=300
    print_summary
  fi
  run_step cuda_tests 90 gpu_only ctest_label cuda 1 -E '^test_nccl_group: '
  run_step plugin_ops 60 gpu_only plugin_op_checks
  run_step nccl_tests 60 gpu_only nccl_tests
  run_step train_trace 90 gpu_only "$BUILD/bin/gpu_train_trace" --out "$OUT_DIR"
  run_step bench_ours 120 gpu_only "$BUILD/bin/gpu_bench" --json "$OUT_DIR/results-ours.json"
  run_step bench_torch 120 gpu_only torch_bench
  if (( $(remaining) >= 120 * BUDGET / 450 )); then
    run_step python_tests 150 python_tests
    configure_without_python >>"$LOG" 2>&1
  else
    skip_step python_tests "skipped: $(remaining) s left of the budget, too few to build the module"
  fi
  if (( $(remaining) >= 150 * BUDGET / 450 )); then
    run_step engine_tests 200 engine_tests
  else
    skip_step engine_tests "skipped: $(remaining) s left of the budget, too few to build them (CI runs them)"
  fi
  print_summary
}

print_summary() {
  local table_args=(--out "$OUT_DIR/table.md")
  [[ -n ${NO_GPU:-} ]] && table_args+=(--pending "$NO_GPU")
  echo
  say "summary ($SECONDS s of ${BUDGET} s):"
  local row
  for row in "${SUMMARY[@]}"; do
    IFS='|' read -r name status detail <<<"$row"
    printf '  %-13s %-8s %s\n' "$name" "$status" "$detail"
  done
  {
    echo "===== summary"
    printf '%s\n' "${SUMMARY[@]}"
  } >>"$LOG"
  echo
  [[ -n $SANITIZE ]] && exit $(( FAILED ? 1 : 0 ))  # --sanitize measures nothing: no table
  # The table comes last: the device tool's reply carries the end of the output.
  local py=${PYTHON:-python3}
  if ! env -u LD_LIBRARY_PATH "$py" "$ROOT/bench/gpu/gpu_table.py" --ours "$OUT_DIR/results-ours.json" \
      --torch "$OUT_DIR/results-torch.json" "${table_args[@]}" 2>>"$LOG"; then
    say "the table could not be made (see $LOG)"
    FAILED=1
  fi
  cp "$OUT_DIR/table.md" "$LOGDIR/" 2>/dev/null
  exit $(( FAILED ? 1 : 0 ))
}

export -f make_prefix cupti_hints configure build engine_tests python_tests configure_without_python gpu_only torch_bench \
  ctest_label nccl_tests sanitize_op_check
export ROOT DEPS_DIR MULTIARCH

ISOLATE=0
OUT_DIR=""
SANITIZE=""
case ${1:-} in
  --prepare) [[ $# -eq 1 ]] || die "usage: scripts/gpu-check.sh --prepare"; prepare; exit 0 ;;
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  --isolate) ISOLATE=1; shift ;;
  --sanitize)
    [[ $# -ge 2 && -n $2 && $2 != -* ]] || die "--sanitize needs a FILTER (an op-check name part, or all)"
    SANITIZE=$2; shift 2 ;;
esac
[[ $# -le 1 ]] || die "usage: scripts/gpu-check.sh [--prepare | [--isolate | --sanitize FILTER] [OUT_DIR]]"
[[ ${1:-} == -* ]] && die "unknown option $1 (try --help)"
OUT_DIR=${1:-out/gpu-check}
BUILD=${RT_GPU_CHECK_BUILD_DIR:-build-gpucheck}
BUDGET=${RT_GPU_CHECK_BUDGET_S:-450}
JOBS=${RT_GPU_CHECK_JOBS:-$(nproc)}
export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1
export ISOLATE OUT_DIR BUILD JOBS SANITIZE
run_check
