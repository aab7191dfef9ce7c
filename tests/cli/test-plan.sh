#!/usr/bin/env bash
# tierwise plan --db F --policy FILE --from DATE --to DATE: the switches
# ahead over a database built here (the schema by tierwise, the fleet's
# rows with the sqlite3 shell, a price book imported): the text table and
# its totals, the tierwise.plan/1 document (its fields, due times in UTC
# and in the policy's zone, keys), YYYY-MM-DD read as midnight in the
# policy's zone (summer and winter), --totals, the iCalendar file read
# back by an independent checker (tests/tools/ics-check.py: CRLF, 75-octet
# folding on whole UTF-8 sequences, TEXT escaping), and bad input: dates
# that do not read, --to not after --from, two outputs, a policy zone that
# does not load, no price book, a write that fails.
# Needs jq, sqlite3, python3 and the zone files (else skipped).
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_FIXTURES and TW_SOURCE_DIR}
src=${TW_SOURCE_DIR:?}
command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is not installed: skipped"; exit 77; }
[ -e "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] || { echo "no zone files: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-plan-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$src/tests/helpers/testlib.sh"

check() {
  if jq -e "$3" >/dev/null 2>&1 <<<"$2"; then ok; else bad "$1: $3 is not true of: ${2:0:800}"; fi
}

db="$scratch/tw.db"
item() { # METER PRODUCT PRICE
  printf '{"currencyCode":"GBP","tierMinimumUnits":0,"retailPrice":%s,"unitPrice":%s,"armRegionName":"westeurope","location":"EU West","effectiveStartDate":"2020-01-01T00:00:00Z","meterName":"%s LRS Disk","productName":"%s Managed Disks","skuName":"%s LRS","serviceName":"Storage","unitOfMeasure":"1/Month","type":"Consumption"}' \
    "$3" "$3" "$1" "$2" "$1"
}
cat >"$scratch/p.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "dev-weekends",
  "match": { "skus": ["Premium_LRS"] },
  "target": "StandardSSD_LRS", "windows": ["Fri 20:00-Mon 06:00"],
  "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 10, "before_start_minutes": 30 } }
EOF
echo "[$(item P10 'Premium SSD' 16.16),$(item E10 'Standard SSD' 7.16)]" >"$scratch/book.json"
"$cli" prices import --db "$db" "$scratch/book.json" >/dev/null 2>&1 || bad "importing the book"
vm() { # ID NAME
  echo "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, vm_size,
        tags, last_report_id, last_report_at, last_report_ms) VALUES ($1, 'vm:$1', '$2',
        'sub-1', 'rg-dev', 'westeurope', 'Standard_D4s_v3', '{}', 'r$1', '2026-11-20T00:00:00Z',
        1795132800000);"
}
disk() { # ID VM NAME SKU TIER
  echo "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, caching,
        last_seen_at, last_seen_ms, position, max_shares, bursting) VALUES ($1, 'd$1', $2,
        '$3', 'data', $1, '$4', 128, '$5', 'None', '2026-11-20T00:00:00Z', 1795132800000, $1,
        1, 0);"
}
# A VM whose name needs every TEXT escape and multi-byte characters.
long="sap-\xc3\xa9t\xc3\xa9,prod;eu\\\\west-\xe2\x82\xac\xe2\x82\xac-\xf0\x9f\x92\xbe-and-a-long-tail-to-fold"
longname=$(printf "$long")
sqlite3 "$db" "$(vm 1 dev-1) $(disk 1 1 data-1 Premium_LRS P10) $(disk 2 1 std-1 StandardSSD_LRS E10)
  $(vm 2 "$longname") $(disk 3 2 "d\xc3\xbcsk,1;2" Premium_LRS P10)" || bad "filling the database"
sqlite3 "$db" "UPDATE disks SET name = '$(printf 'd\xc3\xbcsk,1;2')' WHERE id = 3" || bad "naming disk 3"

