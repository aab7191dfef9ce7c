#!/usr/bin/env bash
# GET /api/v1/reports/monthly?month=[&format=][&currency=][&group_by=]
# [&policy=]...[&disk=] and GET /api/v1/actions/{id}, over a generated
# fleet that lived through November 2026 (tests/perf/fleet-gen.py
# --activity) priced by the bundled snapshot: the JSON equal to `tierwise
# report monthly --format json` for the same database and policies (all
# the server's when none is named, the ones named otherwise), the CSV and
# HTML with their content types (the CSV as an attachment named after the
# month) equal to the command's; one disk's row alone; 400 for a missing
# or bad month, format, group_by or disk, one of them (or currency) given
# empty or twice with different values, a server of more policies than a
# report judges by (as the command refuses), and a currency to choose; 422
# for a currency no book is in; 401
# without a token, 403 for an agent's, 404 for an unknown policy or disk,
# 409 for a policy whose zone no longer loads, 422 with no price book at
# all, 200 counting the disks of a region without a book, 503 busy for a
# third build while two run (four at once on four threads).  An action by
# id with its transitions; 404 for an id not stored.  Needs curl, jq,
# python3 and sqlite3.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-report-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3 python3
[ -e "${TZDIR:-/usr/share/zoneinfo}/Europe/London" ] || { echo "no zone files: skipped"; exit 77; }
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
# The server's zone files: the machine's London and a zone of the test's
# own that is taken away once the server runs.
zi="$scratch/zi"
mkdir -p "$zi/Europe" "$zi/Test"
cp "${TZDIR:-/usr/share/zoneinfo}/Europe/London" "$zi/Europe/London"
cp "${TZDIR:-/usr/share/zoneinfo}/Europe/London" "$zi/Test/Gone"
cp "$srcdir/tests/fuzz/corpus/tz/UTC" "$zi/UTC"
export TZDIR="$zi"
export TIERWISE_LOOPBACK_ONLY=1

check() { # NAME FILE JQ
  if jq -e "$3" "$2" >/dev/null 2>&1; then ok
  else bad "$1: $3 is not true of: $(head -c 800 "$2")"; fi
}
same_json() { # A B: equal but for generated_at
  cmp -s <(jq -S 'del(.generated_at)' "$1") <(jq -S 'del(.generated_at)' "$2")
}

"$cli" prices import --db "$db" "$srcdir/pricing/azure-disk-prices.json" >/dev/null 2>"$scratch/imp.err" \
  || { echo "FAIL: prices import: $(cat "$scratch/imp.err")"; exit 1; }
python3 "$srcdir/tests/perf/fleet-gen.py" "$db" 20 --activity 2026-11 2>"$scratch/gen.err" \
  || { echo "FAIL: fleet-gen.py: $(cat "$scratch/gen.err")"; exit 1; }
reader=$(make_token reader)
admin=$(make_token admin)
agent=$(make_token agent)
mkdir -p "$scratch/pol"
cat >"$scratch/pol/weekends.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "weekends",
  "match": { "skus": ["Premium_LRS"] }, "target": "StandardSSD_LRS",
  "windows": ["Fri 20:00-Mon 06:00"], "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 10, "before_start_minutes": 30 },
  "os_disks": false }
EOF
cat >"$scratch/pol/gone.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "gone", "match": { "tags": {"env": "test"} },
  "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"], "timezone": "Test/Gone",
  "os_disks": false }
EOF
start_server main --policies "$scratch/pol"
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
m="/api/v1/reports/monthly?month=2026-11&currency=USD"
cmd() { # ARGS...: the command's report into $scratch/cli.out
  "$cli" report monthly --db "$db" --month 2026-11 --currency USD "$@" >"$scratch/cli.out" 2>"$scratch/cli.err"
}

# ---- JSON: every policy of the server, as the command with them all ----
st=$(req GET "$m" "$reader")
[ "$st" = 200 ] && ok || bad "report: $st $(head -c 600 "$scratch/body")"
cp "$scratch/body" "$scratch/all.json"
grep -qi '^content-type: application/json' "$scratch/headers" && ok || bad "json type: $(cat "$scratch/headers")"
check doc "$scratch/all.json" '.schema_version == "tierwise.monthly-report/1" and .month == "2026-11"
  and .currency == "USD" and .policies == ["gone", "weekends"] and (.disks | length) == 100
  and .totals.disks == 100 and .totals.unpriced == 0'
