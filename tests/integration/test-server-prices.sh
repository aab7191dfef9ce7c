#!/usr/bin/env bash
# tierwise serve: GET /api/v1/prices answers the bundled snapshot until an
# admin's POST /api/v1/prices/refresh has fetched the region's prices from
# the (simulated) Retail Prices API; then it answers those and says so.  A
# refresh answers 202 with an operation (Location: /api/v1/operations/{id})
# that is polled until it succeeds or fails; a second refresh of the same
# region and currency while one runs joins it.  A refresh that fails leaves
# the stored book as it was.  A SIGTERM while a refresh hangs on a slow API
# stops the server within its grace.  Needs curl and jq.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-prices-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq
sim=""
trap 'cleanup_servers; [ -n "$sim" ] && kill -KILL "$sim" 2>/dev/null; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1

"${TW_AZSIM:?}" --scenario "$srcdir/tests/fixtures/sim/scenario-basic.json" \
  --port-file "$scratch/sim.port" >/dev/null 2>"$scratch/sim.err" &
sim=$!
for _ in $(seq 100); do [ -s "$scratch/sim.port" ] && break; sleep 0.1; done
simurl="http://127.0.0.1:$(cat "$scratch/sim.port")"

reader=$(make_token reader)
admin=$(make_token admin)
start_server main --prices-url "$simurl"
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

# Before any refresh: the bundled snapshot, with real westeurope prices.
[ "$(req GET '/api/v1/prices?region=westeurope&currency=USD' "$reader")" = 200 ] && ok || bad "snapshot: $(cat "$scratch/body")"
jq -e '.source | test("snapshot")' "$scratch/body" >/dev/null && ok || bad "source: $(jq .source "$scratch/body")"
jq -e '[.prices[] | select(.tier == "P10" and .redundancy == "LRS")] | length == 1' "$scratch/body" >/dev/null &&
  ok || bad "no P10 LRS in the snapshot"
[ "$(req GET '/api/v1/prices?region=westeurope&currency=USD&sku=P10' "$reader")" = 200 ] && ok || bad "sku=P10: $(cat "$scratch/body")"
[ "$(req GET '/api/v1/prices?currency=USD' "$reader")" = 400 ] && ok || bad "no region accepted"
[ "$(req GET '/api/v1/prices?region=westeurope&currency=USD&sku=Q99' "$reader")" = 404 ] && ok || bad "unknown sku: $(cat "$scratch/body")"
jq -e '.error.code == "price_missing"' "$scratch/body" >/dev/null && ok || bad "404 code: $(cat "$scratch/body")"

refresh() { # BODY
  req POST /api/v1/prices/refresh "$admin" -H 'Content-Type: application/json' --data-binary "$1"
}
# poll ID: GETs the operation until it has finished (at most 30 s, with
# ?wait= doing the waiting); its last answer is in $scratch/body.
poll() {
  local state
  for _ in $(seq 30); do
    [ "$(req GET "/api/v1/operations/$1?wait=1" "$reader")" = 200 ] || return 1
    state=$(jq -r .state "$scratch/body")
    case $state in succeeded|failed) return 0 ;; esac
  done
  return 1
}
# A refresh from the simulator (its scenario's westeurope prices): 202, an
# operation, then succeeded with what the refresh did as its result.
[ "$(refresh '{"region":"westeurope","currency":"USD"}')" = 202 ] && ok || bad "refresh: $(cat "$scratch/body")"
op=$(jq -r .id "$scratch/body")
jq -e '.kind == "prices.refresh" and (.state == "queued" or .state == "running" or .state == "succeeded")
       and (.id | test("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"))
       and .request == {"region":"westeurope","currency":"USD"} and (.created_at | test("Z$"))' \
  "$scratch/body" >/dev/null && ok || bad "202 body: $(cat "$scratch/body")"
grep -qi "^Location: /api/v1/operations/$op" "$scratch/headers" && ok || bad "202 without Location: $(cat "$scratch/headers")"
poll "$op" && ok || bad "operation $op did not finish: $(cat "$scratch/body")"
jq -e '.state == "succeeded" and .error == null and .result.items > 0 and .result.prices > 0
       and .result.pages >= 1 and .result.region == "westeurope" and .result.currency == "USD"
       and .started_at != null and .finished_at != null' "$scratch/body" >/dev/null &&
  ok || bad "refresh operation: $(cat "$scratch/body")"
fetched=$(jq -r .result.fetched_at "$scratch/body")
[ "$(req GET '/api/v1/prices?region=westeurope&currency=USD' "$reader")" = 200 ] && ok || bad "after refresh"
jq -e --arg f "$fetched" '(.source | test("snapshot") | not) and .fetched_at == $f' "$scratch/body" >/dev/null &&
  ok || bad "after refresh, source/fetched_at: $(jq -c '{source,fetched_at}' "$scratch/body")"