# ---- JSON: two December weekends (GMT) ----
out=$("$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-15 --json); st=$?
[ $st = 0 ] && ok || bad "plan --json exit $st"
check json "$out" '.schema_version == "tierwise.plan/1" and .policy == "dev-weekends" and .currency == "GBP"
  and .timezone == "Europe/London" and .from == "2026-12-01T00:00:00Z" and .to == "2026-12-15T00:00:00Z"'
check json "$out" '.actions | length == 8'
# In due order per disk, disks in VM id order (each list equals itself sorted).
check json "$out" '([.actions[] | select(.disk_id == 1) | .due_at] | . == sort and length == 4)
  and ([.actions[] | select(.disk_id == 3) | .due_at] | . == sort and length == 4)
  and ([.actions[].vm_id] | . == sort)'
check json "$out" '[.actions[] | select(.disk_id == 1)][0:2] | map([.kind, .due_at, .due_local, .from_sku, .to_sku]) ==
  [["downgrade", "2026-12-04T20:10:00Z", "2026-12-04T20:10:00+00:00", "Premium_LRS", "StandardSSD_LRS"],
   ["upgrade", "2026-12-07T05:30:00Z", "2026-12-07T05:30:00+00:00", "StandardSSD_LRS", "Premium_LRS"]]'
check json "$out" '[.actions[] | select(.disk_id == 1) | [.kind, .due_at]] ==
  [["downgrade", "2026-12-04T20:10:00Z"], ["upgrade", "2026-12-07T05:30:00Z"],
   ["downgrade", "2026-12-11T20:10:00Z"], ["upgrade", "2026-12-14T05:30:00Z"]]'
check json "$out" '.actions[0] | .vm == "dev-1" and .disk == "data-1" and .vm_id == 1 and .disk_id == 1
  and .resource_group == "rg-dev" and .subscription_id == "sub-1" and .policy == "dev-weekends"
  and .currency == "GBP" and .saving == "0.71" and (.reason | test("^window Fri 20:00-Mon 06:00 \\(Europe/London"))'
check json "$out" '.actions[1] | .kind == "upgrade" and .saving == "0.00"'
check json "$out" '[.actions[].idempotency_key] | unique | length == 8'
check json "$out" '.actions[0].idempotency_key | test("^dev-weekends/1/downgrade/[0-9]+$")'
check json "$out" '[.actions[].vm_id] == [1,1,1,1,2,2,2,2]'
check json "$out" '.totals | .actions == 8 and .downgrades == 4 and .upgrades == 4 and .disks == 2
  and .windows_skipped == 0 and .saving == "2.83"'
# No std-1: a Standard disk is not matched.
check json "$out" '[.actions[] | select(.disk == "std-1")] | length == 0'

# ---- YYYY-MM-DD is midnight in the policy's zone (BST in July) ----
out=$("$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-07-01 --to 2026-07-02T00:00:00+01:00 --json); st=$?
[ $st = 0 ] && ok || bad "plan July exit $st"
check july "$out" '.from == "2026-06-30T23:00:00Z" and .to == "2026-07-01T23:00:00Z" and (.actions | length == 0)'

# ---- text ----
out=$("$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08); st=$?
[ $st = 0 ] && ok || bad "plan text exit $st"
head=$(head -1 <<<"$out")
for col in "due (UTC)" "due (local)" VM disk kind "from -> to" saving reason; do
  [[ $head == *"$col"* ]] && ok || bad "text: no column $col in: $head"
done
grep -q '^2026-12-04T20:10:00Z  2026-12-04T20:10:00+00:00  dev-1 .* data-1 .* downgrade  Premium_LRS -> StandardSSD_LRS .* 0.71  window Fri 20:00-Mon 06:00' <<<"$out" \
  && ok || bad "text: no downgrade row in: $out"
grep -q 'plan of dev-weekends from 2026-12-01T00:00:00Z to 2026-12-08T00:00:00Z (Europe/London): 4 actions (2 downgrades, 2 upgrades) on 2 disks; 0 windows skipped (min_saving, quota or margins); expected saving 1.41 GBP' <<<"$out" \
  && ok || bad "text: no totals line in: $out"
out=$("$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --totals); st=$?
[ $st = 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && [[ $out == "plan of dev-weekends"*"4 actions"* ]] && ok ||
  bad "--totals: exit $st, $out"

# ---- the calendar ----
"$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --ics >"$scratch/p.ics"; st=$?
[ $st = 0 ] && ok || bad "plan --ics exit $st"
if python3 "$src/tests/tools/ics-check.py" "$scratch/p.ics" >"$scratch/ics.json" 2>"$scratch/ics.err"; then ok; else
  bad "the calendar does not read back: $(cat "$scratch/ics.err")"; fi
ics=$(cat "$scratch/ics.json")
check ics "$ics" '.calendar.VERSION == "2.0" and (.calendar.PRODID | length > 0)'
check ics "$ics" '.events | length == 4'
check ics "$ics" '.events[0] | .DTSTART == "20261204T201000Z" and .DTEND == "20261204T202500Z"
  and .SUMMARY == "Downgrade disk data-1 of VM dev-1 to StandardSSD_LRS"
  and (.UID | test("^dev-weekends/1/downgrade/[0-9]+@[0-9a-f]{16}[.]tierwise$"))
  and (.DESCRIPTION | test("Expected saving: 0.71 GBP"))'
check ics "$ics" '.events[1].SUMMARY == "Upgrade disk data-1 of VM dev-1 to Premium_LRS"'
want="Downgrade disk $(printf 'd\xc3\xbcsk,1;2') of VM $longname to StandardSSD_LRS"
check ics "$ics" ".events[2].SUMMARY == $(jq -Rn --arg s "$want" '$s')"
tr -d '\r\n ' <"$scratch/p.ics" | grep -q 'eu\\\\west' && ok ||
  bad "the backslash is not escaped in: $(cat "$scratch/p.ics")"
[ "$(grep -c $'^ ' "$scratch/p.ics")" -ge 2 ] && ok || bad "no folded line in the calendar"
# The same events as the JSON's, one for one.
jout=$("$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --json)
dom=$(jq -r '.events[0].UID | sub("^[^@]*@"; "")' <<<"$ics")
[ "$(jq -r --arg d "$dom" '[.actions[].idempotency_key + "@" + $d] | join(" ")' <<<"$jout")" = \
  "$(jq -r '[.events[].UID] | join(" ")' <<<"$ics")" ] && ok || bad "the calendar's UIDs are not the plan's keys"
# Another installation (a copy of the database elsewhere) gives other UIDs;
# the same database the same ones.
cp "$db" "$scratch/copy.db"
"$cli" plan --db "$scratch/copy.db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --ics >"$scratch/c.ics"
"$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --ics >"$scratch/s.ics"
u1=$(grep '^UID' "$scratch/p.ics" | head -1); u2=$(grep '^UID' "$scratch/c.ics" | head -1); u3=$(grep '^UID' "$scratch/s.ics" | head -1)
[ -n "$u1" ] && [ "$u1" != "$u2" ] && [ "$u1" = "$u3" ] && ok || bad "UIDs across installations: $u1 / $u2 / $u3"
# An empty plan is still a calendar with a component (RFC 5545: 1*component).
"$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-07-01 --to 2026-07-02 --ics >"$scratch/e.ics"; st=$?
if [ $st = 0 ] && python3 "$src/tests/tools/ics-check.py" "$scratch/e.ics" >"$scratch/e.json" 2>"$scratch/ics.err"; then ok; else
  bad "the empty calendar: exit $st, $(cat "$scratch/ics.err")"; fi
check empty-ics "$(cat "$scratch/e.json")" '.events | length == 0'
grep -q '^BEGIN:VTIMEZONE' "$scratch/e.ics" && ok || bad "the empty calendar has no VTIMEZONE"

# ---- the text's footnote: totals rounded once, not the sum of the rows ----
out=$("$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-15)
grep -q 'may differ by a minor unit or so from the sum of' <<<"$out" && ok || bad "text: no footnote in: $out"

# ---- several policies: one run, each action naming its policy ----
cat >"$scratch/p2.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "dev-nights",
  "match": { "vms": ["dev-1"] },
  "target": "StandardSSD_LRS", "windows": ["Tue 22:00-Wed 06:00"],
  "timezone": "UTC",
  "margins": { "after_deallocate_minutes": 0, "before_start_minutes": 0 } }
EOF
one1=$("$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --totals)
one2=$("$cli" plan --db "$db" --policy "$scratch/p2.json" --from 2026-12-01 --to 2026-12-08 --totals)
out=$("$cli" plan --db "$db" --policy "$scratch/p.json" --policy "$scratch/p2.json" --from 2026-12-01 --to 2026-12-08); st=$?
[ $st = 0 ] && ok || bad "two policies: exit $st"
[[ $(head -1 <<<"$out") == "policy "*"due (UTC)"* ]] && ok || bad "two policies: no policy column in: $out"
grep -q '^dev-weekends  *2026-12-04T20:10:00Z .* data-1 .* downgrade' <<<"$out" && ok || bad "two policies: no dev-weekends row in: $out"
grep -q '^dev-nights  *2026-12-01T22:00:00Z .* data-1 .* downgrade' <<<"$out" && ok || bad "two policies: no dev-nights row in: $out"
grep -qxF "$one1" <<<"$out" && grep -qxF "$one2" <<<"$out" && ok || bad "two policies: the totals are not each one's own: $out / $one1 / $one2"
grep -q '^together (2 policies): [0-9]* actions' <<<"$out" && ok || bad "two policies: no together line in: $out"
out=$("$cli" plan --db "$db" --policy "$scratch/p.json" --policy "$scratch/p2.json" --from 2026-12-01 --to 2026-12-08 --json); st=$?
[ $st = 0 ] && ok || bad "two policies --json: exit $st"
check plans "$out" '(.plans | length) == 2 and .plans[0].schema_version == "tierwise.plan/1"
  and .plans[0].policy == "dev-weekends" and .plans[1].policy == "dev-nights"
  and (.plans[0].actions | length) == 4 and (.plans[1].actions | length) >= 2'
n2=$(jq '.plans[1].actions | length' <<<"$out")
"$cli" plan --db "$db" --policy "$scratch/p.json" --policy "$scratch/p2.json" --from 2026-12-01 --to 2026-12-08 --ics >"$scratch/two.ics"; st=$?
if [ $st = 0 ] && python3 "$src/tests/tools/ics-check.py" "$scratch/two.ics" >"$scratch/two.json" 2>"$scratch/ics.err"; then ok; else
  bad "two policies --ics: exit $st, $(cat "$scratch/ics.err")"; fi
check two-ics "$(cat "$scratch/two.json")" "(.events | length) == 4 + $n2"
[ "$(grep -c '^BEGIN:VCALENDAR' "$scratch/two.ics")" = 1 ] && ok || bad "two policies --ics: not one calendar"
"$cli" plan --db "$db" --policy "$scratch/p.json" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 >/dev/null 2>"$scratch/e"; st=$?
[ $st = 2 ] && grep -q "give each policy once" "$scratch/e" && ok || bad "the same policy twice: exit $st, $(cat "$scratch/e")"

# ---- disks without a price: warned of and in the totals ----
cp "$db" "$scratch/np.db"
sqlite3 "$scratch/np.db" "$(vm 5 far-1) UPDATE vms SET location = 'eastus' WHERE id = 5; $(disk 9 5 far-d Premium_LRS P10)" || bad "adding a VM in eastus"
out=$("$cli" plan --db "$scratch/np.db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-15 --json 2>"$scratch/e"); st=$?
[ $st = 0 ] && grep -q "plan: 1 disk has no price, so the plan leaves it out: no GBP price book for eastus (1 disk)" "$scratch/e" \
  && ok || bad "no price: exit $st, stderr $(cat "$scratch/e")"
check no-price "$out" '.totals.disks_without_price == 1 and .totals.missing_regions == ["eastus"] and .totals.actions == 8'
check no-price "$(jq . <<<"$jout")" '.totals.disks_without_price == 0 and .totals.missing_regions == []'
"$cli" plan --db "$scratch/np.db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-15 >"$scratch/o" 2>"$scratch/e"
grep -q "1 disk has no price" "$scratch/e" && ok || bad "text: no warning: $(cat "$scratch/e")"

# ---- bad input ----
expect_fail() { # WHAT STATUS PATTERN ARGS...
  local what=$1 want=$2 pat=$3; shift 3
  "$cli" plan "$@" >"$scratch/o" 2>"$scratch/e"; local st=$?
  [ $st = "$want" ] && grep -q -- "$pat" "$scratch/e" && ok || bad "$what: exit $st (want $want), stderr: $(cat "$scratch/e")"
}
expect_fail "a bad --from" 2 "plan: --from: the date \"2026-13-01\" is no day" --db "$db" --policy "$scratch/p.json" --from 2026-13-01 --to 2026-12-08
expect_fail "a bad --to" 2 "plan: --to: \"Friday\" is neither YYYY-MM-DD nor RFC 3339" --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to Friday
expect_fail "--to before --from" 2 "is not after --from" --db "$db" --policy "$scratch/p.json" --from 2026-12-08 --to 2026-12-01
# Dates a plan takes: 1970..2199 (no overflow far out), instants from 1970.
expect_fail "--from past 2199" 2 "plan: --from: the date \"2262-04-10\" is outside the years 1970..2199" --db "$db" --policy "$scratch/p.json" --from 2262-04-10 --to 2262-04-12
expect_fail "an RFC 3339 --to past 2199" 2 "plan: --to: .* is outside 1970-01-01T00:00:00Z" --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2262-04-11T23:47:16Z
expect_fail "1970-01-01 in London is 1969" 2 "plan: --from: the date \"1970-01-01\" is midnight outside" --db "$db" --policy "$scratch/p.json" --from 1970-01-01 --to 1970-01-05
expect_fail "a period too long" 2 "plan: --to: the period is longer than 3631 days" --db "$db" --policy "$scratch/p.json" --from 2026-01-01 --to 2040-01-01
expect_fail "two outputs" 2 "one of --json, --ics and --totals" --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --json --ics
expect_fail "no --to" 2 "needs --db FILE, --policy FILE, --from DATE and --to DATE" --db "$db" --policy "$scratch/p.json" --from 2026-12-01
expect_fail "no database" 2 "no such database" --db "$scratch/none.db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08
sed 's#Europe/London#Mars/Olympus#' "$scratch/p.json" >"$scratch/mars.json"
expect_fail "a zone that does not load" 2 'timezone "Mars/Olympus" does not load' --db "$db" --policy "$scratch/mars.json" --from 2026-12-01 --to 2026-12-08
# A database without a price book (the schema made by tierwise on open).
sqlite3 "$scratch/empty.db" "CREATE TABLE x(a); DROP TABLE x;" || bad "making an empty database"
expect_fail "no price book" 1 "no price book" --db "$scratch/empty.db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08
if [ -w /dev/full ]; then
  "$cli" plan --db "$db" --policy "$scratch/p.json" --from 2026-12-01 --to 2026-12-08 --json >/dev/full 2>"$scratch/e"; st=$?
  [ $st = 1 ] && grep -q "writ" "$scratch/e" && ok || bad "/dev/full: exit $st, $(cat "$scratch/e")"
fi
out=$("$cli" plan --help); st=$?
[ $st = 0 ] && [[ $out == *"midnight in the policy's"* ]] && [[ $out == *"--ics"* ]] && ok || bad "--help: $st"
finish plan
