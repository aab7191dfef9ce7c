#!/usr/bin/env bash
# tierwise report monthly: the monthly cost-saving report of a generated
# fleet that lived through November 2026 (tests/perf/fleet-gen.py
# --activity: weekend switches, a failed upgrade, drift) priced by the
# bundled snapshot.  --help of report and report monthly (every option,
# the exit statuses), -q/-v/--version; usage errors (no --format, a bad
# one, a bad month or --group-by, a missing database, a policy that does
# not parse or whose zone does not load, a currency to choose: 2); the
# JSON's totals the sums of its rounded rows and its groups; the CSV one
# record per disk of the JSON with the same figures (RFC 4180, CRLF, read
# back by Python's csv module); --out written whole through a mkstemp
# F.tmp.XXXXXX (no F and no temporary after a failure, an old F kept, four
# runs at once for one F each whole, a symlink at F.tmp not followed, an old
# F's mode kept, a new F 0640 less the umask), a write that fails (1), a
# closed pipe (1, "Broken pipe" said once, not SIGPIPE's 141); a currency
# no book is in (2, the currencies there are named); a
# region without a book (1, the report still written whole, stderr naming
# the region and the count), no book at all (1); --policy repeated and the
# policies the database holds; --group-by subscription and tag:NAME; the
# HTML form.  Needs jq, python3 and sqlite3.
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_FIXTURES and TW_SOURCE_DIR}
src=${TW_SOURCE_DIR:?}
for tool in jq python3 sqlite3; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
done
[ -e "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] || { echo "no zone files: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-report-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$src/tests/helpers/testlib.sh"
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_PRICES_URL TIERWISE_CONFIG
db=$scratch/tw.db
version=$("$cli" --version)

# ---- --help, -q/-v/--version ----
h=$("$cli" report --help); st=$?
[ $st = 0 ] && grep -q "tierwise report monthly --db FILE --month YYYY-MM --format html|csv|json" <<<"$h" \
  && ok || bad "report --help: $st $h"
h=$("$cli" report monthly --help); st=$?
[ $st = 0 ] && ok || bad "report monthly --help: exit $st"
for opt in --db --month --format --out --currency --group-by --policy -q, -v, --version --help "Exit status"; do
  grep -q -- "$opt" <<<"$h" && ok || bad "report monthly --help lacks $opt"
done
"$cli" --help | grep -q "^  report " && ok || bad "tierwise --help does not list report"
for args in "report" "report monthly"; do
  # shellcheck disable=SC2086
  out=$("$cli" $args --version 2>"$scratch/err"); st=$?
  [ $st = 0 ] && [ "$out" = "$version" ] && [ ! -s "$scratch/err" ] && ok \
    || bad "tierwise $args --version: exit $st, '$out' $(cat "$scratch/err")"
done

# ---- usage errors (2), before any database is read ----
expect 2 "which report? the one there is: monthly" -- "$cli" report
expect 2 'unknown report "weekly"' -- "$cli" report weekly
expect 2 "give --db FILE and --month YYYY-MM" -- "$cli" report monthly --format json
expect 2 "which form? give --format html, --format csv or --format json" -- \
  "$cli" report monthly --db "$db" --month 2026-11
expect 2 '--format "pdf" is not one' -- "$cli" report monthly --db "$db" --month 2026-11 --format pdf
expect 2 "--month:" -- "$cli" report monthly --db "$db" --month 2026-13 --format json
expect 2 "--group-by:" -- "$cli" report monthly --db "$db" --month 2026-11 --format json --group-by vm
expect 2 "no such database" -- "$cli" report monthly --db "$scratch/none.db" --month 2026-11 --format json
expect 2 'unexpected argument "extra"' -- "$cli" report monthly --db "$db" --month 2026-11 --format json extra

# ---- the fleet ----
"$cli" prices import --db "$db" "$src/pricing/azure-disk-prices.json" >/dev/null 2>"$scratch/imp.err" \
  || { echo "FAIL: prices import: $(cat "$scratch/imp.err")"; exit 1; }
python3 "$src/tests/perf/fleet-gen.py" "$db" 40 --activity 2026-11 2>"$scratch/gen.err" \
  || { echo "FAIL: fleet-gen.py: $(cat "$scratch/gen.err")"; exit 1; }
cat >"$scratch/weekends.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "weekends",
  "match": { "skus": ["Premium_LRS"] }, "target": "StandardSSD_LRS",
  "windows": ["Fri 20:00-Mon 06:00"], "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 10, "before_start_minutes": 30 },
  "os_disks": false }
