#!/usr/bin/env bash
# tests/tools/mutants.sh - the mutation check: each mutant below breaks one
# promise of README on purpose, in a scratch copy of the tree, and the tests
# that guard the promise must fail.  Not part of ./tests/run.sh (a rebuild
# and a test run per mutant: too slow for every change); run on demand and
# keep README's "Mutation check" table up to date.
#
#   tests/tools/mutants.sh                     every mutant, the tree at HEAD
#   tests/tools/mutants.sh sync-off batch-1    only these
#   tests/tools/mutants.sh --list              names, files and promises
#   tests/tools/mutants.sh --help
#
# Each mutant is applied alone, then the library and test targets its
# tests need are rebuilt (one build directory, reused: an incremental
# rebuild), its tests run under ctest, and the mutant is undone before the
# next.  Results:
#   caught     a test of its list failed (which ones is printed)
#   SURVIVED   every test passed: the promise is unguarded
#   ERROR      the text to change is not in the file exactly once, so the
#              mutant no longer applies (the code moved: update the table)
#   BUILD-FAILED  the mutated tree does not build (not a catch)
#   UNTESTED   its tests fail (or don't build) on the unmutated tree too
# Exit status: 0 every mutant caught; 1 otherwise; 2 bad usage.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${TW_MUTANTS_DIR:-$repo/build/mutants}
rev=HEAD
from_worktree=false
jobs=${TW_MUTANTS_JOBS:-2}
baseline=true
list_only=false
markdown=""

usage() {
  cat <<'EOF'
usage: tests/tools/mutants.sh [options] [MUTANT...]

Applies each mutant (or only those named) to a scratch copy of the tree,
rebuilds, runs the tests that guard its promise and prints which mutants
the tests caught.  Exits 0 when every mutant run was caught, 1 when one
survived, no longer applies, fails to build or has failing tests without
it, 2 on bad usage.

options:
  --rev REV       the tree to mutate: a commit (default HEAD)
  --worktree      the working tree's files instead (tracked and untracked,
                  not ignored), uncommitted changes included
  --dir DIR       scratch directory (default build/mutants, or
                  $TW_MUTANTS_DIR): DIR/tree is the copy, DIR/build the
                  build directory, reused between runs
  -j, --jobs N    parallel build and test jobs (default 2, or
                  $TW_MUTANTS_JOBS)
  --no-baseline   don't first run the selected tests on the unmutated tree
  --markdown F    also write the table to F as Markdown (for README)
  --list          print the mutants and exit
  -h, --help      this text
EOF
}

# ---- the mutants ---------------------------------------------------------
#
# mutant NAME PROMISE TESTS: TESTS is a ctest selection, "-R REGEX" or
# "-L REGEX" (a module's unit tests carry its name as a label).
# edit FILE FROM TO: FROM must occur exactly once in FILE; several edits
# make one mutant.  Texts are exact, newlines included ($'...').

declare -a names=()
declare -A promise=() tests=() edits=()
declare -a e_file=() e_from=() e_to=()

mutant() {
  names+=("$1")
  promise[$1]=$2
  tests[$1]=$3
  edits[$1]=""
}
edit() {
  local m=${names[-1]}
  e_file+=("$1")
  e_from+=("$2")
  e_to+=("$3")
  edits[$m]+="$(( ${#e_file[@]} - 1 )) "
}

mutant answer-before-commit \
  'a 2xx means stored: the writer tells a job (and the server answers) only after its batch committed' \
  '-R ^(unit/server/ingest|integration/server-crash)$'
edit src/server/ingest.c \
  $'    char received[32];\n    tw_rfc3339_format(time(NULL), received, sizeof(received));' \
  $'    for (size_t i = 0; i < n; i++) {\n        jobs[i]->committed = true;\n        jobs[i]->status = TW_PUT_STORED;\n        jobs[i]->done(jobs[i]);\n    }\n    char received[32];\n    tw_rfc3339_format(time(NULL), received, sizeof(received));'
