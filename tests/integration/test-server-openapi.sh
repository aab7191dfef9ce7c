#!/usr/bin/env bash
# The OpenAPI document of tierwise serve (src/server/openapi.json): a valid
# OpenAPI 3.1 document (openapi-spec-validator) whose operations are
# exactly the route table of src/server/api.c, served unchanged at
# /api/v1/openapi.json without a token; and every route's answers from a
# live server, 200s, 201/202 and 4xx errors alike, checked against it
# (status documented, media type, body against its JSON schema) by
# tests/tools/openapi-check.py.  The checker itself is shown to catch a
# body off its schema (a verdict's VM cap as a silent null among them), an
# undocumented status, an HTML error page, a route left undocumented and
# one documented that does not exist.  Needs curl, jq, sqlite3 and a python3
# with openapi_spec_validator and jsonschema (Debian's
# python3-openapi-spec-validator, or pip's); 77 without.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-openapi-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
sim=""
trap 'cleanup_servers; [ -n "$sim" ] && kill -KILL "$sim" 2>/dev/null; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1

py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null &&
     "$cand" -c 'import openapi_spec_validator, jsonschema' 2>/dev/null; then
    py=$cand
    break
  fi
done
[ -n "$py" ] || { echo "no python3 with openapi_spec_validator and jsonschema: skipped"; exit 77; }
doc="$srcdir/src/server/openapi.json"
api_c="$srcdir/src/server/api.c"
check="$srcdir/tests/tools/openapi-check.py"

# ---- the document ----
"$py" "$check" validate "$doc" "$api_c" >"$scratch/validate.out" 2>&1 && ok ||
  bad "the document: $(cat "$scratch/validate.out")"
# The checker refuses a document that lacks a route, or has one too many.
jq 'del(.paths["/api/v1/disks/{id}"])' "$doc" >"$scratch/less.json"
"$py" "$check" validate "$scratch/less.json" "$api_c" >"$scratch/less.out" 2>&1
[ $? = 1 ] && grep -q 'GET /api/v1/disks/{id} of .* is not documented' "$scratch/less.out" && ok ||
  bad "a missing route was not caught: $(cat "$scratch/less.out")"
jq '.paths["/api/v1/plans"] = {"get": {"responses": {"200": {"description": "x"}}}}' "$doc" >"$scratch/more.json"
"$py" "$check" validate "$scratch/more.json" "$api_c" >"$scratch/more.out" 2>&1
[ $? = 1 ] && grep -q 'GET /api/v1/plans is documented but' "$scratch/more.out" && ok ||
  bad "a route that does not exist was not caught: $(cat "$scratch/more.out")"
jq 'del(.info)' "$doc" >"$scratch/invalid.json"
"$py" "$check" validate "$scratch/invalid.json" "$api_c" >"$scratch/invalid.out" 2>&1
[ $? = 1 ] && grep -q 'is not valid OpenAPI' "$scratch/invalid.out" && ok ||
  bad "a document without info was not refused: $(cat "$scratch/invalid.out")"

# ---- a live server (and the simulator, for a prices refresh) ----
"${TW_AZSIM:?}" --scenario "$srcdir/tests/fixtures/sim/scenario-basic.json" \
  --port-file "$scratch/sim.port" >/dev/null 2>"$scratch/sim.err" &
sim=$!
for _ in $(seq 100); do [ -s "$scratch/sim.port" ] && break; sleep 0.1; done
[ -s "$scratch/sim.port" ] || { echo "FAIL: the simulator did not start: $(cat "$scratch/sim.err")"; exit 1; }
simurl="http://127.0.0.1:$(cat "$scratch/sim.port")"
agent=$(make_token agent)
reader=$(make_token reader)
admin=$(make_token admin)
# One action in the audit log, for GET /api/v1/actions/{id}.
sqlite3 "$db" "INSERT INTO actions(id, kind, from_sku, to_sku, state, requested_at, dry_run)
  VALUES (900001, 'downgrade', 'Premium_LRS', 'StandardSSD_LRS', 'done', '2026-11-06T20:15:00Z', 0);
  INSERT INTO action_transitions(action_id, from_state, to_state, at, owner, detail)
  VALUES (900001, NULL, 'planned', '2026-11-06T20:00:00Z', 'test', ''),
         (900001, 'planned', 'done', '2026-11-06T20:16:00Z', 'test', '')" || bad "storing an action"
# (--sync gives the server ARM's credential, which POST /api/v1/actions needs)
start_server main --prices-url "$simurl" --body-max 16KiB --policies "$srcdir/policies" \
  --sync --sync-interval 1h --arm-url "$simurl" --imds-url "$simurl"
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