cmd --format json --policy "$scratch/pol/gone.json" --policy "$scratch/pol/weekends.json"
same_json "$scratch/cli.out" "$scratch/all.json" && ok \
  || bad "the route and the command differ: $(diff <(jq -S 'del(.generated_at)' "$scratch/cli.out") <(jq -S 'del(.generated_at)' "$scratch/all.json") | head -20)"
# The server stored its policies: the command without --policy judges by them too.
cmd --format json
same_json "$scratch/cli.out" "$scratch/all.json" && ok || bad "the stored policies: $(cat "$scratch/cli.err")"
# One policy named; an admin reads it as well.
st=$(req GET "$m&policy=weekends&group_by=subscription" "$admin")
cp "$scratch/body" "$scratch/one.json"
cmd --format json --policy "$scratch/pol/weekends.json" --group-by subscription
[ "$st" = 200 ] && same_json "$scratch/cli.out" "$scratch/one.json" && ok \
  || bad "policy=weekends: $st $(head -c 300 "$scratch/one.json")"
check one "$scratch/one.json" '.policies == ["weekends"] and .group_by == "subscription"'
# Named twice: once.
st=$(req GET "$m&policy=weekends&policy=weekends&group_by=subscription" "$reader")
[ "$st" = 200 ] && same_json "$scratch/body" "$scratch/one.json" && ok || bad "policy twice: $st"

# ---- CSV and HTML: the command's bytes ----
st=$(req GET "$m&format=csv&policy=weekends" "$reader")
cmd --format csv --policy "$scratch/pol/weekends.json"
[ "$st" = 200 ] && cmp -s "$scratch/body" "$scratch/cli.out" && ok || bad "csv: $st $(head -c 300 "$scratch/body")"
grep -qi '^content-type: text/csv; charset=utf-8' "$scratch/headers" &&
  grep -qi '^content-disposition: attachment; filename="tierwise-2026-11.csv"' "$scratch/headers" \
  && ok || bad "csv headers: $(cat "$scratch/headers")"
head -c 40 "$scratch/body" | grep -q '^BillingCurrency,ChargePeriodStart' && ok || bad "csv header row"
st=$(req GET "$m&format=html&policy=weekends" "$reader")
cmd --format html --policy "$scratch/pol/weekends.json"
# The page says when it was made: compared without that line's instant.
strip() { sed -E 's/20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z//g; s/[0-9]{1,2} [A-Z][a-z]+ 20[0-9]{2},? [0-9]{2}:[0-9]{2}( UTC)?//g' "$1"; }
[ "$st" = 200 ] && grep -qi '<html' "$scratch/body" && ok || bad "html: $st"
grep -qi '^content-type: text/html; charset=utf-8' "$scratch/headers" && ok || bad "html type: $(cat "$scratch/headers")"
cmp -s <(strip "$scratch/body") <(strip "$scratch/cli.out") && ok \
  || bad "html differs from the command's: $(diff <(strip "$scratch/body") <(strip "$scratch/cli.out") | head -5)"

# ---- one disk ----
did=$(jq '[.disks[] | select(.switches > 0)][0].disk_id' "$scratch/all.json")
st=$(req GET "$m&disk=$did" "$reader")
[ "$st" = 200 ] && ok || bad "disk=$did: $st"
cp "$scratch/body" "$scratch/disk.json"
check disk "$scratch/disk.json" "(.disks | length) == 1 and .disks[0].disk_id == $did and .totals.disks == 1"
jq -S --argjson d "$did" '.disks[] | select(.disk_id == $d)' "$scratch/all.json" >"$scratch/d.all"
jq -S '.disks[0]' "$scratch/disk.json" >"$scratch/d.one"
cmp -s "$scratch/d.all" "$scratch/d.one" && ok || bad "the disk's row alone differs: $(diff "$scratch/d.all" "$scratch/d.one" | head)"
python3 - "$scratch/disk.json" <<'EOF' && ok || bad "the disk's totals are not its row's"
import json, sys
d = json.load(open(sys.argv[1]))
r, t = d["disks"][0], d["totals"]
sys.exit(0 if all(r[k] == t[k] for k in ("cost", "baseline", "realised", "possible")) else 1)
EOF