edit src/server/ingest.c \
  $'    for (size_t i = 0; i < n; i++)\n        jobs[i]->done(jobs[i]); /* the job may be gone after this */' \
  ''
# ... and the request outlives its answer, so the late commit reads no freed memory.
edit src/server/request.c \
  $'    tw_report_free(rq->job.rep);\n    tw_buf_cleanup(&rq->body);\n    free(rq);' \
  ''

mutant sync-off \
  'survives a power loss: synchronous=FULL on every store connection, one WAL fsync per batch' \
  '-L ^store$'
edit src/store/store_sqlite.c 'PRAGMA synchronous = FULL' 'PRAGMA synchronous = OFF'

mutant sync-normal \
  'survives a power loss: NORMAL in WAL mode leaves the last commits to the next checkpoint' \
  '-L ^store$'
edit src/store/store_sqlite.c 'PRAGMA synchronous = FULL' 'PRAGMA synchronous = NORMAL'

mutant batch-1 \
  'group commit: the writer takes up to 64 queued reports per transaction' \
  '-L ^server$'
edit src/server/ingest.h '#define TW_INGEST_BATCH 64' '#define TW_INGEST_BATCH 1'

mutant above-rating-125 \
  'up to 105 % of expected is the rating; above it needs bursting, a cache or performance plus' \
  '-L ^core$'
edit src/core/verdict.h '#define TW_VERDICT_ABOVE_RATIO 1.05' '#define TW_VERDICT_ABOVE_RATIO 1.25'

mutant littles-law-qd \
  'inconclusive by Little'"'"'s law counts QD × jobs in flight' \
  '-L ^core$'
edit src/core/verdict.c 'double inflight = (double)qd * jobs;' 'double inflight = (double)qd;'

mutant vm-capped-strict \
  'vm-capped when measured reaches >= 90 % of the VM'"'"'s cap (exactly 90 % counts)' \
  '-L ^core$'
edit src/core/verdict.c \
  $'bool reached = m >= TW_VERDICT_DELIVERS_RATIO * x - 1e-9 * x;\n        v->kind = reached ? TW_VERDICT_VM_CAPPED' \
  $'bool reached = m > TW_VERDICT_DELIVERS_RATIO * x + 1e-9 * x;\n        v->kind = reached ? TW_VERDICT_VM_CAPPED'

mutant premium-operations \
  'meters: "Disk Operations" is a transaction price for Standard SSD/HDD only, never Premium' \
  '-L ^core$'
edit src/core/pricebook.c \
  $'strcmp(it->unit, "10K") == 0 &&\n            *fam != TW_SKU_PREMIUM_SSD) {' \
  'strcmp(it->unit, "10K") == 0) {'

mutant disk-prefix \
  'meters: a tier'"'"'s price is the "Disk" meter exactly, never "Disk Mount" or another near match' \
  '-L ^core$'
edit src/core/pricebook.c \
  'if (strcmp(rest, "Disk") == 0 && strcmp(it->unit, "1/Month") == 0) {' \
  'if (strncmp(rest, "Disk", 4) == 0 && strcmp(it->unit, "1/Month") == 0) {'

mutant report-id-repeat \
  'a report is stored once by its id: a repeat is answered as already stored and changes nothing' \
  '-L ^store$'
edit src/store/store_ingest.c \
  $'if (rc == SQLITE_ROW) {\n        *status = TW_PUT_REPEAT;' \
  $'if (rc == SQLITE_ROW && 0) {\n        *status = TW_PUT_REPEAT;'

mutant posted-twice \
  'a report posted twice: 201 "stored", then 200 "already stored"' \
  '-R ^integration/server-api$'
edit src/server/v1_reports.c \
  $'case TW_PUT_REPEAT:\n        tw_req_json(rq, 200,' \
  $'case TW_PUT_REPEAT:\n        tw_req_json(rq, 201,'

mutant token-compare-31 \
  'a token matches by all 32 bytes of its SHA-256' \
  '-L ^server$'