# ask WANT METHOD PATH TOKEN [CURL ARGS...]: a request whose answer is kept
# for the checker; WANT is the status expected.
answers="$scratch/answers.tsv"
: >"$answers"
n=0
ask() {
  local want=$1 method=$2 path=$3 tok=$4; shift 4
  local got
  got=$(req "$method" "$path" "$tok" "$@")
  n=$((n + 1))
  cp "$scratch/body" "$scratch/a$n"
  local ctype
  ctype=$(tr -d '\r' <"$scratch/headers" | awk 'tolower($1) == "content-type:" {sub(/^[^:]*: */, ""); print}' | tail -1)
  printf '%s\t%s\t%s\t%s\t%s\n' "$method" "${path%%\?*}" "$got" "${ctype:--}" "$scratch/a$n" >>"$answers"
  [ "$got" = "$want" ] && ok || bad "$method $path: $got, want $want: $(head -c 300 "$scratch/body")"
}
json=(-H 'Content-Type: application/json')

ask 200 GET /healthz -
ask 200 GET /metrics -
ask 200 GET /api/v1/openapi.json -
cmp -s "$scratch/body" "$doc" && ok || bad "the served document is not src/server/openapi.json"
grep -qi '^Content-Type: application/json' "$scratch/headers" && ok || bad "openapi.json content type"