# ---- refusals ----
st=$(req GET "$m" -)
[ "$st" = 401 ] && ok || bad "no token: $st"
st=$(req GET "$m" "$agent")
[ "$st" = 403 ] && ok || bad "agent token: $st"
refused() { # STATUS CODE WORDS PATH
  local s
  s=$(req GET "$4" "$reader")
  if [ "$s" = "$1" ] && jq -e --arg c "$2" --arg w "$3" '.error.code == $c and (.error.message | contains($w))' \
       "$scratch/body" >/dev/null; then ok
  else bad "$4: $s, want $1 $2 '$3': $(head -c 400 "$scratch/body")"; fi
}
refused 400 bad_request "which month?" "/api/v1/reports/monthly"
refused 400 bad_request "month:" "/api/v1/reports/monthly?month=2026-13"
refused 400 bad_request 'format "pdf" is not one' "$m&format=pdf"
next=$(date -u -d "$(date -u +%Y-%m-01) next month" +%Y-%m)
refused 400 bad_request "has not started" "/api/v1/reports/monthly?month=$next&currency=USD"
refused 400 bad_request 'disk "99999999999999999999"' "$m&disk=99999999999999999999"
refused 400 bad_request 'group_by: expected resource-group, subscription or tag:NAME, got "vm"' "$m&group_by=vm"
refused 400 bad_request 'disk "x1" is not a disk id' "$m&disk=x1"
refused 400 bad_request 'disk "0"' "$m&disk=0"
refused 404 not_found "no disk 999999" "$m&disk=999999"
refused 404 unknown_policy 'no policy "nightly"' "$m&policy=nightly"
refused 400 bad_request "GBP, USD" "/api/v1/reports/monthly?month=2026-11"
# Given empty is not the default; given twice with different values is
# said, naming the argument (the command's usage errors, exit 2).
refused 400 bad_request "format is empty" "$m&format="
refused 400 bad_request "group_by is empty" "$m&group_by="
refused 400 bad_request "currency is empty" "/api/v1/reports/monthly?month=2026-11&currency="
refused 400 bad_request "month is empty" "/api/v1/reports/monthly?month="
refused 400 bad_request "disk is empty" "$m&disk="
refused 400 bad_request "month is given twice with different values" "$m&month=2026-10"
refused 400 bad_request "format is given twice" "$m&format=csv&format=json"
refused 400 bad_request "currency is given twice" "$m&currency=GBP"
refused 400 bad_request "group_by is given twice" "$m&group_by=subscription&group_by=tag:env"
refused 400 bad_request "disk is given twice" "$m&disk=1&disk=2"
st=$(req GET "$m&format=json&format=json&policy=weekends" "$reader")
[ "$st" = 200 ] && ok || bad "the same value twice: $st $(head -c 300 "$scratch/body")"
# A currency no book is in: 422, the currencies there are named (the
# command's exit 2), not a report of every disk unpriced.
refused 422 no_price_book "no price book in EUR: the database's books are in GBP, USD" \
  "/api/v1/reports/monthly?month=2026-11&currency=EUR&policy=weekends"
rm "$zi/Test/Gone"
refused 409 policy_zone "Test/Gone" "$m"
refused 409 policy_zone "Test/Gone" "$m&policy=gone"
st=$(req GET "$m&policy=weekends" "$reader")
[ "$st" = 200 ] && ok || bad "a policy whose zone loads: $st"

# ---- a region without a book: 200, counted; no book at all: 422 ----
sqlite3 "$db" "UPDATE vms SET location = 'atlantis' WHERE id = 3"
st=$(req GET "$m&policy=weekends" "$reader")
[ "$st" = 200 ] && ok || bad "a region without a book: $st $(head -c 300 "$scratch/body")"
check nobook "$scratch/body" '.totals.unpriced == 5 and ([.missing[] | [.region, .disks]] == [["atlantis", 5]])
  and (.disks | length) == 100'
sqlite3 "$db" "DELETE FROM price_books"
refused 422 no_price_book "price book" "$m&policy=weekends"

