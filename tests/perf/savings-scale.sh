#!/usr/bin/env bash
# savings-scale.sh - the fleet's savings opportunities at scale: 20,000 VMs
# with 100,000 disks (an OS disk and four data disks each: Premium SSD P10,
# P15, P20, P30 and Standard SSD, in four regions and 200 resource groups of
# 10 subscriptions) and a month of power-state history before the month
# (each VM deallocated every night, about 60 transitions), in a database
# built here (the schema by tierwise, the rows by tests/perf/fleet-gen.py
# with python3's sqlite3, the bundled price snapshot imported); then
# `tierwise savings --db --policy --month 2026-12 --json` once per kind of
# policy (a list of windows, each VM's schedule tag, windows learned from
# the history), each timed with its peak RSS (/usr/bin/time -v), printed
# against the targets (under 1 s, under 300 MiB) as ratios; and each
# document checked: the fleet's hours and exact saving are the sums of its
# disks' (exit 1 when not).
#
#   tests/perf/savings-scale.sh [--vms N] [--runs N] [--keep DIR] [--cli FILE]
#
# --runs: runs per policy (the best and the worst are printed; default 3);
# --keep DIR: leave the database and the outputs there; --cli FILE: time
# that tierwise instead of building one.  A Release build in
# build/perf-savings.  Needs cmake, python3 and /usr/bin/time.  No network.
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
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "savings-scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for t in cmake python3 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "savings-scale.sh: needs $t" >&2; exit 2; }
done
export TIERWISE_LOOPBACK_ONLY=1
if [ -n "$keep" ]; then out=$keep; mkdir -p "$out"; else out=$(mktemp -d "${TMPDIR:-/tmp}/tw-savings-scale-XXXXXX"); fi
cleanup() { [ -n "$keep" ] || rm -rf "$out"; }
trap cleanup EXIT

if [ -z "$cli" ]; then
  echo "building (Release) ..." >&2
  bd="$src/build/perf-savings"
  cmake -S "$src" -B "$bd" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >"$out/cmake.log" 2>&1 &&
    cmake --build "$bd" -j2 --target tierwise >>"$out/cmake.log" 2>&1 ||
    { echo "savings-scale.sh: the build failed:" >&2; tail -20 "$out/cmake.log" >&2; exit 1; }
  cli="$bd/src/tierwise"
fi
[ -x "$cli" ] || { echo "savings-scale.sh: $cli is not a program" >&2; exit 2; }

db="$out/fleet.db"
rm -f "$db"
"$cli" prices import --db "$db" "$src/pricing/azure-disk-prices.json" >"$out/import.log" 2>&1 ||
  { echo "savings-scale.sh: importing the snapshot failed: $(cat "$out/import.log")" >&2; exit 1; }
echo "generating $vms VMs ..." >&2
gen_start=$(date +%s.%N)
python3 "$src/tests/perf/fleet-gen.py" "$db" "$vms" --month 2026-12 ||
  { echo "savings-scale.sh: the generator failed" >&2; exit 1; }
gen_end=$(date +%s.%N)

policy() { # NAME WINDOWS
  cat >"$out/$1.json" <<EOF
{ "schema_version": "tierwise.policy/1", "name": "$1",
  "match": { "skus": ["Premium_LRS"] }, "target": "StandardSSD_LRS",
  "windows": $2, "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 10, "before_start_minutes": 30 },
  "min_saving": "0.01", "quota": { "changes": 2, "hours": 24 }, "os_disks": false }
EOF
}
policy list '["Fri 20:00-Mon 06:00", "Mon 20:00-Tue 06:00"]'
policy tag '"tag:schedule"'
policy observed '"observed"'

printf '\nfleet: %s VMs, generated in %.1f s; targets: under 1 s, under 300 MiB (2 cores)\n' \
  "$vms" "$(awk -v a="$gen_start" -v b="$gen_end" 'BEGIN {print b - a}')"
printf '%-9s %8s %8s %8s %10s %10s %9s %9s  %s\n' policy disks excluded best_s worst_s peak_MiB \
  "s/1s" "MiB/300" "fleet saving"
status=0
for p in list tag observed; do
  best="" worst="" peak=0
  for r in $(seq "$runs"); do
    /usr/bin/time -v "$cli" savings --db "$db" --policy "$out/$p.json" --month 2026-12 \
      --currency USD --json >"$out/$p.out" 2>"$out/$p.time"
    st=$?
    if [ $st != 0 ]; then
      echo "savings-scale.sh: $p: exit $st: $(grep -v '^\s' "$out/$p.time" | head -3)" >&2
      status=1
      continue 2
    fi
    s=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); t = 0; for (i = 1; i <= n; i++) t = t * 60 + a[i]; print t}' "$out/$p.time")
    kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/$p.time")
    [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN {exit !(a < b)}' && best=$s
    [ -z "$worst" ] || awk -v a="$s" -v b="$worst" 'BEGIN {exit !(a > b)}' && worst=$s
    [ "$kib" -gt "$peak" ] && peak=$kib
  done
  read -r disks excluded saving sums < <(python3 -c '
import json, sys
from decimal import Decimal
doc = json.load(open(sys.argv[1]))
d = doc["totals"]["fleet"]
h = sum(Decimal(x["hours"]) for x in doc["disks"])
s = sum(Decimal(x["saving_unrounded"]) for x in doc["disks"])
# Hours are rounded to micro-hours each: the sum may differ by the
# rounding of each disk, no more.
okh = abs(h - Decimal(d["hours"])) <= Decimal("0.000001") * max(1, len(doc["disks"]))
oks = abs(s - Decimal(d["saving_unrounded"])) <= Decimal("1e-12") * max(1, len(doc["disks"]))
print(d["disks"], d["excluded"], d["saving"], "ok" if okh and oks else
      "fleet-hours-%s-disks-%s-saving-%s-disks-%s" % (d["hours"], h, d["saving_unrounded"], s))' "$out/$p.out")
  if [ "$sums" != ok ]; then
    echo "savings-scale.sh: $p: the fleet's totals are not the sums of its disks': $sums" >&2
    status=1
  fi
  awk -v p="$p" -v d="$disks" -v e="$excluded" -v b="$best" -v w="$worst" -v k="$peak" -v s="$saving" 'BEGIN {
    printf "%-9s %8d %8d %8.3f %10.3f %10.1f %9.2f %9.2f  %s USD\n", p, d, e, b, w, k / 1024, w / 1, k / 1024 / 300, s }'
done
exit $status
