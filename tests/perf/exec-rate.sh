#!/usr/bin/env bash
# exec-rate.sh - the executor's rate against the simulator: VMS deallocated
# VMs with DISKS Premium data disks each, every disk downgraded by one
# `tierwise apply --execute --parallel 4` tick of a weekend policy (Friday
# 20:15 by libfaketime); three runs, each over a fresh simulator and
# database:
#
#   off      no limits in the simulator, the client's pacing off (--no-pacing):
#            how fast the executor itself goes
#   paced    the simulator at ARM's limits (--arm-limits 25,10,1,4: 25 reads
#            and 10 writes a second per region, 4 starts/deallocates per VM a
#            minute) and the client's pacing on (the default)
#   unpaced  the same limits, pacing off: what the pacing saves (429s)
#
# Printed side by side: actions done, seconds, actions per second, the
# simulator's requests and 429s.  The paced run must have no 429 (exit 1
# otherwise).  A Release build in build/perf-exec unless --cli/--azsim.
#
#   tests/perf/exec-rate.sh [--vms N] [--disks N] [--cli FILE] [--azsim FILE]
#
# Needs cmake, jq, curl and faketime (libfaketime).  No network beyond
# 127.0.0.1.
set -u
cd "$(dirname "$0")/../.." || exit 2
src=$PWD
vms=10
disks=4
cli=""
azsim=""
while [ $# -gt 0 ]; do
  case $1 in
    --vms) vms=$2; shift 2 ;;
    --disks) disks=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    --azsim) azsim=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "exec-rate.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for t in cmake jq curl; do
  command -v "$t" >/dev/null || { echo "exec-rate.sh: needs $t" >&2; exit 2; }
done
if [ -z "$cli" ] || [ -z "$azsim" ]; then
  cmake -S "$src" -B "$src/build/perf-exec" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >/dev/null &&
    cmake --build "$src/build/perf-exec" -j2 --target tierwise tierwise-azsim >/dev/null ||
    { echo "exec-rate.sh: the build failed" >&2; exit 1; }
  cli=${cli:-$src/build/perf-exec/src/tierwise}
  azsim=${azsim:-$src/build/perf-exec/src/tierwise-azsim}
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-exec-rate-XXXXXX")
export TW_AZSIM=$azsim TW_CLI=$cli TW_SOURCE_DIR=$src
. "$src/tests/helpers/testlib.sh"
. "$src/tests/tools/switch-lib.sh"
need_faketime
trap 'stop_sim; rm -rf "$scratch"' EXIT
weekend_policy

# The fleet: VMS VMs app-000 ... of DISKS data disks each.
scenario() {
  jq -n --argjson vms "$vms" --argjson disks "$disks" --arg sub "$sub" '
    {schema: "tierwise.azsim-scenario/1",
     settings: {operation_delay_ms: 200, retry_after_s: 0, sku_changes_per_day: 2},
     self: "app-000",
     vms: [range($vms) as $i | ("app-" + ($i | tostring | ("000" + .)[-3:])) as $n |
       {subscription_id: $sub, resource_group: "rg-dev", name: $n, vm_size: "Standard_D2s_v3",
        location: "eastus", power_state: "deallocated",
        disks: ([{name: ($n + "-os"), role: "os", sku: "Premium_LRS", size_gib: 30}] +
                [range($disks) as $d | {name: ($n + "-data" + ($d | tostring)), role: "data",
                 lun: $d, sku: "Premium_LRS", size_gib: 128}])}]}' >"$scratch/scenario.json"
}

# run NAME SIM_ARGS APPLY_ARGS: one run; its figures on a line.
run() {
  local name=$1 sim_args=$2 apply_args=$3
  scenario
  # shellcheck disable=SC2086
  start_sim $sim_args
  fresh_db
  sim DELETE /_sim/counters >/dev/null
  local t0 t1 out
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  out=$(faked '2026-12-04 20:15:00' "$cli" apply --db "$db" --policy "$scratch/policy.json" \
    --currency USD --poll-ms 100 --parallel 4 --execute --json \
    --arm-url "http://127.0.0.1:$sim_port" --imds-url "http://127.0.0.1:$sim_port" $apply_args)
  t1=$(date +%s.%N)
  local done_n secs c
  done_n=$(jq '.summary.done' <<<"$out")
  secs=$(echo "$t1 - $t0" | bc -l 2>/dev/null || python3 -c "print($t1 - $t0)")
  c=$(sim GET /_sim/counters)
  printf '%-8s %8s %9.2f %10.2f %9s %6s\n' "$name" "$done_n" "$secs" \
    "$(echo "$done_n / $secs" | bc -l 2>/dev/null || python3 -c "print($done_n / $secs)")" \
    "$(jq .requests <<<"$c")" "$(jq .throttled <<<"$c")"
  eval "throttled_$name=$(jq .throttled <<<"$c")"
  stop_sim
}

echo "exec-rate: $vms VMs x $disks data disks = $((vms * disks)) downgrades, --parallel 4"
printf '%-8s %8s %9s %10s %9s %6s\n' run actions seconds actions/s requests 429s
run off "--arm-limits off" "--no-pacing"
run paced "--arm-limits 25,10,1,4" ""
run unpaced "--arm-limits 25,10,1,4" "--no-pacing"
status=0
if [ "${throttled_paced:-1}" != 0 ]; then
  echo "exec-rate: FAIL: the paced run got $throttled_paced 429s from a simulator at ARM's limits"
  status=1
fi
exit $status
