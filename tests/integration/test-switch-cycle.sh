#!/usr/bin/env bash
# A weekend's tier switches end to end against the simulator, at chosen
# wall-clock times (faketime): the fleet synced from ARM; the plan of the
# weekend (two downgrades Friday 20:10, two upgrades Monday 05:30); a dry
# run at Friday 20:15 that sends nothing and writes nothing; the tick that
# downgrades both disks while the VM is deallocated (verified on the
# simulator, one PATCH each, the original SKU kept); a second tick that
# records and sends nothing; the Monday tick that upgrades them back; then
# `vm start`, which starts the VM last; the audit log with every field and
# move.  Bad usage exits 2.  Needs jq, curl, sqlite3 and faketime.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-switch-cycle-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/tools/switch-lib.sh"
for t in jq curl sqlite3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
need_faketime
trap 'stop_sim; rm -rf "$scratch"' EXIT

switch_scenario app-01 running
start_sim
fresh_db
weekend_policy
d0=app-01-data0 d1=app-01-data1

# Friday evening the VM is deallocated (a schedule did it).
sim POST /_sim/power '{"vm": "app-01", "state": "deallocated"}' >/dev/null

plan=$(at '2026-12-04 19:00:00' "$cli" plan --db "$db" --policy "$scratch/policy.json" \
  --from 2026-12-04 --to 2026-12-08 --currency USD --json)
jq -e '[.actions[] | [.kind, .disk, .from_sku, .to_sku, .due_at]] ==
  [["downgrade", "app-01-data0", "Premium_LRS", "Standard_LRS", "2026-12-04T20:10:00Z"],
   ["upgrade", "app-01-data0", "Standard_LRS", "Premium_LRS", "2026-12-07T05:30:00Z"],
   ["downgrade", "app-01-data1", "Premium_LRS", "Standard_LRS", "2026-12-04T20:10:00Z"],
   ["upgrade", "app-01-data1", "Standard_LRS", "Premium_LRS", "2026-12-07T05:30:00Z"]]' \
  <<<"$plan" >/dev/null && ok || bad "the weekend's plan: $plan"
printf '%s\n' "$plan" >"$scratch/plan.json"

# Before the due time: nothing due.
out=$(at '2026-12-04 19:00:00' apply --execute --json)
jq -e '.planned == 0 and .summary.actions == 0' <<<"$out" >/dev/null && ok || bad "19:00: $out"

# A dry run at 20:15: what would be sent, nothing written anywhere.
out=$(at '2026-12-04 20:15:00' apply --json)
jq -e --arg url "http://127.0.0.1:$sim_port/subscriptions/$sub/resourceGroups/rg-dev/providers/Microsoft.Compute/disks/app-01-data0?api-version=2024-03-02" '
  .dry_run == true and .planned == 2 and .recorded == 0 and .summary.would_send == 2 and
  ([.results[] | select(.disk == "app-01-data0") | .request] ==
   [{"method": "PATCH", "url": $url, "body": "{\"sku\":{\"name\":\"Standard_LRS\"}}"}])' \
  <<<"$out" >/dev/null && ok || bad "the dry run: $out"
n=$(sqlite3 "$db" "SELECT count(*) FROM actions")
[ "$n" = 0 ] && ok || bad "the dry run stored $n actions"
[ "$(patches $d0)$(patches $d1)" = 00 ] && ok || bad "the dry run sent a PATCH"
text=$(at '2026-12-04 20:15:00' apply)
grep -qF "  would send: PATCH http://127.0.0.1:$sim_port/subscriptions/$sub/resourceGroups/rg-dev/providers/Microsoft.Compute/disks/app-01-data1?api-version=2024-03-02 {\"sku\":{\"name\":\"Standard_LRS\"}}" <<<"$text" &&
  ok || bad "the dry run's text: $text"

# The tick at 20:15: both disks downgraded and verified.
out=$(at '2026-12-04 20:15:00' apply --execute --json)
jq -e '.dry_run == false and .recorded == 2 and .summary.done == 2 and .summary.failed == 0' \
  <<<"$out" >/dev/null && ok || bad "Friday's tick: $out"
[ "$(sim_sku $d0) $(sim_sku $d1)" = "Standard_LRS Standard_LRS" ] && ok ||
  bad "the simulator's SKUs after Friday: $(sim_sku $d0) $(sim_sku $d1)"
