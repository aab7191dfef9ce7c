#!/usr/bin/env bash
# demo-month.sh - a month of simulated tier switches in a tierwise database,
# for the demo (deploy/demo.sh) and the browser tests (tests/web/run-web.sh).
#
#   deploy/demo-month.sh --db FILE --work DIR [--month YYYY-MM]
#                        [--cli PATH] [--azsim PATH]
#                        [--server URL --agent-token FILE]
#
# Against its own simulated Azure (tierwise-azsim on 127.0.0.1, started here
# under libfaketime at the month's start and stopped at the end), with the
# policy deploy/demo-policies/weekend-downgrade.json (Premium SSD data disks
# of VMs tagged tierwise=weekend-downgrade to Standard SSD, Fri 20:00 - Mon
# 06:00 Europe/Amsterdam):
#
#  - the fleet of deploy/demo-month-scenario.json: five VMs in two resource
#    groups and two regions (P10, P20 and P30 data disks, one E10, an OS disk
#    each); db-01 carries no tag, so no policy covers it;
#  - the bundled snapshot's USD price books (pricing/azure-disk-prices.json,
#    its USD items, imported under the name "pricing/azure-disk-prices.json
#    (USD)", which the report gives as their source) and the fleet synced an
#    hour before the month starts, so the books price the whole month;
#  - every weekend of the month (a Friday whose Monday is in the month): at
#    Friday 20:00 `tierwise vm stop --policy --execute` for each tagged VM
#    (deallocated, Premium data disks downgraded and verified), at Monday
#    06:00 `tierwise vm start --execute` (restored, verified, started); each
#    command under libfaketime at that instant, the simulator's clock moved
#    there first;
#  - the drift: the month's second weekend, app-02 is started "in the portal"
#    at Monday 06:01 (a minute after the other VMs' restores) while its disk
#    is still on Standard SSD (a sync at 06:01:00 records it running,
#    `tierwise drift` shows it), and deallocated at 18:01:00 (a sync records
#    it), then restored and started at 18:02: exactly 12 hours of drift;
#  - agent reports of three disks on the month's second Wednesday: web-02's
#    P20 delivers, app-01's P30 under-delivers, db-01's P30 delivers (posted
#    to --server with --agent-token, or to a short-lived `tierwise serve` on
#    the database started here on a loopback port).
#
# --month: the month to fill (default the previous month of the system
# clock's date, UTC).  DIR receives the scenario, the logs and month.json:
# {"month", "from", "to", "policy", "subscription", "weekends": [...],
#  "drift": {"vm", "disk", "from", "to"}, "reports": [...]}.  Tools: jq,
# curl and libfaketime (deploy/setup.sh installs faketime).  Exit status: 0
# done, 1 a step failed (its output is in DIR/month.log), 2 bad usage, 77 a
# tool is missing.  Deterministic but for the seconds each command takes.
# SIGTERM or SIGINT stops the step running (its command killed and waited
# for), the simulator and any server started here.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")

# usage [STATUS]: the synopsis (and, for --help, the whole header) on
# stdout with status 0, else on stderr with status 2
usage() {
  if [ "${1:-2}" = 0 ]; then sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0; fi
  sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2
}
db="" work="" month="" server="" agent_tok=""
cli=${TW_CLI:-} azsim=${TW_AZSIM:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --month) month=${2:?}; shift 2 ;;
    --cli) cli=${2:?}; shift 2 ;;
    --azsim) azsim=${2:?}; shift 2 ;;
    --server) server=${2:?}; shift 2 ;;
    --agent-token) agent_tok=${2:?}; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "demo-month.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$db" ] && [ -n "$work" ] || { echo "demo-month.sh: --db and --work are required" >&2; usage; }
[ -n "$cli" ] && [ -x "$cli" ] || { echo "demo-month.sh: --cli (or TW_CLI): the tierwise binary" >&2; exit 2; }
[ -n "$azsim" ] && [ -x "$azsim" ] || { echo "demo-month.sh: --azsim (or TW_AZSIM): tierwise-azsim" >&2; exit 2; }
if [ -n "$server" ] && [ ! -r "$agent_tok" ]; then
  echo "demo-month.sh: --server needs --agent-token FILE (an agent token)" >&2; exit 2
fi
for t in jq curl; do
  command -v "$t" >/dev/null || { echo "demo-month.sh: $t is not installed (deploy/setup.sh)"; exit 77; }
done
faketime_lib=""
for d in /usr/lib/x86_64-linux-gnu/faketime /usr/lib/aarch64-linux-gnu/faketime /usr/lib/faketime; do
  [ -e "$d/libfaketimeMT.so.1" ] && { faketime_lib="$d/libfaketimeMT.so.1"; break; }
