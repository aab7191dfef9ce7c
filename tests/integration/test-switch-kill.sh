#!/usr/bin/env bash
# A crash between "sent" and "verified" (kill -9 of the executor), and two
# executors on one database at once, against the simulator at chosen
# wall-clock times (faketime):
#  - the operation's polls are held back (a latency fault), `apply
#    --execute` is killed once both downgrades are "sent"; the next tick
#    (after the dead executor's claims expired) polls or reads the disks
#    back and finishes: every action done, the simulator's PATCH counter of
#    each disk 1 (nothing sent twice);
#  - two `apply --execute` at once over four disks: every action done once
#    (one "sent" move each in the audit log, one PATCH per disk);
#  - a `vm stop` killed while its deallocation is in flight: the next apply
#    tick resumes it (one deallocate call).
# Needs jq, curl, sqlite3 and faketime.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-switch-kill-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/tools/switch-lib.sh"
for t in jq curl sqlite3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
need_faketime
trap 'stop_sim; [ -n "${apid:-}" ] && kill -9 "$apid" 2>/dev/null; rm -rf "$scratch"' EXIT
weekend_policy
switch_scenario app-01 deallocated
start_sim
fresh_db

# ---- kill -9 between sent and verified ----
sim POST /_sim/faults "{\"kind\": \"latency\", \"ms\": 60000, \"path\": \"/subscriptions/$sub/providers/Microsoft.Compute/locations\"}" >/dev/null
faked_env '2026-12-04 20:15:00'
"${FAKED[@]}" "$cli" apply --db "$db" --policy "$scratch/policy.json" --currency USD --poll-ms 50 \
  "${ARM[@]}" --execute >"$scratch/apply1.out" 2>&1 &
apid=$!
sent=0
for _ in $(seq 300); do
  sent=$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE state = 'sent' AND arm_operation_url != ''" 2>/dev/null || echo 0)
  [ "$sent" = 1 ] && break
  sleep 0.05
done
kill -9 "$apid"
wait "$apid" 2>/dev/null
kill -0 "$apid" 2>/dev/null && bad "the executor survived kill -9" || ok
apid=""
[ "$sent" = 1 ] && ok || bad "no action reached sent before the kill: $(cat "$scratch/apply1.out")"
url=$(sqlite3 "$db" "SELECT arm_operation_url FROM actions WHERE state = 'sent'")
[ -n "$url" ] && ok || bad "the sent action kept no operation URL"
sim DELETE /_sim/faults >/dev/null
# a tick within the dead executor's lease leaves its action alone
out=$(at '2026-12-04 20:16:00' apply --execute --json)
jq -e '.summary.held >= 1' <<<"$out" >/dev/null && ok || bad "a live lease was taken over: $out"
# past it (10 min), resumed: polled or read back, not sent again
for when in '2026-12-04 20:26:00' '2026-12-04 20:27:00'; do
  out=$(at "$when" apply --execute --json)
done
states=$(sqlite3 "$db" "SELECT group_concat(state) FROM actions ORDER BY id")
[ "$states" = done,done ] && ok || bad "after the resume the actions are $states: $out"
[ "$(patches app-01-data0) $(patches app-01-data1)" = "1 1" ] && ok ||
  bad "PATCHes after the resume: $(patches app-01-data0) $(patches app-01-data1)"
attempts=$(sqlite3 "$db" "SELECT group_concat(attempts) FROM actions ORDER BY id")
[ "$attempts" = 1,1 ] && ok || bad "attempts after the resume: $attempts"
[ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Standard_LRS Standard_LRS" ] && ok ||
  bad "the SKUs after the resume"
stop_sim

# ---- two executors on one database ----
four='[{"name": "NAME-d0", "role": "data", "lun": 0, "sku": "Premium_LRS", "size_gib": 128},
       {"name": "NAME-d1", "role": "data", "lun": 1, "sku": "Premium_LRS", "size_gib": 128},
       {"name": "NAME-d2", "role": "data", "lun": 2, "sku": "Premium_LRS", "size_gib": 256},
       {"name": "NAME-d3", "role": "data", "lun": 3, "sku": "Premium_LRS", "size_gib": 256}]'