edit src/server/auth.c \
  $'for (size_t i = 0; i < 32; i++)\n        diff |=' \
  $'for (size_t i = 0; i < 31; i++)\n        diff |='

mutant token-cache-forever \
  'a revoked token is refused within 5 s by a running server (the token cache expires)' \
  '-R ^integration/server-auth$'
edit src/server/authn.c 'bool live = e->expires_ms > now;' 'bool live = e->expires_ms != 0;'

mutant hist-rank \
  'latency percentiles are nearest-rank: the bucket where the count reaches the rank' \
  '-R ^unit/bench/(hist|stat)$'
edit src/bench/hist.c 'if (seen >= rank) {' 'if (seen > rank) {'

mutant spool-bound \
  'the agent'"'"'s spool holds at most --spool-max reports; one more is refused' \
  '-R ^(unit/agent/spool|integration/agent-spool)$'
edit src/agent/spool.c 'if (n + 1 > sp->max_reports ||' 'if (n > sp->max_reports ||'

mutant tz-overlap-later \
  'a local time in the autumn overlap is the earlier of its two instants' \
  '-R ^unit/(core/tz|app/tz_diff)$'
edit src/core/tz.c 'second = true;' 'second = true, best = c;'

mutant money-half-down \
  'money rounds once, half away from zero, to the currency'"'"'s minor unit' \
  '-R ^unit/core/money$'
edit src/core/money.c 'if (r >= d - r)' 'if (r > d - r)'

mutant action-cas-any-state \
  'moving an action is a compare-and-set: two workers never both send it' \
  '-R ^unit/store/migrate$'
edit src/store/store_sqlite.h '"WHERE id = ?1 AND state = ?2")' '"WHERE id = ?1")'

mutant cursor-alias \
  'a list cursor has one spelling per value (no leading zeros, capitals, spaces)' \
  '-R ^unit/server/page$'
edit src/server/page.c "if (!s[0] || (s[0] == '0' && s[1]))" 'if (!s[0])'

mutant summary-renames-row \
  'the compliance summary never moves a named SKU'"'"'s counts into "other"' \
  '-R ^unit/service/compliance$'
edit src/service/compliance.c 'if (sum->n_skus < TW_SVC_SUMMARY_SKUS - 1) {' 'if (sum->n_skus < TW_SVC_SUMMARY_SKUS) {'

mutant body-past-row \
  'a report body past what one store row holds is refused as too large (400), never a store failure' \
  '-R ^unit/server/failures$'
edit src/store/store_ingest.c 'else if (in.body_len > body_max(s))' 'else if (in.body_len > 0x7fffffff)'

mutant worker-due-order \
  'a timed job already due runs before a job submitted after its instant' \
  '-R ^unit/server/worker$'
edit src/server/worker.c 'promote(w, now); /* timed' '(void)now; /* timed'

# ---- options ---------------------------------------------------------------

selected=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --list) list_only=true ;;
    --rev) [ $# -ge 2 ] || { echo "mutants.sh: --rev needs a commit" >&2; exit 2; }; rev=$2; shift ;;
    --worktree) from_worktree=true ;;
    --dir) [ $# -ge 2 ] || { echo "mutants.sh: --dir needs a directory" >&2; exit 2; }; work=$2; shift ;;
    -j|--jobs)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "mutants.sh: $1 needs a positive number" >&2; exit 2; }
      jobs=$2; shift ;;
    --no-baseline) baseline=false ;;
    --markdown) [ $# -ge 2 ] || { echo "mutants.sh: --markdown needs a file" >&2; exit 2; }; markdown=$2; shift ;;
    -*) echo "mutants.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      [ -n "${promise[$1]+x}" ] || { echo "mutants.sh: no mutant named $1 (see --list)" >&2; exit 2; }
      selected+=("$1") ;;
  esac
  shift
