#!/usr/bin/env bash
# GET /api/v1/plan?policy=&from=&to= and GET /api/v1/plan.ics (readers):
# the tier switches of one of the server's policies (--policies DIR) over
# a period: the tierwise.plan/1 document, byte for byte the one `tierwise
# plan --json` prints; the calendar (text/calendar; charset=utf-8, CRLF,
# read back by tests/tools/ics-check.py); from defaulting to now and to to
# seven days after it; 400 for a missing policy, a date that does not read
# (the parameter named) and a to not after from; 404 for an unknown
# policy; 401 without a token; 422 when the store has no price book.
# Needs curl, jq, sqlite3 and python3.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-plan-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3 python3
[ -e "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] || { echo "no zone files: skipped"; exit 77; }
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1

check() {
  if jq -se "length == 1 and (.[0] | ($3))" >/dev/null 2>&1 <<<"$2"; then ok
  else bad "$1: $3 is not true of: ${2:0:800}"; fi
}

reader=$(make_token reader)
mkdir -p "$scratch/pol"
cat >"$scratch/pol/weekends.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "weekends",
  "match": { "skus": ["Premium_LRS"] }, "target": "StandardSSD_LRS",
  "windows": ["Fri 20:00-Mon 06:00"], "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 10, "before_start_minutes": 30 } }
EOF
start_server main --policies "$scratch/pol"
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

# ---- no price book yet: 422 ----
st=$(req GET "/api/v1/plan?policy=weekends&from=2026-12-01&to=2026-12-08" "$reader")
[ "$st" = 422 ] && jq -e '.error.code == "no_price_book"' "$scratch/body" >/dev/null \
  && ok || bad "no book: $st $(cat "$scratch/body")"

item() { # METER PRODUCT PRICE
  printf '{"currencyCode":"GBP","tierMinimumUnits":0,"retailPrice":%s,"unitPrice":%s,"armRegionName":"westeurope","location":"EU West","effectiveStartDate":"2020-01-01T00:00:00Z","meterName":"%s LRS Disk","productName":"%s Managed Disks","skuName":"%s LRS","serviceName":"Storage","unitOfMeasure":"1/Month","type":"Consumption"}' \
    "$3" "$3" "$1" "$2" "$1"
}
echo "[$(item P10 'Premium SSD' 16.16),$(item E10 'Standard SSD' 7.16)]" >"$scratch/book.json"
"$cli" prices import --db "$db" "$scratch/book.json" >/dev/null 2>&1 || bad "importing the book"
# ---- a book, but none for the only region the disks are in: 422 ----
sqlite3 "$db" "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location,
    vm_size, tags, last_report_id, last_report_at, last_report_ms) VALUES (2, 'vm:2', 'far-1',
    'sub-1', 'rg-dev', 'eastus', 'Standard_D4s_v3', '{}', 'r2', '2026-11-20T00:00:00Z',
    1795132800000);
  INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, caching,
    last_seen_at, last_seen_ms, position, max_shares, bursting) VALUES (2, 'd2', 2, 'far-d',
    'data', 0, 'Premium_LRS', 128, 'P10', 'None', '2026-11-20T00:00:00Z', 1795132800000, 0, 1, 0);" \
  || bad "adding a VM in eastus"
st=$(req GET "/api/v1/plan?policy=weekends&from=2026-12-01&to=2026-12-08" "$reader")
[ "$st" = 422 ] && jq -e '.error.code == "no_price_book" and (.error.message | test("eastus"))' "$scratch/body" >/dev/null \
  && ok || bad "no book for the region: $st $(cat "$scratch/body")"
sqlite3 "$db" "DELETE FROM disks WHERE id = 2; DELETE FROM vms WHERE id = 2;" || bad "removing the eastus VM"
sqlite3 "$db" "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location,
    vm_size, tags, last_report_id, last_report_at, last_report_ms) VALUES (1, 'vm:1', 'dev-1',
    'sub-1', 'rg-dev', 'westeurope', 'Standard_D4s_v3', '{}', 'r1', '2026-11-20T00:00:00Z',
    1795132800000);
  INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, caching,
    last_seen_at, last_seen_ms, position, max_shares, bursting) VALUES (1, 'd1', 1, 'data-1',
    'data', 0, 'Premium_LRS', 128, 'P10', 'None', '2026-11-20T00:00:00Z', 1795132800000, 0, 1, 0);" \
  || bad "filling the database"

# ---- the document ----
st=$(req GET "/api/v1/plan?policy=weekends&from=2026-12-01&to=2026-12-08" "$reader")
body=$(cat "$scratch/body")
[ "$st" = 200 ] && ok || bad "plan: $st $body"
grep -qi '^content-type: application/json' "$scratch/headers" && ok || bad "content type: $(cat "$scratch/headers")"
check doc "$body" '.schema_version == "tierwise.plan/1" and .policy == "weekends" and .currency == "GBP"
  and .from == "2026-12-01T00:00:00Z" and .to == "2026-12-08T00:00:00Z"
  and ([.actions[] | [.kind, .due_at, .due_local]] == [["downgrade", "2026-12-04T20:10:00Z", "2026-12-04T20:10:00+00:00"],
       ["upgrade", "2026-12-07T05:30:00Z", "2026-12-07T05:30:00+00:00"]])
  and .totals.saving == "0.71"'
