#!/usr/bin/env bash
# The executor in the backend, against the simulator at chosen wall-clock
# times (faketime): POST /api/v1/actions (admin) as a dry run (200, what
# would be sent, nothing written) and executing (202 with the operation,
# whose result is the run's), its refusals (400, 403, 404); GET
# /api/v1/actions (reader) with ?state=, ?vm=, ?limit= and the cursor; then
# serve --scheduler --scheduler-interval 1s doing Monday's upgrades by
# itself, a stop while its run waits on ARM, and its usage errors.  Needs jq, curl, sqlite3 and faketime.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-switch-srv-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/tools/switch-lib.sh"
for t in jq curl sqlite3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
need_faketime
srv_pid=""
trap 'stop_sim; [ -n "$srv_pid" ] && kill -9 "$srv_pid" 2>/dev/null; rm -rf "$scratch"' EXIT
switch_scenario app-01 deallocated
start_sim
fresh_db
mkdir -p "$scratch/policies"
weekend_policy
cp "$scratch/policy.json" "$scratch/policies/dev-weekends.json"
admin=$("$cli" token create --db "$db" --role admin --name a 2>/dev/null)
reader=$("$cli" token create --db "$db" --role reader --name r 2>/dev/null)

# serve_at TIME ARGS...: the backend with its clock at TIME.
serve_at() {
  local when=$1; shift
  rm -f "$scratch/srv.port"
  faked_env "$when"
  "${FAKED[@]}" "$cli" serve --db "$db" --listen 127.0.0.1:0 --port-file "$scratch/srv.port" \
    --policies "$scratch/policies" --arm-url "http://127.0.0.1:$sim_port" \
    --imds-url "http://127.0.0.1:$sim_port" "$@" >"$scratch/srv.out" 2>"$scratch/srv.err" &
  srv_pid=$!
  for _ in $(seq 100); do [ -s "$scratch/srv.port" ] && break; sleep 0.1; done
  [ -s "$scratch/srv.port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/srv.err")"; exit 1; }
  base="http://127.0.0.1:$(cat "$scratch/srv.port")"
}
stop_srv() {
  kill -TERM "$srv_pid"; wait "$srv_pid"; srv_status=$?; srv_pid=""
}
# call METHOD PATH TOKEN [BODY]: the status; the body in $scratch/body
call() {
  local args=(-s -X "$1" -o "$scratch/body" -D "$scratch/headers" -w '%{http_code}')
  [ "$3" != - ] && args+=(-H "Authorization: Bearer $3")
  [ -n "${4:-}" ] && args+=(-H 'Content-Type: application/json' --data-binary "$4")
  curl "${args[@]}" "$base$2"
}

serve_at '2026-12-04 20:15:00' --sync --sync-interval 1h --subscription "$sub"
st=$(call POST /api/v1/actions "$admin" '{"policy": "dev-weekends"}')
[ "$st" = 200 ] && ok || bad "the dry run answered $st: $(cat "$scratch/body")"
jq -e '.dry_run == true and .planned == 2 and .summary.would_send == 2 and
  all(.results[]; .request.method == "PATCH" and (.request.body | test("Standard_LRS")))' \
  "$scratch/body" >/dev/null && ok || bad "the dry run: $(cat "$scratch/body")"
[ "$(sqlite3 "$db" "SELECT count(*) FROM actions")" = 0 ] && ok || bad "the dry run stored actions"
[ "$(patches app-01-data0)" = 0 ] && ok || bad "the dry run sent a PATCH"
st=$(call POST /api/v1/actions "$reader" '{"policy": "dev-weekends"}')
[ "$st" = 403 ] && ok || bad "a reader ran actions: $st"
st=$(call POST /api/v1/actions "$admin" '{"policy": "nope"}')
[ "$st" = 404 ] && jq -e '.error.code == "unknown_policy"' "$scratch/body" >/dev/null && ok ||
  bad "an unknown policy: $st $(cat "$scratch/body")"
st=$(call POST /api/v1/actions "$admin" '{"policy": "dev-weekends", "execute": "yes"}')
[ "$st" = 400 ] && ok || bad "a bad execute: $st"
st=$(call POST /api/v1/actions "$admin" '{"policy": "dev-weekends"')
[ "$st" = 400 ] && ok || bad "broken JSON: $st"
st=$(call POST /api/v1/actions "$admin" '{"policy": "dev-weekends", "currency": "EURO"}')
[ "$st" = 400 ] && ok || bad "a currency of 4 letters: $st"
st=$(call POST /api/v1/actions "$admin" '{"policy": "dev-weekends", "currency": "USD"}')
[ "$st" = 200 ] && ok || bad "the dry run in USD: $st $(cat "$scratch/body")"

st=$(call POST /api/v1/actions "$admin" '{"policy": "dev-weekends", "execute": true}')
[ "$st" = 202 ] && ok || bad "the executing run answered $st: $(cat "$scratch/body")"
op=$(jq -r '.id' "$scratch/body")
grep -qi "^Location: /api/v1/operations/$op" "$scratch/headers" && ok || bad "no Location of the operation"
st=$(call GET "/api/v1/operations/$op?wait=30" "$reader")
jq -e '.state == "succeeded" and .result.summary.done == 2 and .result.recorded == 2' \
  "$scratch/body" >/dev/null && ok || bad "the operation: $st $(cat "$scratch/body")"
[ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Standard_LRS Standard_LRS" ] && ok ||
  bad "the SKUs after the run"

st=$(call GET /api/v1/actions "$reader")
jq -e '(.actions | length) == 2 and .next_cursor == null and
  all(.actions[]; .state == "done" and .attempts == 1 and .vm == "app-01" and
      ([.transitions[].to] == ["planned", "checked", "sent", "verified", "done"]))' \
  "$scratch/body" >/dev/null && ok || bad "GET /api/v1/actions: $st $(cat "$scratch/body")"
# the run's owner: the API's prefix and the run's number
jq -e 'all(.actions[]; .transitions[2].owner | test(":api:[0-9]+/[0-9]+$"))' "$scratch/body" \
  >/dev/null && ok || bad "the API run's owner: $(jq -c '[.actions[].transitions[2].owner]' "$scratch/body")"
st=$(call GET "/api/v1/actions?state=done&vm=APP-01&limit=1" "$reader")
cur=$(jq -r '.next_cursor' "$scratch/body")
first=$(jq -r '.actions[0].id' "$scratch/body")
[ "$st" = 200 ] && [ "$cur" != null ] && [ "$(jq '.actions | length' "$scratch/body")" = 1 ] && ok ||
  bad "a page of one: $st $(cat "$scratch/body")"
st=$(call GET "/api/v1/actions?state=done&vm=APP-01&limit=1&cursor=$cur" "$reader")
jq -e --argjson first "$first" '(.actions | length) == 1 and .actions[0].id > $first and .next_cursor == null' \
  "$scratch/body" >/dev/null && ok || bad "the next page: $st $(cat "$scratch/body")"
st=$(call GET "/api/v1/actions?state=planned" "$reader")
jq -e '.actions == []' "$scratch/body" >/dev/null && ok || bad "?state=planned: $(cat "$scratch/body")"
st=$(call GET "/api/v1/actions?state=bogus" "$reader")
[ "$st" = 400 ] && ok || bad "?state=bogus answered $st"
st=$(call GET /api/v1/actions -)
[ "$st" = 401 ] && ok || bad "no token read the actions: $st"
stop_srv
[ "$srv_status" = 0 ] && ok || bad "serve stopped with $srv_status"

# The scheduler: Monday 05:35, the upgrades by itself (the books now in two
# currencies: --scheduler-currency chooses).
"$cli" prices import --db "$db" "$TW_SOURCE_DIR/pricing/azure-disk-prices.json" >/dev/null 2>&1 ||
  bad "importing the bundled books"
serve_at '2026-12-07 05:35:00' --scheduler --scheduler-interval 1s --scheduler-currency USD
for _ in $(seq 150); do
  [ "$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE kind = 'upgrade' AND state = 'done'" 2>/dev/null)" = 2 ] && break
  sleep 0.1
done
[ "$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE kind = 'upgrade' AND state = 'done'")" = 2 ] && ok ||
  bad "the scheduler did not upgrade the disks: $(cat "$scratch/srv.err")"
[ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Premium_LRS Premium_LRS" ] && ok ||
  bad "the SKUs after the scheduler"
owners=$(sqlite3 "$db" "SELECT DISTINCT t.owner GLOB '*:sched:[0-9]*/[0-9]*' FROM action_transitions t JOIN actions a ON a.id = t.action_id WHERE a.kind = 'upgrade' AND t.to_state = 'sent'")
[ "$owners" = 1 ] && ok || bad "the scheduler's owner: $(sqlite3 "$db" "SELECT owner FROM action_transitions")"
grep -q "scheduler: policy dev-weekends: 2 due, 2 recorded; 2 done" "$scratch/srv.err" && ok ||
  bad "the scheduler's line: $(cat "$scratch/srv.err")"
sleep 2 # more ticks: nothing new
[ "$(sqlite3 "$db" "SELECT count(*) FROM actions")" = 4 ] && ok || bad "later ticks recorded more"
[ "$(patches app-01-data0)" = 2 ] && ok || bad "later ticks sent more PATCHes"
stop_srv
[ "$srv_status" = 0 ] && ok || bad "serve --scheduler stopped with $srv_status"
n=$(sqlite3 "$db" "SELECT count(*) FROM actions WHERE state NOT IN ('done', 'skipped', 'failed', 'planned')")
[ "$n" = 0 ] && ok || bad "$n actions left in flight by the stop"

# Two different plans POSTed at once: each a run of its own (a run joins
# only one of the same plan text), both succeed.
sim POST /_sim/clock '{"advance_s": 864000}' >/dev/null # past ARM's quota day
plan_a=$(faked '2026-12-11 19:00:00' "$cli" plan --db "$db" --policy "$scratch/policy.json" \
  --from 2026-12-11 --to 2026-12-15 --currency USD --json)
plan_b=$(jq -c '.actions |= map(select(.disk == "app-01-data1"))' <<<"$plan_a")
serve_at '2026-12-11 20:15:00' --sync --sync-interval 24h --subscription "$sub"
st=$(call POST /api/v1/actions "$admin" "{\"plan\": $plan_a, \"execute\": true}")
op_a=$(jq -r '.id' "$scratch/body")
st2=$(call POST /api/v1/actions "$admin" "{\"plan\": $plan_b, \"execute\": true}")
op_b=$(jq -r '.id' "$scratch/body")
[ "$st $st2" = "202 202" ] && [ -n "$op_a" ] && [ "$op_a" != "$op_b" ] && ok ||
  bad "two plans: $st $op_a, $st2 $op_b (the second joined the first?)"
st=$(call GET "/api/v1/operations/$op_a?wait=30" "$reader")
jq -e '.state == "succeeded" and .result.summary.done == 2' "$scratch/body" >/dev/null && ok ||
  bad "the first plan's run: $st $(cat "$scratch/body")"
st=$(call GET "/api/v1/operations/$op_b?wait=30" "$reader")
jq -e '.state == "succeeded"' "$scratch/body" >/dev/null && ok ||
  bad "the second plan's run: $st $(cat "$scratch/body")"
[ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Standard_LRS Standard_LRS" ] && ok ||
  bad "the SKUs after the two plans: $(sim_sku app-01-data0) $(sim_sku app-01-data1)"
[ "$(patches app-01-data1)" = 3 ] && ok || bad "data1 got $(patches app-01-data1) PATCHes (one more expected)"
stop_srv
[ "$srv_status" = 0 ] && ok || bad "serve stopped with $srv_status"

# A stop while the scheduler's run waits on ARM (each PATCH answered after
# 13 s, past the stop's 10 s grace): the stop waits for the run to reach
# its next step instead of freeing what it reads, the PATCH answered is
# recorded, and the next backend resumes the rest: each disk PATCHed once.
p0=$(patches app-01-data0) p1=$(patches app-01-data1)
sim POST /_sim/faults '{"kind": "latency", "ms": 13000, "method": "PATCH"}' >/dev/null
serve_at '2026-12-14 05:35:00' --scheduler --scheduler-interval 1s --scheduler-currency USD
for _ in $(seq 150); do
  [ "$(sim GET /_sim/faults | jq '[.faults[].fired] | add // 0')" -ge 1 ] && break
  sleep 0.1
done
[ "$(sim GET /_sim/faults | jq '[.faults[].fired] | add // 0')" -ge 1 ] && ok ||
  bad "no PATCH of the scheduler's run reached the simulator: $(cat "$scratch/srv.err")"
stop_srv
[ "$srv_status" = 0 ] && ok || bad "serve stopped during a run with $srv_status: $(tail -5 "$scratch/srv.err")"
grep -q "stopping: waiting for a tier-switch run to reach its next step" "$scratch/srv.err" && ok ||
  bad "the stop did not wait for the run: $(cat "$scratch/srv.err")"
! grep -q "AddressSanitizer\|runtime error" "$scratch/srv.err" && ok || bad "the stop: $(cat "$scratch/srv.err")"
[ "$(( $(patches app-01-data0) + $(patches app-01-data1) - p0 - p1 ))" = 1 ] && ok ||
  bad "PATCHes during the stopped run: data0 $p0 -> $(patches app-01-data0), data1 $p1 -> $(patches app-01-data1)"
sim DELETE /_sim/faults >/dev/null
serve_at '2026-12-14 05:36:00' --scheduler --scheduler-interval 1s --scheduler-currency USD
for _ in $(seq 200); do
  [ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Premium_LRS Premium_LRS" ] && break
  sleep 0.1
done
[ "$(sim_sku app-01-data0) $(sim_sku app-01-data1)" = "Premium_LRS Premium_LRS" ] && ok ||
  bad "after the restart the SKUs are $(sim_sku app-01-data0) $(sim_sku app-01-data1): $(cat "$scratch/srv.err")"
[ "$(patches app-01-data0) $(patches app-01-data1)" = "$((p0 + 1)) $((p1 + 1))" ] && ok ||
  bad "each disk PATCHed once: data0 $p0 -> $(patches app-01-data0), data1 $p1 -> $(patches app-01-data1)"
stop_srv
[ "$srv_status" = 0 ] && ok || bad "serve stopped with $srv_status"

expect 2 "--scheduler runs the policies of --policies DIR" -- "$cli" serve --db "$db" --scheduler
expect 2 "--scheduler-interval is for --scheduler" -- "$cli" serve --db "$db" --scheduler-interval 1m
expect 2 "--scheduler-currency \"EURO\"" -- "$cli" serve --db "$db" --policies "$scratch/policies" --scheduler --scheduler-currency EURO
expect 2 "--scheduler-currency \"USD\" is for --scheduler" -- "$cli" serve --db "$db" --scheduler-currency USD
expect 2 "--scheduler-interval" -- "$cli" serve --db "$db" --policies "$scratch/policies" --scheduler --scheduler-interval 0s

finish test-switch-server