done
[ -n "$faketime_lib" ] || { echo "demo-month.sh: libfaketime is not installed (deploy/setup.sh installs faketime)"; exit 77; }

# Absolute paths: the prices are imported from the work folder.
abs() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
db=$(abs "$db") work=$(abs "$work") cli=$(abs "$cli") azsim=$(abs "$azsim")
[ -z "$agent_tok" ] || agent_tok=$(abs "$agent_tok")
if [ -z "$month" ]; then
  month=$(date -u -d "$(date -u +%Y-%m-01) -1 month" +%Y-%m)
fi
[[ "$month" =~ ^[0-9]{4}-(0[1-9]|1[0-2])$ ]] ||
  { echo "demo-month.sh: --month $month: give YYYY-MM (e.g. 2026-11)" >&2; exit 2; }
first="$month-01"
next=$(date -u -d "$first +1 month" +%F)
now=$(date -u +%s)
[ "$(date -u -d "$next" +%s)" -le "$now" ] ||
  { echo "demo-month.sh: --month $month has not ended yet (the clock says $(date -u +%F)); give a past month" >&2; exit 2; }

mkdir -p "$work"
log="$work/month.log"
: >"$log"
policy="$src/deploy/demo-policies/weekend-downgrade.json"
zone=$(jq -r .timezone "$policy")
sub=$(jq -r '.vms[0].subscription_id' "$src/deploy/demo-month-scenario.json")
export TIERWISE_LOOPBACK_ONLY=1
# libfaketime is preloaded ahead of a sanitizer's runtime: let it be.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

fail() { echo "demo-month.sh: $*" >&2; echo "demo-month.sh: the steps' output is in $log" >&2; exit 1; }
# epoch of "YYYY-MM-DD hh:mm" in the policy's zone
local_at() { date -u -d "TZ=\"$zone\" $1" +%s; }
iso() { date -u -d "@$1" +%FT%TZ; }
# faked_env EPOCH: FAKED, the env(1) command line that runs a command with
# the system clock at EPOCH and running on; faked EPOCH CMD...: CMD so, in
# the foreground.  In the background, `"${FAKED[@]}" CMD &` (env execs CMD,
# so $! is CMD's pid; a function's would be a subshell's).
faked_env() {
  FAKED=(env "LD_PRELOAD=$faketime_lib${LD_PRELOAD:+:$LD_PRELOAD}"
         "FAKETIME=@$(date -u -d "@$1" '+%Y-%m-%d %H:%M:%S')" FAKETIME_DONT_RESET=1 TZ=UTC)
}
faked() {
  faked_env "$1"; shift
  "${FAKED[@]}" "$@"
}
sim_pid="" srv_pid="" step_pid="" drift_pid=""
cleanup() {
  local p
  for p in "$step_pid" "$drift_pid" "$srv_pid" "$sim_pid"; do
    if [ -n "$p" ]; then kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; fi
  done
  return 0
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

start0=$(( $(date -u -d "$first" +%s) - 3600 ))

# The simulator, its clock at the month's start (and moved on from there).
rm -f "$work/sim.port"
faked_env "$start0"
"${FAKED[@]}" "$azsim" --scenario "$src/deploy/demo-month-scenario.json" \
  --port-file "$work/sim.port" >/dev/null 2>"$work/azsim.err" &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/sim.port" ] && break; sleep 0.1; done
[ -s "$work/sim.port" ] || fail "the simulator did not start: $(cat "$work/azsim.err")"
sim_url="http://127.0.0.1:$(cat "$work/sim.port")"
ARM=(--arm-url "$sim_url" --imds-url "$sim_url" --login-url "$sim_url")
sim() { # sim METHOD PATH [BODY]
  curl -s --noproxy '*' --max-time 30 -X "$1" ${3:+-H 'Content-Type: application/json' -d "$3"} "$sim_url$2"
}
# sim_to EPOCH: the simulator's clock moved forward to EPOCH (never back)
sim_to() {
  local cur
  cur=$(date -u -d "$(sim POST /_sim/clock '{"advance_s": 0}' | jq -r .now)" +%s)
  [ "$1" -gt "$cur" ] && sim POST /_sim/clock "{\"advance_s\": $(( $1 - cur ))}" >/dev/null
  return 0
}
# step EPOCH WHAT CMD...: CMD at EPOCH (the simulator there too), logged
# (step EPOCH WHAT expect_status N CMD...: CMD must exit N)
step() {
  local t=$1 what=$2 want=0 st=0; shift 2
  [ "$1" = expect_status ] && { want=$2; shift 2; }
  sim_to "$t"
  printf '\n## %s %s: %s\n' "$(iso "$t")" "$what" "$*" >>"$log"
  # in the background and waited for, so a TERM's trap runs at once and
  # cleanup stops the command too
  faked_env "$t"
  "${FAKED[@]}" "$@" >>"$log" 2>&1 </dev/null &
  step_pid=$!
  wait "$step_pid" || st=$?
  step_pid=""
  [ "$st" = "$want" ] || fail "$what at $(iso "$t") exited $st (not $want): $*"
}

# Prices and the fleet, an hour before the month.
# imported by a name relative to the work folder, which is the books' source
# in the report: "snapshot pricing/azure-disk-prices.json (USD)"
usd_book="pricing/azure-disk-prices.json (USD)"
mkdir -p "$work/pricing"
jq '.Items |= map(select(.currencyCode == "USD"))' "$src/pricing/azure-disk-prices.json" \
  >"$work/$usd_book"
step "$start0" "prices import" env -C "$work" "$cli" prices import --db "$db" "$usd_book"
step "$start0" "sync" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}"

