#!/usr/bin/env bash
# The conventions of tierwise and tierwise-azsim: --version on every
# command and subcommand, -q/-v, --csv (RFC 4180, read back by Python's csv
# module) for the verdicts and the prices; and the defects found when tried
# as a new user would: one saved page of a multi-page answer imported as a
# whole book, a region typo blamed on the tier, a FIFO as --token-file
# hanging compliance.  Needs jq and python3 (else skipped).
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_AZSIM, TW_FIXTURES and TW_SOURCE_DIR}
azsim=${TW_AZSIM:?}
fixtures=${TW_FIXTURES:?}
src=${TW_SOURCE_DIR:?}
command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is not installed: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-conv-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$src/tests/helpers/testlib.sh"
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_PRICES_URL TIERWISE_CONFIG
fx=$fixtures/compliance
version=$("$cli" --version)
[[ "$version" =~ ^tierwise\ [0-9]+\.[0-9]+\.[0-9]+$ ]] && ok || bad "tierwise --version: $version"

# ---- --version everywhere: the same line, status 0, nothing else ----
for args in "result" "compliance" "serve" "token" "token create" "token list" "prices" \
    "prices refresh" "prices show" "prices import" "prices bench"; do
  # shellcheck disable=SC2086
  out=$("$cli" $args --version 2>"$scratch/err"); st=$?
  [ "$st" = 0 ] && [ "$out" = "$version" ] && [ ! -s "$scratch/err" ] && ok \
    || bad "tierwise $args --version: exit $st, '$out' $(cat "$scratch/err")"
done
# Abbreviated, and after other options, it still answers.
out=$("$cli" compliance --inventory x --vers); [ "$out" = "$version" ] && ok || bad "--vers: $out"
out=$("$azsim" --version); [[ "$out" =~ ^tierwise-azsim\ [0-9] ]] && ok || bad "azsim --version: $out"
# Every --help lists -q, -v and --version.
for args in "result" "compliance" "serve" "token" "prices"; do
  # shellcheck disable=SC2086
  h=$("$cli" $args --help)
  grep -q -- "-q, --quiet" <<<"$h" && grep -q -- "-v, --verbose" <<<"$h" && grep -q -- "--version" <<<"$h" \
    && ok || bad "$args --help lacks -q/-v/--version"
done
h=$("$azsim" --help)
grep -q -- "-q, --quiet" <<<"$h" && grep -q -- "-v, --verbose" <<<"$h" && ok || bad "azsim --help"

# ---- -q and -v ----
# A VM size the caps table lacks is a note: said normally, not with -q.
run_unknown() {
  "$cli" compliance --inventory "$fx/report-unknown-vm-size.json" \
    --result "$fx/stripe-randread-under.json" "$@" >"$scratch/out" 2>"$scratch/err"
}
run_unknown; grep -q "note: VM size Standard_NC6s_v3" "$scratch/err" && ok || bad "no note: $(cat "$scratch/err")"
run_unknown -q; st=$?
[ "$st" = 0 ] && [ ! -s "$scratch/err" ] && [ -s "$scratch/out" ] && ok || bad "-q: $st $(cat "$scratch/err")"
# -v says what was read.
run_unknown -v
grep -q "inventory $fx/report-unknown-vm-size.json (VM sap-db-01, " "$scratch/err" &&
  grep -q "stripe-randread-under.json: result 00000000-0000-4000-8000-000000000001, under" "$scratch/err" \
  && ok || bad "-v: $(cat "$scratch/err")"
# Errors are said even with -q.
expect 2 "can't open" -- "$cli" compliance -q --inventory "$scratch/none.json" --result "$fx/apps-burst.json"
# The simulator: -q starts and stops without a word on stderr.
printf '{"schema": "tierwise.azsim-scenario/1"}\n' >"$scratch/sc.json"
"$azsim" -q --scenario "$scratch/sc.json" --port-file "$scratch/sim.port" >/dev/null 2>"$scratch/sim.err" &
simpid=$!
for _ in $(seq 100); do [ -s "$scratch/sim.port" ] && break; sleep 0.1; done
[ -s "$scratch/sim.port" ] && ok || bad "azsim -q did not start: $(cat "$scratch/sim.err")"
kill -TERM "$simpid"; wait "$simpid"; st=$?
[ "$st" = 0 ] && [ ! -s "$scratch/sim.err" ] && ok || bad "azsim -q: exit $st, $(cat "$scratch/sim.err")"

# ---- --csv (RFC 4180) ----
# csvcheck FILE: every record has as many fields as the header, lines end
# in CRLF; prints the records as JSON (header keys) for jq.
csvjson() {
  python3 - "$1" <<'EOF'
import csv, json, sys
raw = open(sys.argv[1], "rb").read()
if raw and not raw.endswith(b"\r\n"):
    sys.exit("last record does not end in CRLF")
if b"\n" in raw.replace(b"\r\n", b""):
    sys.exit("a bare LF outside a quoted field")
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8"), strict=True))
head, body = rows[0], rows[1:]
for r in body:
    if len(r) != len(head):
        sys.exit("record of %d fields under a header of %d" % (len(r), len(head)))
print(json.dumps([dict(zip(head, r)) for r in body]))
EOF
}
"$cli" compliance --inventory "$fx/inventory.json" --result "$fx/stripe-randread-under.json" \
  --result "$fx/apps-burst.json" --csv >"$scratch/v.csv"
