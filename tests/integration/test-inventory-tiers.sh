#!/usr/bin/env bash
# The tier in use, end to end on 127.0.0.1: tierwise-agent inventory
# against the simulated IMDS (which, like Azure's, gives no tier) shows each
# disk's size tier and rated IOPS and MB/s, in text and JSON, and says that
# Premium SSD v2 and Ultra have none; a report the agent sends carries
# them, and the backend's disk rows (GET /api/v1/disks, /vms/{id}) and the
# store show the tier.  Needs jq and curl: exits 77 (skipped) without.
set -u
agent=${TW_AGENT:?run through ctest}
cli=${TW_CLI:?}
azsim=${TW_AZSIM:?}
src=${TW_SOURCE_DIR:?}
for tool in jq curl; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
done
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_ARM_URL TIERWISE_LOGIN_URL TIERWISE_PRICES_URL TIERWISE_CONFIG STATE_DIRECTORY
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-inv-tiers-XXXXXX")
sim=""
srv=""
cleanup() {
  [ -n "$sim" ] && kill -KILL "$sim" 2>/dev/null
  [ -n "$srv" ] && kill -KILL "$srv" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$src/tests/helpers/testlib.sh"

wait_port() { # FILE PID NAME
  for _ in $(seq 100); do [ -s "$1" ] && return 0; kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  echo "$3 did not start"; return 1
}

"$azsim" --scenario "$src/tests/fixtures/sim/scenario-tiers.json" --port-file "$scratch/sim.port" \
  >/dev/null 2>"$scratch/sim.err" &
sim=$!
wait_port "$scratch/sim.port" "$sim" simulator || { cat "$scratch/sim.err"; exit 1; }
export TIERWISE_IMDS_URL="http://127.0.0.1:$(cat "$scratch/sim.port")"
# No device of this machine plays a disk: empty /dev and sysfs trees.
mkdir -p "$scratch/dev" "$scratch/sys/block"
export TW_DEV_ROOT="$scratch/dev" TW_SYSFS_ROOT="$scratch/sys"

# The simulator's IMDS gives no tier, as Azure's does not.
curl -s --noproxy '*' -H 'Metadata: true' \
  "$TIERWISE_IMDS_URL/metadata/instance?api-version=2021-02-01" >"$scratch/imds.json"
jq -e '[.compute.storageProfile.dataDisks[] | has("tier")] | any | not' "$scratch/imds.json" \
  >/dev/null && ok || bad "the simulated IMDS serves a tier: $(head -c 300 "$scratch/imds.json")"

# 1. The table: TIER (size tier), PERF, IOPS, MB/S; "Ratings" says why not.
if "$agent" inventory >"$scratch/inv.txt" 2>"$scratch/err"; then
  t=$scratch/inv.txt
  grep -Eq '^tier-vm-01-os +os +- +Premium_LRS +30 GiB +P4 +- +120 +25 ' "$t" &&
    grep -Eq '^tier-p40 +data +0 +Premium_LRS +2048 GiB +P40 +- +7500 +250 ' "$t" &&
    grep -Eq '^tier-e15 +data +1 +StandardSSD_LRS +200 GiB +E15 +- +500 +60 ' "$t" &&
    grep -Eq '^tier-s20 +data +2 +Standard_LRS +500 GiB +S20 +- +500 +60 ' "$t" &&
    grep -Eq '^tier-p10 +data +3 +Premium_LRS +128 GiB +P10 +- +500 +100 ' "$t" &&
    grep -Eq '^tier-p15 +data +4 +Premium_LRS +129 GiB +P15 +- +1100 +125 ' "$t" &&
    grep -Eq '^tier-perf +data +5 +Premium_LRS +1024 GiB +P30 +- +5000 +200 ' "$t" &&
    grep -Eq '^tier-v2 +data +6 +PremiumV2_LRS +512 GiB +- +- +- +- ' "$t" &&
    grep -Eq '^tier-ultra +data +7 +UltraSSD_LRS +1024 GiB +- +- +- +- ' "$t" &&
    grep -q '^  tier-v2: Premium SSD v2 disks have no size tiers: their IOPS and MB/s are provisioned per disk' "$t" &&
    grep -q '^  tier-ultra: Ultra disks have no size tiers' "$t" &&
    ! grep -Eq '^  tier-(p|e|s)[0-9]' "$t" &&
    ok || bad "inventory table: $(cat "$t")"
else
  bad "inventory failed: $(cat "$scratch/err")"
fi

# 2. The JSON: the same, with null where there is no tier.
if "$agent" inventory --json >"$scratch/inv.json" 2>"$scratch/err"; then
  jq -e '[.disks[] | {(.name): [.tier, .size_tier, .performance_tier, .rating, .rated_iops,
                                 .rated_mbps]}] | add ==
         {"tier-vm-01-os": ["P4", "P4", null, "tier", 120, 25],
          "tier-p40": ["P40", "P40", null, "tier", 7500, 250],
          "tier-e15": ["E15", "E15", null, "tier", 500, 60],
          "tier-s20": ["S20", "S20", null, "tier", 500, 60],
          "tier-p10": ["P10", "P10", null, "tier", 500, 100],
          "tier-p15": ["P15", "P15", null, "tier", 1100, 125],
          "tier-perf": ["P30", "P30", null, "tier", 5000, 200],
          "tier-v2": [null, null, null, "provisioned", null, null],
          "tier-ultra": [null, null, null, "provisioned", null, null]}' "$scratch/inv.json" >/dev/null &&
    jq -e '[.disks[] | select(.rated_why != null) | .name] == ["tier-v2", "tier-ultra"] and
           (.disks[] | select(.name == "tier-v2") | .rated_why | test("3000 to 80000 IOPS"))' \
      "$scratch/inv.json" >/dev/null && ok || bad "inventory JSON: $(cat "$scratch/inv.json")"