# Operations: an unknown id is a 404 in the error envelope; readers may
# look, agents may not; a bad wait is a 400.
[ "$(req GET /api/v1/operations/00000000-0000-4000-8000-000000000000 "$reader")" = 404 ] && ok || bad "unknown operation: $(cat "$scratch/body")"
jq -e '.error.code == "not_found" and .error.message' "$scratch/body" >/dev/null && ok || bad "404 body: $(cat "$scratch/body")"
[ "$(req GET "/api/v1/operations/$op?wait=600" "$reader")" = 400 ] && ok || bad "wait=600 accepted"
agent=$(make_token agent)
[ "$(req GET "/api/v1/operations/$op" "$agent")" = 403 ] && ok || bad "agent read an operation"

# A slow API (every page 1.5 s late): the refresh is running when a second
# one for the same region and currency comes, which joins it.
curl -s --noproxy '*' -X POST -H 'Content-Type: application/json' \
  -d '{"kind":"latency","path":"/api/retail/prices","ms":1500,"count":2}' "$simurl/_sim/faults" >/dev/null
[ "$(refresh '{"region":"westeurope","currency":"USD"}')" = 202 ] && ok || bad "slow refresh: $(cat "$scratch/body")"
op2=$(jq -r .id "$scratch/body")
[ "$(refresh '{"region":"westeurope","currency":"USD"}')" = 202 ] && ok || bad "second refresh: $(cat "$scratch/body")"
[ "$(jq -r .id "$scratch/body")" = "$op2" ] && ok || bad "a second refresh did not join $op2: $(cat "$scratch/body")"
poll "$op2" && jq -e '.state == "succeeded"' "$scratch/body" >/dev/null && ok || bad "slow refresh: $(cat "$scratch/body")"
fetched=$(jq -r .result.fetched_at "$scratch/body")
curl -s --noproxy '*' -X DELETE "$simurl/_sim/faults" >/dev/null

# The API fails (every request answered 500): the operation fails with
# upstream_failed, and the book stays.
curl -s --noproxy '*' -X POST -H 'Content-Type: application/json' \
  -d '{"kind":"error","path":"/api/retail/prices","status":500,"count":100}' "$simurl/_sim/faults" >/dev/null
[ "$(refresh '{"region":"westeurope","currency":"USD"}')" = 202 ] && ok || bad "refresh against a failing API: $(cat "$scratch/body")"
op3=$(jq -r .id "$scratch/body")
poll "$op3" && ok || bad "failing refresh did not finish: $(cat "$scratch/body")"
jq -e '.state == "failed" and .result == null and .error.code == "upstream_failed" and (.error.message | length > 0)' \
  "$scratch/body" >/dev/null && ok || bad "failed refresh: $(cat "$scratch/body")"
req GET '/api/v1/prices?region=westeurope&currency=USD' "$reader" >/dev/null
jq -e --arg f "$fetched" '.fetched_at == $f' "$scratch/body" >/dev/null && ok || bad "the book changed after a failed refresh"
curl -s --noproxy '*' -X DELETE "$simurl/_sim/faults" >/dev/null

# Bad bodies.
[ "$(refresh '{"region":"westeurope"}')" = 400 ] && ok || bad "no currency accepted"
[ "$(refresh '{"region":')" = 400 ] && ok || bad "bad JSON accepted"
[ "$(refresh '{"region":"west europe!","currency":"USD"}')" = 400 ] && ok || bad "bad region accepted: $(cat "$scratch/body")"
healthy && ok || bad "server stopped answering"

# SIGTERM while a refresh waits on an API that answers after 60 s: the
# server stops within its grace (10 s, plus a little), exit status 0.
curl -s --noproxy '*' -X POST -H 'Content-Type: application/json' \
  -d '{"kind":"latency","path":"/api/retail/prices","ms":60000,"count":5}' "$simurl/_sim/faults" >/dev/null
[ "$(refresh '{"region":"northeurope","currency":"USD"}')" = 202 ] && ok || bad "hanging refresh: $(cat "$scratch/body")"
op4=$(jq -r .id "$scratch/body")
for _ in $(seq 50); do
  req GET "/api/v1/operations/$op4" "$reader" >/dev/null
  [ "$(jq -r .state "$scratch/body")" = running ] && break
  sleep 0.1
done
jq -e '.state == "running"' "$scratch/body" >/dev/null && ok || bad "the refresh is not running: $(cat "$scratch/body")"
t0=$(date +%s)
stop_server TERM
took=$(($(date +%s) - t0))
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGTERM with a refresh running"
[ "$took" -le 14 ] && ok || bad "the stop took $took s with a refresh running"
grep -q "stopped by SIGTERM" "$scratch/main.err" && ok || bad "no stop line: $(tail -3 "$scratch/main.err")"
finish server-prices