[ "$(patches $d0) $(patches $d1)" = "1 1" ] && ok || bad "PATCHes after Friday: $(patches $d0) $(patches $d1)"
orig=$(sqlite3 "$db" "SELECT group_concat(sku) FROM disk_originals")
[ "$orig" = "Premium_LRS,Premium_LRS" ] && ok || bad "the original SKUs kept: $orig"
# the store's row said running (the sync saw it before the schedule
# deallocated it): the executor's checks recorded ARM's power state, so the
# downgraded disks of the deallocated VM do not drift
out=$(at '2026-12-04 20:15:30' "$cli" drift --db "$db" --policy "$scratch/policy.json" --json)
jq -e '.count == 0' <<<"$out" >/dev/null && ok || bad "drift right after the downgrade: $out"

# A second tick: nothing new recorded, nothing sent.
out=$(at '2026-12-04 20:16:00' apply --execute --json)
jq -e '.recorded == 0 and .summary.actions == 0' <<<"$out" >/dev/null && ok || bad "the second tick: $out"
[ "$(patches $d0) $(patches $d1)" = "1 1" ] && ok || bad "the second tick sent a PATCH"

# Monday 05:35: both back on Premium before the start.
out=$(at '2026-12-07 05:35:00' apply --execute --json)
jq -e '.recorded == 2 and .summary.done == 2' <<<"$out" >/dev/null && ok || bad "Monday's tick: $out"
[ "$(sim_sku $d0) $(sim_sku $d1)" = "Premium_LRS Premium_LRS" ] && ok ||
  bad "the simulator's SKUs after Monday: $(sim_sku $d0) $(sim_sku $d1)"
n=$(sqlite3 "$db" "SELECT count(*) FROM disk_originals")
[ "$n" = 0 ] && ok || bad "the originals are not cleared once restored ($n left)"
[ "$(sim_power app-01)" = deallocated ] && ok || bad "the VM started before vm start"

# vm start: nothing left to restore, the VM started last.
out=$("$cli" vm start --db "$db" --vm app-01 --execute --poll-ms 50 "${ARM[@]}" --json)
jq -e '.summary.done == 1 and [.results[].kind] == ["start"]' <<<"$out" >/dev/null &&
  ok || bad "vm start: $out"
[ "$(sim_power app-01)" = running ] && ok || bad "the VM is $(sim_power app-01) after vm start"

# The audit log.
log=$("$cli" actions --db "$db" --json)
jq -e 'length == 5 and (map(.kind) == ["downgrade", "downgrade", "upgrade", "upgrade", "start"]) and
  all(.[]; .state == "done" and .attempts == 1 and (.updated_at | type) == "string") and
  (.[-1].id == (map(.id) | max)) and
  (.[0] | .vm == "app-01" and .disk == "app-01-data0" and .from_sku == "Premium_LRS" and
    .to_sku == "Standard_LRS" and .due_at == "2026-12-04T20:10:00Z" and
    .policy == "dev-weekends" and (.reason | test("Fri 20:00-Mon 06:00")) and
    ([.transitions[].to] == ["planned", "checked", "sent", "verified", "done"]) and
    (.transitions[2].detail | test("^PATCH http://127.0.0.1:[0-9]+/subscriptions/.*/disks/app-01-data0\\?api-version=2024-03-02 ")))' \
  <<<"$log" >/dev/null && ok || bad "the audit log: $log"
# the start was sent after every upgrade was done (the log's own order)
order=$(sqlite3 "$db" "SELECT a.kind || ':' || t.to_state FROM action_transitions t JOIN actions a ON a.id = t.action_id WHERE t.to_state IN ('sent', 'done') ORDER BY t.id" | tr '\n' ' ')
[ "$order" = "downgrade:sent downgrade:done downgrade:sent downgrade:done upgrade:sent upgrade:done upgrade:sent upgrade:done start:sent start:done " ] &&
  ok || bad "the order of the sends: $order"
out=$("$cli" actions --db "$db" --vm APP-01 --state done)
[ "$(grep -c ' done ' <<<"$out")" = 5 ] && ok || bad "actions --vm --state: $out"
expect 2 "no VM named nosuch is stored" -- "$cli" actions --db "$db" --vm nosuch

# The saved plan days later: its actions (due more than a day ago) expired,
# not run again.
out=$(faked '2026-12-09 19:00:00' "$cli" apply --db "$db" --plan "$scratch/plan.json" --execute \
  --poll-ms 50 "${ARM[@]}" --json)
jq -e '.expired == 4 and .planned == 0 and .summary.actions == 0' <<<"$out" >/dev/null &&
  ok || bad "a week-old saved plan: $out"
text=$(faked '2026-12-09 19:00:00' "$cli" apply --db "$db" --plan "$scratch/plan.json" "${ARM[@]}")
grep -q "4 actions of the saved plan expired" <<<"$text" && ok || bad "apply --plan's text: $text"