else
  bad "inventory --json failed: $(cat "$scratch/err")"
fi

# 3. The report the agent sends, and the backend's rows.
db="$scratch/tierwise.db"
(umask 077
 "$cli" token create --db "$db" --role agent --name test-agent >"$scratch/agent.tok" &&
 "$cli" token create --db "$db" --role reader >"$scratch/reader.tok") 2>"$scratch/tok.err" ||
  { echo "token create failed: $(cat "$scratch/tok.err")"; exit 1; }
"$cli" serve --db "$db" --listen 127.0.0.1:0 --port-file "$scratch/srv.port" 2>"$scratch/srv.err" &
srv=$!
wait_port "$scratch/srv.port" "$srv" "tierwise serve" || { cat "$scratch/srv.err"; exit 1; }
server="http://127.0.0.1:$(cat "$scratch/srv.port")"
reader=$(cat "$scratch/reader.tok")
get() { curl -s --noproxy '*' -H "Authorization: Bearer $reader" "$server$1"; }

"$agent" run --server "$server" --token-file "$scratch/agent.tok" --spool "$scratch/spool.db" \
  --once --profiles none >"$scratch/run.out" 2>"$scratch/run.err" && ok ||
  bad "run --once --profiles none: $(cat "$scratch/run.err")"
want='{"tier-vm-01-os": "P4", "tier-p40": "P40", "tier-e15": "E15", "tier-s20": "S20",
       "tier-p10": "P10", "tier-p15": "P15", "tier-perf": "P30", "tier-v2": null,
       "tier-ultra": null}'
get /api/v1/disks >"$scratch/disks.json"
jq -e --argjson want "$want" '[.disks[] | {(.name): .tier}] | add == $want' "$scratch/disks.json" \
  >/dev/null && ok || bad "GET /api/v1/disks: $(cat "$scratch/disks.json")"
vm=$(get /api/v1/vms | jq -r '.vms[0].id // empty')
if [ -n "$vm" ]; then
  get "/api/v1/vms/$vm" >"$scratch/vm.json"
  jq -e --argjson want "$want" '[.. | objects | select(has("size_gib") and has("tier")) |
                                 {(.name): .tier}] | add == $want' "$scratch/vm.json" \
    >/dev/null && ok || bad "GET /api/v1/vms/$vm: $(cat "$scratch/vm.json")"
else
  bad "GET /api/v1/vms: no VM: $(get /api/v1/vms)"
fi
# The stored report keeps every rating field, as sent.
get "/api/v1/disks/$(jq -r '.disks[] | select(.name == "tier-p40") | .id' "$scratch/disks.json")" \
  >"$scratch/disk.json"
jq -e '.tier == "P40"' "$scratch/disk.json" >/dev/null 2>&1 ||
  jq -e '[.. | objects | select(.name? == "tier-p40" and has("tier")) | .tier] | all(. == "P40")' \
    "$scratch/disk.json" >/dev/null && ok || bad "GET /api/v1/disks/{id}: $(head -c 600 "$scratch/disk.json")"
# The store: the disks table and the SKU history hold the tier in use.
if command -v sqlite3 >/dev/null; then
  got=$(sqlite3 "file:$db?mode=ro" "SELECT d.name || '=' || coalesce(d.tier, 'NULL') FROM disks d
                                    ORDER BY d.name" 2>&1 | tr '\n' ' ')
  [ "$got" = "tier-e15=E15 tier-p10=P10 tier-p15=P15 tier-p40=P40 tier-perf=P30 tier-s20=S20 tier-ultra=NULL tier-v2=NULL tier-vm-01-os=P4 " ] &&
    ok || bad "disks.tier in the store: $got"
  hist=$(sqlite3 "file:$db?mode=ro" "SELECT count(*) FROM disk_sku_history h JOIN disks d ON d.id = h.disk_id
                                     WHERE d.name = 'tier-p40' AND h.tier = 'P40'" 2>&1)
  [ "$hist" = 1 ] && ok || bad "disk_sku_history of tier-p40: $hist"
fi

kill -TERM "$srv"; wait "$srv"; srv=""
kill -TERM "$sim"; wait "$sim"; sim=""
finish inventory-tiers