[ "$(head -1 "$scratch/v.csv")" = $'vm,vm_size,vm_cap_iops,vm_cap_mbps,vm_cap_why,profile,result_id,target,disks,tiers,verdict,judged,measured_iops,measured_mbps,expected_iops,expected_mbps,bound_by,ratio_iops,ratio_mbps,reason\r' ] \
  && ok || bad "verdicts CSV header: $(head -1 "$scratch/v.csv")"
j=$(csvjson "$scratch/v.csv") && ok || bad "verdicts CSV is not RFC 4180: $j"
# The reason holds commas ("16,300"): quoted, and read back whole.
grep -q '"measured 16,300 IOPS is 72 % of 22,500 expected (3 × P40 at 7,500)"' "$scratch/v.csv" \
  && ok || bad "reason not quoted: $(cat "$scratch/v.csv")"
want=$("$cli" compliance --inventory "$fx/inventory.json" --result "$fx/stripe-randread-under.json" \
  --result "$fx/apps-burst.json" --json)
[ "$(jq -r '[.[] | .verdict, .reason, .disks, .profile, .vm] | join("|")' <<<"$j")" = \
  "$(jq -r '[.verdicts[] | .verdict, .reason, (.disks | join(" ")), .profile, .vm_name] | join("|")' <<<"$want")" ] \
  && ok || bad "CSV fields differ from the JSON: $j"
[ "$(jq -r '.[0].measured_iops + " " + .[0].expected_iops + " " + .[0].ratio_iops + " " + .[0].bound_by' <<<"$j")" \
  = "16300 22500 0.724 disks" ] && ok || bad "CSV figures: $j"
# A field with a quote in it is doubled inside quotes.
jq '.profile = "say \"hi\", then"' "$fx/apps-burst.json" >"$scratch/quoted.json"
"$cli" compliance --inventory "$fx/inventory.json" --result "$scratch/quoted.json" --csv \
  >"$scratch/q.csv" 2>"$scratch/err" && ok || bad "quoted profile: $(cat "$scratch/err")"
grep -q '"say ""hi"", then"' "$scratch/q.csv" && ok || bad "quote not doubled: $(cat "$scratch/q.csv")"
[ "$(csvjson "$scratch/q.csv" | jq -r '.[0].profile')" = 'say "hi", then' ] && ok || bad "quoted profile read back"
expect 2 "--json or --csv" -- "$cli" compliance --inventory "$fx/inventory.json" \
  --result "$fx/apps-burst.json" --csv --json
# Prices.
"$cli" prices show --region westeurope --currency USD --csv >"$scratch/p.csv"
[ "$(head -1 "$scratch/p.csv")" = $'region,currency,tier,sku,redundancy,per_month,per_10k_transactions,shared_mount_per_month,per_gib_hour,per_iops_hour,per_mbps_hour,source,fetched_at\r' ] \
  && ok || bad "prices CSV header: $(head -1 "$scratch/p.csv")"
j=$(csvjson "$scratch/p.csv") && ok || bad "prices CSV is not RFC 4180: $j"
want=$("$cli" prices show --region westeurope --currency USD --json)
[ "$(jq 'length' <<<"$j")" = "$(jq '(.prices | length) + (.provisioned | length)' <<<"$want")" ] \
  && ok || bad "prices CSV rows: $(jq length <<<"$j")"
p10=$(jq -r '[.[] | select(.tier == "P10" and .sku == "Premium_LRS")][0].per_month' <<<"$j")
[ "$p10" = "$(jq -r '[.prices[] | select(.tier == "P10" and .sku == "Premium_LRS")][0].per_month' <<<"$want")" ] \
  && [ -n "$p10" ] && ok || bad "P10 per month in CSV: $p10"
[ "$(jq -r '.[0].source' <<<"$j")" = "$(jq -r .source <<<"$want")" ] && ok || bad "CSV source"
n=$("$cli" prices show --region westeurope --currency USD --tier P10 --csv | wc -l)
[ "$n" -ge 2 ] && ok || bad "--tier P10 --csv: $n lines"
expect 2 "--csv is for prices show" -- "$cli" prices bench --region westeurope --currency USD --csv
# The token list.
"$cli" token create -q --db "$scratch/t.db" --role reader --name 'ops, "night"' >/dev/null
"$cli" token list --db "$scratch/t.db" --csv >"$scratch/t.csv"
j=$(csvjson "$scratch/t.csv") && ok || bad "token CSV is not RFC 4180: $j"
[ "$(jq -r '.[0].id + " " + .[0].role + " " + .[0].name + " [" + .[0].revoked_at + "]"' <<<"$j")" \
  = '1 reader ops, "night" []' ] && ok || bad "token CSV: $(cat "$scratch/t.csv")"