# The store knows the VM runs (vm start recorded it), and nothing drifts.
out=$("$cli" drift --db "$db" --policy "$scratch/policy.json" --json)
jq -e '.count == 0' <<<"$out" >/dev/null && ok || bad "drift after vm start: $out"

# A runbook's steps a few days later: vm stop by the policy (data disks to
# the policy's target, the OS disk too with --os-disk), then vm start.
sim POST /_sim/clock '{"advance_s": 864000}' >/dev/null # past ARM's quota day
# vm stop's SKU checked before anything is sent
expect 2 "not a disk SKU" -- "$cli" vm stop --db "$db" --vm app-01 --to Bogus_SKU --execute \
  --poll-ms 50 "${ARM[@]}"
[ "$(sim_power app-01)" = running ] && ok || bad "a bad --to SKU deallocated the VM"
# Premium_LRS -> Premium_ZRS is the same family but dearer: no downgrade
expect 2 "cheaper redundancy" -- "$cli" vm stop --db "$db" --vm app-01 --to Premium_ZRS --execute \
  --poll-ms 50 "${ARM[@]}"
[ "$(sim_power app-01) $(sim_sku $d0) $(patches $d0)" = "running Premium_LRS 2" ] && ok ||
  bad "a --to Premium_ZRS: $(sim_power app-01) $(sim_sku $d0) $(patches $d0) PATCHes"
# a dry run on the running VM: the deallocation, then the disks' PATCHes
out=$(faked '2026-12-09 20:00:00' "$cli" vm stop --db "$db" --vm app-01 --policy "$scratch/policy.json" \
  --poll-ms 50 "${ARM[@]}" --json)
jq -e '[.results[] | [.kind, .outcome]] == [["deallocate", "would_send"],
  ["downgrade", "would_send"], ["downgrade", "would_send"]] and
  (.results[1].reason | test("after the deallocation"))' <<<"$out" >/dev/null &&
  ok || bad "vm stop's dry run on a running VM: $out"
out=$(faked '2026-12-09 20:00:00' "$cli" vm stop --db "$db" --vm app-01 --policy "$scratch/policy.json" \
  --execute --poll-ms 50 "${ARM[@]}" --json)
jq -e '[.results[] | [.kind, .disk, .to_sku, .outcome, .policy]] ==
  [["deallocate", null, null, "done", "dev-weekends"],
   ["downgrade", "app-01-data0", "Standard_LRS", "done", "dev-weekends"],
   ["downgrade", "app-01-data1", "Standard_LRS", "done", "dev-weekends"]]' <<<"$out" >/dev/null &&
  ok || bad "vm stop --policy: $out"
# the store knows the VM is deallocated now: its downgraded disks don't drift
out=$("$cli" drift --db "$db" --policy "$scratch/policy.json" --json)
jq -e '.count == 0' <<<"$out" >/dev/null && ok || bad "drift after vm stop: $out"
expect 2 "cheaper family" -- "$cli" vm stop --db "$db" --vm app-01 --to Premium_LRS --execute \
  --poll-ms 50 "${ARM[@]}"
[ "$(sim_power app-01) $(sim_sku app-01-os) $(sim_sku $d0)" = "deallocated Premium_LRS Standard_LRS" ] &&
  ok || bad "after vm stop: $(sim_power app-01) $(sim_sku app-01-os) $(sim_sku $d0)"
# a dry run on the deallocated VM: the deallocation has nothing to send
# (counted apart from done), the OS disk's PATCH would be sent
out=$(faked '2026-12-09 20:05:00' "$cli" vm stop --db "$db" --vm app-01 --to Standard_LRS --os-disk \
  --poll-ms 50 "${ARM[@]}" --json)
jq -e '[.results[] | [.kind, .outcome]] == [["deallocate", "nothing_to_send"], ["downgrade", "would_send"]] and
  .summary.nothing_to_send == 1 and .summary.done == 0 and .summary.would_send == 1' <<<"$out" >/dev/null &&
  ok || bad "vm stop's dry run on a deallocated VM: $out"
text=$(faked '2026-12-09 20:05:00' "$cli" vm stop --db "$db" --vm app-01 --to Standard_LRS --os-disk \
  --poll-ms 50 "${ARM[@]}")
grep -q "app-01 deallocate: nothing to send (already on the target" <<<"$text" &&
  grep -q "0 done, .* 1 nothing to send, 1 would be sent" <<<"$text" && ok ||
  bad "vm stop's dry run text: $text"
