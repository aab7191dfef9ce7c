#!/usr/bin/env bash
# Sets up, builds with AddressSanitizer + UndefinedBehaviorSanitizer and
# -Werror, makes a packager's build (the defaults, Release), and runs every
# test: unit, fuzz-corpus replays, command-line and tool checks (ctest),
# then a short libFuzzer session per fuzz target when clang is there.
# Tests that need what the machine lacks (O_DIRECT, root, loop devices)
# report themselves as skipped, by name.  The PostgreSQL tests (the store
# suite again as unit/store/*/pg, the integration tests of several
# backends) run on a private PostgreSQL server started here
# (tests/tools/pg-private.sh: a temporary folder, a Unix socket, no TCP
# port) and stopped when the run ends, however it ends; without Debian's
# postgresql binaries they are skipped.
#
#   ./tests/run.sh                     everything
#   TW_FUZZ_SECONDS=0 ./tests/run.sh   skip the libFuzzer sessions
#
# The last line counts ctest's tests exactly, from its JUnit file:
#   tests/run.sh: N passed, N failed, N skipped
# The libFuzzer sessions, and the Release build if it failed, have lines of
# their own before it.  The status is 0 only if the Release build passed,
# no test failed and no fuzz session found a crash.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/setup.sh

build=${TW_BUILD_DIR:-build/asan}
cmake -S . -B "$build" -DTW_SANITIZE=ON -DTW_WERROR=ON -DTW_TESTS=ON \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" -j"$(nproc)"

# The browser tests' playwright-core, as tests/web/package-lock.json pins
# it, in the build folder (tests/web/run-web.sh uses it; without the npm
# registry that test is skipped, exit 77).
web_node="$build/web-node"
if command -v npm >/dev/null; then
  mkdir -p "$web_node"
  # time limits: a registry that never answers must not hang the run
  if ! timeout 30 npm ping --fetch-timeout=10000 --fetch-retries=0 >"$web_node/npm-ping.log" 2>&1; then
    echo "tests/run.sh: SKIP npm ci: the npm registry does not answer npm ping within 10 s ($web_node/npm-ping.log); web/dashboard will be skipped"
  else
    cp tests/web/package.json tests/web/package-lock.json "$web_node/"
    (cd "$web_node" && timeout 180 npm ci --no-audit --no-fund --loglevel=error \
       --fetch-timeout=30000 --fetch-retries=1) >"$web_node/npm-ci.log" 2>&1 ||
      { rm -f "$web_node/package-lock.json"
        echo "tests/run.sh: npm ci failed ($web_node/npm-ci.log): web/dashboard will say why"; }
  fi
fi

