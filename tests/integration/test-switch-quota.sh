#!/usr/bin/env bash
# ARM's quota of type changes (2 per disk in any 24 h, counting everyone's)
# never exceeded over a randomised month, against the simulator with its
# clock and tierwise's (faketime) moved together: a policy of randomly
# chosen nightly windows; most nights the VM is deallocated at the window's
# start, some nights it stays running; some mornings someone deallocates it
# and changes a disk's SKU and back (two changes, seen by `tierwise sync`).
# Ticks of `tierwise sync` and `tierwise apply --execute` after each
# window opens and before it closes.  No action may fail (the simulator
# refuses an over-quota change with 409 OperationNotAllowed, which would
# fail it), every PATCH the simulator counted is one tierwise sent or one
# of the out-of-band changes, and switches did happen.  TW_SWITCH_SEED
# repeats a run (the seed is printed).  Needs jq, curl, sqlite3, faketime.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-switch-quota-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/tools/switch-lib.sh"
for t in jq curl sqlite3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
need_faketime
trap 'stop_sim; rm -rf "$scratch"' EXIT
seed=${TW_SWITCH_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "test-switch-quota: seed $seed (TW_SWITCH_SEED=$seed repeats this run)"
RANDOM=$seed

switch_scenario app-01 running "" '{"clock": "2026-11-30T12:00:00Z", "operation_delay_ms": 100}'
start_sim
sync_at='2026-11-30 12:00:00' fresh_db

# The windows: each night of the week with probability 0.7 (at least two).
days=(Mon Tue Wed Thu Fri Sat Sun)
wins=()
while [ ${#wins[@]} -lt 2 ]; do
  wins=()
  for i in 0 1 2 3 4 5 6; do
    [ $((RANDOM % 10)) -lt 7 ] && wins+=("\"${days[i]} 20:00-${days[(i + 1) % 7]} 06:00\"")
  done
done
win_json=$(IFS=,; echo "[${wins[*]}]")
jq -n --argjson w "$win_json" '{schema_version: "tierwise.policy/1", name: "nightly",
  match: {resource_groups: ["rg-dev"]}, target: "Standard_LRS", windows: $w, timezone: "UTC"}' \
  >"$scratch/policy.json"
echo "windows: $win_json"

epoch() { date -u -d "$1" +%s; }
# sim_clock_to TIME: the simulator's clock moved up to TIME.
sim_clock_to() {
  local now target
  now=$(sim POST /_sim/clock '{"advance_s": 0}' | jq -r '.now')
  target=$(epoch "$1")
  now=$(epoch "$now")
  [ "$target" -gt "$now" ] && sim POST /_sim/clock "{\"advance_s\": $((target - now))}" >/dev/null
  return 0
}
power() { sim_clock_to "$1"; sim POST /_sim/power "{\"vm\": \"app-01\", \"state\": \"$2\"}" >/dev/null; }
tick() {
  sim_clock_to "$1"
  faked "$1" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}" >/dev/null 2>>"$scratch/sync.err"
  at "$1" apply --execute --json >>"$scratch/ticks.json" 2>>"$scratch/apply.err"
}
oob=0
# someone TIME SKU: an out-of-band change of data0 to SKU (and a sync).
someone() {
  sim_clock_to "$1"
  oob=$((oob + 1))
  local token # a new one: the clock moved past the last one's lifetime
  token=$(curl -s -H 'Metadata: true' \
    "http://127.0.0.1:$sim_port/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.azure.com/" |
    jq -r .access_token)
  curl -s -X PATCH -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"sku\": {\"name\": \"$2\"}}" -o /dev/null \
    "http://127.0.0.1:$sim_port/subscriptions/$sub/resourceGroups/rg-dev/providers/Microsoft.Compute/disks/app-01-data0?api-version=2024-03-02"
  sleep 0.3 # the operation's delay
  faked "$1" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}" >/dev/null 2>>"$scratch/sync.err"
}

for d in $(seq 0 27); do
  day=$(date -u -d "2026-12-01 +$d days" +%F)
  next=$(date -u -d "2026-12-01 +$((d + 1)) days" +%F)
  dow=$(date -u -d "$day" +%a)
  # a morning when someone deallocates the VM and changes a disk and back
  if [ $((RANDOM % 4)) = 0 ]; then
    power "$day 10:00:00" deallocated
    someone "$day 10:05:00" StandardSSD_LRS
    someone "$day 10:40:00" Premium_LRS
    power "$day 11:00:00" running
  fi
  if grep -q "\"$dow 20:00" <<<"$win_json"; then
    [ $((RANDOM % 7)) != 0 ] && power "$day 20:00:00" deallocated # else it stays running
    tick "$day 20:15:00"
    tick "$next 05:35:00"
    tick "$next 05:46:00" # an upgrade the quota held back (5 min margin) goes now
    power "$next 06:00:00" running
  elif [ $((RANDOM % 3)) = 0 ]; then
    tick "$day 21:00:00" # a tick with nothing due
  fi
done

failed=$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE state = 'failed'")
[ "$failed" = 0 ] && ok || bad "$failed actions failed: $(sqlite3 "$db" "SELECT id, kind, reason FROM actions WHERE state = 'failed'")"
quota=$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE reason LIKE '%OperationNotAllowed%'")
[ "$quota" = 0 ] && ok || bad "$quota actions were refused by ARM's quota"
done_n=$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE state = 'done' AND kind = 'downgrade'")
[ "$done_n" -ge 3 ] && ok || bad "only $done_n downgrades done over the month: the test ran nothing"
sent=$(sqlite3 "$db" "SELECT count(*) FROM action_transitions t JOIN actions a ON a.id = t.action_id WHERE t.to_state = 'sent' AND t.detail LIKE 'PATCH %'")
resent=$(sqlite3 "$db" "SELECT coalesce(sum(attempts - 1), 0) FROM actions WHERE attempts > 1")
counted=$(sim GET /_sim/counters | jq '[.patches[]] | add // 0')
[ "$counted" = $((sent + resent + oob)) ] && ok ||
  bad "the simulator counted $counted PATCHes; tierwise sent $sent (+$resent again) and someone $oob"
n_errors=$(jq -s '[.[] | select(.error)] | length' "$scratch/ticks.json")
[ "$n_errors" = 0 ] && ok || bad "$n_errors ticks failed: $(cat "$scratch/apply.err" | head -5)"
skipped=$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE state = 'skipped'")
echo "downgrades done $done_n, skipped $skipped, out-of-band changes $oob, PATCHes $counted"

finish test-switch-quota
