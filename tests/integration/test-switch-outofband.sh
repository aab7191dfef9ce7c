#!/usr/bin/env bash
# Tier switches of a VM someone started out of band, and of a hibernated
# VM, against the simulator at chosen wall-clock times (faketime):
#  - running at Friday 20:15: the downgrades wait (still planned, due moved
#    one tick later, nothing sent); still running at the upgrades' due time:
#    skipped "vm_not_deallocated"; the upgrades find the disks on their SKU
#    (done, nothing sent);
#  - hibernated (its disks Frozen): the downgrades are skipped "hibernated",
#    nothing sent.
# Needs jq, curl, sqlite3 and faketime.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-switch-oob-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/tools/switch-lib.sh"
for t in jq curl sqlite3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
need_faketime
trap 'stop_sim; rm -rf "$scratch"' EXIT
weekend_policy

# ---- started out of band: the VM never deallocates this weekend ----
switch_scenario app-01 running
start_sim
fresh_db
out=$(at '2026-12-04 20:15:00' apply --execute --json)
jq -e '.recorded == 2 and .summary.waiting == 2 and .summary.done == 0 and
  all(.results[]; .outcome == "waiting" and (.reason | startswith("vm_not_deallocated")))' \
  <<<"$out" >/dev/null && ok || bad "Friday, VM running: $out"
states=$(sqlite3 "$db" "SELECT group_concat(state) FROM actions")
[ "$states" = planned,planned ] && ok || bad "the waiting downgrades are $states"
due=$(sqlite3 "$db" "SELECT group_concat(due_at) FROM actions")
[ "$due" = "2026-12-04T20:16:00Z,2026-12-04T20:16:00Z" ] && ok || bad "their due is $due, not one tick later"
# each later tick re-checks them
out=$(at '2026-12-05 10:00:00' apply --execute --json)
jq -e '.summary.waiting == 2' <<<"$out" >/dev/null && ok || bad "Saturday, VM running: $out"
# Monday: past the upgrade's due time, the downgrades are skipped; the
# upgrades find the disks on Premium already
out=$(at '2026-12-07 05:35:00' apply --execute --json)
jq -e '.summary.skipped == 2 and .summary.done == 2 and
  ([.results[] | select(.kind == "downgrade") | .reason | startswith("vm_not_deallocated")] == [true, true]) and
  ([.results[] | select(.kind == "upgrade") | .already] == [true, true])' \
  <<<"$out" >/dev/null && ok || bad "Monday, VM running: $out"
[ "$(patches app-01-data0) $(patches app-01-data1)" = "0 0" ] && ok || bad "a PATCH was sent to a running VM's disk"
log=$("$cli" actions --db "$db" --state skipped --json)
jq -e 'length == 2 and all(.[]; .reason | startswith("vm_not_deallocated")) and
  all(.[]; [.transitions[].to] == ["planned", "skipped"])' <<<"$log" >/dev/null &&
  ok || bad "the skipped downgrades in the log: $log"
stop_sim

# ---- hibernated: the disks are Frozen ----
switch_scenario app-02 hibernated
start_sim
fresh_db
sed -i 's/"name": "dev-weekends"/"name": "dev-hib"/' "$scratch/policy.json"
out=$(at '2026-12-04 20:15:00' apply --execute --json)
jq -e '.summary.skipped == 2 and all(.results[]; .reason | startswith("hibernated"))' \
  <<<"$out" >/dev/null && ok || bad "hibernated: $out"
[ "$(patches app-02-data0) $(patches app-02-data1)" = "0 0" ] && ok || bad "a PATCH was sent to a Frozen disk"
[ "$(sim_sku app-02-data0)" = Premium_LRS ] && ok || bad "the Frozen disk changed"

finish test-switch-outofband
