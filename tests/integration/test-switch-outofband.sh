#!/usr/bin/env bash
# Tier switches of a VM someone started out of band, and of a hibernated
# VM, against the simulator at chosen wall-clock times (faketime):
#  - running at Friday 20:15: the downgrades wait (still planned, due moved
#    one tick later, nothing sent); still running at the upgrades' due time:
#    skipped "vm_not_deallocated"; the upgrades, their downgrades never run,
#    are skipped "nothing_to_restore" (nothing sent);
#  - hibernated (its disks Frozen): the downgrades are skipped "hibernated",
#    nothing sent;
#  - a saved plan run by `apply --plan` (dry, executing, again: nothing new),
#    and plans that name an unknown disk or do not parse refused.
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
# upgrades have nothing to restore (no downgrade of the window happened)
out=$(at '2026-12-07 05:35:00' apply --execute --json)
jq -e '.summary.skipped == 4 and .summary.done == 0 and
  ([.results[] | select(.kind == "downgrade") | .reason | startswith("vm_not_deallocated")] == [true, true]) and
  ([.results[] | select(.kind == "upgrade") | .reason | startswith("nothing_to_restore")] == [true, true])' \
  <<<"$out" >/dev/null && ok || bad "Monday, VM running: $out"
[ "$(patches app-01-data0) $(patches app-01-data1)" = "0 0" ] && ok || bad "a PATCH was sent to a running VM's disk"
log=$("$cli" actions --db "$db" --state skipped --json)
jq -e 'length == 4 and ([.[] | select(.kind == "downgrade") | .reason | startswith("vm_not_deallocated")] == [true, true]) and
  ([.[] | select(.kind == "upgrade") | .reason | startswith("nothing_to_restore")] == [true, true]) and
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

stop_sim

# ---- a saved plan (tierwise plan --json) run by apply --plan ----
switch_scenario app-03 deallocated
start_sim
fresh_db
sed -i 's/"name": "dev-hib"/"name": "dev-weekends"/' "$scratch/policy.json"
faked '2026-12-04 12:00:00' "$cli" plan --db "$db" --policy "$scratch/policy.json" --currency USD \
  --from 2026-12-04 --to 2026-12-08 --json >"$scratch/plan.json" || bad "tierwise plan failed"
planrun() {
  faked "$1" "$cli" apply --db "$db" --plan "$scratch/plan.json" --poll-ms 50 "${ARM[@]}" --json "${@:2}"
}
out=$(planrun '2026-12-04 20:15:00')
jq -e '.dry_run and .planned == 2 and .summary.would_send == 2 and .policy == "dev-weekends"' \
  <<<"$out" >/dev/null && ok || bad "apply --plan, dry: $out"
out=$(planrun '2026-12-04 20:15:00' --execute)
jq -e '.recorded == 2 and .summary.done == 2' <<<"$out" >/dev/null && ok || bad "apply --plan --execute: $out"
out=$(planrun '2026-12-04 20:20:00' --execute)
jq -e '.recorded == 0 and .summary.actions == 0' <<<"$out" >/dev/null && ok || bad "apply --plan again: $out"
[ "$(sim_sku app-03-data0) $(patches app-03-data0)" = "Standard_LRS 1" ] && ok ||
  bad "the plan's downgrade: $(sim_sku app-03-data0), $(patches app-03-data0) PATCHes"
# (the upgrade due Monday 05:30: the Friday downgrade is more than a day old
# at 05:35 Monday, expired and not looked up)
jq '(.actions[] | select(.kind == "upgrade")) |= (.disk = "no-such-disk")' "$scratch/plan.json" \
  >"$scratch/bad-plan.json"
faked '2026-12-07 05:35:00' "$cli" apply --db "$db" --plan "$scratch/bad-plan.json" "${ARM[@]}" \
  >"$scratch/bad.out" 2>"$scratch/bad.err"
st=$?
[ "$st" != 0 ] && grep -q "no-such-disk" "$scratch/bad.err" && ok ||
  bad "a plan naming an unknown disk: exit $st, $(cat "$scratch/bad.err")"
echo '{"schema_version": "tierwise.plan/1", "actions": [' >"$scratch/broken-plan.json"
expect 2 "apply:" -- "$cli" apply --db "$db" --plan "$scratch/broken-plan.json" "${ARM[@]}"

finish test-switch-outofband
