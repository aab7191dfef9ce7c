#!/usr/bin/env bash
# plan-scale.sh - the planner at scale: the fleet of savings-scale.sh
# (20,000 VMs with 100,000 disks: an OS disk and four data disks each, a
# month of nightly power-state history; its generator, run through
# savings-scale.sh --keep, which also times `tierwise savings --month
# 2026-12` per policy as the reference) planned over a year (2026-12-01 to
# 2027-12-01 in the policy's zone) by each kind of policy (a list of
# windows, each VM's schedule tag, windows learned from the history):
# `tierwise plan --totals` (every action planned, timed, keyed and
# counted; none printed) timed with its peak RSS (/usr/bin/time -v) and
# printed beside the targets (under 2 s, under 500 MiB) and beside the
# month's savings run on the same data (the ratio); then one week's
# `tierwise plan --json`, checked: its actions are the totals' for that
# week and every key is unique (exit 1 when not).  Then the issue's fleet,
# mixed policies: each VM covered by one of the three kinds (by resource
# group, a third each), planned by ONE `tierwise plan --policy A --policy
# B --policy C --totals` (one read of the database for the three), with
# the three plans run one by one and their times summed beside it as the
# reference (and their actions and disks checked equal to the one run's).
# Exit 1 when a target is missed (a kind's or the mixed fleet's worst run
# over 2 s or 500 MiB), a run fails or a check does not hold.
#
#   tests/perf/plan-scale.sh [--vms N] [--runs N] [--keep DIR] [--cli FILE]
#
# --runs: runs per policy (the best and the worst are printed; default 3);
# --keep DIR: leave the database and the outputs there; --cli FILE: time
# that tierwise instead of building one.  A Release build in
# build/perf-plan.  Needs cmake, python3 and /usr/bin/time.  No network.
set -u
cd "$(dirname "$0")/../.." || exit 2
src=$PWD
vms=20000
runs=3
keep=""
cli=""
while [ $# -gt 0 ]; do
  case $1 in
    --vms) vms=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "plan-scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for t in cmake python3 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "plan-scale.sh: needs $t" >&2; exit 2; }
done
export TIERWISE_LOOPBACK_ONLY=1
if [ -n "$keep" ]; then out=$keep; mkdir -p "$out"; else out=$(mktemp -d "${TMPDIR:-/tmp}/tw-plan-scale-XXXXXX"); fi
cleanup() { [ -n "$keep" ] || rm -rf "$out"; }
trap cleanup EXIT

if [ -z "$cli" ]; then
  echo "building (Release) ..." >&2
  bd="$src/build/perf-plan"
  cmake -S "$src" -B "$bd" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >"$out/cmake.log" 2>&1 &&
    cmake --build "$bd" -j2 --target tierwise >>"$out/cmake.log" 2>&1 ||
    { echo "plan-scale.sh: the build failed:" >&2; tail -20 "$out/cmake.log" >&2; exit 1; }
  cli="$bd/src/tierwise"
fi
[ -x "$cli" ] || { echo "plan-scale.sh: $cli is not a program" >&2; exit 2; }

# The fleet, its policies and the month's savings runs (the reference).
"$src/tests/perf/savings-scale.sh" --vms "$vms" --runs "$runs" --keep "$out/fleet" --cli "$cli" \
  >"$out/savings.txt" 2>"$out/savings.err" ||
  { echo "plan-scale.sh: savings-scale.sh failed: $(tail -5 "$out/savings.err")" >&2; exit 1; }
db="$out/fleet/fleet.db"

secs() { # a /usr/bin/time -v file: its wall clock in seconds
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); t = 0; for (i = 1; i <= n; i++) t = t * 60 + a[i]; print t}' "$1"
}

printf '\nfleet: %s VMs; a year (2026-12-01 to 2027-12-01); targets: under 2 s, under 500 MiB (2 cores)\n' "$vms"
printf '%-9s %9s %9s %7s %8s %8s %9s %7s %8s %9s  %s\n' policy actions skipped disks best_s worst_s \
  peak_MiB "s/2s" "MiB/500" "x savings" "year's saving"