# A packager's build: the defaults, Release (GCC's -O2 warnings, such as
# -Warray-bounds, only appear there).  Built, not run: the tests run above.
release=${TW_RELEASE_BUILD_DIR:-build/release}
release_line=""
if ! { cmake -S . -B "$release" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$release" -j"$(nproc)"; } >"$release.log" 2>&1; then
  grep -E -m 20 'error|Error' "$release.log" || tail -20 "$release.log"
  release_line="tests/run.sh: the Release build with the defaults FAILED ($release.log)"
  echo "$release_line"
fi

# The private PostgreSQL server: TW_TEST_PG names it to the tests.  The
# trap stops it on every way out (a failure, Ctrl-C, the end); were this
# script killed outright, the server's watcher (TW_PG_WATCH_PID) stops it.
pg_dir=""
pg_line=""
stop_pg() {
  if [ -n "$pg_dir" ]; then
    ./tests/tools/pg-private.sh stop "$pg_dir" || true
    pg_dir=""
  fi
}
trap stop_pg EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
unset TW_TEST_PG
# The suite never goes over TCP, nor to a server, database, user or
# password the caller's environment names: libpq reads these when a
# connection string leaves them out (the private server's string names
# its socket folder and user; PGHOSTADDR would win over host=).
unset PGHOSTADDR PGHOST PGPORT PGSERVICE PGSERVICEFILE PGDATABASE PGUSER PGPASSWORD \
  PGPASSFILE PGOPTIONS PGSSLMODE PGREQUIRESSL PGGSSENCMODE PGTARGETSESSIONATTRS \
  PGCONNECT_TIMEOUT PGAPPNAME PGSYSCONFDIR
pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/tw-pg.XXXXXX")
pg_log="$build/pg-private.log"
set +e
pg_conn=$(TW_PG_WATCH_PID=$$ ./tests/tools/pg-private.sh start "$pg_dir" 2>"$pg_log")
pg_status=$?
set -e
if [ "$pg_status" -eq 0 ]; then
  export TW_TEST_PG="$pg_conn"
  echo "tests/run.sh: a private PostgreSQL server for the PostgreSQL tests: $pg_conn"
else
  rmdir "$pg_dir" 2>/dev/null || true
  pg_dir=""
  if [ "$pg_status" -eq 77 ]; then
    echo "tests/run.sh: SKIP the PostgreSQL tests: $(tail -1 "$pg_log")"
  else
    # Skipped, they would look like a machine without PostgreSQL: a
    # server that should start and does not is a failure of the run.
    cat "$pg_log"
    pg_line="tests/run.sh: the private PostgreSQL server did not start ($pg_log): its tests are skipped, and the run FAILED"
    echo "$pg_line"
  fi
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
junit="$build/ctest-junit.xml"
rm -f "$junit"
set +e
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --output-junit "$(realpath "$junit")" \
  2>&1 | tee "$build/ctest.log"
ctest_status=${PIPESTATUS[0]}
set -e
stop_pg # the fuzz sessions below need no server
if [ ! -s "$junit" ]; then
  echo "tests/run.sh: ctest wrote no $junit (status $ctest_status)"
  exit 1
fi
# One <testcase ... status="run|fail|notrun|disabled"> per test.
count() { { grep -o '<testcase [^>]*status="'"$1"'"' "$junit" || true; } | wc -l; }
passed=$(count run)
failed=$(count fail)
skipped=$(( $(count notrun) + $(count disabled) ))
total=$(grep -c '<testcase ' "$junit" || true)
if [ $((passed + failed + skipped)) -ne "$total" ]; then
  echo "tests/run.sh: $total tests in $junit, but $passed + $failed + $skipped by status"
  failed=$((total - passed - skipped))
fi
# ctest failing without a failed test (a timeout it counted elsewhere, or
# no tests found) is a failure too.
if [ "$ctest_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "tests/run.sh: ctest exited $ctest_status with no failed test in $junit"
  failed=1
fi

# libFuzzer sessions on copies of the corpora (the committed corpora stay
# small; new finds are printed, not added).  Their targets are the fuzz/*
# replays counted above, so they are reported on a line of their own.
fuzz_line=""
crashed=0 unrun=0
secs=${TW_FUZZ_SECONDS:-20}
if [ "$secs" -gt 0 ] && command -v clang >/dev/null; then
  fbuild=${TW_FUZZ_BUILD_DIR:-build/fuzz}
  CC=clang cmake -S . -B "$fbuild" -DTW_FUZZ=ON -DTW_WERROR=ON -DTW_TESTS=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
  targets=()
  for f in tests/fuzz/fuzz_*.c; do t=$(basename "$f" .c); targets+=("${t#fuzz_}"); done
  sessions=0
  if ! cmake --build "$fbuild" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >"$fbuild.log" 2>&1; then
    grep -E -m 20 'error|Error' "$fbuild.log" || tail -20 "$fbuild.log"
    echo "fuzz: the libFuzzer build failed ($fbuild.log)"
    crashed=1 targets=()
  fi
  # One session per core at a time (each is one process), reported in the
  # targets' order once all have run.
  # Each writes its status (or "setup" when its corpus could not be
  # copied) to $work.status, whatever happens.
  fuzz_one() {
    local t=$1 work=$2 dict=() st=0
    if ! cp tests/fuzz/corpus/$t/* "$work"/ 2>"$work.log"; then
      echo setup >"$work.status"
      return 0
    fi
    [ -f tests/fuzz/$t.dict ] && dict=(-dict=tests/fuzz/$t.dict)
    "$fbuild/tests/fuzz_$t" "${dict[@]}" -max_total_time="$secs" -max_len=65536 \
      -artifact_prefix="$work/" "$work" >"$work.log" 2>&1 || st=$?
    echo "$st" >"$work.status"
  }
  fuzz_dir=$(mktemp -d)
  running=0
  for t in "${targets[@]}"; do
    mkdir "$fuzz_dir/$t"
    if [ "$running" -ge "$(nproc)" ]; then wait -n || true; running=$((running - 1)); fi
    fuzz_one "$t" "$fuzz_dir/$t" &
    running=$((running + 1))
  done
  wait || true
  for t in "${targets[@]}"; do
    work="$fuzz_dir/$t"
    echo "fuzz: $t for ${secs}s"
    sessions=$((sessions + 1))
    st=$(cat "$work.status" 2>/dev/null || true)
    if [ "$st" != 0 ]; then
      tail -40 "$work.log" 2>/dev/null || true
      if [ "$st" = setup ] || [ -z "$st" ]; then
        echo "fuzz: $t did not run (its corpus tests/fuzz/corpus/$t could not be copied, or the session died unheard)"
        unrun=$((unrun + 1))
      else
        echo "fuzz: $t found a crash (status $st); the input is in $work"
        crashed=$((crashed + 1))
      fi
      continue
    fi
    tail -1 "$work.log"
    rm -rf "$work" "$work.log" "$work.status"
  done
  rmdir "$fuzz_dir" 2>/dev/null || true # what is left holds a failed session's files
  if [ ${#targets[@]} -eq 0 ]; then
    fuzz_line="tests/run.sh: libFuzzer: the build FAILED, no sessions"
  else
    fuzz_line="tests/run.sh: libFuzzer: $sessions sessions of ${secs}s, $crashed found a crash"
    [ "$unrun" -gt 0 ] && fuzz_line+=", $unrun did not run (a failure)"
  fi
elif [ "$secs" -gt 0 ]; then
  fuzz_line="tests/run.sh: libFuzzer: no sessions (clang is not installed)"
else
  fuzz_line="tests/run.sh: libFuzzer: no sessions (TW_FUZZ_SECONDS=0)"
fi

[ -n "$release_line" ] && echo "$release_line"
[ -n "$pg_line" ] && echo "$pg_line"
echo "$fuzz_line"
echo "tests/run.sh: $passed passed, $failed failed, $skipped skipped"
[ -z "$release_line" ] && [ -z "$pg_line" ] && [ "$failed" -eq 0 ] && [ "$crashed" -eq 0 ] && [ "$unrun" -eq 0 ]
