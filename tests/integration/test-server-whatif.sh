#!/usr/bin/env bash
# POST /api/v1/savings/whatif on a live tierwise serve: the issue's field
# example from the stored book (the same JSON `tierwise savings --json`
# prints, byte for byte after the source), the period as an object, the
# reader and admin roles (an agent is refused, no token is 401), the
# statuses of bad input with the field at fault (400), a region or price
# the books lack (404), a stored book that no longer reads (409).  Needs
# curl, jq and sqlite3 (else skipped).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-whatif-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
[ -f "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] ||
  { echo "no zone files (tzdata): skipped"; exit 77; }
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1
gbp=$fixtures/prices/constructed-westeurope-gbp.json

"$cli" prices import --db "$db" "$gbp" >/dev/null 2>&1 && ok || bad "prices import"
reader=$(make_token reader)
admin=$(make_token admin)
agent=$(make_token agent)
start_server main
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

json=(-H 'Content-Type: application/json')
body='{"region": "westeurope", "currency": "GBP", "from_tier": "P10", "to_tier": "E10",
       "windows": ["Sat 00:00-Mon 00:00"], "tz": "Europe/London",
       "period": "2026-01-01..2027-01-01", "count": 70}'
# post WANT BODY [TOKEN]: the answer's status is WANT; the body is in $scratch/body.
post() {
  local got
  got=$(req POST /api/v1/savings/whatif "${3:-$reader}" "${json[@]}" --data-binary "$2")
  [ "$got" = "$1" ] && ok || bad "POST $2: $got, want $1: $(head -c 400 "$scratch/body")"
}
# check WHAT JQ-EXPRESSION: true of the last answer.
check() {
  jq -e "$2" "$scratch/body" >/dev/null 2>&1 && ok || bad "$1: $2 is not true of: $(head -c 600 "$scratch/body")"
}

# ---- the field example ----
post 200 "$body"
check field '.hours_downgraded == 2496 and .seconds_downgraded == 8985600'
check field '.per_disk.saving == "30.77" and .per_disk.saving_unrounded == "30.772602739726"'
check field '.total.disks == 70 and .total.saving == "2154.08" and .total.saving_unrounded == "2154.082191780822"'
check field '.from.per_month == "16.16" and .to.per_month == "7.16" and .period.tz == "Europe/London"'
check field '.from.source | test("constructed-westeurope-gbp.json")'
check field '(.from.fetched_at | length) > 0'
# The same document as the command line's, from the same database.
"$cli" savings --db "$db" --region westeurope --currency GBP --from-tier P10 --to-tier E10 \
  --window "Sat 00:00-Mon 00:00" --tz Europe/London --period 2026-01-01..2027-01-01 --count 70 \
  --json >"$scratch/cli.json" && ok || bad "savings --db --json"
jq -S . "$scratch/cli.json" >"$scratch/a.json"
jq -S . "$scratch/body" >"$scratch/b.json"
cmp -s "$scratch/a.json" "$scratch/b.json" && ok ||
  bad "the route and the command differ: $(diff "$scratch/a.json" "$scratch/b.json" | head -20)"
# The period as an object, no zone (UTC), one disk; an admin may ask too.
post 200 '{"region": "westeurope", "currency": "GBP", "from_tier": "P10", "to_tier": "E10",
           "windows": ["Sat 00:00-Mon 00:00", "Sun 00:00-Sun 12:00"],
           "period": {"from": "2026-03-28", "to": "2026-03-30"}}' "$admin"
check object '.hours_downgraded == 48 and .period.tz == "UTC" and .total.disks == 1'
post 200 '{"region": "westeurope", "currency": "GBP", "from_tier": "P10", "to_tier": "E10",
           "windows": ["Sat 00:00-Mon 00:00"], "tz": "Europe/London",
           "period": {"from": "2026-03-28", "to": "2026-03-30"}}'
check march '.hours_downgraded == 47'

# A fraction of an hour: the route's number is the command's, to the byte
# (20 minutes a week: 0.333333 hours, micro-hours whatever the encoder).
frac='{"region": "westeurope", "currency": "GBP", "from_tier": "P10", "to_tier": "E10",
       "windows": ["Mon 10:00-Mon 10:20"], "period": "2026-01-05..2026-01-12"}'
post 200 "$frac"
check fraction '.hours_downgraded == 0.333333 and .calculation.hours_downgraded == "0.333333" and .seconds_downgraded == 1200'
"$cli" savings --db "$db" --region westeurope --currency GBP --from-tier P10 --to-tier E10 \
  --window "Mon 10:00-Mon 10:20" --period 2026-01-05..2026-01-12 --json >"$scratch/frac.json" &&
  ok || bad "savings --db --json, a fraction of an hour"
a=$(grep -o '"hours_downgraded": *[0-9.e+-]*' "$scratch/frac.json" | head -1 | tr -d ' ')
b=$(grep -o '"hours_downgraded": *[0-9.e+-]*' "$scratch/body" | head -1 | tr -d ' ')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "hours_downgraded: the command writes $a, the route $b"
jq -S . "$scratch/frac.json" >"$scratch/a.json"
jq -S . "$scratch/body" >"$scratch/b.json"
cmp -s "$scratch/a.json" "$scratch/b.json" && ok ||
  bad "fraction: the route and the command differ: $(diff "$scratch/a.json" "$scratch/b.json" | head -20)"

