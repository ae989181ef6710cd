#!/usr/bin/env bash
# Runs the tests; installs what is missing first (scripts/setup.sh). Each stage prints its time, the
# summary lists them, and the last line counts every test of every stage.
#
#   scripts/test.sh          the everyday command: the release tree (build/, shared with run.sh) and every
#                            test that needs no GPU. The CUDA kernels run on the CPU emulator where the
#                            CUDA toolkit's headers are (kernels/cuda_emulator/), else they are skipped
#                            with the reason; no nvcc.
#   scripts/test.sh --full   what CI runs (.ci/run): the above, then
#                              asan   ASan + UBSan over the engine, kernels (on the emulator, each tensor an
#                                     exact-size allocation), profiler and view models; the rtorch CLI and
#                                     the studio's embedded interpreter (kernel, runner, notebook) built
#                                     with them; the Python suites with the sanitizer runtime preloaded
#                                     into python3 (build-asan/)
#                              tsan   ThreadSanitizer over the same libraries' tests: profiler buffers and
#                                     flush thread, allocators, autograd on several threads, the layout
#                                     thread (build-tsan/)
#                              nvcc   every kernels/cuda/*.cu compiled by nvcc for sm_90, and rt_engine,
#                                     rt_profiler (with CUPTI) and rt_dist (with the nccl backend) linked
#                                     against the real CUDA libraries, plus the nccl backend's test and
#                                     the fused-bias-gelu plugin's CUDA kernels
#                                     (build-nvcc/; nothing runs: this machine has no GPU)
#
# One test: `cmake --build build --target test_autograd && build/bin/test_autograd "[name]"`, or
# `cd build && ctest -R 'test_autograd: '` (ctest -N lists them all).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/ccache_env.sh
source scripts/ccache_env.sh

full=0
case "${1:-}" in
  "") ;;
  --full) full=1 ;;
  -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  *) echo "test.sh: unknown argument '$1' (use --full, or nothing for the everyday tests)" >&2; exit 2 ;;
esac
jobs=$(nproc)
has_cuda_headers=0
[[ -f /usr/local/cuda/include/cuda_runtime.h ]] && has_cuda_headers=1

stage_lines=()
counts=()          # "passed failed skipped" per ctest run
started=$SECONDS

# stage NAME COMMAND...: runs one stage, prints and records its time; a failing stage stops the run. (The
# command runs as an `if` condition, where `set -e` is off: the functions chain their steps with &&.)
stage() {
  local name=$1 t0=$SECONDS
  shift
  echo "== $name =="
  if ! "$@"; then
    echo "test.sh: stage '$name' failed after $((SECONDS - t0)) s" >&2
    exit 1
  fi
  local took=$((SECONDS - t0))
  printf -- "-- %s: %dm%02ds\n" "$name" $((took / 60)) $((took % 60))
  stage_lines+=("$(printf "  %-44s %3dm%02ds" "$name" $((took / 60)) $((took % 60)))")
}

# run_ctest DIR ARGS...: ctest in DIR with its log in DIR/ctest.log; prints the log when a test fails,
# else its summary; records passed/failed/skipped for the closing line.
run_ctest() {
  local dir=$1
  shift
  if ! (cd "$dir" && ctest -j "$jobs" --output-on-failure --timeout 600 "$@" >ctest.log 2>&1); then
    cat "$dir/ctest.log"
    echo "test.sh: tests failed in $dir/ (log: $dir/ctest.log)" >&2
    return 1
  fi
  local total skipped
  total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$dir/ctest.log" | tail -1)
  skipped=$(grep -c '(Skipped)$' "$dir/ctest.log" || true)
  [[ -n $total ]] || { echo "test.sh: no ctest summary in $dir/ctest.log" >&2; return 1; }
  grep -E 'tests passed|Total Test time' "$dir/ctest.log"
  [[ $skipped -gt 0 ]] && echo "$skipped skipped:" && grep '(Skipped)$' "$dir/ctest.log" | sed 's/^ */  /'
  counts+=("$((total - skipped)) 0 $skipped")
}

release_build() { scripts/build.sh; }
release_tests() { run_ctest build; }

# The sanitizer trees build no studio widgets or benchmarks: the libraries and their tests (and, for ASan, the
# Python extension, the CLI and the studio's interpreter). configure_sanitizer_tree DIR SANITIZE CUDA [-DOPTION=...]
configure_sanitizer_tree() {
  local dir=$1 sanitize=$2 cuda=$3
  shift 3
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRT_SANITIZE="$sanitize" -DRT_CUDA="$cuda" \
    -DRT_CUPTI=OFF -DRT_BUILD_PYTHON=OFF -DRT_BUILD_BENCH=OFF -DPython_EXECUTABLE=/usr/bin/python3 "$@" >/dev/null
}

