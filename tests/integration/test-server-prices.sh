#!/usr/bin/env bash
# tierwise serve: GET /api/v1/prices answers the bundled snapshot until an
# admin's POST /api/v1/prices/refresh has fetched the region's prices from
# the (simulated) Retail Prices API; then it answers those and says so.  A
# refresh that fails leaves the stored book as it was.  Needs curl and jq.
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
# A refresh from the simulator (its scenario's westeurope prices).
[ "$(refresh '{"region":"westeurope","currency":"USD"}')" = 200 ] && ok || bad "refresh: $(cat "$scratch/body")"
jq -e '.items > 0 and .prices > 0 and .pages >= 1' "$scratch/body" >/dev/null && ok || bad "refresh body: $(cat "$scratch/body")"
fetched=$(jq -r .fetched_at "$scratch/body")
[ "$(req GET '/api/v1/prices?region=westeurope&currency=USD' "$reader")" = 200 ] && ok || bad "after refresh"
jq -e --arg f "$fetched" '(.source | test("snapshot") | not) and .fetched_at == $f' "$scratch/body" >/dev/null &&
  ok || bad "after refresh, source/fetched_at: $(jq -c '{source,fetched_at}' "$scratch/body")"

# The API fails (every request answered 500): 502, and the book stays.
curl -s --noproxy '*' -X POST -H 'Content-Type: application/json' \
  -d '{"kind":"error","path":"/api/retail/prices","status":500,"count":100}' "$simurl/_sim/faults" >/dev/null
code=$(refresh '{"region":"westeurope","currency":"USD"}')
[ "$code" = 502 ] && ok || bad "refresh against a failing API: $code $(cat "$scratch/body")"
req GET '/api/v1/prices?region=westeurope&currency=USD' "$reader" >/dev/null
jq -e --arg f "$fetched" '.fetched_at == $f' "$scratch/body" >/dev/null && ok || bad "the book changed after a failed refresh"

# Bad bodies.
[ "$(refresh '{"region":"westeurope"}')" = 400 ] && ok || bad "no currency accepted"
[ "$(refresh '{"region":')" = 400 ] && ok || bad "bad JSON accepted"
[ "$(refresh '{"region":"west europe!","currency":"USD"}')" = 400 ] && ok || bad "bad region accepted: $(cat "$scratch/body")"
healthy && ok || bad "server stopped answering"
finish server-prices