# ---- an action by id, with its transitions ----
aid=$(sqlite3 "$db" "SELECT id FROM actions WHERE state = 'done' ORDER BY id LIMIT 1")
st=$(req GET "/api/v1/actions/$aid" "$reader")
[ "$st" = 200 ] && ok || bad "action $aid: $st $(cat "$scratch/body")"
n=$(sqlite3 "$db" "SELECT count(*) FROM action_transitions WHERE action_id = $aid")
check action "$scratch/body" ".id == $aid and .state == \"done\" and (.transitions | length) == $n and $n >= 2
  and .transitions[-1].to == \"done\" and (.transitions[0] | has(\"from\") and has(\"at\") and has(\"owner\"))"
# The same object the list gives for it.
st=$(req GET "/api/v1/actions?limit=1&cursor=o$((aid - 1))" "$reader")
jq -S '.actions[0]' "$scratch/body" >"$scratch/a.list"
req GET "/api/v1/actions/$aid" "$reader" >/dev/null
jq -S . "$scratch/body" >"$scratch/a.one"
cmp -s "$scratch/a.list" "$scratch/a.one" && ok || bad "the action differs from the list's: $(diff "$scratch/a.list" "$scratch/a.one" | head)"
refused 404 not_found "no action 99999999" "/api/v1/actions/99999999"
st=$(req GET "/api/v1/actions/$aid" -)
[ "$st" = 401 ] && ok || bad "action without a token: $st"

# ---- at most two builds at once: a third is 503 busy, never queued ----
# A fleet whose report takes the better part of a second, asked four
# times at once of a server with four request threads.
db="$scratch/big.db"
"$cli" prices import --db "$db" "$srcdir/pricing/azure-disk-prices.json" >/dev/null 2>&1 &&
  python3 "$srcdir/tests/perf/fleet-gen.py" "$db" 1000 --activity 2026-11 2>"$scratch/gen.err" ||
  bad "the big fleet: $(cat "$scratch/gen.err")"
reader=$(make_token reader)
start_server big --threads 4
[ -n "$port" ] || { echo "FAIL: the second server did not start: $(cat "$scratch/big.err")"; exit 1; }
curls=()
for i in 1 2 3 4; do
  curl -s --noproxy '*' -m 120 -H "Authorization: Bearer $reader" -o "$scratch/busy.$i" \
    -D "$scratch/busy.$i.h" -w '%{http_code}' "$base$m" >"$scratch/busy.$i.st" &
  curls+=($!)
done
wait "${curls[@]}"
sts="" n200=0 n503=0
for i in 1 2 3 4; do
  s=$(cat "$scratch/busy.$i.st")
  sts+="$s "
  case $s in 200) n200=$((n200 + 1)) ;; 503) n503=$((n503 + 1)) ;; esac
done
[ "$n200" -ge 1 ] && [ "$n503" -ge 1 ] && [ $((n200 + n503)) = 4 ] && [ "$n200" -le 2 ] && ok \
  || bad "four builds at once: $sts"
for i in 1 2 3 4; do
  if [ "$(cat "$scratch/busy.$i.st")" = 503 ]; then
    jq -e '.error.code == "busy" and (.error.message | contains("try again"))' "$scratch/busy.$i" >/dev/null &&
      grep -qi '^retry-after:' "$scratch/busy.$i.h" && ok || bad "a busy answer: $(cat "$scratch/busy.$i" "$scratch/busy.$i.h")"
  fi
done
# Once they are done, the next one builds.
st=$(req GET "$m" "$reader")
[ "$st" = 200 ] && ok || bad "after the burst: $st"

# ---- a server of 65 policies: none named is refused as the command refuses
# (never the 65th dropped); 64 named are judged by ----
mkdir -p "$scratch/pol65"
for i in $(seq -w 1 65); do
  printf '{ "schema_version": "tierwise.policy/1", "name": "p%s", "match": { "skus": ["Premium_LRS"] },
  "target": "StandardSSD_LRS", "windows": ["Sat 00:00-Mon 00:00"], "timezone": "UTC", "os_disks": false }\n' \
    "$i" >"$scratch/pol65/p$i.json"
done
start_server many --policies "$scratch/pol65"
[ -n "$port" ] || { echo "FAIL: the third server did not start: $(cat "$scratch/many.err")"; exit 1; }
refused 400 bad_request "the server holds 65 policies, more than the 64" "$m"
q=""
for i in $(seq -w 1 65); do q+="&policy=p$i"; done
refused 400 bad_request "at most 64 policies" "$m$q"

finish server-report
