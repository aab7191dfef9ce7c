#!/usr/bin/env bash
# tierwise prices: show from the bundled snapshot, refresh from the
# simulator's Retail Prices API with 100- and 1,000-item pages, a full page
# without NextPageLink, a 429 then success, a refresh failing midway (the
# stored book stays as it was), import of a real captured answer and of the
# snapshot, endpoint precedence, and bad usage.  Needs jq (else skipped).
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_AZSIM, TW_FIXTURES and TW_SOURCE_DIR}
azsim=${TW_AZSIM:?}
fixtures=${TW_FIXTURES:?}
src=${TW_SOURCE_DIR:?}
command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-prices-XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$src/tests/helpers/testlib.sh"
# Nothing here may leave the machine.
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_PRICES_URL TIERWISE_CONFIG
snapshot="$src/pricing/azure-disk-prices.json"

# start NAME PAGE_SIZE PRICES [--fault SPEC]...: a simulator on port 0;
# sets $url (empty when it did not come up).
start() {
  local name=$1 size=$2 prices=$3; shift 3
  printf '{"schema": "tierwise.azsim-scenario/1", "settings": {"prices_page_size": %s}}\n' \
    "$size" >"$scratch/$name.json"
  "$azsim" --scenario "$scratch/$name.json" --prices "$prices" --port-file "$scratch/$name.port" \
    "$@" >"$scratch/$name.out" 2>"$scratch/$name.err" &
  pids+=($!)
  url=""
  for _ in $(seq 100); do
    [ -s "$scratch/$name.port" ] && { url="http://127.0.0.1:$(cat "$scratch/$name.port")"; return; }
    sleep 0.1
  done
  bad "simulator $name did not start: $(cat "$scratch/$name.err")"
}

# check WHAT JSON JQ-EXPRESSION: the expression is true for the JSON.
check() {
  if jq -e "$3" >/dev/null 2>&1 <<<"$2"; then ok; else bad "$1: $3 is not true of: ${2:0:600}"; fi
}

# ---- help and usage ----
for sub in "" refresh show import bench; do
  out=$("$cli" prices $sub --help); st=$?
  [ $st = 0 ] && grep -q "usage: tierwise prices refresh" <<<"$out" && ok || bad "prices $sub --help ($st)"
done
expect 2 "refresh, show, import or bench" -- "$cli" prices
expect 2 "unknown subcommand" -- "$cli" prices fetch
expect 2 "needs --db FILE" -- "$cli" prices refresh --region westeurope --currency USD
expect 2 "needs --region R and --currency C" -- "$cli" prices show --currency USD
expect 2 "not an Azure region name" -- "$cli" prices show --region "west europe" --currency USD
expect 2 "not one the Retail Prices API offers" -- "$cli" prices show --region westeurope --currency XYZ
expect 2 "takes one FILE" -- "$cli" prices import --db "$scratch/x.db"
expect 2 "does not exist" -- "$cli" prices show --db "$scratch/none.db" --region westeurope --currency USD

# ---- the bundled snapshot ----
j=$("$cli" prices show --region westeurope --currency USD --json)
check "snapshot westeurope" "$j" '(.source | startswith("snapshot pricing/azure-disk-prices.json"))
  and .fetched_at == "2026-07-26T00:00:00Z"
  and ([.prices[] | select(.tier == "P10" and .sku == "Premium_LRS")][0].per_month == 21.68)
  and ([.prices[] | select(.tier == "P10" and .sku == "Premium_LRS")][0].per_10k_transactions == null)
  and ([.prices[] | select(.tier == "P10" and .sku == "Premium_LRS")][0].shared_mount_per_month == 1.183)
  and ([.prices[] | select(.tier == "E10" and .sku == "StandardSSD_LRS")][0].per_10k_transactions == 0.002)
  and ([.prices[] | select(.tier == "E10" and .sku == "StandardSSD_LRS")][0].disk_transactions_per_10k == 0.0026)
  and ([.prices[] | select(.tier == "E10" and .sku == "StandardSSD_ZRS")][0].disk_transactions_per_10k == 0.0039)
  and ([.prices[] | select(.tier == "S4" and .sku == "Standard_LRS")][0].disk_transactions_per_10k == 0.00065)
  and ([.prices[] | select(.tier == "P10" and .sku == "Premium_LRS")][0].disk_transactions_per_10k == null)
  and ([.unknown_meters[] | select(.meter | startswith("Disk Transactions"))] | length) == 0
  and .unused_items.unknown_meter == 16
  and ([.prices[] | select(.tier == "S10")][0].per_month == 5.888)'
j=$("$cli" prices show --region EastUS --currency usd --sku P15 --json)
check "snapshot eastus P15" "$j" '.region == "eastus" and .currency == "USD" and (.prices | length) == 2
  and .prices[0].per_month == 38.012142 and .prices[0].sku == "Premium_LRS" and .prices[1].sku == "Premium_ZRS"'
j=$("$cli" prices show --region uksouth --currency GBP --sku P10 --json)
check "snapshot GBP" "$j" '.prices[0].per_month == 18.563811 and .prices[0].seen == "2024-08-19"'
expect 2 "no price for E15 in uksouth GBP" -- "$cli" prices show --region uksouth --currency GBP --sku E15
out=$("$cli" prices show --region westeurope --currency USD)
grep -q "^P10   Premium_LRS       21.68 " <<<"$out" && ok || bad "text show: $(head -5 <<<"$out")"