tagged=$(jq -r '.vms[] | select(.tags.tierwise == "weekend-downgrade") | .name' \
  "$src/deploy/demo-month-scenario.json")
drift_vm=app-02 fail_vm=web-02
# drift_job EPOCH LINE: the backend's drift job, which records drift in the
# database (tierwise drift only shows it), once at EPOCH: tierwise serve
# --policies with it, until its log has LINE
drift_job() {
  local t=$1 want=$2
  rm -f "$work/drift.port"
  printf '\n## %s the drift job: tierwise serve --policies --drift-interval 1s\n' "$(iso "$t")" >>"$log"
  faked_env "$t"
  "${FAKED[@]}" "$cli" serve --db "$db" --listen 127.0.0.1:0 --port-file "$work/drift.port" \
    --policies "$src/deploy/demo-policies" --drift-interval 1s >/dev/null 2>"$work/drift-job.err" &
  drift_pid=$!
  for _ in $(seq 150); do
    grep -qF "$want" "$work/drift-job.err" && break
    kill -0 "$drift_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -TERM "$drift_pid" 2>/dev/null; wait "$drift_pid" 2>/dev/null || true
  drift_pid=""
  cat "$work/drift-job.err" >>"$log"
  grep -qF "$want" "$work/drift-job.err" || fail "the drift job did not log \"$want\""
}
weekends=()
last=$(( $(date -u -d "$next" +%s) ))
n=0
for day in $(seq 0 30); do
  d=$(date -u -d "$first +$day days" +%F)
  [[ "$d" == "$month"-* ]] || break
  [ "$(date -u -d "$d" +%u)" = 5 ] || continue
  mon=$(date -u -d "$d +3 days" +%F)
  fri_t=$(local_at "$d 20:00") mon_t=$(local_at "$mon 06:00")
  [ "$mon_t" -lt "$last" ] || continue
  n=$((n + 1))
  weekends+=("$(iso "$fri_t") $(iso "$mon_t")")
  for vm in $tagged; do
    if [ "$n" = 3 ] && [ "$vm" = "$fail_vm" ]; then
      # ARM fails the disk's update: the downgrade fails (vm stop exits 1),
      # the VM stays deallocated on Premium; Monday's restore has nothing to do
      sim POST /_sim/faults "{\"kind\": \"fail-operation\", \"method\": \"PATCH\", \"path\": \"/subscriptions/$sub/resourceGroups/rg-web/providers/Microsoft.Compute/disks/$vm-data0\"}" >/dev/null
      step "$fri_t" "vm stop $vm (its PATCH fails)" expect_status 1 "$cli" vm stop --db "$db" --vm "$vm" \
        --policy "$policy" --execute --poll-ms 50 "${ARM[@]}"
      sim DELETE /_sim/faults >/dev/null
      continue
    fi
    step "$fri_t" "vm stop $vm" "$cli" vm stop --db "$db" --vm "$vm" --policy "$policy" \
      --execute --poll-ms 50 "${ARM[@]}"
  done
  for vm in $tagged; do
    if [ "$n" = 2 ] && [ "$vm" = "$drift_vm" ]; then
      # Started in the portal on its Standard SSD disk at 06:01: the sync
      # sees it run.  (a minute after the other VMs' restores at 06:00, which
      # a sync of the same second would see again)
      drift_from=$((mon_t + 60))
      sim_to "$drift_from"
      sim POST /_sim/power "{\"vm\": \"$vm\", \"state\": \"running\"}" >/dev/null
      step "$drift_from" "sync (app-02 runs)" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}"
      step $((mon_t + 300)) "drift" "$cli" drift --db "$db" --policy "$policy"
      drift_job $((mon_t + 300)) "drift started: VM $vm disk $vm-data0"
      faked $((mon_t + 300)) "$cli" drift --db "$db" --policy "$policy" --json >"$work/drift.json" 2>>"$log" ||
        fail "tierwise drift failed"
      jq -e --arg d "$vm-data0" '[.drift[].disk] == [$d]' "$work/drift.json" >/dev/null ||
        fail "tierwise drift does not show $vm-data0 alone: $(cat "$work/drift.json")"
      drift_to=$((drift_from + 12 * 3600))
      continue
    fi
    step "$mon_t" "vm start $vm" "$cli" vm start --db "$db" --vm "$vm" --execute --poll-ms 50 "${ARM[@]}"
  done
  if [ "$n" = 2 ]; then
    # Put right at 18:01, twelve hours on: deallocated again (the drift's
    # end), restored and started a minute later.
    sim_to "$drift_to"
    sim POST /_sim/power "{\"vm\": \"$drift_vm\", \"state\": \"deallocated\"}" >/dev/null
    step "$drift_to" "sync (app-02 stopped)" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}"
    drift_job "$drift_to" "so disk $drift_vm-data0 need not be on Premium_LRS"
    # a minute later: the sync's observation and the restore not in one second
    step $((drift_to + 60)) "vm start $drift_vm" "$cli" vm start --db "$db" --vm "$drift_vm" --execute \
      --poll-ms 50 "${ARM[@]}"
    # vm stop reads a disk's SKU from the last sync's row, not from the SKU
    # history the restore wrote: sync once more so the next weekend sees P10
    step $((drift_to + 120)) "sync" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}"
  fi