done
[ ${#selected[@]} -gt 0 ] || selected=("${names[@]}")

files_of() { # the files a mutant edits, space-separated
  local out="" i
  for i in ${edits[$1]}; do
    [[ " $out " == *" ${e_file[$i]} "* ]] || out+="${out:+ }${e_file[$i]}"
  done
  printf '%s' "$out"
}

if $list_only; then
  for m in "${names[@]}"; do
    printf '%-22s %s\n%-22s   %s; tests: %s\n' "$m" "$(files_of "$m")" "" "${promise[$m]}" "${tests[$m]}"
  done
  exit 0
fi

# ---- the scratch tree ------------------------------------------------------

tree=$work/tree
build=$work/build
stage=$(mktemp -d "${TMPDIR:-/tmp}/tw-mutants.XXXXXX")
applied=()
cleanup() {
  restore_all
  rm -rf "$stage"
}
restore_all() {
  local f
  for f in "${applied[@]}"; do
    # A fresh mtime, so that the next build recompiles the original.
    cp "$work/orig/$f" "$tree/$f" && touch "$tree/$f"
  done
  applied=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cd "$repo" || exit 2
mkdir -p "$tree" "$build" "$work/orig" "$work/log"
if $from_worktree; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar -c --null -T - -f - | tar -x -C "$stage" || { echo "mutants.sh: can't copy the working tree" >&2; exit 2; }
else
  git archive --format=tar "$rev" | tar -x -C "$stage" ||
    { echo "mutants.sh: can't export $rev" >&2; exit 2; }
fi
# Only files that differ are copied, so an unchanged tree rebuilds nothing.
(cd "$stage" && find . -type f -print0) | while IFS= read -r -d '' f; do
  if ! cmp -s "$stage/$f" "$tree/$f"; then
    mkdir -p "$(dirname "$tree/$f")"
    cp --preserve=mode "$stage/$f" "$tree/$f"
  fi
done
(cd "$tree" && find . -type f -print0) | while IFS= read -r -d '' f; do
  [ -e "$stage/$f" ] || rm -f "$tree/$f"
done
if $from_worktree; then
  echo "mutants.sh: the working tree of $repo, in $tree"
else
  echo "mutants.sh: $rev ($(git rev-parse --short "$rev")), in $tree"
fi

# A plain Debug build (no sanitizers, no -Werror): quicker, and a mutant
# that merely warns still runs.
if ! cmake -S "$tree" -B "$build" -DTW_TESTS=ON -DTW_SANITIZE=OFF -DTW_WERROR=OFF \
     -DCMAKE_BUILD_TYPE=Debug >"$work/log/configure.log" 2>&1; then
  echo "mutants.sh: cmake failed, see $work/log/configure.log" >&2
  exit 1
fi

# The ctest names a selection ("-R X" / "-L X") picks.
test_names() {
  local -
  set -f
  # shellcheck disable=SC2086  # the selection is an option and its value
  ctest --test-dir "$build" -N $1 | sed -nE 's/^ *Test +#[0-9]+: +([^ ]+).*/\1/p'
}
# The build targets those tests run.
targets_of() {
  local t out=() seen=" "
  for t in "$@"; do
    local tg=""
    case $t in
      unit/*/*) tg=${t#unit/}; tg=test_${tg%%/*}_${tg#*/} ;;
      fuzz/*) tg=replay_${t#fuzz/} ;;
      cli/*|integration/*) tg="tierwise tierwise-agent tierwise-azsim" ;;
    esac
    for x in $tg; do
      [[ $seen == *" $x "* ]] && continue
      seen+="$x "
      out+=("$x")
    done
  done
  printf '%s\n' "${out[@]}"
}
regex_of() { # an exact-name regex for ctest -R
  local IFS='|'
  printf '^(%s)$' "$*"
}
# Runs tests by name; prints the names that failed (ctest's own list).
run_tests() {
  local log=$1; shift
  ctest --test-dir "$build" -j"$jobs" --output-on-failure -R "$(regex_of "$@")" >"$log" 2>&1
  sed -n '/^The following tests FAILED:/,$p' "$log" |
    sed -nE 's/^[[:space:]]+[0-9]+ - ([^ ]+) \(.*$/\1/p' | sort -u
}
# How many tests of a run ctest skipped (exit 77).
skipped_in() {
  sed -n '/^The following tests did not run:/,/^The following tests FAILED:/p' "$1" |
    grep -c '(Skipped)'
}
build_targets() {
  local log=$1; shift
  [ $# -gt 0 ] || return 0
  cmake --build "$build" -j"$jobs" --target "$@" >"$log" 2>&1
}

# Applies edit I in the scratch tree: 0 done, 3 the text is not there
# exactly once (a message on stderr).
apply_edit() {
  local i=$1 f=${e_file[$1]}
  if [ ! -f "$tree/$f" ]; then
    echo "no such file in the tree" >&2
    return 3
  fi
  if [[ " ${applied[*]} " != *" $f "* ]]; then
    mkdir -p "$(dirname "$work/orig/$f")"
    cp "$tree/$f" "$work/orig/$f"
    applied+=("$f")
  fi
  FROM=${e_from[$i]} TO=${e_to[$i]} perl -e '
    my $f = shift; local $/;
    open my $h, "<", $f or die "$f: $!\n"; my $s = <$h>; close $h;
    my ($from, $to) = ($ENV{FROM}, $ENV{TO});
    my ($n, $at) = (0, -1);
    for (my $p = index($s, $from); $p >= 0; $p = index($s, $from, $p + 1)) { $n++; $at = $p if $at < 0 }
    if ($n != 1) { print STDERR "the text to change occurs $n times in $ARGV[0]\n"; exit 3 }
    substr($s, $at, length $from) = $to;
    open $h, ">", $f or die "$f: $!\n"; print $h $s; close $h;
  ' "$tree/$f" "$f"
}

# ---- baseline: the selected tests pass without a mutant --------------------

declare -A sel_tests=()
all_tests=()
for m in "${selected[@]}"; do
  mapfile -t ts < <(test_names "${tests[$m]}")
  sel_tests[$m]="${ts[*]}"
  for t in "${ts[@]}"; do
    [[ " ${all_tests[*]} " == *" $t "* ]] || all_tests+=("$t")
  done
done

declare -A base_failed=() base_unbuilt=()
mapfile -t all_targets < <(targets_of "${all_tests[@]}")
echo "mutants.sh: building ${#all_targets[@]} targets for ${#all_tests[@]} tests"
if ! build_targets "$work/log/baseline-build.log" "${all_targets[@]}"; then
  # Part of the unmutated tree does not build: the mutants whose tests
  # can't be built are not run; the others still are.
  echo "mutants.sh: the unmutated tree does not build all of them, see" \
       "$work/log/baseline-build.log" >&2
  all_tests=()
  for m in "${selected[@]}"; do
    read -r -a ts <<<"${sel_tests[$m]}"
    mapfile -t tg < <(targets_of "${ts[@]}")
    if ! build_targets "$work/log/$m-baseline-build.log" "${tg[@]}"; then
      base_unbuilt[$m]=1
      echo "mutants.sh: $m: its tests don't build without the mutant" >&2
      continue
    fi
    for t in "${ts[@]}"; do
      [[ " ${all_tests[*]} " == *" $t "* ]] || all_tests+=("$t")
    done
  done
fi
if $baseline && [ ${#all_tests[@]} -gt 0 ]; then
  echo "mutants.sh: baseline: ${#all_tests[@]} tests on the unmutated tree"
  while IFS= read -r t; do
    [ -n "$t" ] && base_failed[$t]=1 && echo "mutants.sh: baseline: $t fails without any mutant" >&2
  done < <(run_tests "$work/log/baseline-test.log" "${all_tests[@]}")
fi

# ---- each mutant -----------------------------------------------------------

declare -A result=() detail=() caught_by=() caught_cases=()
bad=0
for m in "${selected[@]}"; do
  start=$(date +%s)
  read -r -a ts <<<"${sel_tests[$m]}"
  r="" d=""
  if [ ${#ts[@]} -eq 0 ]; then
    r=ERROR d="no test matches ${tests[$m]}"
  elif [ -n "${base_unbuilt[$m]+x}" ]; then
    r=UNTESTED d="its tests don't build without the mutant, see $work/log/$m-baseline-build.log"
  fi
  for t in "${ts[@]}"; do
    [ -n "${base_failed[$t]+x}" ] && { r=UNTESTED d="$t fails without the mutant"; break; }
  done
  if [ -z "$r" ]; then
    for i in ${edits[$m]}; do
      # Not in a subshell: apply_edit records what it changed.
      if ! apply_edit "$i" 2>"$stage/edit.err"; then
        r=ERROR d="${e_file[$i]}: $(cat "$stage/edit.err")"
        [ -n "${d##*: }" ] || d+="the edit failed"
        break
      fi
    done
  fi
  if [ -z "$r" ]; then
    mapfile -t tg < <(targets_of "${ts[@]}")
    if ! build_targets "$work/log/$m-build.log" "${tg[@]}"; then
      r=BUILD-FAILED d="see $work/log/$m-build.log"
    else
      mapfile -t failed < <(run_tests "$work/log/$m-test.log" "${ts[@]}")
      if [ ${#failed[@]} -gt 0 ] && [ -n "${failed[0]}" ]; then
        r=caught d="${failed[*]}"
        # The cmocka cases that failed, when the tests are unit tests.
        cases=$(sed -nE 's/^\[  FAILED  \] (test_[A-Za-z0-9_]+)$/\1/p' "$work/log/$m-test.log" |
          sort -u | paste -sd' ')
        caught_by[$m]="${failed[*]}"
        caught_cases[$m]=$cases
        [ -n "$cases" ] && d+=" ($cases)"
      elif grep -qE '^100% tests passed' "$work/log/$m-test.log"; then
        r=SURVIVED d="${#ts[@]} test(s) passed"
        sk=$(skipped_in "$work/log/$m-test.log")
        [ "$sk" -gt 0 ] && d+=", $sk of them skipped"
      else
        r=ERROR d="ctest did not run, see $work/log/$m-test.log"
      fi
    fi
  fi
  restore_all
  result[$m]=$r
  detail[$m]=$d
  [ "$r" = caught ] || bad=1
  printf 'mutants.sh: %-22s %-12s %s (%ss)\n' "$m" "$r" "$d" "$(( $(date +%s) - start ))"
done

# ---- the table -------------------------------------------------------------

echo
printf '%-22s %-12s %-34s %s\n' mutant result "file(s)" "failed tests / why"
for m in "${selected[@]}"; do
  printf '%-22s %-12s %-34s %s\n' "$m" "${result[$m]}" "$(files_of "$m")" "${detail[$m]}"
done
n_caught=0
for m in "${selected[@]}"; do [ "${result[$m]}" = caught ] && n_caught=$((n_caught + 1)); done
echo "mutants.sh: $n_caught of ${#selected[@]} mutants caught"

if [ -n "$markdown" ]; then
  {
    echo "| mutant | file | promise it breaks | tests run | result |"
    echo "| --- | --- | --- | --- | --- |"
    for m in "${selected[@]}"; do
      fs=$(files_of "$m"); fs="\`${fs// /\`, \`}\`"
      res=${result[$m]}
      if [ "$res" = caught ]; then
        res="caught: \`${caught_by[$m]// /\`, \`}\`"
        c=${caught_cases[$m]}
        [ -n "$c" ] && res+=" (\`${c// /\`, \`}\`)"
      fi
      [ "$res" = SURVIVED ] && res="**survived** (${detail[$m]})"
      printf '| `%s` | %s | %s | `%s` | %s |\n' "$m" "$fs" "${promise[$m]//|/\\|}" \
        "${tests[$m]//|/\\|}" "$res"
    done
  } >"$markdown"
fi
exit $bad