EOF
cat >"$scratch/nights.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "nights",
  "match": { "tags": {"env": "test"} }, "target": "StandardSSD_LRS",
  "windows": ["Mon 20:00-Tue 06:00", "Tue 20:00-Wed 06:00"], "timezone": "UTC", "os_disks": false }
EOF
run() { # ARGS...: report monthly of November, USD; status in $st
  "$cli" report monthly --db "$db" --month 2026-11 --currency USD "$@" >"$scratch/out" 2>"$scratch/err"
  st=$?
}

# The snapshot has GBP items for uksouth too: a currency to choose.
expect 2 "GBP, USD" -- "$cli" report monthly --db "$db" --month 2026-11 --format json
# A currency no book is in: said, 2 (not a report of every disk unpriced, 1).
expect 2 "no price book in EUR: the database's books are in GBP, USD" -- \
  "$cli" report monthly --db "$db" --month 2026-11 --format json --currency EUR --out "$scratch/eur.json"
[ ! -e "$scratch/eur.json" ] && ok || bad "--currency EUR wrote a report"
expect 2 "no price book in EUR" -- "$cli" report monthly --db "$db" --month 2026-11 --format csv --currency eur

run --format json --policy "$scratch/weekends.json"
[ $st = 0 ] && ok || bad "json: exit $st $(cat "$scratch/err")"
cp "$scratch/out" "$scratch/report.json"
jq -e '.schema_version == "tierwise.monthly-report/1" and .month == "2026-11" and .currency == "USD"
  and .partial == false and .period.from == "2026-11-01T00:00:00Z" and .period.to == "2026-12-01T00:00:00Z"
  and .group_by == "resource-group" and .policies == ["weekends"]
  and (.disks | length) == 200 and .totals.disks == 200 and .totals.vms == 40
  and .totals.unpriced == 0 and (.books | length) >= 4' "$scratch/report.json" >/dev/null \
  && ok || bad "json head: $(jq -c 'del(.disks, .groups, .week)' "$scratch/report.json" | head -c 1500)"