asan_build() {
  local cuda=OFF
  [[ $has_cuda_headers == 1 ]] && cuda=EMULATED
  configure_sanitizer_tree build-asan ON "$cuda" -DRT_BUILD_PYTHON=ON -DRT_BUILD_CLI=ON -DRT_BUILD_STUDIO=ON \
    -DRT_BUILD_STUDIO_APP=OFF &&
    cmake --build build-asan -j "$jobs"
}
# The op check sees exact-size device allocations (PYTORCH_NO_CUDA_MEMORY_CACHING=1: an overrun is an ASan
# report, as compute-sanitizer's memcheck would give on a GPU), and the last warp of each block runs ahead
# of the others (the release tree runs the first ahead), so a missing __syncthreads shows either way round.
# The mpi backend's tests run in the release tree only: Open MPI's own allocations (MPI_Init_thread, components
# it loads and unloads) are reported as leaks with stacks no suppression can scope to the library alone.
mpi_backend_tests='backend mpi|test_mpi_group'
asan_tests() {
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
    RT_CUDA_EMULATED_WARP_ORDER=last run_ctest build-asan -L 'engine|kernels|cuda|profiler|remote|plugins|viz|dist' \
    -E "^python: |$mpi_backend_tests"
}
# The Python suites against the sanitized extension, and the programs that embed CPython (the rtorch CLI, the
# studio's kernel and runner): python3 itself is not instrumented, so the ASan and UBSan runtimes are preloaded
# into it; leak checking is off (the interpreter keeps its objects until exit).
asan_python_tests() {
  local preload
  preload="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 run_ctest build-asan -L 'python|cli|studio'
}

tsan_build() {
  configure_sanitizer_tree build-tsan THREAD OFF && cmake --build build-tsan -j "$jobs"
}
# OpenMP's pool is not instrumented, so this tree compiles the OpenMP loops out (rt_openmp in CMakeLists.txt);
# the project's own threads (collectors, flush and layout threads, allocators, tests' threads) all run.
tsan_tests() {
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
    run_ctest build-tsan -L 'engine|kernels|profiler|remote|plugins|viz|dist' -E "$mpi_backend_tests"
}

nvcc_compile() {
  if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
    echo "test.sh: no nvcc in /usr/local/cuda/bin: the nvcc compile and CUDA link are left out"
    return 0
  fi
  # Tests are configured so that the nccl backend's test (a GPU test) is compiled and linked here too.
  cmake -S . -B build-nvcc -G Ninja -DCMAKE_BUILD_TYPE=Release -DRT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DRT_BUILD_PYTHON=OFF -DRT_BUILD_TESTS=ON -DRT_BUILD_BENCH=OFF -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null ||
    return 1
  local targets=(rt_engine rt_profiler rt_dist fused_bias_gelu)
  if grep -q '^RT_WITH_NCCL:INTERNAL=ON' build-nvcc/CMakeCache.txt; then
    targets+=(test_nccl_group)
  else
    echo "test.sh: no NCCL in the CUDA toolkit: rt_dist is built without the nccl backend"
  fi
  cmake --build build-nvcc -j "$jobs" --target "${targets[@]}"
}

stage setup scripts/setup.sh
[[ $has_cuda_headers == 1 ]] ||
  echo "test.sh: no CUDA toolkit in /usr/local/cuda: the CUDA kernels' tests are skipped (nothing runs them here)"
stage "release build (build/)" release_build
stage "release tests" release_tests
if [[ $full == 1 ]]; then
  stage "ASan + UBSan build (build-asan/)" asan_build
  stage "ASan + UBSan tests" asan_tests
  stage "ASan + UBSan Python, CLI, interpreter tests" asan_python_tests
  stage "TSan build (build-tsan/)" tsan_build
  stage "TSan tests" tsan_tests
  stage "nvcc compile and CUDA link (build-nvcc/)" nvcc_compile
fi

total=$((SECONDS - started))
echo "== summary =="
printf '%s\n' "${stage_lines[@]}"
printf "  %-44s %3dm%02ds\n" "total" $((total / 60)) $((total % 60))
passed=0 failed=0 skipped=0
for c in "${counts[@]}"; do
  read -r p f s <<<"$c"
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "test.sh: $passed passed, $failed failed, $skipped skipped"