"$cli" plan --db "$db" --policy "$scratch/pol/weekends.json" --from 2026-12-01 --to 2026-12-08 --json \
  >"$scratch/cli.json" 2>"$scratch/cli.err" || bad "plan --json: $(cat "$scratch/cli.err")"
cmp -s "$scratch/cli.json" "$scratch/body" && ok || bad "the route and the command differ: $(diff "$scratch/cli.json" "$scratch/body" | head)"
# RFC 3339 dates with an offset.
st=$(req GET "/api/v1/plan?policy=weekends&from=2026-12-04T21:00:00%2B01:00&to=2026-12-08T00:00:00Z" "$reader")
check rfc3339 "$(cat "$scratch/body")" '.from == "2026-12-04T20:00:00Z" and (.actions | length == 2)'

# ---- the defaults: from now, to seven days later ----
before=$(date -u +%s)
st=$(req GET "/api/v1/plan?policy=weekends" "$reader")
after=$(date -u +%s)
[ "$st" = 200 ] && ok || bad "defaults: $st $(cat "$scratch/body")"
from=$(jq -r .from "$scratch/body"); to=$(jq -r .to "$scratch/body")
f=$(date -u -d "$from" +%s); t=$(date -u -d "$to" +%s)
[ "$f" -ge $((before - 1)) ] && [ "$f" -le "$after" ] && [ $((t - f)) -ge $((7 * 86400 - 1)) ] &&
  [ $((t - f)) -le $((7 * 86400)) ] && ok || bad "defaults: from $from to $to (asked at $before..$after)"
# Two downgrades and two upgrades at most in any seven days of this policy.
check week "$(cat "$scratch/body")" '(.actions | length) >= 1 and (.actions | length) <= 3'

# ---- the calendar ----
st=$(req GET "/api/v1/plan.ics?policy=weekends&from=2026-12-01&to=2026-12-08" "$reader")
[ "$st" = 200 ] && ok || bad "plan.ics: $st $(cat "$scratch/body")"
grep -qi '^content-type: text/calendar; charset=utf-8' "$scratch/headers" && ok || bad "ics content type: $(cat "$scratch/headers")"
if python3 "$srcdir/tests/tools/ics-check.py" "$scratch/body" >"$scratch/ics.json" 2>"$scratch/ics.err"; then ok
else bad "the calendar does not read back: $(cat "$scratch/ics.err")"; fi
check ics "$(cat "$scratch/ics.json")" '(.events | length == 2) and .events[0].DTSTART == "20261204T201000Z"
  and .events[0].SUMMARY == "Downgrade disk data-1 of VM dev-1 to StandardSSD_LRS"'

# ---- refusals ----
st=$(req GET "/api/v1/plan?policy=weekends" -)
[ "$st" = 401 ] && ok || bad "no token: $st"
st=$(req GET "/api/v1/plan" "$reader")
[ "$st" = 400 ] && jq -e '.error.code == "bad_request" and (.error.message | test("policy"))' "$scratch/body" >/dev/null \
  && ok || bad "no policy: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan?policy=weekends&from=2026-02-30" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("^from: the date \"2026-02-30\" is no day")' "$scratch/body" >/dev/null \
  && ok || bad "bad from: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan.ics?policy=weekends&from=2026-12-01&to=tomorrow" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("^to: \"tomorrow\" is neither YYYY-MM-DD nor RFC 3339")' "$scratch/body" >/dev/null \
  && ok || bad "bad to: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan?policy=weekends&from=2026-12-08&to=2026-12-01" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("not after")' "$scratch/body" >/dev/null \
  && ok || bad "to before from: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan.ics?policy=nightly" "$reader")
[ "$st" = 404 ] && jq -e '.error.code == "unknown_policy" and (.error.message | test("nightly"))' "$scratch/body" >/dev/null \
  && ok || bad "unknown policy: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan?policy=weekends&currency=GB" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("currency")' "$scratch/body" >/dev/null \
  && ok || bad "bad currency: $st $(cat "$scratch/body")"

# ---- far dates and long periods: 400, never an overflow ----
st=$(req GET "/api/v1/plan?policy=weekends&from=2262-04-10" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("^from: the date \"2262-04-10\" is outside the years 1970..2199")' "$scratch/body" >/dev/null \
  && ok || bad "from 2262: $st $(cat "$scratch/body")"
healthy && ok || bad "the server died on from=2262-04-10"
st=$(req GET "/api/v1/plan?policy=weekends&from=2199-12-30" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("^to: the period must lie in")' "$scratch/body" >/dev/null \
  && ok || bad "from 2199-12-30 (to past 2199): $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan?policy=weekends&from=1970-01-01" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("^from: the date \"1970-01-01\" is midnight outside")' "$scratch/body" >/dev/null \
  && ok || bad "from 1970-01-01 London: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan.ics?policy=weekends&from=2026-01-01&to=2027-01-03" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("^to: the period is longer than 366 days")' "$scratch/body" >/dev/null \
  && ok || bad "a period too long: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/plan?policy=weekends&from=2026-01-01&to=2027-01-01" "$reader")
[ "$st" = 200 ] && jq -e '.totals.disks_without_price == 0 and .totals.missing_regions == []' "$scratch/body" >/dev/null \
  && ok || bad "a year: $st $(head -c 300 "$scratch/body")"

healthy && ok || bad "the server stopped answering"
finish server-plan
