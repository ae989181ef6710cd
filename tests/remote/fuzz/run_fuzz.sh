#!/usr/bin/env bash
# Builds tests/remote/fuzz/fuzz_remote.cpp with clang's libFuzzer (+ ASan, UBSan) and runs it over the corpus in
# tests/remote/corpus for a fixed number of inputs. Any crash, sanitizer report or escaped exception fails.
#   run_fuzz.sh SOURCE_DIR BUILD_DIR [RUNS]        (ctest "remote: fuzz"; longer: RUNS=2000000)
# New inputs the fuzzer finds go to BUILD_DIR/fuzz-remote-new (copy the interesting ones into the corpus).
set -euo pipefail
src=$1 build=$2 runs=${3:-200000}
bin=$build/fuzz/fuzz_remote
mkdir -p "$build/fuzz" "$build/fuzz-remote-new"
sources=("$src/tests/remote/fuzz/fuzz_remote.cpp" "$src/remote/src/frame.cpp" "$src/remote/src/event_batch.cpp"
         "$src/profiler/src/collect/gradient_check.cpp")
if [[ ! -x $bin ]] || [[ -n $(find "${sources[@]}" "$src/remote/include" -newer "$bin" 2>/dev/null | head -1) ]]; then
  clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$src/remote/include" -I"$src/remote/src" -I"$src/profiler/include" -I"$src/engine/include" \
    "${sources[@]}" -llz4 -lfmt -o "$bin"
fi
"$bin" -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  "$build/fuzz-remote-new" "$src/tests/remote/corpus" 2>&1 | tail -15
