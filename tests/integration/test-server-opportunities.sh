#!/usr/bin/env bash
# GET /api/v1/savings/opportunities?policy=&month=[&currency=]: the fleet's
# savings opportunities under one of the server's policies (--policies
# DIR), for readers: the covered disks with their saving (rounded and
# unrounded), the excluded ones with their reasons, the totals; 400 for a
# missing or bad month, 404 for an unknown policy, 401 without a token,
# 200 counting the disks of a region without a price book (never a zero)
# and naming the region, 422 when no disk can be priced for lack of books
# (none for the regions needed, none at all, with ?currency= or not), 409
# naming a policy timezone that no longer loads (the server's zone files
# changed since the start, which loads every policy's zone), 400 for a
# currency to choose.  Needs curl, jq and sqlite3.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-opp-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
[ -e "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] || { echo "no zone files: skipped"; exit 77; }
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
# The server's zone files: the machine's London and UTC, and a zone of the
# test's own that is taken away once the server runs.
zi="$scratch/zi"
mkdir -p "$zi/Europe" "$zi/Test"
cp "${TZDIR:-/usr/share/zoneinfo}/Europe/London" "$zi/Europe/London"
cp "${TZDIR:-/usr/share/zoneinfo}/Europe/London" "$zi/Test/Gone"
cp "$srcdir/tests/fuzz/corpus/tz/UTC" "$zi/UTC"
export TZDIR="$zi"
export TIERWISE_LOOPBACK_ONLY=1

check() {
  if jq -se "length == 1 and (.[0] | ($3))" >/dev/null 2>&1 <<<"$2"; then ok
  else bad "$1: $3 is not true of: ${2:0:800}"; fi
}

reader=$(make_token reader)
item() { # METER PRODUCT PRICE: a westeurope GBP item (P10, E10 the field example's)
  printf '{"currencyCode":"GBP","tierMinimumUnits":0,"retailPrice":%s,"unitPrice":%s,"armRegionName":"westeurope","location":"EU West","effectiveStartDate":"2020-01-01T00:00:00Z","meterName":"%s LRS Disk","productName":"%s Managed Disks","skuName":"%s LRS","serviceName":"Storage","unitOfMeasure":"1/Month","type":"Consumption"}' \
    "$3" "$3" "$1" "$2" "$1"
}
echo "[$(item P10 'Premium SSD' 16.16),$(item E10 'Standard SSD' 7.16)]" >"$scratch/book.json"
"$cli" prices import --db "$db" "$scratch/book.json" >/dev/null 2>&1 || bad "importing the book"
vm() { # ID NAME REGION TAGS
  echo "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, vm_size,
        tags, last_report_id, last_report_at, last_report_ms) VALUES ($1, 'vm:$2', '$2',
        'sub-1', 'rg-dev', '$3', 'Standard_D4s_v3', '$4', 'r$1', '2026-11-20T00:00:00Z',
        1795132800000);"
}
disk() { # ID VM ROLE SIZE
  echo "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, caching,
        last_seen_at, last_seen_ms, position) VALUES ($1, 'd$1', $2, 'disk-$1', '$3', $1,
        'Premium_LRS', $4, 'P10', 'None', '2026-11-20T00:00:00Z', 1795132800000, $1);"
}
sqlite3 "$db" "$(vm 1 dev-1 westeurope '{"env":"dev"}') $(disk 1 1 os 128) $(disk 2 1 data 128)
  $(vm 2 dev-2 westeurope '{"env":"dev","tierwise":"off"}') $(disk 3 2 data 128)" \
  || bad "filling the database"
mkdir -p "$scratch/pol"
cat >"$scratch/pol/weekends.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "weekends",
  "match": { "tags": {"env": "dev"}, "exclude": { "tags": {"tierwise": "off"} } },
  "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"],
  "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 0, "before_start_minutes": 0 } }
EOF
cat >"$scratch/pol/north.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "north",
  "match": { "vms": ["dev-3"] }, "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"] }
EOF
cat >"$scratch/pol/gone.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "gone", "match": {},
  "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"], "timezone": "Test/Gone" }
EOF
start_server main --policies "$scratch/pol"
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-12" "$reader")
body=$(cat "$scratch/body")
[ "$st" = 200 ] && ok || bad "opportunities: $st $body"
check doc "$body" '.schema_version == "tierwise.savings-opportunities/1" and .policy == "weekends"
  and .month == "2026-12" and .currency == "GBP" and .period.from == "2026-12-01T00:00:00Z"'
check disk "$body" '[.disks[] | [.disk, .target_sku, .hours, .saving, .saving_unrounded]] ==
  [["disk-2", "StandardSSD_LRS", "192", "2.37", "2.367123287671"]]'