# Totals are exactly the sums of the rounded rows (fleet and every group,
# possible_unknown the rows whose possible is not known); each row's
# realised exactly its baseline - cost - transactions.
sums_check() { # FILE
  python3 - "$1" <<'EOF'
import json, sys
from decimal import Decimal as D
doc = json.load(open(sys.argv[1]))
bad = []
def total(rows, t, where):
    for k in ("cost", "baseline", "realised", "transactions", "possible"):
        s = sum((D(r[k]) for r in rows if r[k] is not None), D(0))
        if s != D(t[k]):
            bad.append("%s %s: rows %s, total %s" % (where, k, s, t[k]))
    if len(rows) != t["disks"]:
        bad.append("%s disks: %d rows, total %d" % (where, len(rows), t["disks"]))
    if sum(1 for r in rows if not r["priced"]) != t["unpriced"]:
        bad.append("%s unpriced" % where)
    if sum(r["switches"] for r in rows) != t["switches"]:
        bad.append("%s switches" % where)
    if sum(1 for r in rows if not r["possible_known"]) != t["possible_unknown"]:
        bad.append("%s possible_unknown: %d rows, total %s" % (where, sum(1 for r in rows if not r["possible_known"]), t.get("possible_unknown")))
total(doc["disks"], doc["totals"], "fleet")
for g in doc["groups"]:
    total([r for r in doc["disks"] if r["group"] == g["key"]], g["totals"], "group " + g["key"])
for r in doc["disks"]:
    # realised = baseline - cost - transactions, exactly (the model derives
    # the rounded realised from the rounded three)
    if r["priced"] and D(r["realised"]) != D(r["baseline"]) - D(r["cost"]) - D(r["transactions"]):
        bad.append("disk %s: realised %s, baseline %s - cost %s - transactions %s" % (r["disk_id"], r["realised"], r["baseline"], r["cost"], r["transactions"]))
    if r["priced"] and D(r["realised_unrounded"]) != D(r["baseline_unrounded"]) - D(r["cost_unrounded"]) - D(r["transactions_unrounded"]):
        # 12 decimals each, rounded: equal to within 3e-12
        if abs(D(r["realised_unrounded"]) - (D(r["baseline_unrounded"]) - D(r["cost_unrounded"]) - D(r["transactions_unrounded"]))) > D("3e-12"):
            bad.append("disk %s: unrounded realised" % r["disk_id"])
    secs = sum(h["seconds"] for h in r["hours_by_sku"])
    if secs != 30 * 86400:
        bad.append("disk %s: %d s on SKUs, not the month's" % (r["disk_id"], secs))
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
EOF
}
sums_check "$scratch/report.json" >"$scratch/sums.out" && ok || bad "sums: $(cat "$scratch/sums.out")"
jq -e '[.disks[] | select(.switches > 0)] | length > 0' "$scratch/report.json" >/dev/null && \
jq -e '(.totals.realised | tonumber) > 0' "$scratch/report.json" >/dev/null \
  && ok || bad "no saving realised: $(jq -c .totals "$scratch/report.json")"

# ---- this month: partial, to now; a month not begun: 2 ----
this=$(date -u +%Y-%m)
"$cli" report monthly --db "$db" --month "$this" --currency USD --format json --policy "$scratch/weekends.json" \
  >"$scratch/now.json" 2>"$scratch/err"; st=$?
now_s=$(date -u +%s)
[ $st = 0 ] && jq -e --argjson now "$now_s" '.partial == true and (.period.to | fromdateiso8601) <= $now
  and (.period.to | fromdateiso8601) > $now - 600 and .period.to < .period.month_end' "$scratch/now.json" >/dev/null \
  && ok || bad "this month: $st $(jq -c .period "$scratch/now.json") $(cat "$scratch/err")"
next=$(date -u -d "$(date -u +%Y-%m-01) next month" +%Y-%m)
expect 2 "has not started" -- "$cli" report monthly --db "$db" --month "$next" --currency USD --format json \
  --policy "$scratch/weekends.json"

# ---- CSV: one record per disk of the JSON, the same figures ----
run --format csv --policy "$scratch/weekends.json"
[ $st = 0 ] && ok || bad "csv: exit $st $(cat "$scratch/err")"
cp "$scratch/out" "$scratch/report.csv"
python3 - "$scratch/report.csv" "$scratch/report.json" >"$scratch/csv.out" <<'EOF' && ok || bad "csv: $(cat "$scratch/csv.out")"
import csv, io, json, sys
raw = open(sys.argv[1], "rb").read()
doc = json.load(open(sys.argv[2]))
bad = []
text = raw.decode("utf-8")
if text.replace("\r\n", "").count("\n") or text.count("\r") != text.count("\r\n"):
    bad.append("a record not ended by CRLF")
rows = list(csv.DictReader(io.StringIO(text, newline="")))
want = ["BillingCurrency", "ChargePeriodStart", "ChargePeriodEnd", "ResourceId", "ResourceName",
        "RegionId", "SubAccountId", "SkuMeter", "ListCost", "EffectiveCost", "x_VmName", "x_VmId",
        "x_DiskId", "x_ResourceGroup", "x_Group", "x_Role", "x_OriginalSku", "x_OriginalTier",
        "x_Sku", "x_Tier", "x_HoursBySku", "x_DowngradedHours", "x_Switches", "x_CostBaseline",
        "x_SavingsRealised", "x_Transactions", "x_SavingsPossible", "x_Policy", "x_Priced",
        "x_Unpriced", "x_UnpricedWhy", "x_Excluded", "x_ExcludedWhy", "x_Verdict",
        "x_VerdictReason", "x_MeasuredIops", "x_ExpectedIops", "x_MeasuredMBps", "x_ExpectedMBps",
        "x_DriftHours"]
