#!/usr/bin/env bash
# tierwise savings --db F --policy FILE --month M: the fleet's savings
# opportunities over a database built here (the schema by tierwise, the
# fleet's rows with the sqlite3 shell, a price book imported): the text
# table, the JSON document (rounded and unrounded amounts, the excluded
# disks with their reasons, the totals), CSV, reservations from a file, a
# region without a book (named, exit 1, never a zero), no book at all (exit
# 1, with --currency or not: nothing printed), a policy timezone that does
# not load (exit 2), a write that fails (exit 1, said; text and CSV of a
# large output too), the --help's columns, one disk said as one, a VM's
# tag in two cases read as policy show reads it, and bad usage.
# Needs jq and sqlite3 (else skipped).
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_FIXTURES and TW_SOURCE_DIR}
fixtures=${TW_FIXTURES:?}
src=${TW_SOURCE_DIR:?}
command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed: skipped"; exit 77; }
[ -e "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] || { echo "no zone files: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-savings-fleet-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$src/tests/helpers/testlib.sh"

check() {
  if jq -e "$3" >/dev/null 2>&1 <<<"$2"; then ok; else bad "$1: $3 is not true of: ${2:0:800}"; fi
}

db="$scratch/tw.db"
# The book: P10 and E10 as the field example has them (16.16, 7.16); P30 and
# E30 constructed for the test (100, 40).
item() { # METER PRODUCT PRICE
  printf '{"currencyCode":"GBP","tierMinimumUnits":0,"retailPrice":%s,"unitPrice":%s,"armRegionName":"westeurope","location":"EU West","effectiveStartDate":"2020-01-01T00:00:00Z","meterName":"%s LRS Disk","productName":"%s Managed Disks","skuName":"%s LRS","serviceName":"Storage","unitOfMeasure":"1/Month","type":"Consumption"}' \
    "$3" "$3" "$1" "$2" "$1"
}
echo "[$(item P10 'Premium SSD' 16.16),$(item E10 'Standard SSD' 7.16),$(item P30 'Premium SSD' 100),$(item E30 'Standard SSD' 40)]" >"$scratch/book.json"
"$cli" prices import --db "$db" "$scratch/book.json" >/dev/null 2>&1 || bad "importing the westeurope GBP book"
vm() { # ID NAME RG REGION TAGS
  echo "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, vm_size,
        tags, last_report_id, last_report_at, last_report_ms) VALUES ($1, 'vm:$2', '$2',
        'sub-1', '$3', '$4', 'Standard_D4s_v3', '$5', 'r$1', '2026-11-20T00:00:00Z',
        1795132800000);"
}
disk() { # ID VM ROLE SKU TIER SIZE
  echo "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, caching,
        last_seen_at, last_seen_ms, position) VALUES ($1, 'd$1', $2, 'disk-$1', '$3', $1,
        '$4', $6, '$5', 'None', '2026-11-20T00:00:00Z', 1795132800000, $1);"
}
sqlite3 "$db" "$(vm 1 dev-1 rg-dev westeurope '{"env":"dev"}')
  $(disk 1 1 os Premium_LRS P10 128) $(disk 2 1 data Premium_LRS P10 128)
  $(disk 3 1 data Premium_LRS P30 1024)
  $(vm 2 dev-2 rg-dev westeurope '{"env":"dev","tierwise":"off"}')
  $(disk 4 2 data Premium_LRS P10 128)
  $(vm 3 prod-1 rg-prod westeurope '{"env":"prod"}') $(disk 5 3 data Premium_LRS P10 128)" \
  || bad "filling the database"

# Every weekend of December 2026 in Europe/London (GMT then): Sat 5, 12, 19
# and 26, 48 h each, 192 h; P10 16.16 -> E10 7.16 a month: 9.00 x 192 / 730;
# P30 -> E30: 60.00 x 192 / 730.
cat >"$scratch/p.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "dev-weekends",
  "match": { "tags": {"env": "dev"}, "skus": ["Premium_LRS"],
             "exclude": { "tags": {"tierwise": "off"} } },
  "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"],
  "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 0, "before_start_minutes": 0 } }