done
[ "$n" -ge 3 ] || fail "$month has $n weekends inside it; the drift and the failure need three"
drift_disk="$drift_vm-data0"

# Agent reports on the second Wednesday at noon.
wed=$(date -u -d "$first" +%u)
wed_day=$(( (3 - wed + 7) % 7 + 7 ))
rep_t=$(( $(date -u -d "$first +$wed_day days 12:00" +%s) ))
sim_to "$rep_t"
# report VM DEVICE_DISK IOPS: a tierwise.report/1 of VM (its disks as the
# simulator has them) with a rated-iops result on the disk named, at IOPS
report() {
  local vm=$1 disk=$2 iops=$3 id=$4 rid=$5
  jq -n --slurpfile sc "$src/deploy/demo-month-scenario.json" \
    --arg vm "$vm" --arg disk "$disk" --argjson iops "$iops" --arg id "$id" --arg rid "$rid" \
    --arg at "$(iso "$rep_t")" --arg started "$(iso $((rep_t - 300)))" '
    ($sc[0].vms[] | select(.name == $vm)) as $v
    | def arm($n): "/subscriptions/\($v.subscription_id)/resourceGroups/\($v.resource_group)/providers/Microsoft.Compute/disks/\($n)";
      def dev($d): if $d.role == "os" then "sda" else "sd" + ("cdefghij"[$d.lun:$d.lun + 1]) end;
      ($v.disks | map({name, role, lun: (if .role == "os" then null else .lun end), sku, size_gib,
                       caching: (.caching // "None"), write_accelerator: false,
                       device: ("/dev/" + dev(.)), managed_disk_id: arm(.name)})) as $disks
    | ($disks[] | select(.name == $disk)) as $t
    | ($t.device | ltrimstr("/dev/")) as $dv
    | ($iops * 30 | floor) as $ios
    | {schema_version: "tierwise.report/1", id: $id, created_at: $at,
       agent: {version: "0.1.0", hostname: $vm}, power_state: "running",
       inventory: {vm: {name: $vm, location: $v.location, vm_size: $v.vm_size, tags: ($v.tags // {}),
                        subscription_id: $v.subscription_id, resource_group: $v.resource_group},
                   disks: $disks},
       results: [{schema_version: "tierwise.bench-result/1", id: $rid, started_at: $started,
                  source: "tierwise", tool_version: "tierwise 0.1.0", profile: "rated-iops",
                  target: {path: $t.device, kind: "block", size_bytes: ($t.size_gib * 1073741824),
                           device: $dv, members: [$dv]},
                  method: {engine: "libaio", direct: true, pattern: "randread", block_size_bytes: 8192,
                           queue_depth: 256, effective_queue_depth: 256, jobs: 4, read_pct: 100,
                           runtime_ms: 30000, ramp_ms: 5000},
                  read: {ios: $ios, bytes: ($ios * 8192), iops: $iops,
                         bw_bytes_per_s: ($iops * 8192), mbps: ($iops * 8192 / 1000000),
                         lat_ns: ((256 * 4 * 1e9 / $iops) as $m
                                  | {min: ($m * 0.3 | floor | . * 1.0), max: ($m * 7 | floor | . * 1.0),
                                     mean: $m, stdev: ($m * 0.3),
                                     percentiles: ([["p1", 0.35], ["p5", 0.55], ["p10", 0.62], ["p20", 0.72],
                                       ["p30", 0.8], ["p40", 0.88], ["p50", 0.95], ["p60", 1.02], ["p70", 1.1],
                                       ["p80", 1.2], ["p90", 1.38], ["p95", 1.6], ["p99", 2.3], ["p99.5", 2.8],
                                       ["p99.9", 4.0], ["p99.95", 4.6], ["p99.99", 6.5]]
                                       | map({key: .[0], value: ($m * .[1] / 1000 | floor | . * 1000.0)})
                                       | from_entries)})},
                  write: null, cpu: {usr_s: 1.5, sys_s: 6.25}, errors: {count: 0, first: ""}}]}' >"$work/report-$vm.json"
}
report web-02 web-02-data0 2330 8c0ffee0-0000-4000-8000-000000000001 8c0ffee0-0000-4000-8000-000000000011
report app-01 app-01-data0 3100 8c0ffee0-0000-4000-8000-000000000002 8c0ffee0-0000-4000-8000-000000000012
report db-01 db-01-data0 5060 8c0ffee0-0000-4000-8000-000000000003 8c0ffee0-0000-4000-8000-000000000013
post_url=$server tok_file=$agent_tok
if [ -z "$server" ]; then
  tok_file="$work/agent.tok"
  (umask 077; "$cli" token create --db "$db" --role agent --name demo-month-agent >"$tok_file" 2>>"$log")
  rm -f "$work/srv.port"
  faked_env "$rep_t"
  "${FAKED[@]}" "$cli" serve -q --db "$db" --listen 127.0.0.1:0 --port-file "$work/srv.port" \
    >/dev/null 2>"$work/serve.err" &
  srv_pid=$!
  for _ in $(seq 100); do [ -s "$work/srv.port" ] && break; sleep 0.1; done
  [ -s "$work/srv.port" ] || fail "the backend did not start: $(cat "$work/serve.err")"
  post_url="http://127.0.0.1:$(cat "$work/srv.port")"
fi
for vm in web-02 app-01 db-01; do
  code=$(curl -s --noproxy '*' --max-time 60 -o "$work/post-$vm.out" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $(cat "$tok_file")" -H 'Content-Type: application/json' \
    --data-binary "@$work/report-$vm.json" "$post_url/api/v1/reports")
  # 200: the id was stored before (a second run on the same database)
  case "$code" in 200|201) ;; *) fail "posting $vm's report: HTTP $code $(cat "$work/post-$vm.out")" ;; esac
done
if [ -n "$srv_pid" ]; then
  kill -TERM "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null || true; srv_pid=""
fi

# The fleet as ARM has it at the month's end.
step $((last - 3600)) "sync" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}"

jq -n --arg month "$month" --arg from "$(iso "$(date -u -d "$first" +%s)")" --arg to "$(iso "$last")" \
  --arg policy "$policy" --arg sub "$sub" --arg dvm "$drift_vm" --arg ddisk "$drift_disk" \
  --arg dfrom "$(iso "$drift_from")" --arg dto "$(iso "$drift_to")" \
  --arg weekends "$(printf '%s\n' "${weekends[@]}")" '
  {month: $month, from: $from, to: $to, policy: $policy, subscription: $sub,
   weekends: ($weekends | split("\n") | map(select(. != "") | split(" ") | {from: .[0], to: .[1]})),
   drift: {vm: $dvm, disk: $ddisk, from: $dfrom, to: $dto},
   reports: [{vm: "web-02", disk: "web-02-data0", iops: 2330}, {vm: "app-01", disk: "app-01-data0", iops: 3100},
             {vm: "db-01", disk: "db-01-data0", iops: 5060}]}' >"$work/month.json"
echo "demo-month.sh: $month in $db: $n weekends of switches for $(echo $tagged | wc -w) VMs, a drift of $drift_vm, 3 agent reports ($work/month.json)"