status=0
for p in list tag observed; do
  best="" worst="" peak=0
  for r in $(seq "$runs"); do
    /usr/bin/time -v "$cli" plan --db "$db" --policy "$out/fleet/$p.json" --from 2026-12-01 \
      --to 2027-12-01 --currency USD --totals >"$out/$p.year" 2>"$out/$p.time"
    st=$?
    if [ $st != 0 ]; then
      echo "plan-scale.sh: $p: exit $st: $(grep -v '^\s' "$out/$p.time" | head -3)" >&2
      status=1
      continue 2
    fi
    s=$(secs "$out/$p.time")
    kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/$p.time")
    [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN {exit !(a < b)}' && best=$s
    [ -z "$worst" ] || awk -v a="$s" -v b="$worst" 'BEGIN {exit !(a > b)}' && worst=$s
    [ "$kib" -gt "$peak" ] && peak=$kib
  done
  awk -v w="$worst" 'BEGIN {exit !(w < 2)}' || { echo "plan-scale.sh: $p: $worst s, not under 2 s" >&2; status=1; }
  # "... N actions (D downgrades, U upgrades) on K disks; W windows skipped ...; expected saving S C"
  read -r actions disks skipped saving < <(sed -E 's/.*: ([0-9]+) actions? .* on ([0-9]+) disks?; ([0-9]+) windows? skipped.*expected saving ([^ ]+ [A-Z]+)$/\1 \2 \3 \4/' "$out/$p.year")
  ref=$(awk -v p="$p" '$1 == p {print $4}' "$out/savings.txt")
  awk -v p="$p" -v a="$actions" -v sk="$skipped" -v d="$disks" -v b="$best" -v w="$worst" -v k="$peak" \
      -v r="$ref" -v s="$saving" 'BEGIN {
    printf "%-9s %9d %9d %7d %8.3f %8.3f %9.1f %7.2f %8.2f %9s  %s\n", p, a, sk, d, b, w, k / 1024,
      w / 2, k / 1024 / 500, (r > 0 ? sprintf("%.1f", b / r) : "-"), s }'
  # One week as JSON: its actions are the week's totals, each key once.
  "$cli" plan --db "$db" --policy "$out/fleet/$p.json" --from 2026-12-07 --to 2026-12-14 \
    --currency USD --json >"$out/$p.week.json" 2>"$out/$p.week.err" ||
    { echo "plan-scale.sh: $p: the week's JSON failed: $(cat "$out/$p.week.err")" >&2; status=1; continue; }
  verdict=$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
a = doc["actions"]
keys = set(x["idempotency_key"] for x in a)
t = doc["totals"]
ok = len(a) == t["actions"] and len(keys) == len(a) and t["downgrades"] + t["upgrades"] == len(a)
print("ok" if ok else "actions-%d-totals-%d-keys-%d" % (len(a), t["actions"], len(keys)))' "$out/$p.week.json")
  [ "$verdict" = ok ] || { echo "plan-scale.sh: $p: the week's document: $verdict" >&2; status=1; }
done
# The issue's fleet: mixed policies, each VM covered by one of the three
# kinds (its resource group, rg-000..rg-199, says which: a third each):
# one run of the three policies against the targets, and (the reference)
# the three plans run one after the other, their times summed and their
# peaks' largest taken.
mixed() { # NAME KIND FIRST LAST: the policy KIND restricted to rg-FIRST..rg-LAST
  python3 - "$out/fleet/$2.json" "$out/mixed-$1.json" "$1" "$3" "$4" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = "mixed-" + sys.argv[3]
p["match"]["resource_groups"] = ["rg-%03d" % i for i in range(int(sys.argv[4]), int(sys.argv[5]) + 1)]
json.dump(p, open(sys.argv[2], "w"))
PY
}
mixed list list 0 66 && mixed tag tag 67 133 && mixed observed observed 134 199 ||
  { echo "plan-scale.sh: writing the mixed policies failed" >&2; exit 1; }