expect 2 "takes no --json or --csv" -- "$cli" token revoke --db "$scratch/t.db" --csv 1


# ---- a region typo is the region's fault, not the tier's ----
for opt in --tier --sku; do
  expect 2 "westeurpe is not a known Azure region" -- \
    "$cli" prices show --region westeurpe --currency USD "$opt" P10
  "$cli" prices show --region westeurpe --currency USD "$opt" P10 2>"$scratch/err"
  grep -q "did you mean westeurope" "$scratch/err" && ok || bad "no suggestion: $(cat "$scratch/err")"
  grep -q "P10" "$scratch/err" && bad "blames P10: $(cat "$scratch/err")" || ok
done
expect 2 "westeurpe is not a known Azure region" -- \
  "$cli" prices show --region westeurpe --currency USD
expect 2 "no price book for westeurope EUR" -- \
  "$cli" prices show --region westeurope --currency EUR --tier P10
# A tier that is not in a real book is still the tier's.
expect 2 "no price for Q99" -- "$cli" prices show --region westeurope --currency USD --tier Q99
expect 2 "is a SKU name, not a tier" -- \
  "$cli" prices show --region westeurope --currency USD --tier Premium_LRS

# ---- one page of a multi-page answer ----
db=$scratch/p.db
"$cli" prices import -q --db "$db" "$fixtures/prices/real-p10-uksouth-gbp.json" >/dev/null && ok || bad "import whole"
jq '.NextPageLink = "http://127.0.0.1:9/api/retail/prices?currencyCode=%27GBP%27&$skip=100"' \
  "$fixtures/prices/real-p6-uksouth-gbp.json" >"$scratch/page1.json"
expect 2 "page1.json is one page of a multi-page answer" -- \
  "$cli" prices import --db "$db" "$scratch/page1.json"
"$cli" prices import --db "$db" "$scratch/page1.json" 2>"$scratch/err" >/dev/null
grep -q -- "--partial" "$scratch/err" && ok || bad "refusal does not name --partial: $(cat "$scratch/err")"
# The book is the whole one still.
j=$("$cli" prices show --db "$db" --region uksouth --currency GBP --json)
[ "$(jq -r .source <<<"$j")" = "import $fixtures/prices/real-p10-uksouth-gbp.json" ] && ok \
  || bad "book replaced by a refused page: $(jq -r .source <<<"$j")"
# --partial: stored, said on stderr, and the book says so.
j=$("$cli" prices import --db "$db" --partial --json "$scratch/page1.json" 2>"$scratch/err")
[ "$(jq -r .partial <<<"$j")" = true ] && ok || bad "--partial JSON: $j"
grep -q "one page of a multi-page answer (--partial)" "$scratch/err" && ok || bad "--partial note: $(cat "$scratch/err")"
j=$("$cli" prices show --db "$db" --region uksouth --currency GBP --json)
[ "$(jq -r .source <<<"$j")" = "import $scratch/page1.json (partial)" ] && ok || bad "partial source: $(jq -r .source <<<"$j")"
expect 2 "--partial is for prices import" -- "$cli" prices show --region uksouth --currency GBP --partial

# ---- a FIFO as --token-file: refused at once, not a hang ----
mkfifo "$scratch/fifo"
timeout 10 "$cli" compliance --server http://127.0.0.1:9 --token-file "$scratch/fifo" \
  >"$scratch/out" 2>"$scratch/err"; st=$?
[ "$st" = 2 ] && grep -q "is not a regular file" "$scratch/err" && ok \
  || bad "FIFO token file: exit $st (124 is a hang), $(cat "$scratch/err")"
timeout 10 "$cli" compliance --server http://127.0.0.1:9 --token-file /dev/null \
  >"$scratch/out" 2>"$scratch/err"; st=$?
[ "$st" = 2 ] && grep -q "is not a regular file" "$scratch/err" && ok || bad "/dev/null token file: $st"

# ---- --login-url: the commands that call ARM sign in with client
# credentials there and offer it; the others refuse it as any unknown option ----
for args in "compliance" "prices refresh"; do
  # shellcheck disable=SC2086
  "$cli" $args --login-url http://127.0.0.1:9 >/dev/null 2>&1; st=$?
  [ "$st" = 2 ] && ok || bad "$args --login-url: exit $st"
  # shellcheck disable=SC2086
  "$cli" $args --help | grep -q -- "--login-url" && bad "$args --help offers --login-url" || ok
done
for args in "sync" "apply" "vm stop" "vm start"; do
  # shellcheck disable=SC2086
  "$cli" $args --help | grep -q -- "--login-url" && ok || bad "$args --help does not offer --login-url"
done
grep -q -- '`--login-url`' "$src/README.md" && ok || bad "README does not document --login-url"

finish cli-conventions