head = text.split("\r\n", 1)[0].split(",")
if head[:len(want)] != want:
    bad.append("header: %s" % head)
if len(rows) != len(doc["disks"]):
    bad.append("%d records, %d disks" % (len(rows), len(doc["disks"])))
for r, d in zip(rows, doc["disks"]):
    pairs = [("BillingCurrency", doc["currency"]), ("ChargePeriodStart", doc["period"]["from"]),
             ("ChargePeriodEnd", doc["period"]["to"]), ("ResourceName", d["disk"]),
             ("RegionId", d["location"]), ("SubAccountId", d["subscription_id"]),
             ("ResourceId", d["resource_id"]),
             ("ListCost", d["cost"] or ""), ("EffectiveCost", d["cost"] or ""),
             ("x_DiskId", str(d["disk_id"])), ("x_VmName", d["vm"]), ("x_Sku", d["sku"]),
             ("x_OriginalSku", d["original_sku"]), ("x_CostBaseline", d["baseline"] or ""),
             ("x_SavingsRealised", d["realised"] or ""), ("x_SavingsPossible", d["possible"] or ""),
             ("x_Switches", str(d["switches"])), ("x_DowngradedHours", d["downgraded_hours"]),
             ("x_DriftHours", d["drift_hours"]), ("x_Group", d["group"]),
             ("SkuMeter", (d["sku"] + " " + d["tier"]).strip())]
    for k, v in pairs:
        if r[k] != v:
            bad.append("disk %s %s: csv %r, json %r" % (d["disk_id"], k, r[k], v))
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
EOF

# ---- --out: through a mkstemp F.tmp.XXXXXX, renamed whole; a failure leaves no F ----
tmps() { compgen -G "$1.tmp*" >/dev/null; } # F: a temporary of F is left
run --format json --policy "$scratch/weekends.json" --out "$scratch/r.json"
[ $st = 0 ] && [ ! -s "$scratch/out" ] && ! tmps "$scratch/r.json" &&
  cmp -s <(jq -S 'del(.generated_at)' "$scratch/r.json") <(jq -S 'del(.generated_at)' "$scratch/report.json") \
  && ok || bad "--out: exit $st $(cat "$scratch/err")"
run --format csv --out - --policy "$scratch/weekends.json"
[ $st = 0 ] && cmp -s "$scratch/out" "$scratch/report.csv" && ok || bad "--out -: $st"
expect 1 "--out $scratch/no/such/r.json" -- "$cli" report monthly --db "$db" --month 2026-11 \
  --currency USD --format json --out "$scratch/no/such/r.json" --policy "$scratch/weekends.json"
# A build that fails leaves an older F as it was.
echo old >"$scratch/keep.json"
expect 2 "GBP, USD" -- "$cli" report monthly --db "$db" --month 2026-11 --format json --out "$scratch/keep.json"
[ "$(cat "$scratch/keep.json")" = old ] && ! tmps "$scratch/keep.json" && ok || bad "the old --out file changed"
# Runs for the same F at once each write their own temporary: F is one
# whole report (a shared F.tmp opened O_TRUNC had mixed their bytes).
pids=()
for i in 1 2 3 4; do
  "$cli" report monthly --db "$db" --month 2026-11 --currency USD --format json \
    --policy "$scratch/weekends.json" --out "$scratch/same.json" 2>"$scratch/same.$i.err" &
  pids+=($!)
done
sts=""
for p in "${pids[@]}"; do wait "$p"; sts+="$? "; done
[ "$sts" = "0 0 0 0 " ] &&
  cmp -s <(jq -S 'del(.generated_at)' "$scratch/same.json") <(jq -S 'del(.generated_at)' "$scratch/report.json") && ! tmps "$scratch/same.json" && ok \
  || bad "four runs for one --out: $sts $(cat "$scratch"/same.*.err | head -c 600)"