obest="" oworst="" opeak=0 oactions=0 odisks=0
for r in $(seq "$runs"); do
  /usr/bin/time -v "$cli" plan --db "$db" --policy "$out/mixed-list.json" \
    --policy "$out/mixed-tag.json" --policy "$out/mixed-observed.json" --from 2026-12-01 \
    --to 2027-12-01 --currency USD --totals >"$out/mixed-one.year" 2>"$out/mixed-one.time" ||
    { echo "plan-scale.sh: mixed (one run): $(grep -v '^\s' "$out/mixed-one.time" | head -3)" >&2; exit 1; }
  s=$(secs "$out/mixed-one.time")
  kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/mixed-one.time")
  [ "$kib" -gt "$opeak" ] && opeak=$kib
  [ -z "$obest" ] || awk -v a="$s" -v b="$obest" 'BEGIN {exit !(a < b)}' && obest=$s
  [ -z "$oworst" ] || awk -v a="$s" -v b="$oworst" 'BEGIN {exit !(a > b)}' && oworst=$s
  # "together (3 policies): N actions (...) on K disks (a disk counted once per policy); ..."
  read -r oactions odisks < <(sed -nE 's/^together .*: ([0-9]+) actions? .* on ([0-9]+) disks? .*/\1 \2/p' "$out/mixed-one.year")
done
mbest="" mworst="" mpeak=0 mactions=0 mdisks=0
for r in $(seq "$runs"); do
  total=0 ra=0 rd=0
  for p in list tag observed; do
    /usr/bin/time -v "$cli" plan --db "$db" --policy "$out/mixed-$p.json" --from 2026-12-01 \
      --to 2027-12-01 --currency USD --totals >"$out/mixed-$p.year" 2>"$out/mixed-$p.time" ||
      { echo "plan-scale.sh: mixed $p: $(grep -v '^\s' "$out/mixed-$p.time" | head -3)" >&2; exit 1; }
    s=$(secs "$out/mixed-$p.time")
    kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/mixed-$p.time")
    [ "$kib" -gt "$mpeak" ] && mpeak=$kib
    total=$(awk -v a="$total" -v b="$s" 'BEGIN {print a + b}')
    read -r a d < <(sed -E 's/.*: ([0-9]+) actions? .* on ([0-9]+) disks?;.*/\1 \2/' "$out/mixed-$p.year")
    ra=$((ra + a)); rd=$((rd + d))
  done
  mactions=$ra mdisks=$rd
  [ -z "$mbest" ] || awk -v a="$total" -v b="$mbest" 'BEGIN {exit !(a < b)}' && mbest=$total
  [ -z "$mworst" ] || awk -v a="$total" -v b="$mworst" 'BEGIN {exit !(a > b)}' && mworst=$total
done
printf '\nmixed policies (a third of the VMs each: list, tag, observed): one run of the three, and the three plans run alone, summed (the reference):\n'
printf '%-9s %9s %7s %8s %8s %9s %7s %8s\n' fleet actions disks best_s worst_s peak_MiB "s/2s" "MiB/500"
awk -v a="$oactions" -v d="$odisks" -v b="$obest" -v w="$oworst" -v k="$opeak" 'BEGIN {
  printf "%-9s %9d %7d %8.3f %8.3f %9.1f %7.2f %8.2f\n", "mixed", a, d, b, w, k / 1024, w / 2, k / 1024 / 500 }'
awk -v a="$mactions" -v d="$mdisks" -v b="$mbest" -v w="$mworst" -v k="$mpeak" 'BEGIN {
  printf "%-9s %9d %7d %8.3f %8.3f %9.1f %7.2f %8.2f\n", "summed", a, d, b, w, k / 1024, w / 2, k / 1024 / 500 }'
[ "$oactions" = "$mactions" ] && [ "$odisks" = "$mdisks" ] ||
  { echo "plan-scale.sh: mixed: one run planned $oactions actions on $odisks disks, the three alone $mactions on $mdisks" >&2; status=1; }
# The targets (2 s, 500 MiB): the worst run of each kind and of the mixed fleet.
for f in "$out"/list.time "$out"/tag.time "$out"/observed.time; do
  [ -e "$f" ] || continue
  kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$f")
  [ "$kib" -le $((500 * 1024)) ] || { echo "plan-scale.sh: $(basename "$f" .time): peak $((kib / 1024)) MiB, over 500 MiB" >&2; status=1; }
done
awk -v w="$oworst" 'BEGIN {exit !(w < 2)}' || { echo "plan-scale.sh: mixed: $oworst s, not under 2 s" >&2; status=1; }
[ "$opeak" -le $((500 * 1024)) ] || { echo "plan-scale.sh: mixed: peak $((opeak / 1024)) MiB, over 500 MiB" >&2; status=1; }

printf '\nthe month'"'"'s savings runs on the same data (the reference):\n'
sed -n '/^policy/,$p' "$out/savings.txt"
exit $status