for f in "$fixtures"/reports/*.json; do
  ask 201 POST /api/v1/reports "$agent" "${json[@]}" --data-binary "@$f"
done
ask 200 POST /api/v1/reports "$agent" "${json[@]}" --data-binary "@$fixtures/reports/web-03.json"
ask 400 POST /api/v1/reports "$agent" "${json[@]}" --data-binary '{"id": '
ask 400 POST /api/v1/reports "$agent" "${json[@]}" --data-binary '{"schema_version": "tierwise.report/1"}'
ask 401 POST /api/v1/reports - "${json[@]}" --data-binary "@$fixtures/reports/web-03.json"
ask 401 POST /api/v1/reports not-a-token "${json[@]}" --data-binary "@$fixtures/reports/web-03.json"
ask 403 POST /api/v1/reports "$reader" "${json[@]}" --data-binary "@$fixtures/reports/web-03.json"
ask 415 POST /api/v1/reports "$agent" -H 'Content-Type: text/plain' --data-binary "@$fixtures/reports/web-03.json"
head -c 20000 /dev/zero | tr '\0' ' ' >"$scratch/20k.json"
ask 413 POST /api/v1/reports "$agent" "${json[@]}" --data-binary "@$scratch/20k.json"

ask 200 GET /api/v1/vms "$reader"
vm=$(jq '.vms[] | select(.name == "web-03") | .id' "$scratch/body")
ask 200 GET '/api/v1/vms?limit=1' "$reader"
cursor=$(jq -r .next_cursor "$scratch/body")
[ "$cursor" != null ] && ok || bad "no next_cursor with limit=1"
ask 200 GET "/api/v1/vms?limit=1&cursor=$cursor" "$admin"
ask 200 GET '/api/v1/vms?resource_group=rg-web&vm=web-03' "$reader"
ask 400 GET '/api/v1/vms?limit=0' "$reader"
ask 400 GET '/api/v1/vms?cursor=nope' "$reader"
ask 401 GET /api/v1/vms -
ask 403 GET /api/v1/vms "$agent"
ask 200 GET "/api/v1/vms/$vm" "$reader"
ask 404 GET /api/v1/vms/999999 "$reader"

ask 200 GET /api/v1/disks "$reader"
disk=$(jq '.disks[] | select(.name == "web-03-data0") | .id' "$scratch/body")
ask 200 GET '/api/v1/disks?sku=P10&limit=2' "$reader"
ask 200 GET '/api/v1/disks?vm=sap-db-01' "$reader"
ask 400 GET '/api/v1/disks?limit=5001' "$reader"
ask 200 GET "/api/v1/disks/$disk" "$reader"
[ "$(jq '.results | length' "$scratch/body")" -ge 1 ] && ok || bad "the disk has no results to check"
ask 404 GET /api/v1/disks/999999 "$reader"

ask 200 GET /api/v1/compliance "$reader"
[ "$(jq '.verdicts | length' "$scratch/body")" -ge 1 ] && ok || bad "no verdicts to check"
ask 200 GET '/api/v1/compliance?verdict=under&limit=2' "$reader"
ask 400 GET '/api/v1/compliance?verdict=great' "$reader"
ask 200 GET /api/v1/compliance/summary "$reader"
ask 403 GET /api/v1/compliance/summary "$agent"

ask 200 GET '/api/v1/prices?region=westeurope' "$reader"
ask 200 GET '/api/v1/prices?region=westeurope&currency=USD&sku=P10' "$reader"
ask 400 GET /api/v1/prices "$reader"
ask 404 GET '/api/v1/prices?region=westeurope&sku=Q99' "$reader"
# The what-if calculator on the bundled snapshot's westeurope USD prices.
wi='"region":"westeurope","from_tier":"P10","to_tier":"E10","windows":["Sat 00:00-Mon 00:00"],"period":"2026-01-01..2027-01-01"'
ask 200 POST /api/v1/savings/whatif "$reader" "${json[@]}" --data-binary "{$wi,\"currency\":\"USD\",\"count\":70}"
ask 400 POST /api/v1/savings/whatif "$reader" "${json[@]}" --data-binary "{$wi}"
ask 404 POST /api/v1/savings/whatif "$reader" "${json[@]}" --data-binary "{$wi,\"currency\":\"NOK\"}"
ask 403 POST /api/v1/savings/whatif "$agent" "${json[@]}" --data-binary "{$wi,\"currency\":\"USD\"}"

ask 202 POST /api/v1/prices/refresh "$admin" "${json[@]}" --data-binary '{"region":"westeurope","currency":"USD"}'
op=$(jq -r .id "$scratch/body")
ask 400 POST /api/v1/prices/refresh "$admin" "${json[@]}" --data-binary '{"region":"westeurope"}'
ask 400 POST /api/v1/prices/refresh "$admin" "${json[@]}" --data-binary '{"region":'
ask 403 POST /api/v1/prices/refresh "$reader" "${json[@]}" --data-binary '{"region":"westeurope","currency":"USD"}'
state=""
for _ in $(seq 30); do
  ask 200 GET "/api/v1/operations/$op?wait=1" "$reader"
  state=$(jq -r .state "$scratch/body")
  case $state in succeeded|failed) break ;; esac
done
[ "$state" = succeeded ] && ok || bad "the refresh did not succeed: $(cat "$scratch/body")"
ask 404 GET /api/v1/operations/00000000-0000-4000-8000-000000000000 "$reader"
ask 400 GET "/api/v1/operations/$op?wait=600" "$reader"
ask 405 DELETE /api/v1/vms "$reader"
ask 200 GET /api/v1/policies "$reader"
ask 200 GET /api/v1/policies/dev-weekends "$reader"
ask 200 GET /api/v1/policies/sap-production "$admin"
ask 404 GET /api/v1/policies/no-such-policy "$reader"
ask 403 GET /api/v1/policies "$agent"
ask 200 GET '/api/v1/savings/opportunities?policy=dev-weekends&month=2026-12' "$reader"
ask 400 GET '/api/v1/savings/opportunities?policy=dev-weekends&month=12' "$reader"
ask 404 GET '/api/v1/savings/opportunities?policy=no-such-policy&month=2026-12' "$reader"
ask 200 GET /api/v1/drift "$reader"
ask 403 GET /api/v1/drift "$agent"
ask 200 GET '/api/v1/plan?policy=dev-weekends&from=2026-12-01&to=2026-12-08' "$reader"
cp "$scratch/body" "$scratch/plan.json"
ask 200 POST /api/v1/actions "$admin" "${json[@]}" --data-binary "{\"plan\": $(cat "$scratch/plan.json")}"
ask 400 POST /api/v1/actions "$admin" "${json[@]}" --data-binary '{"policy": 3}'
ask 404 POST /api/v1/actions "$admin" "${json[@]}" --data-binary '{"policy": "no-such-policy"}'
ask 403 POST /api/v1/actions "$reader" "${json[@]}" --data-binary '{"policy": "dev-weekends"}'
ask 200 GET /api/v1/actions "$reader"
ask 200 GET /api/v1/actions/900001 "$reader"
ask 200 GET '/api/v1/reports/monthly?month=2026-11' "$reader"
ask 200 GET '/api/v1/reports/monthly?month=2026-11&format=csv&group_by=subscription' "$reader"
ask 400 GET '/api/v1/reports/monthly?month=2026-11&format=pdf' "$reader"
ask 404 GET '/api/v1/reports/monthly?month=2026-11&policy=no-such-policy' "$reader"
ask 403 GET '/api/v1/reports/monthly?month=2026-11' "$agent"
ask 404 GET /api/v1/actions/99999999 "$reader"
ask 403 GET /api/v1/actions/1 "$agent"
ask 200 GET '/api/v1/actions?state=done&limit=1' "$reader"
ask 400 GET '/api/v1/actions?state=bogus' "$reader"
ask 403 GET /api/v1/actions "$agent"
ask 200 GET '/api/v1/plan?policy=dev-weekends&from=2026-12-01&to=2026-12-08' "$reader"
ask 400 GET '/api/v1/plan?policy=dev-weekends&from=2026-12-32' "$reader"
ask 404 GET '/api/v1/plan?policy=no-such-policy' "$reader"
ask 200 GET '/api/v1/plan.ics?policy=dev-weekends&from=2026-12-01&to=2026-12-08' "$reader"
ask 403 GET '/api/v1/plan.ics?policy=dev-weekends' "$agent"

healthy && ok || bad "the server stopped answering"
stop_server TERM
kill -TERM "$sim" 2>/dev/null
wait "$sim" 2>/dev/null
sim=""

# ---- the answers against the document ----
# A 405 is answered for a method the path does not have, which the
# document has no operation for: it is checked for the error shape apart.
grep -v '^DELETE' "$answers" >"$scratch/documented.tsv"
if "$py" "$check" answers "$doc" "$api_c" "$scratch/documented.tsv" >"$scratch/check.out" 2>&1; then
  ok
else
  bad "answers off the document: $(cat "$scratch/check.out")"
fi
grep -q "answers match" "$scratch/check.out" && ok || bad "the checker said nothing: $(cat "$scratch/check.out")"
a405=$(awk -F'\t' '$1 == "DELETE" {print $5}' "$answers")
"$py" -c '
import json, sys
from jsonschema import Draft202012Validator
doc = json.load(open(sys.argv[1]))
schema = dict(doc); schema["$ref"] = "#/components/schemas/Error"
Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))' "$doc" "$a405" && ok ||
  bad "the 405 is not the documented error: $(cat "$a405")"

# The checker catches a body off its schema, an undocumented status, a
# wrong media type, and a route with no 2xx answer.
printf '{"vms": "three", "next_cursor": null}' >"$scratch/off.json"
{ cat "$scratch/documented.tsv"
  printf 'GET\t/api/v1/vms\t200\tapplication/json\t%s\n' "$scratch/off.json"; } >"$scratch/off.tsv"
"$py" "$check" answers "$doc" "$api_c" "$scratch/off.tsv" >"$scratch/off.out" 2>&1
[ $? = 1 ] && grep -q "GET /api/v1/vms -> 200: at vms: 'three' is not of type 'array'" "$scratch/off.out" && ok ||
  bad "a body off its schema was not caught: $(cat "$scratch/off.out")"
{ cat "$scratch/documented.tsv"
  printf 'GET\t/api/v1/vms\t418\tapplication/json\t%s\n' "$scratch/off.json"; } >"$scratch/teapot.tsv"
"$py" "$check" answers "$doc" "$api_c" "$scratch/teapot.tsv" >"$scratch/teapot.out" 2>&1
[ $? = 1 ] && grep -q "status 418 is not documented" "$scratch/teapot.out" && ok ||
  bad "an undocumented status was not caught: $(cat "$scratch/teapot.out")"
printf '<html>oops</html>' >"$scratch/html"
{ cat "$scratch/documented.tsv"
  printf 'GET\t/api/v1/vms/7\t404\ttext/html\t%s\n' "$scratch/html"; } >"$scratch/html.tsv"
"$py" "$check" answers "$doc" "$api_c" "$scratch/html.tsv" >"$scratch/html.out" 2>&1
[ $? = 1 ] && grep -q "Content-Type 'text/html'" "$scratch/html.out" && ok ||
  bad "an HTML error page was not caught: $(cat "$scratch/html.out")"
# A verdict whose VM cap is a silent null (no object, or no cap and no why).
comp=$(awk -F'\t' '$2 == "/api/v1/compliance" && $3 == 200 {print $5; exit}' "$scratch/documented.tsv")
for mut in '.verdicts[0].vm = null' '.verdicts[0].vm.cap = null | .verdicts[0].vm.why = null'; do
  jq "$mut" "$comp" >"$scratch/silent.json"
  { cat "$scratch/documented.tsv"
    printf 'GET\t/api/v1/compliance\t200\tapplication/json\t%s\n' "$scratch/silent.json"; } >"$scratch/silent.tsv"
  "$py" "$check" answers "$doc" "$api_c" "$scratch/silent.tsv" >"$scratch/silent.out" 2>&1
  [ $? = 1 ] && grep -q "GET /api/v1/compliance -> 200: at verdicts/0/vm" "$scratch/silent.out" && ok ||
    bad "a verdict with $mut was not caught: $(cat "$scratch/silent.out")"
done
grep -v 'compliance/summary' "$scratch/documented.tsv" >"$scratch/fewer.tsv"
"$py" "$check" answers "$doc" "$api_c" "$scratch/fewer.tsv" >"$scratch/fewer.out" 2>&1
[ $? = 1 ] && grep -q "GET /api/v1/compliance/summary has no 2xx answer" "$scratch/fewer.out" && ok ||
  bad "a route without answers was not caught: $(cat "$scratch/fewer.out")"

finish server-openapi