# A symlink planted at F.tmp is never followed (nor removed).
echo precious >"$scratch/victim"
ln -s "$scratch/victim" "$scratch/sym.json.tmp"
run --format json --policy "$scratch/weekends.json" --out "$scratch/sym.json"
[ $st = 0 ] && [ "$(cat "$scratch/victim")" = precious ] && [ -L "$scratch/sym.json.tmp" ] &&
  jq -e '.month == "2026-11"' "$scratch/sym.json" >/dev/null && ok \
  || bad "a symlink at F.tmp: exit $st, victim now $(head -c 80 "$scratch/victim") $(cat "$scratch/err")"
rm -f "$scratch/sym.json.tmp"
# The mode: an existing F's kept, a new F 0640 less the umask (a finance
# report is not for every account).
echo old >"$scratch/mode.json"
chmod 600 "$scratch/mode.json"
run --format json --policy "$scratch/weekends.json" --out "$scratch/mode.json"
[ $st = 0 ] && [ "$(stat -c %a "$scratch/mode.json")" = 600 ] && ok || bad "the old F's mode: $(stat -c %a "$scratch/mode.json")"
(umask 022; "$cli" report monthly --db "$db" --month 2026-11 --currency USD --format json \
  --policy "$scratch/weekends.json" --out "$scratch/new.json" 2>"$scratch/err"); st=$?
[ $st = 0 ] && [ "$(stat -c %a "$scratch/new.json")" = 640 ] && ok || bad "a new F's mode: $st $(stat -c %a "$scratch/new.json")"
# A reader that goes away: exit 1 and the write error said once with
# errno's text, not a death by SIGPIPE (141).
( "$cli" report monthly --db "$db" --month 2026-11 --currency USD --format csv \
    --policy "$scratch/weekends.json" 2>"$scratch/pipe.err"; echo $? >"$scratch/pipe.st" ) | true
[ "$(cat "$scratch/pipe.st")" = 1 ] && [ "$(wc -l <"$scratch/pipe.err")" = 1 ] &&
  grep -q "writing the report to stdout failed: Broken pipe" "$scratch/pipe.err" && ok \
  || bad "a closed pipe: exit $(cat "$scratch/pipe.st") $(cat "$scratch/pipe.err")"
# A write that fails: exit 1, said.
if [ -w /dev/full ]; then
  "$cli" report monthly --db "$db" --month 2026-11 --currency USD --format json >/dev/full 2>"$scratch/err"; st=$?
  [ $st = 1 ] && grep -q "writing the report to stdout failed\|writing" "$scratch/err" && ok \
    || bad "/dev/full: exit $st $(cat "$scratch/err")"
fi

# ---- policies: repeated, or those the database holds ----
run --format json --policy "$scratch/weekends.json" --policy "$scratch/nights.json"
[ $st = 0 ] && jq -e '(.policies | sort) == ["nights", "weekends"]' "$scratch/out" >/dev/null \
  && ok || bad "two policies: $st $(jq -c .policies "$scratch/out") $(cat "$scratch/err")"
run --format json
[ $st = 0 ] && jq -e '.policies == [] and ([.disks[] | select(.possible_known)] | length) == 0' "$scratch/out" >/dev/null \
  && grep -q "no policies" "$scratch/err" && ok || bad "no policy: $st $(cat "$scratch/err")"
run -q --format json
[ $st = 0 ] && [ ! -s "$scratch/err" ] && ok || bad "-q: $(cat "$scratch/err")"
sqlite3 "$db" "INSERT INTO policies(name, body, created_at, updated_at) VALUES ('weekends',
  CAST(readfile('$scratch/weekends.json') AS TEXT), '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z')" 2>"$scratch/sql.err" ||
  bad "storing a policy: $(cat "$scratch/sql.err")"