# the data disks are there already: only the OS disk moves
out=$(faked '2026-12-09 20:05:00' "$cli" vm stop --db "$db" --vm app-01 --to Standard_LRS --os-disk \
  --execute --poll-ms 50 "${ARM[@]}" --json)
jq -e '.summary.done == 2 and ([.results[] | [.kind, .disk, .to_sku]] ==
  [["deallocate", null, null], ["downgrade", "app-01-os", "Standard_LRS"]])' \
  <<<"$out" >/dev/null && ok || bad "vm stop --to --os-disk: $out"
[ "$(sim_sku app-01-os)" = Standard_LRS ] && ok || bad "the OS disk is $(sim_sku app-01-os)"
out=$(faked '2026-12-10 06:00:00' "$cli" vm start --db "$db" --vm app-01 --execute --poll-ms 50 "${ARM[@]}" --json)
jq -e '[.results[] | [.kind, .disk, .to_sku, .outcome]] ==
  [["upgrade", "app-01-os", "Premium_LRS", "done"], ["upgrade", "app-01-data0", "Premium_LRS", "done"],
   ["upgrade", "app-01-data1", "Premium_LRS", "done"], ["start", null, null, "done"]]' <<<"$out" >/dev/null &&
  ok || bad "vm start restores the originals (not the SKUs before the second stop): $out"
[ "$(sim_power app-01) $(sim_sku app-01-os) $(sim_sku $d0) $(sim_sku $d1)" = "running Premium_LRS Premium_LRS Premium_LRS" ] &&
  ok || bad "after vm start: $(sim_power app-01) $(sim_sku app-01-os) $(sim_sku $d0) $(sim_sku $d1)"
jq -e '.started == true and .why == ""' <<<"$out" >/dev/null && ok || bad "vm start's started: $out"
out=$("$cli" drift --db "$db" --policy "$scratch/policy.json" --json)
jq -e '.count == 0' <<<"$out" >/dev/null && ok || bad "drift after the last vm start: $out"

# A restore that fails: the VM is not started, and the output says so and
# why (the policy that downgraded the disk: none here, so the default); the
# failed operation's reason is its own error.
sim POST /_sim/clock '{"advance_s": 172800}' >/dev/null # past ARM's quota day again
faked '2026-12-12 20:00:00' "$cli" vm stop --db "$db" --vm app-01 --to Standard_LRS --execute \
  --poll-ms 50 "${ARM[@]}" >/dev/null 2>&1 && ok || bad "the third vm stop failed"
sim POST /_sim/faults "{\"kind\": \"fail-operation\", \"method\": \"PATCH\", \"path\": \"/subscriptions/$sub/resourceGroups/rg-dev/providers/Microsoft.Compute/disks/$d0\"}" >/dev/null
out=$(faked '2026-12-12 21:00:00' "$cli" vm start --db "$db" --vm app-01 --execute --poll-ms 50 \
  "${ARM[@]}" 2>"$scratch/start.err"); st=$?
[ "$st" = 1 ] && ok || bad "vm start with a disk not restored exited $st"
grep -q "^VM app-01 NOT started: app-01-data0 (failed; policy (none) requires the original SKU before a start)" <<<"$out" &&
  ok || bad "vm start's NOT started line: $out"
[ "$(sim_power app-01)" = deallocated ] && ok || bad "the VM was started: $(sim_power app-01)"
why=$(sqlite3 "$db" "SELECT reason FROM actions WHERE kind = 'upgrade' AND state = 'failed' ORDER BY id DESC LIMIT 1")
grep -q "^operation failed: " <<<"$why" && ! grep -q "HTTP 200" <<<"$why" && ok ||
  bad "the failed upgrade's reason: $why"

# Bad usage.
expect 2 "one of --policy FILE or --plan FILE" -- "$cli" apply --db "$db"
expect 2 "one of --policy FILE or --plan FILE" -- "$cli" apply --db "$db" --policy "$scratch/policy.json" --plan x
expect 2 "no such database" -- "$cli" apply --db "$scratch/none.db" --policy "$scratch/policy.json"
expect 2 "--state bogus" -- "$cli" actions --db "$db" --state bogus
expect 2 "one of --policy FILE or --to SKU" -- "$cli" vm stop --db "$db" --vm app-01
expect 2 "unknown subcommand" -- "$cli" vm reboot --db "$db" --vm app-01
echo '{"schema_version": "tierwise.policy/1"' >"$scratch/broken.json"
expect 2 "broken.json" -- "$cli" apply --db "$db" --policy "$scratch/broken.json"

finish test-switch-cycle