check excluded "$body" '[.excluded[] | [.disk, .reason]] == [["disk-1", "os_disk"], ["disk-3", "excluded_by_policy"]]'
check totals "$body" '.totals.fleet.saving == "2.37" and .totals.fleet.disks == 1 and .totals.fleet.excluded == 2
  and (.totals.vms | length) == 2 and .totals.resource_groups[0].resource_group == "rg-dev"
  and .totals.subscriptions[0].subscription_id == "sub-1"'
grep -qi '^content-type: application/json' "$scratch/headers" && ok || bad "content type: $(cat "$scratch/headers")"
# The command's document is the route's, byte for byte.
"$cli" savings --db "$db" --policy "$scratch/pol/weekends.json" --month 2026-12 --json >"$scratch/cli.json" 2>"$scratch/cli.err" \
  || bad "savings --json: $(cat "$scratch/cli.err")"
cmp -s "$scratch/cli.json" "$scratch/body" && ok || bad "the route and the command differ: $(diff <(jq -S . "$scratch/cli.json") <(jq -S . "$scratch/body") | head -20)"

# ---- refusals ----
st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-12" -)
[ "$st" = 401 ] && ok || bad "no token: $st"
st=$(req GET "/api/v1/savings/opportunities?policy=weekends" "$reader")
[ "$st" = 400 ] && jq -e '.error.code == "bad_request" and (.error.message | test("month"))' "$scratch/body" >/dev/null \
  && ok || bad "no month: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-13" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("no month 13")' "$scratch/body" >/dev/null \
  && ok || bad "month 13: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/savings/opportunities?policy=nightly&month=2026-12" "$reader")
[ "$st" = 404 ] && jq -e '.error.code == "unknown_policy" and (.error.message | test("nightly"))' "$scratch/body" >/dev/null \
  && ok || bad "unknown policy: $st $(cat "$scratch/body")"

# ---- a policy timezone the server can no longer load: 409 naming it ----
st=$(req GET "/api/v1/savings/opportunities?policy=gone&month=2026-12" "$reader")
[ "$st" = 200 ] && ok || bad "the zone still there: $st $(cat "$scratch/body")"
rm "$zi/Test/Gone"
st=$(req GET "/api/v1/savings/opportunities?policy=gone&month=2026-12" "$reader")
[ "$st" = 409 ] && jq -e '.error.code == "policy_zone" and (.error.message | test("Test/Gone"))' \
  "$scratch/body" >/dev/null && ok || bad "policy zone: $st $(cat "$scratch/body")"

# ---- a region without a book: 200, its disk counted and the region named ----
sqlite3 "$db" "$(vm 3 dev-3 northeurope '{"env":"dev"}') $(disk 4 3 data 128)"
st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-12" "$reader")
[ "$st" = 200 ] && ok || bad "a region without a book: $st $(cat "$scratch/body")"
check nobook "$(cat "$scratch/body")" '.totals.fleet.disks == 1 and .totals.fleet.disks_without_price == 1
  and .totals.fleet.saving == "2.37" and ([.regions_without_book[] | [.region, .disks]] == [["northeurope", 1]])
  and ([.excluded[] | select(.reason == "no_price") | .disk] == ["disk-4"])'
# ---- nothing can be priced (the only region needed has no book): 422 ----
st=$(req GET "/api/v1/savings/opportunities?policy=north&month=2026-12" "$reader")
[ "$st" = 422 ] && jq -e '.error.code == "no_price_book" and (.error.message | test("northeurope \\(1 disk\\); refresh it "))' \
  "$scratch/body" >/dev/null && ok || bad "no book for any: $st $(cat "$scratch/body")"
# ---- several currencies: ?currency= chooses ----
sqlite3 "$db" "DELETE FROM disks WHERE id = 4"
(cd "$fixtures/prices" && "$cli" prices import --db "$db" real-p15-eastus-usd.json) >/dev/null 2>&1
st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-12" "$reader")
[ "$st" = 400 ] && jq -e '.error.message | test("GBP, USD")' "$scratch/body" >/dev/null \
  && ok || bad "two currencies: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-12&currency=GBP" "$reader")
[ "$st" = 200 ] && jq -e '.totals.fleet.saving == "2.37"' "$scratch/body" >/dev/null \
  && ok || bad "currency=GBP: $st $(cat "$scratch/body")"
# ---- no book at all: 422, a currency asked for or not ----
sqlite3 "$db" "DELETE FROM price_books"
st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-12" "$reader")
[ "$st" = 422 ] && jq -e '.error.code == "no_price_book" and (.error.message | test("no price book"))' \
  "$scratch/body" >/dev/null && ok || bad "no book at all: $st $(cat "$scratch/body")"
st=$(req GET "/api/v1/savings/opportunities?policy=weekends&month=2026-12&currency=GBP" "$reader")
[ "$st" = 422 ] && jq -e '.error.code == "no_price_book" and (.error.message | test("the store has no price book"))' \
  "$scratch/body" >/dev/null && ok || bad "no book at all, currency=GBP: $st $(cat "$scratch/body")"

finish server-opportunities