EOF

# ---- JSON ----
out=$("$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 --json); st=$?
[ $st = 0 ] && ok || bad "savings --json exit $st"
check json "$out" '.policy == "dev-weekends" and .month == "2026-12" and .currency == "GBP"'
check json "$out" '.period.from == "2026-12-01T00:00:00Z" and .period.to == "2027-01-01T00:00:00Z"'
check json "$out" '[.disks[].disk] == ["disk-2", "disk-3"]'
check json "$out" '.disks[0] | .target_sku == "StandardSSD_LRS" and .target_tier == "E10"
  and .hours == "192" and .saving == "2.37" and .saving_unrounded == "2.367123287671"
  and .per_month == "16.16" and .target_per_month == "7.16" and .windows_source == "list"'
check json "$out" '[.excluded[] | [.disk, .reason]] == [["disk-1", "os_disk"], ["disk-4", "excluded_by_policy"]]'
check json "$out" '.totals.fleet | .disks == 2 and .excluded == 2 and .vms == 2
  and .saving == "18.15" and .saving_unrounded == "18.147945205479" and .hours == "384"'
check json "$out" '.disks[1] | .target_tier == "E30" and .saving == "15.78"'
check json "$out" '.totals.vms | length == 2'
check json "$out" '.totals.resource_groups == [.totals.resource_groups[0]] and .totals.resource_groups[0].resource_group == "rg-dev"'
check json "$out" '.totals.subscriptions[0].subscription_id == "sub-1"'
check json "$out" '.prices[0].region == "westeurope" and (.regions_without_book | length) == 0'

# ---- README's first example: policies/dev-weekends.json over two dev VMs
# (the text exactly as README shows it, but the book's fetch time) ----
readme_db="$scratch/readme.db"
(cd "$scratch" && "$cli" prices import --db "$readme_db" book.json) >/dev/null 2>&1 || bad "importing the book (README)"
sqlite3 "$readme_db" "$(vm 1 dev-1 rg-dev westeurope '{"env":"dev"}')
  $(disk 1 1 os Premium_LRS P10 128) $(disk 2 1 data Premium_LRS P10 128)
  $(vm 2 dev-2 rg-dev westeurope '{"env":"dev","tierwise":"off"}') $(disk 4 2 data Premium_LRS P10 128)" \
  || bad "filling the README's database"
out=$("$cli" savings --db "$readme_db" --policy "$src/policies/dev-weekends.json" --month 2026-12 | sed 's/fetched .*/fetched T/'); st=$?
want='Savings opportunities of policy dev-weekends in 2026-12 (2026-12-01T00:00:00Z to 2027-01-01T00:00:00Z, Europe/London), GBP

VM                   DISK                     SKU              TIER  TARGET           TIER      HOURS     SAVING  WINDOWS
dev-1                disk-2                   Premium_LRS      P10   StandardSSD_LRS  E10   229.333333       2.83  Fri 20:00-Mon 06:00 (list, Europe/London)
                       note: whether the disk is shared is not known yet (no ARM sync): the executor checks it before a switch

Left alone (2):
  dev-1/disk-1 (Premium_LRS P10): os_disk: an OS disk, and the policy moves data disks only ("os_disks": false)
  dev-2/disk-4 (Premium_LRS P10): excluded_by_policy: excluded by exclude.tags tierwise=off

Per VM:
  dev-1                rg-dev                  1 moved    1 left 229.333333 h         2.83
  dev-2                rg-dev                  0 moved    1 left         0 h         0.00

Per resource group:
  sub-1/rg-dev                                  2 VMs     1 moved     2 left 229.333333 h         2.83 GBP

Per subscription:
  sub-1                                         2 VMs     1 moved     2 left 229.333333 h         2.83 GBP

Fleet:
  all                                           2 VMs     1 moved     2 left 229.333333 h         2.83 GBP
  prices of westeurope: import book.json, fetched T

Amounts are exact until shown: each is rounded once, to the GBP minor unit, so a
total (rounded from the exact sum) may differ by a minor unit or so from the sum of
the rounded rows above it.'
[ "$st:$out" = "0:$want" ] && ok || bad "README's example ($st):"$'\n'"$out"

# ---- reservations from a file: the first P30 of westeurope it covers ----
cat >"$scratch/r.json" <<'EOF'
{ "schema_version": "tierwise.reservations/1",
  "reservations": [ {"region": "westeurope", "tier": "P30", "count": 1} ] }
EOF
out=$("$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 --reservations "$scratch/r.json" --json)
check reservations "$out" '[.disks[].disk] == ["disk-2"] and ([.excluded[] | select(.reason == "reservation") | .disk] == ["disk-3"])'

# ---- text ----
out=$("$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12); st=$?
[ $st = 0 ] && ok || bad "savings (text) exit $st"
grep -q "policy dev-weekends in 2026-12" <<<"$out" && ok || bad "text head: $out"
grep -Eq "^dev-1 +disk-2 +Premium_LRS +P10 +StandardSSD_LRS +E10 +192 +2.37 " <<<"$out" && ok || bad "text row: $out"
grep -q "dev-2/disk-4 (Premium_LRS P10): excluded_by_policy" <<<"$out" && ok || bad "text excluded: $out"
grep -Eq "all +2 VMs +2 moved +2 left +384 h +18.15 GBP" <<<"$out" && ok || bad "text fleet: $out"

# ---- CSV ----
out=$("$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 --csv); st=$?
[ $st = 0 ] && ok || bad "savings --csv exit $st"
head -1 <<<"$out" | grep -q $'^vm,vm_id,resource_group,subscription_id,location,disk,disk_id,role,sku,tier,size_gib,status,reason,why,target_sku,target_tier,windows_source,windows,windows_tz,hours,saving,saving_unrounded\r$' \
  && ok || bad "csv header: $(head -1 <<<"$out")"
[ "$(wc -l <<<"$out")" = 5 ] && ok || bad "csv: one record per matched disk: $out"
grep -q $'^dev-1,1,rg-dev,sub-1,westeurope,disk-2,2,data,Premium_LRS,P10,128,covered,,,StandardSSD_LRS,E10,list,Sat 00:00-Mon 00:00,Europe/London,192,2.37,2.367123287671\r$' <<<"$out" \
  && ok || bad "csv row: $out"

# ---- a region without a book: named, counted, exit 1, never a zero ----
sqlite3 "$db" "$(vm 4 dev-ne rg-dev northeurope '{"env":"dev"}') $(disk 6 4 data Premium_LRS P10 128)"
out=$("$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 --json 2>"$scratch/err"); st=$?
[ $st = 1 ] && ok || bad "no book: exit $st, want 1"
grep -q "no GBP price book for northeurope (1 disk)" "$scratch/err" && ok || bad "no book: $(cat "$scratch/err")"
check nobook "$out" '.totals.fleet.disks_without_price == 1 and .totals.fleet.disks == 2
  and .regions_without_book[0].region == "northeurope"
  and ([.excluded[] | select(.reason == "no_price") | .why | test("northeurope")] == [true])'
# A Standard SSD disk there needs no price: already_on_target, the region not
# listed for it.
sqlite3 "$db" "$(disk 7 4 data StandardSSD_LRS E10 128)"
cat >"$scratch/any.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "north", "match": { "vms": ["dev-ne"] },
  "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"] }
EOF
out=$("$cli" savings --db "$db" --policy "$scratch/any.json" --month 2026-12 --json 2>"$scratch/err"); st=$?
[ $st = 1 ] && ok || bad "nothing priced: exit $st, want 1"
check onTarget "$out" '[.excluded[] | [.disk, .reason]] == [["disk-6", "no_price"], ["disk-7", "already_on_target"]]
  and .regions_without_book == [.regions_without_book[0]] and .regions_without_book[0].disks == 1'
sqlite3 "$db" "DELETE FROM disks WHERE id = 7"

# ---- a policy timezone that does not load: exit 2 naming it, nothing printed ----
sed 's|"Europe/London"|"Europe/Lndon"|' "$scratch/p.json" >"$scratch/typo.json"
out=$("$cli" savings --db "$db" --policy "$scratch/typo.json" --month 2026-12 --json 2>"$scratch/err"); st=$?
[ $st = 2 ] && ok || bad "policy zone: exit $st, want 2"
grep -q '"Europe/Lndon" does not load' "$scratch/err" && ok || bad "policy zone: $(cat "$scratch/err")"
[ -z "$out" ] && ok || bad "policy zone: printed $out"

# ---- a write that fails: exit 1, said as such ----
if [ -w /dev/full ]; then
  "$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 --json >/dev/full 2>"$scratch/err"; st=$?
  [ $st = 1 ] && grep -q "writing" "$scratch/err" && ! grep -q "amount" "$scratch/err" \
    && ok || bad "/dev/full: exit $st: $(cat "$scratch/err")"
fi

# ---- a write that fails before the last flush (text and CSV of a fleet
# larger than a stdio buffer): exit 1, said ----
cp "$db" "$scratch/bulk.db"
{
  echo "BEGIN; DELETE FROM disks WHERE vm_id = 4;"
  for i in $(seq 100 160); do vm "$i" "bulk-$i" rg-dev westeurope '{"env":"dev"}'; disk "$i" "$i" data Premium_LRS P10 128; done
  echo "COMMIT;"
} | sqlite3 "$scratch/bulk.db" || bad "filling the bulk database"
if [ -w /dev/full ]; then
  for form in text --csv; do
    args=(); [ "$form" = text ] || args=("$form")
    "$cli" savings --db "$scratch/bulk.db" --policy "$scratch/p.json" --month 2026-12 "${args[@]}" >/dev/full 2>"$scratch/err"; st=$?
    [ $st = 1 ] && grep -q "writing the output failed" "$scratch/err" \
      && ok || bad "/dev/full ($form, a large output): exit $st: $(cat "$scratch/err")"
  done
fi
# ---- the --help: the options' columns, and one disk is one disk ----
out=$("$cli" savings --policy x --help); st=$?
[ $st = 0 ] && ok || bad "--help: exit $st"
cols=$(grep -E '^ +(-[a-z], )?--[a-z]' <<<"$out" | grep -vE '^ +--[a-z-]+( [A-Z][A-Z-]*)?$' | awk '{ match($0, /--[a-z-]+( [A-Z][A-Z-]*)? +/); print RSTART + RLENGTH }' | sort -u)
[ "$(wc -l <<<"$cols")" = 1 ] && ok || bad "--help: the options' texts start at columns $(echo $cols): $out"
sqlite3 "$db" "$(vm 9 dev-ne2 rg-dev northeurope '{"env":"dev"}') $(disk 9 9 data Premium_LRS P10 128)"
"$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 >"$scratch/out" 2>"$scratch/err"; st=$?
grep -q "no GBP price book for northeurope (2 disks)" "$scratch/err" && ok || bad "two disks: $(cat "$scratch/err")"
sqlite3 "$db" "DELETE FROM disks WHERE id = 9; DELETE FROM vms WHERE id = 9"
"$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 >"$scratch/out" 2>"$scratch/err"; st=$?
grep -q "savings: 1 disk has no price, so the totals leave it out: no GBP price book for northeurope (1 disk);" "$scratch/err" \
  && ok || bad "one disk: $(cat "$scratch/err")"

# ---- no price book at all: exit 1 (a missing price), said, nothing
# printed, a currency asked for or not ----
cp "$db" "$scratch/nobook.db"
sqlite3 "$scratch/nobook.db" "DELETE FROM price_books"
expect 1 "no price book" -- "$cli" savings --db "$scratch/nobook.db" --policy "$scratch/p.json" --month 2026-12
expect 1 "savings: the store has no price book" -- "$cli" savings --db "$scratch/nobook.db" --policy "$scratch/p.json" --month 2026-12 --currency GBP
expect 1 "savings: the store has no price book" -- "$cli" savings --db "$scratch/nobook.db" --policy "$scratch/p.json" --month 2026-12 --currency GBP --json

# ---- a tag in two cases: policy show and the savings run read the same ----
# Azure tag names ignore case, so a VM may carry "schedule" and "Schedule"
# both: every reader takes the first (core/inventory.h tw_tag_find), so the
# week policy show prints is the week the savings are counted over.
tag_db="$scratch/tag.db"
(cd "$scratch" && "$cli" prices import --db "$tag_db" book.json) >/dev/null 2>&1 || bad "importing the book (tag)"
sqlite3 "$tag_db" "$(vm 1 dev-1 rg-dev westeurope '{"env":"dev","schedule":"off=(F,20);on=(M,6);tz=Europe/London","Schedule":"off=(S,0);on=(M,0);tz=Europe/London"}')
  $(disk 1 1 data Premium_LRS P10 128)" || bad "filling the tag database"
cat >"$scratch/tag.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "by-tag", "match": {},
  "target": "StandardSSD_LRS", "windows": "tag:schedule", "timezone": "UTC",
  "margins": { "after_deallocate_minutes": 0, "before_start_minutes": 0 } }
EOF
fleet=$("$cli" savings --db "$tag_db" --policy "$scratch/tag.json" --month 2026-12 --json 2>/dev/null); st=$?
[ $st = 0 ] && ok || bad "savings of a tag in two cases: exit $st"
check "savings of a tag in two cases" "$fleet" '[.disks[] | .windows_source] == ["tag:schedule"]'
shown=$("$cli" policy show "$scratch/tag.json" --vm dev-1 --db "$tag_db" --from 2026-12-01 --json 2>/dev/null); st=$?
[ $st = 0 ] && ok || bad "policy show of a tag in two cases: exit $st"
week=$(jq -r '.weekly' <<<"$shown")
[ -n "$week" ] && [ "$week" = "$(jq -r '.disks[0].windows' <<<"$fleet")" ] && ok \
  || bad "a tag in two cases: policy show's week \"$week\" is not the savings': $fleet"
check "policy show's tag in two cases" "$shown" '.timezone == "Europe/London" and
  (.note | contains("schedule=\"off=(F,20);on=(M,6);tz=Europe/London\""))'

# ---- bad usage ----
expect 2 "need --db FILE, --policy FILE and --month" -- "$cli" savings --db "$db" --policy "$scratch/p.json"
expect 2 "is not YYYY-MM" -- "$cli" savings --db "$db" --policy "$scratch/p.json" --month 12-2026
expect 2 "has no month 13" -- "$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-13
expect 2 "no such database" -- "$cli" savings --db "$scratch/none.db" --policy "$scratch/p.json" --month 2026-12
echo '{"schema_version": "tierwise.policy/1", "name": "x", "match": {}, "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"], "quota": {"changes": 99}}' >"$scratch/bad.json"
expect 2 "quota.changes" -- "$cli" savings --db "$db" --policy "$scratch/bad.json" --month 2026-12
expect 2 "--json or --csv, not both" -- "$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 --json --csv
(cd "$fixtures/prices" && "$cli" prices import --db "$db" real-p15-eastus-usd.json) >/dev/null 2>&1
expect 2 "choose one with --currency" -- "$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12
out=$("$cli" savings --db "$db" --policy "$scratch/p.json" --month 2026-12 --currency usd --json 2>/dev/null)
check currency "$out" '.currency == "USD" and .totals.fleet.disks == 0 and .totals.fleet.disks_without_price == 3'
[ ! -e "$scratch/none.db" ] && ok || bad "a missing --db was created"

finish savings-fleet
