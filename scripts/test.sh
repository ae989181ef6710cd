#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, runs the engine tests under
# AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/; engine, allocator, profiler and view models, no Python, no CUDA:
# it also tests the build without the CUDA backend), the CUDA tests on the CUDA emulator (build-cuda-emulated/:
# kernels/cuda_emulator/ runs the CUDA kernels on the CPU; build-cuda-emulated-asan/: the op check again under
# ASan + UBSan), then the full suite (build/) through ctest, whose summary is printed last.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hits across checkouts (CI clones to a new folder each time).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
scripts/setup.sh
jobs=$(nproc)

echo "== sanitizer build (build-asan/) =="
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRT_SANITIZE=ON -DRT_BUILD_PYTHON=OFF -DRT_CUDA=OFF \
  -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build-asan -j "$jobs"
echo "== sanitizer tests =="
if ! (cd build-asan && ASAN_OPTIONS=detect_leaks=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      LSAN_OPTIONS=suppressions="$PWD/../tests/lsan.supp" \
      ctest -j "$jobs" --output-on-failure -L 'engine|kernels|profiler|viz' --timeout 600 >ctest.log 2>&1); then
  cat build-asan/ctest.log
  echo "test.sh: sanitizer tests failed (log: build-asan/ctest.log)" >&2
  exit 1
fi
tail -n 4 build-asan/ctest.log

echo "== CUDA emulator build (build-cuda-emulated/: the CUDA backend with its kernels run on the CPU) =="
cmake -S . -B build-cuda-emulated -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRT_CUDA=EMULATED -DRT_CUPTI=OFF \
  -DRT_BUILD_CLI=OFF -DRT_BUILD_STUDIO=OFF -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build-cuda-emulated -j "$jobs"
echo "== CUDA emulator tests (every op against the CPU, streams, tests/python/test_cuda.py, the emulator itself) =="
if ! (cd build-cuda-emulated && ctest -j "$jobs" --output-on-failure -L 'cuda|kernels' --timeout 600 >ctest.log 2>&1); then
  cat build-cuda-emulated/ctest.log
  echo "test.sh: CUDA emulator tests failed (log: build-cuda-emulated/ctest.log)" >&2
  exit 1
fi
tail -n 4 build-cuda-emulated/ctest.log

# The same kernels under ASan + UBSan with every tensor its own exact-size allocation
# (PYTORCH_NO_CUDA_MEMORY_CACHING=1): a kernel reading or writing past a tensor fails here, as
# compute-sanitizer's memcheck would report it on a GPU. The last warp of each block runs ahead of
# the others here (the first one does above), so a missing __syncthreads shows either way round.
echo "== CUDA emulator under ASan + UBSan (build-cuda-emulated-asan/: the kernels' memory accesses) =="
cmake -S . -B build-cuda-emulated-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRT_SANITIZE=ON -DRT_CUDA=EMULATED \
  -DRT_CUPTI=OFF -DRT_BUILD_PYTHON=OFF -DPython_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build-cuda-emulated-asan -j "$jobs" --target rt_cuda_op_check test_cuda_streams test_block_runner
if ! (cd build-cuda-emulated-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      LSAN_OPTIONS=suppressions="$PWD/../tests/lsan.supp" PYTORCH_NO_CUDA_MEMORY_CACHING=1 RT_CUDA_EMULATED_WARP_ORDER=last \
      ctest -j "$jobs" --output-on-failure -R '^(rt_cuda_op_check|test_cuda_streams|test_block_runner:.*)$' \
      --timeout 600 >ctest.log 2>&1); then
  cat build-cuda-emulated-asan/ctest.log
  echo "test.sh: CUDA emulator tests under ASan + UBSan failed (log: build-cuda-emulated-asan/ctest.log)" >&2
  exit 1
fi
tail -n 4 build-cuda-emulated-asan/ctest.log

echo "== release build (build/) =="
scripts/build.sh
echo "== tests =="
cd build
ctest -j "$jobs" --output-on-failure --timeout 600