switch_scenario app-02 deallocated "$four"
start_sim
fresh_db
at '2026-12-04 20:15:00' apply --execute --json >"$scratch/a.json" 2>"$scratch/a.err" &
a=$!
at '2026-12-04 20:15:00' apply --execute --json >"$scratch/b.json" 2>"$scratch/b.err" &
b=$!
wait "$a"; sa=$?
wait "$b"; sb=$?
[ "$sa$sb" = 00 ] && ok || bad "the executors exited $sa and $sb: $(cat "$scratch/a.err" "$scratch/b.err")"
# whatever one held, a third tick finishes
out=$(at '2026-12-04 20:30:00' apply --execute --json)
states=$(sqlite3 "$db" "SELECT group_concat(state) FROM actions ORDER BY id")
[ "$states" = done,done,done,done ] && ok || bad "after two executors the actions are $states"
n=$(sqlite3 "$db" "SELECT count(*) FROM actions")
[ "$n" = 4 ] && ok || bad "two executors recorded $n actions for four switches"
sends=$(sqlite3 "$db" "SELECT group_concat(c) FROM (SELECT count(*) AS c FROM action_transitions WHERE to_state = 'sent' GROUP BY action_id ORDER BY action_id)")
[ "$sends" = 1,1,1,1 ] && ok || bad "moves to sent per action: $sends"
p=$(for d in d0 d1 d2 d3; do patches app-02-$d; done | tr '\n' ' ')
[ "$p" = "1 1 1 1 " ] && ok || bad "PATCHes per disk with two executors: $p"
done_a=$(jq '.summary.done' "$scratch/a.json") done_b=$(jq '.summary.done' "$scratch/b.json")
[ $((done_a + done_b + $(jq '.summary.done' <<<"$out"))) = 4 ] && ok ||
  bad "the executors say they did $done_a and $done_b (and $(jq '.summary.done' <<<"$out") later)"

stop_sim

# ---- a vm stop killed while its deallocation is in flight: the next apply
# tick resumes it (in flight, whatever planned it), not sent again ----
switch_scenario app-03 running
start_sim
fresh_db
sim POST /_sim/faults "{\"kind\": \"latency\", \"ms\": 60000, \"path\": \"/subscriptions/$sub/providers/Microsoft.Compute/locations\"}" >/dev/null
faked_env '2026-12-04 20:00:00'
"${FAKED[@]}" "$cli" vm stop --db "$db" --vm app-03 --to Standard_LRS --execute \
  --poll-ms 50 "${ARM[@]}" >"$scratch/stop.out" 2>&1 &
apid=$!
sent=0
for _ in $(seq 300); do
  sent=$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE kind = 'deallocate' AND state = 'sent' AND arm_operation_url != ''" 2>/dev/null || echo 0)
  [ "$sent" = 1 ] && break
  sleep 0.05
done
kill -9 "$apid"
wait "$apid" 2>/dev/null
apid=""
[ "$sent" = 1 ] && ok || bad "the deallocation was not in flight before the kill: $(cat "$scratch/stop.out")"
sim DELETE /_sim/faults >/dev/null
out=$(at '2026-12-04 20:11:00' apply --execute --json) # past the dead one's 10 min lease
state=$(sqlite3 "$db" "SELECT state FROM actions WHERE kind = 'deallocate'")
[ "$state" = done ] && ok || bad "the killed vm stop's deallocation is $state after a tick: $out"
va=$(sim GET /_sim/counters | jq '[.vm_actions[]] | add // 0')
[ "$va" = 1 ] && ok || bad "the VM got $va start/deallocate calls (one was sent)"
[ "$(sim_power app-03)" = deallocated ] && ok || bad "app-03 is $(sim_power app-03)"

finish test-switch-kill