# ---- roles ----
post 403 "$body" "$agent"
post 401 "$body" -

# ---- bad input: 400 with the field ----
bad_field() {
  local want_field=$1 words=$2 b=$3
  post 400 "$b"
  check "$want_field" ".error.code == \"bad_request\" and .error.field == \"$want_field\" and (.error.message | contains(\"$words\"))"
}
common='"region": "westeurope", "currency": "GBP", "from_tier": "P10", "to_tier": "E10", "period": "2026-01-01..2027-01-01"'
bad_field "windows[0]" "at byte" "{$common, \"windows\": [\"Sat 25:00-Mon 00:00\"]}"
bad_field "windows[1]" "must be a string" "{$common, \"windows\": [\"Sat 00:00-Mon 00:00\", 7]}"
bad_field windows "windows is missing" "{$common}"
bad_field windows "1 to 64 windows" "{$common, \"windows\": []}"
bad_field tz "Europe/Nowhere" "{$common, \"windows\": [\"Sat 00:00-Mon 00:00\"], \"tz\": \"Europe/Nowhere\"}"
bad_field to_tier "not a tier Azure offers" "{\"region\": \"westeurope\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": \"E11\", \"period\": \"2026-01-01..2027-01-01\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
bad_field period "before the start" "{\"region\": \"westeurope\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": \"E10\", \"period\": \"2026-02-01..2026-01-01\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
bad_field period.to "not a date" "{\"region\": \"westeurope\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": \"E10\", \"period\": {\"from\": \"2026-01-01\", \"to\": \"2026-02-30\"}, \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
bad_field count "count must be an integer" "{$common, \"windows\": [\"Sat 00:00-Mon 00:00\"], \"count\": 0}"
bad_field colour "is not a field of the what-if request" "{$common, \"windows\": [\"Sat 00:00-Mon 00:00\"], \"colour\": 1}"
bad_field currency "not one the Retail Prices API offers" "{\"region\": \"westeurope\", \"currency\": \"XYZ\", \"from_tier\": \"P10\", \"to_tier\": \"E10\", \"period\": \"2026-01-01..2027-01-01\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
# The end before the start is the end's fault.
bad_field period.to "before the start" "{\"region\": \"westeurope\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": \"E10\", \"period\": {\"from\": \"2026-02-01\", \"to\": \"2026-01-01\"}, \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
# A zone of no name is not UTC.
bad_field tz "tz" "{$common, \"windows\": [\"Sat 00:00-Mon 00:00\"], \"tz\": \"\"}"
# A total too large to write: the input's fault, 400 naming it, not 500.
bad_field count "ask for fewer disks" "{$common, \"windows\": [\"Mon 00:00-Sun 23:59\"], \"count\": 10000000, \"io\": {\"ios_per_hour\": 1000000000, \"io_bytes\": 1073741824}}"
post 400 '{"region": '
check json '.error.code == "invalid_json" and .error.line == 1'

# ---- what the books lack: 404 ----
post 404 "{\"region\": \"westeurope\", \"currency\": \"GBP\", \"from_tier\": \"P15\", \"to_tier\": \"E15\", \"period\": \"2026-01-01..2027-01-01\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
check price '.error.code == "price_missing" and (.error.message | contains("P15"))'
post 404 "{\"region\": \"westeurope\", \"currency\": \"NOK\", \"from_tier\": \"P10\", \"to_tier\": \"E10\", \"period\": \"2026-01-01..2027-01-01\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
check book '.error.code == "no_price_book" and .error.field == "region" and (.error.message | contains("westeurope NOK"))'

# ---- a stored book whose items all ended before today: priced where they held ----
jq '.Items |= map(. + {"armRegionName": "northeurope", "effectiveEndDate": "2026-06-30T23:59:59Z"})' \
  "$gbp" >"$scratch/ended.json"
"$cli" prices import --db "$db" "$scratch/ended.json" >/dev/null 2>&1 && ok || bad "prices import (ended)"
post 200 "{\"region\": \"northeurope\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": \"E10\", \"period\": \"2026-01-01..2026-06-01\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
check ended '.hours_downgraded == 1056 and .per_disk.saving_unrounded == "13.019178082192"'
post 404 "{\"region\": \"northeurope\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": \"E10\", \"period\": \"2026-01-01..2027-01-01\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}"
check "ended later" '.error.code == "price_missing" and (.error.message | contains("at 2026-07-01T00:00:00Z"))'

# ---- a stored book that no longer reads: 409 ----
sqlite3 "$db" "UPDATE price_books SET items = '{\"not\": \"items\"' WHERE region = 'westeurope' AND currency = 'GBP'" 2>"$scratch/sql.err" ||
  bad "could not spoil the stored book: $(cat "$scratch/sql.err")"
post 409 "$body"
check spoiled '.error.code == "price_book_invalid"'

healthy && ok || bad "the server stopped answering"
finish server-whatif