# ---- refresh through the simulator, 100-item pages ----
start p100 100 "$snapshot"
db="$scratch/p.db"
j=$("$cli" prices refresh --db "$db" --region westeurope --currency USD --prices-url "$url" --json)
check "refresh 100" "$j" ".items == 175 and .pages == 2 and .skip_fallbacks == 0 and .source == \"api $url\""
j=$("$cli" prices show --db "$db" --region westeurope --currency USD --sku E10 --json)
check "show refreshed" "$j" ".source == \"api $url\" and .prices[0].per_month == 9.6
  and .prices[0].per_10k_transactions == 0.002"
fetched=$(jq -r .fetched_at <<<"$j")
# Another region in the same database still comes from the snapshot.
j=$("$cli" prices show --db "$db" --region northeurope --currency USD --sku P10 --json)
check "other region" "$j" '(.source | startswith("snapshot")) and .prices[0].per_month == 19.71'
# A currency the simulator has no items in: nothing stored, an error.
expect 2 "no managed-disk price for westeurope EUR" -- \
  "$cli" prices refresh --db "$db" --region westeurope --currency EUR --prices-url "$url"

# ---- 1,000-item pages: one region with more than 4,000 items.  The real
# snapshot items are relabelled to one test region, so the paging is
# exercised at a size no real region has today; test input only. ----
jq '{Items: [.Items[] | select(.currencyCode == "USD") | .armRegionName = "testregion"]}' \
  "$snapshot" >"$scratch/big.json"
nbig=$(jq '.Items | length' "$scratch/big.json")
start p1000 1000 "$scratch/big.json"
j=$("$cli" prices refresh --db "$db" --region testregion --currency USD --prices-url "$url" --json)
check "refresh 1000" "$j" ".items == $nbig and .pages == $(( (nbig + 999) / 1000 )) and .skip_fallbacks == 0"

# ---- a full page without NextPageLink: $skip, said in the log ----
start nolink 100 "$snapshot" --fault 'kind=no-next-link,path=/api/retail/prices,count=1'
j=$("$cli" prices refresh --db "$scratch/n.db" --region westeurope --currency USD \
  --prices-url "$url" --json 2>"$scratch/nolink.log")
check "no next link" "$j" '.items == 175 and .pages == 2 and .skip_fallbacks == 1'
grep -q 'has no NextPageLink; asking for the next with \$skip=100' "$scratch/nolink.log" && ok ||
  bad "no log line for the \$skip fallback: $(cat "$scratch/nolink.log")"

# ---- 429 then success ----
start throttle 100 "$snapshot" --fault 'kind=throttle,path=/api/retail/prices,retry_after=1,count=1'
j=$("$cli" prices refresh --db "$scratch/t.db" --region westeurope --currency USD \
  --prices-url "$url" --json)
check "429 then ok" "$j" '.items == 175 and .attempts == 3 and .waited_ms >= 1000'

# ---- a refresh that fails midway leaves the stored book as it was ----
start fail500 100 "$snapshot" --fault 'kind=error,path=/api/retail/prices,status=500,skip=1'
expect 1 "HTTP 500" -- "$cli" prices refresh --db "$db" --region westeurope --currency USD --prices-url "$url"
start trunc 100 "$snapshot" --fault 'kind=truncate,path=/api/retail/prices,skip=1'
expect 1 "not valid JSON" -- "$cli" prices refresh --db "$db" --region westeurope --currency USD --prices-url "$url"
j=$("$cli" prices show --db "$db" --region westeurope --currency USD --sku E10 --json)
check "book intact" "$j" ".fetched_at == \"$fetched\" and .prices[0].per_month == 9.6"
# Nothing listens: a clear failure, exit 1.
start gone 100 "$snapshot"
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null
expect 1 "connection refused" -- "$cli" prices refresh --db "$db" --region westeurope --currency USD --prices-url "$url"

# ---- endpoint precedence: flag > TIERWISE_PRICES_URL > config ----
start prec 100 "$snapshot"
printf '{"prices_url": "http://127.0.0.1:9"}\n' >"$scratch/config.json"
j=$(TIERWISE_PRICES_URL="$url" "$cli" prices refresh --db "$scratch/e.db" --region westeurope \
  --currency USD --config "$scratch/config.json" --json)
check "env over config" "$j" ".source == \"api $url\""
j=$(TIERWISE_PRICES_URL=http://127.0.0.1:9 "$cli" prices refresh --db "$scratch/e.db" \
  --region westeurope --currency USD --prices-url "$url" --json)
check "flag over env" "$j" ".source == \"api $url\""
expect 2 "--prices-url" -- "$cli" prices refresh --db "$scratch/e.db" --region westeurope --currency USD --prices-url "ftp://x"

# ---- import ----
j=$("$cli" prices import --db "$scratch/i.db" --json "$fixtures/prices/real-p15-eastus-usd.json")
check "import page" "$j" '.items == 2 and .books == 1 and .prices == 2'
j=$("$cli" prices show --db "$scratch/i.db" --region eastus --currency USD --json)
check "imported P15" "$j" '(.source | startswith("import ")) and (.prices | length) == 1
  and .prices[0].per_month == 38.012142 and .prices[0].shared_mount_per_month == 1.825'
expect 2 "Invalid OData parameters supplied" -- "$cli" prices import --db "$scratch/i.db" "$fixtures/prices/real-error-odata.json"
printf 'not json' >"$scratch/bad.json"
expect 2 "not valid JSON" -- "$cli" prices import --db "$scratch/i.db" "$scratch/bad.json"
j=$("$cli" prices import --db "$scratch/s.db" --json "$snapshot")
check "import snapshot" "$j" '.books >= 68 and (.source | startswith("snapshot ")) and .fetched_at == "2026-07-26T00:00:00Z"'

# ---- bench ----
j=$("$cli" prices bench --region westeurope --currency USD --lookups 1000 --json)
check "bench" "$j" '.lookups == 1000 and .found == 1000 and .prices > 100'

finish prices
