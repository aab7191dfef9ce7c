#!/usr/bin/env bash
# Sets up, builds with AddressSanitizer + UndefinedBehaviorSanitizer and
# -Werror, and runs every test: unit, fuzz-corpus replays, command-line
# and tool checks (ctest), then a short libFuzzer session per fuzz target
# when clang is there.  Tests that need what the machine lacks (O_DIRECT,
# root, loop devices) report themselves as skipped.
#
#   ./tests/run.sh                  everything
#   TW_FUZZ_SECONDS=0 ./tests/run.sh   skip the libFuzzer sessions
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/setup.sh

build=${TW_BUILD_DIR:-build/asan}
cmake -S . -B "$build" -DTW_SANITIZE=ON -DTW_WERROR=ON -DTW_TESTS=ON \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" -j"$(nproc)"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" | tee "$build/ctest.log"
summary=$(grep -E '^[0-9]+% tests passed' "$build/ctest.log" | tail -1)
total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
failed=$(sed -E 's/.*, ([0-9]+) tests failed.*/\1/' <<<"$summary")
skipped=$(grep -c 'Skipped' "$build/ctest.log" || true)
fuzzed=0

# libFuzzer sessions on copies of the corpora (the committed corpora stay
# small; new finds are printed, not added).
secs=${TW_FUZZ_SECONDS:-20}
if [ "$secs" -gt 0 ] && command -v clang >/dev/null; then
  fbuild=${TW_FUZZ_BUILD_DIR:-build/fuzz}
  CC=clang cmake -S . -B "$fbuild" -DTW_FUZZ=ON -DTW_TESTS=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
  targets=()
  for f in tests/fuzz/fuzz_*.c; do t=$(basename "$f" .c); targets+=("${t#fuzz_}"); done
  cmake --build "$fbuild" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null
  for t in "${targets[@]}"; do
    work=$(mktemp -d)
    cp tests/fuzz/corpus/$t/* "$work"/
    dict=()
    [ -f tests/fuzz/$t.dict ] && dict=(-dict=tests/fuzz/$t.dict)
    echo "fuzz: $t for ${secs}s"
    if ! "$fbuild/tests/fuzz_$t" "${dict[@]}" -max_total_time="$secs" -max_len=65536 \
         -artifact_prefix="$work/" "$work" >"$work.log" 2>&1; then
      tail -40 "$work.log"
      echo "fuzz: $t found a crash; the input is in $work"
      exit 1
    fi
    tail -1 "$work.log"
    rm -rf "$work" "$work.log"
    fuzzed=$((fuzzed + 1))
  done
fi
# ctest's tests plus one per fuzz session; failures stopped the script above.
echo "tests/run.sh: $((total - failed - skipped + fuzzed)) passed, $failed failed, $skipped skipped"