run --format json
[ $st = 0 ] && jq -e '.policies == ["weekends"]' "$scratch/out" >/dev/null &&
  cmp -s <(jq -S 'del(.generated_at)' "$scratch/out") <(jq -S 'del(.generated_at)' "$scratch/report.json") \
  && ok || bad "the stored policy: $st $(jq -c .policies "$scratch/out") $(cat "$scratch/err")"
echo '{"schema_version": "tierwise.policy/1", "name": "x"' >"$scratch/broken.json"
expect 2 "tierwise policy check $scratch/broken.json" -- "$cli" report monthly --db "$db" \
  --month 2026-11 --currency USD --format json --policy "$scratch/broken.json"
sed 's#Europe/London#Nowhere/Atlantis#' "$scratch/weekends.json" >"$scratch/atlantis.json"
expect 2 'timezone "Nowhere/Atlantis" does not load' -- "$cli" report monthly --db "$db" \
  --month 2026-11 --currency USD --format json --policy "$scratch/atlantis.json"

# ---- grouping ----
run --format json --group-by subscription
[ $st = 0 ] && jq -e '.group_by == "subscription" and ([.groups[].key] | length) == ([.disks[].subscription_id] | unique | length)
  and all(.disks[]; .group == .subscription_id)' "$scratch/out" >/dev/null && sums_check "$scratch/out" >/dev/null \
  && ok || bad "--group-by subscription: $st $(cat "$scratch/err")"
run --format json --group-by tag:env
[ $st = 0 ] && jq -e '.group_by == "tag:env" and ([.groups[].key] | sort) == ["dev", "test"]' "$scratch/out" >/dev/null \
  && sums_check "$scratch/out" >/dev/null && ok || bad "--group-by tag:env: $st $(jq -c '[.groups[].key]' "$scratch/out") $(cat "$scratch/err")"
run --format json --group-by tag:owner
[ $st = 0 ] && jq -e '[.groups[].key] == ["(no tag)"]' "$scratch/out" >/dev/null && ok || bad "--group-by tag:owner: $st"

# ---- HTML ----
run --format html --policy "$scratch/weekends.json"
[ $st = 0 ] && grep -qi "<html" "$scratch/out" && grep -q "2026" "$scratch/out" && ok || bad "html: exit $st $(cat "$scratch/err")"

# ---- a region without a book: 1, the report still whole; no book: 1 ----
sqlite3 "$db" "UPDATE vms SET location = 'atlantis' WHERE id IN (1, 2)"
run --format json --policy "$scratch/weekends.json" --out "$scratch/part.json"; 
[ $st = 1 ] && grep -q "10 disks have no price" "$scratch/err" && grep -q "atlantis" "$scratch/err" \
  && jq -e '.totals.unpriced == 10 and (.disks | length) == 200 and ([.missing[] | [.region, .disks]] == [["atlantis", 10]])
    and all(.disks[] | select(.priced | not); .cost == null and .unpriced != null)' "$scratch/part.json" >/dev/null \
  && sums_check "$scratch/part.json" >/dev/null && ok || bad "a region without a book: exit $st $(cat "$scratch/err")"
[ "$(wc -l <"$scratch/err")" = 1 ] && ok || bad "more than the unpriced line: $(cat "$scratch/err")"
run --format csv --policy "$scratch/weekends.json"
[ $st = 1 ] && python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
un = [r for r in rows if r["x_Priced"] == "false"]
sys.exit(0 if len(rows) == 200 and len(un) == 10 and all(r["ListCost"] == "" and r["x_CostBaseline"] == "" and r["x_Unpriced"] for r in un) else 1)
' "$scratch/out" && ok || bad "csv of unpriced disks: $st"
sqlite3 "$db" "DELETE FROM price_book_items; DELETE FROM price_books" 2>/dev/null || sqlite3 "$db" "DELETE FROM price_books"
"$cli" report monthly --db "$db" --month 2026-11 --format json --out "$scratch/none.json" >"$scratch/out" 2>"$scratch/err"; st=$?
[ $st = 1 ] && grep -qi "price book" "$scratch/err" && [ ! -e "$scratch/none.json" ] && ok \
  || bad "no book at all: exit $st $(cat "$scratch/err")"

finish cli-report
