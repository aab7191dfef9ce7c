#!/usr/bin/env bash
# tierwise savings, the what-if calculator: the issue's field example
# (West Europe, P10 16.16 and E10 7.16 GBP a month, every weekend of 2026
# in Europe/London: 2,496 hours, 30.77 per disk, 2,154.08 for 70 disks),
# in text and JSON, from a saved page and from the database; overlapping
# and clipped windows, both clock changes, a running VM's transactions,
# ZRS; and every refusal with its message.  Needs jq (else skipped).
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_FIXTURES and TW_SOURCE_DIR}
fixtures=${TW_FIXTURES:?}
src=${TW_SOURCE_DIR:?}
command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }
[ -f "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] ||
  { echo "no zone files (tzdata): skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-savings-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$src/tests/helpers/testlib.sh"
export TIERWISE_LOOPBACK_ONLY=1
gbp=$fixtures/prices/constructed-westeurope-gbp.json

# check WHAT JSON JQ-EXPRESSION: the expression is true for the JSON.
check() {
  if jq -e "$3" >/dev/null 2>&1 <<<"$2"; then ok; else bad "$1: $3 is not true of: ${2:0:800}"; fi
}
# has WHAT TEXT WORDS: TEXT holds the line part WORDS.
has() {
  if grep -qF -- "$3" <<<"$2"; then ok; else bad "$1: no '$3' in: ${2:0:1200}"; fi
}

field=(savings --price-file "$gbp" --region westeurope --currency GBP --from-tier P10
       --to-tier E10 --window "Sat 00:00-Mon 00:00" --tz Europe/London
       --period 2026-01-01..2027-01-01)

# ---- help ----
out=$("$cli" savings --help); st=$?
[ $st = 0 ] && ok || bad "savings --help: status $st"
has help "$out" "usage: tierwise savings (--price-file F | --db F) --region R --currency C"
has help "$out" "tierwise savings --db F --policy FILE --month YYYY-MM [--reservations FILE]"
has help "$out" "saving = (from per month - to per month) x hours / 730 - transactions"
"$cli" --help | grep -q "savings" && ok || bad "tierwise --help does not list savings"
# The fleet's form goes to the fleet's opportunities, help included.
out=$("$cli" savings --policy x.json --month 2026-12 --help); st=$?
[ $st = 0 ] && ok || bad "savings --policy --month --help: status $st"
has "fleet help" "$out" "usage: tierwise savings --db FILE --policy FILE --month YYYY-MM"
grep -q -- "--from-tier" <<<"$out" && bad "the fleet's help is the what-if's" || ok

# ---- the field example, text ----
out=$("$cli" "${field[@]}" --count 70 2>"$scratch/err"); st=$?
[ $st = 0 ] && ok || bad "field example: status $st: $(cat "$scratch/err")"
has text "$out" "westeurope GBP: P10 Premium_LRS -> E10 StandardSSD_LRS during Sat 00:00-Mon 00:00 (Europe/London), 2026-01-01..2027-01-01"
has text "$out" "hours downgraded: 2,496 hours (52 spans)"
has text "$out" "saving per disk: 30.77 GBP"
has text "$out" "saving for 70 disks: 2,154.08 GBP"
has text "$out" "from  P10  Premium_LRS           16.16 GBP a month (P10 LRS Disk, effective from 2018-05-01T00:00:00Z)"
has text "$out" "to    E10  StandardSSD_LRS        7.16 GBP a month (E10 LRS Disk, effective from 2018-11-01T00:00:00Z)"
has text "$out" "prices: file $gbp (a saved Retail Prices API answer, modified 20"
has text "$out" "), fetched_at unknown"
has text "$out" "the price source gives no fetch time: check that its prices are current"
has text "$out" "saving per disk = (16.16 - 7.16) x 2,496 h / 730 h - 0 transactions"
has text "$out" "= 30.772602739726 GBP (unrounded)"
has text "$out" "= 30.772602739726 x 70 = 2,154.082191780822 GBP (unrounded)"
has text "$out" "rounded once, at the end, to 2 decimals, half away from zero: 30.77 and 2,154.08 GBP"
has text "$out" "transactions: none are charged, since a deallocated VM does no I/O (E10 StandardSSD_LRS bills 0.001 GBP per 10,000"
# One disk by default.
out=$("$cli" "${field[@]}"); has "count 1" "$out" "saving for 1 disk: 30.77 GBP"

# ---- the field example, JSON ----
j=$("$cli" "${field[@]}" --count 70 --json); st=$?
[ $st = 0 ] && ok || bad "field example --json: status $st"
check json "$j" '.currency == "GBP" and .region == "westeurope"'
check json "$j" '.hours_downgraded == 2496 and .seconds_downgraded == 8985600'
check json "$j" '.per_disk.saving == "30.77" and .per_disk.saving_unrounded == "30.772602739726"'
check json "$j" '.total.disks == 70 and .total.saving == "2154.08" and .total.saving_unrounded == "2154.082191780822"'
check json "$j" '.from == {"tier": "P10", "sku": "Premium_LRS", "per_month": "16.16", "meter": "P10 LRS Disk", "effective_from": "2018-05-01T00:00:00Z", "source": .from.source, "fetched_at": .from.fetched_at}'
check json "$j" '.to.tier == "E10" and .to.sku == "StandardSSD_LRS" and .to.per_month == "7.16"'
check json "$j" '.from.source | test("constructed-westeurope-gbp.json")'
check json "$j" '.from.fetched_at == "" and (.from.source | test("modified 20[0-9][0-9]-"))'
check json "$j" '.period == {"from": "2026-01-01", "to": "2027-01-01", "tz": "Europe/London", "from_utc": "2026-01-01T00:00:00Z", "to_utc": "2027-01-01T00:00:00Z"}'
check json "$j" '.windows == ["Sat 00:00-Mon 00:00"]'
check json "$j" '.calculation.hours_per_month == 730 and .calculation.price_difference_per_month == "9" and .calculation.hours_downgraded == "2496" and .calculation.spans == 52'
check json "$j" '.calculation.formula | test("x hours_downgraded / 730")'
check json "$j" '.calculation.transactions.charged == false and .calculation.transactions.per_10k == "0.001"'
# 2026 at P10: 8,760 hours = 16.16 x 8760 / 730 = 193.92 a disk.
check json "$j" '.per_disk.baseline == "193.92" and .per_disk.with_plan == "163.15" and .total.baseline == "13574.40"'
check json "$j" '.per_disk.transactions == "0.00" and (.notes | length) >= 2'

# ---- from the database: the same figures, its source ----
"$cli" prices import --db "$scratch/t.db" "$gbp" >/dev/null 2>&1 && ok || bad "prices import"
j=$("$cli" savings --db "$scratch/t.db" "${field[@]:3}" --count 70 --json); st=$?
[ $st = 0 ] && ok || bad "--db: status $st"
check db "$j" '.hours_downgraded == 2496 and .per_disk.saving == "30.77" and .total.saving == "2154.08"'
check db "$j" '.from.source | test("constructed-westeurope-gbp.json")'
expect 2 "does not exist" -- "$cli" savings --db "$scratch/none.db" "${field[@]:3}"
expect 2 "no price book for westeurope NOK" -- "$cli" savings --db "$scratch/t.db" "${field[@]:3:2}" \
  --currency NOK "${field[@]:7}"

# ---- windows: overlapping count once, clipped by the period, both changes ----
run() { "$cli" savings --price-file "$gbp" --region westeurope --currency GBP --from-tier P10 \
          --to-tier E10 --json "$@"; }
j=$(run --window "Sat 00:00-Mon 00:00" --window "Sun 00:00-Sun 12:00, Sat 12:00-Sun 01:00" \
  --tz Europe/London --period 2026-01-01..2027-01-01)
check overlap "$j" '.hours_downgraded == 2496 and .per_disk.saving == "30.77" and (.windows | length) == 3'
j=$(run --window "Sat 00:00-Mon 00:00" --tz Europe/London --period 2026-01-04..2026-01-05)
check clipped "$j" '.hours_downgraded == 24 and .calculation.spans == 1'
j=$(run --window "Sat 00:00-Mon 00:00" --tz Europe/London --period 2026-03-28..2026-03-30)
check march "$j" '.hours_downgraded == 47'
j=$(run --window "Sat 00:00-Mon 00:00" --tz Europe/London --period 2026-10-24..2026-10-26)
check october "$j" '.hours_downgraded == 49'
# UTC without --tz: the whole year of weekends is 52 x 48 hours too, with
# no change in either direction.
j=$(run --window "sat 00:00 - mon 00:00" --period 2026-01-01..2027-01-01)
check utc "$j" '.hours_downgraded == 2496 and .period.tz == "UTC"'
# 167 hours a week: Fri 20:00 to the next Fri 19:00; over a week from a
# Monday, two windows in part (115 h and 52 h).
j=$(run --window "Fri 20:00-Fri 19:00" --period 2026-01-05..2026-01-12)
check 167h "$j" '.hours_downgraded == 167 and .seconds_downgraded == 601200 and .calculation.spans == 2'
# A half hour: hours as a fraction, seconds exact.
j=$(run --window "Mon 10:00-Mon 10:30" --period 2026-01-05..2026-01-06)
check half "$j" '.hours_downgraded == 0.5 and .seconds_downgraded == 1800 and .calculation.hours_downgraded == "0.5"'

# ---- a running VM's transactions ----
# 3,600 I/Os an hour of 256 KiB: 3,600 units an hour x 2,496 h at 0.001 per 10,000.
j=$(run --window "Sat 00:00-Mon 00:00" --tz Europe/London --period 2026-01-01..2027-01-01 \
  --count 70 --io-per-hour 3600 --io-size 262144)
check io "$j" '.per_disk.transactions_unrounded == "0.898560000000" and .per_disk.saving_unrounded == "29.874042739726" and .per_disk.saving == "29.87"'
check io "$j" '.total.saving == "2091.18" and .calculation.transactions.charged == true'
expect 2 "go together" -- "$cli" "${field[@]}" --io-per-hour 10

# ---- SKUs: ZRS stays ZRS, a target too small for the disk, a price the book lacks ----
expect 2 "P10 ZRS" -- "$cli" "${field[@]}" --from-sku Premium_ZRS
# A tier the book has at no time, in one part: the README's message, no date first.
expect 2 "tierwise: no price per month for P10 ZRS (Premium_ZRS) in westeurope GBP in the price book (file " -- \
  "$cli" "${field[@]}" --from-sku Premium_ZRS
expect 2 "to_tier E15 (256 GiB) is not what a P10 disk (128 GiB) becomes" -- "$cli" "${field[@]/E10/E15}"
expect 2 "Azure bills it as E10, the StandardSSD_LRS step that holds 128 GiB; give to_tier E10" -- "$cli" "${field[@]/E10/E15}"
expect 2 "ZRS redundancy, kept from from_sku" -- "$cli" "${field[@]/E10/S10}" --from-sku Premium_ZRS
expect 2 "to_tier S15 (256 GiB) is not what an E10 disk (128 GiB) becomes" -- "$cli" "${field[@]/P10/E10}" --to-tier S15
expect 2 "to_tier E15 (256 GiB) is not what a P10 disk" -- "$cli" "${field[@]}" --from-sku Premium_ZRS --to-tier E15
expect 2 "Standard HDD is LRS only" -- "$cli" "${field[@]/E10/S10}" --from-sku Premium_ZRS
expect 2 "from_sku Standard_LRS is Standard HDD" -- "$cli" "${field[@]}" --from-sku Standard_LRS
expect 2 "to_tier E6 (64 GiB) can't hold a P10 disk (128 GiB)" -- "$cli" "${field[@]/E10/E6}"
expect 2 "to_tier P11 is not a tier Azure offers" -- "$cli" "${field[@]/E10/P11}"
expect 2 "from_tier \"X10\" is not a disk tier" -- "$cli" "${field[@]/P10/X10}"
expect 2 "not a disk SKU" -- "$cli" "${field[@]}" --to-sku StandardSSD_GRS
expect 2 "holds no disk price for uksouth GBP" -- "$cli" "${field[@]:0:4}" uksouth "${field[@]:5}"
expect 2 "not one the Retail Prices API offers" -- "$cli" "${field[@]/GBP/XYZ}"

# ---- windows, zones, periods, counts ----
expect 2 'window "Sat 25:00-Mon 00:00": at byte' -- "$cli" "${field[@]/Sat 00:00-Mon 00:00/Sat 25:00-Mon 00:00}"
expect 2 'window "Sat 00:00 Mon 00:00"' -- "$cli" "${field[@]/Sat 00:00-Mon 00:00/Sat 00:00 Mon 00:00}"
expect 2 "--tz Europe/Nowhere" -- "$cli" "${field[@]/Europe\/London/Europe/Nowhere}"
expect 2 "--tz ../etc/passwd" -- "$cli" "${field[@]/Europe\/London/../etc/passwd}"
expect 2 "is before the start" -- "$cli" "${field[@]/2026-01-01..2027-01-01/2026-02-01..2026-01-01}"
expect 2 "the end is the start" -- "$cli" "${field[@]/2026-01-01..2027-01-01/2026-02-01..2026-02-01}"
expect 2 "at most 3644" -- "$cli" "${field[@]/2026-01-01..2027-01-01/2026-01-01..2040-01-01}"
expect 2 "2026-13-01 is not a date" -- "$cli" "${field[@]/2026-01-01..2027-01-01/2026-13-01..2027-01-01}"
expect 2 'at byte 11: expected ".."' -- "$cli" "${field[@]/2026-01-01..2027-01-01/2026-01-01/2027-01-01}"
expect 2 "outside the years 1900..2199" -- "$cli" "${field[@]/2026-01-01..2027-01-01/2026-01-01..2300-01-01}"
expect 2 "--count 0 is not a whole number from 1" -- "$cli" "${field[@]}" --count 0
expect 2 "--count 7x is not a whole number" -- "$cli" "${field[@]}" --count 7x

# ---- usage ----
expect 2 "needs the prices" -- "$cli" savings "${field[@]:3}"
expect 2 "--price-file or --db, not both" -- "$cli" "${field[@]}" --db "$scratch/t.db"
expect 2 "needs --region R" -- "$cli" savings --price-file "$gbp" --currency GBP
expect 2 "needs at least one --window" -- "$cli" savings --price-file "$gbp" --region westeurope \
  --currency GBP --from-tier P10 --to-tier E10 --period 2026-01-01..2027-01-01
expect 2 "needs --period A..B" -- "$cli" savings --price-file "$gbp" --region westeurope \
  --currency GBP --from-tier P10 --to-tier E10 --window "Sat 00:00-Mon 00:00"
expect 2 "unexpected argument" -- "$cli" "${field[@]}" extra
expect 2 "can't open" -- "$cli" "${field[@]/$gbp/$scratch/none.json}"
printf '{"Items": 3}' >"$scratch/bad.json"
expect 2 "is not a Retail Prices answer or a pricing/ snapshot" -- "$cli" "${field[@]/$gbp/$scratch/bad.json}"
# A directory is bad input, not a failure of the machine.
expect 2 "--price-file $scratch is a directory" -- "$cli" "${field[@]/$gbp/$scratch}"
# One page of several: the other pages' prices would be missing (the link names a loopback
# address: it is never fetched, the command refuses the page).
jq '. + {"NextPageLink": "http://127.0.0.1:9/api/retail/prices?$skip=100"}' "$gbp" \
  >"$scratch/page1.json"
expect 2 "$scratch/page1.json is one page of a multi-page Retail Prices answer" -- \
  "$cli" "${field[@]/$gbp/$scratch/page1.json}"
expect 2 "Save all the pages as one" -- "$cli" "${field[@]/$gbp/$scratch/page1.json}"
# Saved pages in an array: merge them, not "item 0 has no currencyCode".
jq -s '[.[0] + {"NextPageLink": "x"}, {"Items": []}]' "$gbp" >"$scratch/pages.json"
expect 2 "is an array of saved Retail Prices pages: merge their \"Items\"" -- \
  "$cli" "${field[@]/$gbp/$scratch/pages.json}"
# A zone of no name is refused, not taken as UTC.
expect 2 '--tz "" names no zone' -- "$cli" "${field[@]/Europe\/London/}"

# ---- amounts too large to write: refused naming the input, never "?" ----
big=(savings --price-file "$src/pricing/azure-disk-prices.json" --region westeurope --currency USD
     --from-tier P80 --to-tier E80 --window "Mon 00:00-Sun 23:59" --period 2026-01-01..2035-12-01)
expect 2 "for 10000000 disks is beyond the amounts tierwise writes" -- \
  "$cli" "${big[@]}" --count 10000000 --io-per-hour 10000000000 --io-size 1073741824
expect 2 "I/Os an hour of 1073741824 bytes are beyond the amounts" -- \
  "$cli" "${big[@]}" --io-per-hour 100000000000 --io-size 1073741824
expect 2 "ask for fewer disks" -- "$cli" "${big[@]}" --json --count 10000000 \
  --io-per-hour 10000000000 --io-size 1073741824

# ---- the count grouped by thousands in the calculation ----
out=$("$cli" "${field[@]}" --count 12345)
has grouped "$out" "saving for 12,345 disks: "
has grouped "$out" "for 12,345 disks     = 30.772602739726 x 12,345 = "

# ---- the transactions' meter: a bare name, and those in the book ----
j=$(run --window "Sat 00:00-Mon 00:00" --period 2026-01-01..2027-01-01)
check meter "$j" '.calculation.transactions.meter == "E10 LRS Disk Operations" and .calculation.transactions.meters_in_book == ["E10 LRS Disk Operations"]'
check meter "$j" '[.notes[] | select(test("the only transaction meter of the three in the book .*may not be the worse case"))] | length == 1'
check rounding "$j" '.calculation.rounding | test("need not add up")'
# A Premium target with a running VM: no transactions to bill, said so.
j=$("$cli" savings --price-file "$gbp" --region westeurope --currency GBP --from-tier E10 \
  --to-tier P10 --window "Sat 00:00-Mon 00:00" --period 2026-01-01..2027-01-01 --io-per-hour 3600 \
  --io-size 4096 --json)
check premium "$j" '[.notes[] | select(test("Premium SSD bills no transactions"))] | length == 1'
check premium "$j" '[.notes[] | select(test("per 10,000, \\)"))] | length == 0'

# ---- a window partly over another extends it: counted once ----
# Sat 00:00-Mon 00:00 and Sun 12:00-Mon 06:00: 54 hours a weekend, 52 of them.
j=$(run --window "Sat 00:00-Mon 00:00" --window "Sun 12:00-Mon 06:00" --period 2026-01-01..2027-01-01)
check extend "$j" '.hours_downgraded == 2808 and .calculation.spans == 52'

# ---- prices that change within the period: each part by its own ----
# P10 16.16 until 2026-06-30T23:59:59Z, 17.16 from 2026-07-01; E10 7.16,
# 7.00 from 2026-10-01.  Python's fractions: 1248 h x 9 + 624 h x 10 +
# 624 h x 10.16, over 730: 32.618958904110 a disk.
jq '.Items |= (map(if .meterName == "P10 LRS Disk" then . + {"effectiveEndDate": "2026-06-30T23:59:59Z"} else . end)
    + [(.[] | select(.meterName == "P10 LRS Disk") | . + {"retailPrice": 17.16, "unitPrice": 17.16, "effectiveStartDate": "2026-07-01T00:00:00Z"}),
       (.[] | select(.meterName == "E10 LRS Disk") | . + {"retailPrice": 7.00, "unitPrice": 7.00, "effectiveStartDate": "2026-10-01T00:00:00Z"})])' \
  "$gbp" | jq ".Count = (.Items | length)" >"$scratch/two-dates.json"
two=(savings --price-file "$scratch/two-dates.json" --region westeurope --currency GBP --from-tier P10
     --to-tier E10 --window "Sat 00:00-Mon 00:00" --period 2026-01-01..2027-01-01 --count 70)
j=$("$cli" "${two[@]}" --json); st=$?
[ $st = 0 ] && ok || bad "two dates: status $st"
check pieces "$j" '.per_disk.saving_unrounded == "32.618958904110" and .total.saving == "2283.33" and .hours_downgraded == 2496'
check pieces "$j" '[.prices[] | [.from, .from_per_month, .to_per_month]] == [["2026-01-01T00:00:00Z", "16.16", "7.16"], ["2026-07-01T00:00:00Z", "17.16", "7.16"], ["2026-10-01T00:00:00Z", "17.16", "7"]]'
check pieces "$j" '.from.per_month == "16.16" and .prices[2].to_effective_from == "2026-10-01T00:00:00Z"'
check pieces "$j" '[.notes[] | select(test("the prices change within the period"))] | length == 1'
# Before the first item: no price then, never today's or a zero.
expect 2 "at 2017-01-01T00:00:00Z (the period's start, priced by the items in effect then): no price per month for P10" -- \
  "$cli" "${field[@]/2026-01-01..2027-01-01/2017-01-01..2019-01-01}"
# The price file's own book would be today's prices: the field example's
# file has one price a side, one part, and no such note.
j=$("$cli" "${field[@]}" --json)
check "one price" "$j" '(.prices | length) == 1 and ([.notes[] | select(test("change within"))] | length) == 0'
out=$("$cli" "${two[@]}")
has "pieces text" "$out" "saving per disk = sum over the 3 parts of (from - to) x hours / 730 h - 0 transactions"
has "pieces text" "$out" "2026-07-01T00:00:00Z..2026-10-01T00:00:00Z: (17.16 - 7.16) x 624 h / 730 h"
has "pieces text" "$out" "saving for 70 disks: 2,283.33 GBP"

# The bundled snapshot as a price file: real USD prices, with its date.
j=$("$cli" savings --price-file "$src/pricing/azure-disk-prices.json" --region westeurope \
  --currency USD --from-tier P10 --to-tier E10 --window "Sat 00:00-Mon 00:00" \
  --tz Europe/London --period 2026-01-01..2027-01-01 --json)
check snapshot "$j" '.hours_downgraded == 2496 and (.from.source | test("a snapshot")) and (.from.fetched_at | length) > 0'
check snapshot "$j" '[.notes[] | select(test("carry no effective date: they are the book.s of 20"))] | length == 1'

# ---- a book whose items all ended before today ----
jq '.Items |= map(. + {"effectiveEndDate": "2026-06-30T23:59:59Z"})' "$gbp" >"$scratch/ended.json"
ended=(--region westeurope --currency GBP --from-tier P10 --to-tier E10
       --window "Sat 00:00-Mon 00:00" --period 2026-01-01..2026-06-01)
j=$("$cli" savings --price-file "$scratch/ended.json" "${ended[@]}" --json); st=$?
[ $st = 0 ] && ok || bad "ended book: status $st"
check ended "$j" '.hours_downgraded == 1056 and .per_disk.saving_unrounded == "13.019178082192"'
expect 2 "at 2026-07-01T00:00:00Z (where the prices change, priced by the items in effect then): no price per month for P10" -- \
  "$cli" savings --price-file "$scratch/ended.json" "${ended[@]/2026-06-01/2027-01-01}"
"$cli" prices import --db "$scratch/ended.db" "$scratch/ended.json" >/dev/null 2>&1 && ok || bad "prices import (ended)"
j=$("$cli" savings --db "$scratch/ended.db" "${ended[@]}" --json); st=$?
[ $st = 0 ] && ok || bad "ended book from --db: status $st"
check "ended db" "$j" '.per_disk.saving_unrounded == "13.019178082192"'

# ---- dates without Z cut the period; a date that is none is refused ----
jq '.Items |= map(if .meterName == "E10 LRS Disk Operations" then . + {"effectiveEndDate": "2026-06-30T23:59:59"} else . end)
    | .Items += [(.Items[] | select(.meterName == "E10 LRS Disk Operations") | . + {"retailPrice": 0.002, "unitPrice": 0.002, "effectiveStartDate": "2026-07-01"} | del(.effectiveEndDate))]' \
  "$gbp" | jq ".Count = (.Items | length)" >"$scratch/tx-dates.json"
tx=(savings --price-file "$scratch/tx-dates.json" --region westeurope --currency GBP --from-tier P10
    --to-tier E10 --window "Sat 00:00-Mon 00:00" --period 2026-01-01..2027-01-01
    --io-per-hour 10000 --io-size 4096)
j=$("$cli" "${tx[@]}" --json); st=$?
[ $st = 0 ] && ok || bad "tx dates: status $st"
check "tx parts" "$j" '[.prices[] | [.from, .tx_per_10k, .tx_meter, .transactions_unrounded]] == [["2026-01-01T00:00:00Z", "0.001", "E10 LRS Disk Operations", "1.248000000000"], ["2026-07-01T00:00:00Z", "0.002", "E10 LRS Disk Operations", "2.496000000000"]]'
check "tx parts" "$j" '[.notes[] | select(test("transaction price of E10 StandardSSD_LRS changes within the period"))] | length == 1'
out=$("$cli" "${tx[@]}")
has "tx parts text" "$out" "2026-01-01T00:00:00Z..2026-07-01T00:00:00Z: (16.16 - 7.16) x 1,248 h / 730 h - 1.248000000000 transactions (0.001 GBP per 10,000, E10 LRS Disk Operations)"
has "tx parts text" "$out" "2026-07-01T00:00:00Z..2027-01-01T00:00:00Z: (16.16 - 7.16) x 1,248 h / 730 h - 2.496000000000 transactions (0.002 GBP per 10,000, E10 LRS Disk Operations)"
jq '.Items[0].effectiveStartDate = "1st May 2018"' "$gbp" >"$scratch/bad-date.json"
expect 2 'effectiveStartDate "1st May 2018" is not a date' -- \
  "$cli" savings --price-file "$scratch/bad-date.json" "${field[@]:3}"

# ---- a saving the transactions make not positive ----
j=$(run --window "Sat 00:00-Mon 00:00" --period 2026-01-01..2027-01-01 --io-per-hour 3000000 --io-size 4096)
check "not positive" "$j" '(.per_disk.saving | startswith("-")) and ([.notes[] | select(test("the saving is not positive .* the transactions"))] | length == 1)'

finish savings-whatif
