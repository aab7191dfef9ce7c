#!/usr/bin/env bash
# Tier switches through ARM's bad days, against the simulator at chosen
# wall-clock times (faketime): a storm of 429s (Retry-After) and one of
# 503s on the disks' PATCHes, GETs and operations.  Each tick may leave an
# action to retry (never failed); a few ticks end every action done, each
# disk on its target with one PATCH counted that changed it, and the
# simulator's type-change counts within its quota.  A refusal that is not
# transient (the quota's 409 OperationNotAllowed) fails the action with
# ARM's code.  Needs jq, curl, sqlite3 and faketime.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-switch-storm-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/tools/switch-lib.sh"
for t in jq curl sqlite3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
need_faketime
trap 'stop_sim; rm -rf "$scratch"' EXIT
weekend_policy
switch_scenario app-01 deallocated
start_sim
fresh_db
disks="/subscriptions/$sub/resourceGroups/rg-dev/providers/Microsoft.Compute/disks"

# ticks WHEN: apply --execute at WHEN until nothing is left to retry (at
# most 8 ticks, a minute apart); the last tick's JSON in $out, the number
# of ticks in $ticks.
ticks() {
  local base
  base=$(date -u -d "$1" +%s)
  for ticks in $(seq 8); do
    out=$(at "@$((base + ticks * 60))" apply --execute --json)
    [ "$(jq '.summary.retry' <<<"$out")" = 0 ] && return
  done
}

# 429 storm: the first six disk requests throttled, then the PATCHes too.
sim POST /_sim/faults "{\"kind\": \"throttle\", \"path\": \"$disks\", \"count\": 6, \"retry_after\": 0}" >/dev/null
sim POST /_sim/faults "{\"kind\": \"throttle\", \"path\": \"$disks\", \"method\": \"PATCH\", \"count\": 3, \"retry_after\": 0}" >/dev/null
ticks '2026-12-04 20:14:00'
jq -e '.summary.failed == 0' <<<"$out" >/dev/null && ok || bad "the 429 storm failed an action: $out"
states=$(sqlite3 "$db" "SELECT group_concat(state) FROM actions WHERE kind = 'downgrade'")
[ "$states" = done,done ] && ok || bad "after the 429 storm the downgrades are $states ($ticks ticks)"
fired=$(sim GET /_sim/faults | jq '.faults | map(.fired) | add')
[ "${fired:-0}" -ge 6 ] && ok || bad "the storm fired $fired times"
[ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Standard_LRS Standard_LRS" ] && ok ||
  bad "the SKUs after the 429 storm: $(sim_sku app-01-data0) $(sim_sku app-01-data1)"
changes=$(sim GET /_sim/state | jq '[.disks[] | select(.name != "app-01-os") | .sku_changes_24h] | max')
[ "$changes" = 1 ] && ok || bad "the simulator counts $changes type changes on a disk (one was sent)"
sim DELETE /_sim/faults >/dev/null

# 5xx storm on Monday: 503s on the disks and on the operations.
sim POST /_sim/faults "{\"kind\": \"error\", \"status\": 503, \"path\": \"$disks\", \"count\": 5}" >/dev/null
sim POST /_sim/faults "{\"kind\": \"error\", \"status\": 500, \"path\": \"/subscriptions/$sub/providers/Microsoft.Compute/locations\", \"count\": 3}" >/dev/null
ticks '2026-12-07 05:34:00'
jq -e '.summary.failed == 0' <<<"$out" >/dev/null && ok || bad "the 5xx storm failed an action: $out"
states=$(sqlite3 "$db" "SELECT group_concat(state) FROM actions WHERE kind = 'upgrade'")
[ "$states" = done,done ] && ok || bad "after the 5xx storm the upgrades are $states ($ticks ticks)"
[ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Premium_LRS Premium_LRS" ] && ok ||
  bad "the SKUs after the 5xx storm: $(sim_sku app-01-data0) $(sim_sku app-01-data1)"
changes=$(sim GET /_sim/state | jq '[.disks[] | select(.name != "app-01-os") | .sku_changes_24h] | max')
[ "$changes" = 2 ] && ok || bad "the simulator counts $changes type changes on a disk (two were sent)"
sim DELETE /_sim/faults >/dev/null

# The quota: a third change within 24 h is refused by ARM and fails the
# action with ARM's code and message (no retry would help).
"$cli" vm stop --db "$db" --vm app-01 --to StandardSSD_LRS --execute --poll-ms 50 "${ARM[@]}" \
  --json >"$scratch/stop.json" 2>"$scratch/stop.err"
st=$?
[ "$st" = 1 ] && ok || bad "vm stop over the quota exited $st: $(cat "$scratch/stop.err")"
jq -e '.summary.failed == 2 and all(.results[] | select(.kind == "downgrade");
  .outcome == "failed" and (.reason | startswith("OperationNotAllowed")))' "$scratch/stop.json" >/dev/null &&
  ok || bad "over the quota: $(cat "$scratch/stop.json")"
grep -q "tierwise actions --db" "$scratch/stop.err" && ok || bad "the failure does not say where to look: $(cat "$scratch/stop.err")"

finish test-switch-storms
