#!/usr/bin/env bash
# Command-line contract of tierwise-agent inventory: exit 3 and one line
# when IMDS does not answer (a closed port on 127.0.0.1, never the real
# address), the IMDS URL from flag, environment and config file,
# --inventory-file with devices found in fixture /dev and sysfs trees, bad
# input exits 2, JSON on stdout only; and a whole run against a throwaway
# HTTP server on 127.0.0.1 serving the documented IMDS sample.
#
# ctest-parts: imds
#   (no part)  everything but the run against an HTTP server
#   imds       that run, against python3's http.server: exits 77 (skipped)
#              without python3
set -u
part=${1:-}
case "$part" in
  ""|imds) ;;
  *) echo "unknown part \"$part\" (none, or imds)"; exit 2 ;;
esac
agent=${TW_AGENT:?run through ctest, or set TW_AGENT and TW_FIXTURES}
fixtures=${TW_FIXTURES:?}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-inv-XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$(dirname "$0")/../helpers/testlib.sh"

# Nothing in this script may reach a real endpoint: the HTTP client refuses
# any address outside 127.0.0.0/8 and ::1, and no inherited setting counts.
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_IMDS_URL TIERWISE_ARM_URL TIERWISE_LOGIN_URL TIERWISE_PRICES_URL TIERWISE_CONFIG
unset TW_SYSFS_ROOT TW_DEV_ROOT http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY


# A 127.0.0.1 port nothing listens on.
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null) || closed=9
imds_closed="http://127.0.0.1:$closed"

if [ -z "$part" ]; then
# --help, and the command is listed.
"$agent" inventory --help | grep -q "usage: tierwise-agent inventory" && ok || bad "inventory --help"
"$agent" --help | grep -q "inventory" && ok || bad "--help does not list inventory"
"$agent" --help | grep -q "3 not on Azure" && ok || bad "--help lacks exit status 3"

# Off Azure: exit 3, one line, fast (IMDS defaults allow about 2 s).
start=$(date +%s%N)
expect 3 "not an Azure VM?" -- "$agent" inventory --imds-url "$imds_closed"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -lt 3000 ] && ok || bad "unreachable IMDS took $ms ms"
expect 3 "connection refused" -- "$agent" inventory --json --imds-url "$imds_closed"
# ... with the URL from the environment and from a config file.
TIERWISE_IMDS_URL=$imds_closed expect 3 "URL from TIERWISE_IMDS_URL" -- "$agent" inventory
printf '{"imds_url": "%s", "arm_url": "http://127.0.0.1:1"}\n' "$imds_closed" > "$scratch/tw.json"
expect 3 "URL from the config file" -- "$agent" inventory --config "$scratch/tw.json"
TIERWISE_CONFIG=$scratch/tw.json expect 3 "not an Azure VM?" -- "$agent" inventory
# The flag beats the environment, which beats the file.
TIERWISE_IMDS_URL="http://127.0.0.1:1/bad-path" expect 3 "URL from --imds-url" -- \
  "$agent" inventory --imds-url "$imds_closed"
TIERWISE_IMDS_URL=$imds_closed expect 3 "URL from TIERWISE_IMDS_URL" -- \
  "$agent" inventory --config "$scratch/tw.json"

# Bad URLs and config files: exit 2, naming the culprit.
expect 2 "has a path \"/metadata/instance\"" -- "$agent" inventory --imds-url "$imds_closed/metadata/instance"
expect 2 "must start with http://" -- "$agent" inventory --imds-url "127.0.0.1:$closed"
TIERWISE_IMDS_URL="ftp://127.0.0.1" expect 2 "TIERWISE_IMDS_URL" -- "$agent" inventory
printf '{"imds_url": 5}' > "$scratch/bad.json"
expect 2 "imds_url must be a string" -- "$agent" inventory --config "$scratch/bad.json"
printf '{"imds_url": ' > "$scratch/broken.json"
expect 2 "not valid JSON" -- "$agent" inventory --config "$scratch/broken.json"
expect 2 "can't open config file" -- "$agent" inventory --config "$scratch/missing.json"
# Loopback-only mode: a non-loopback address is refused before any socket
# exists (0.0.0.0 would only reach this machine anyway).
expect 2 "is not on 127.0.0.0/8 or ::1, and TIERWISE_LOOPBACK_ONLY is set" -- \
  "$agent" inventory --imds-url "http://0.0.0.0:$closed"
expect 2 "unexpected argument" -- "$agent" inventory extra
expect 2 "\"--frobnicate\" is an unknown option" -- "$agent" inventory --frobnicate
expect 2 "\"--imds-url\" is an unknown option or lacks its value" -- "$agent" inventory --imds-url
expect 2 "leave out --imds-url" -- "$agent" inventory --inventory-file x --imds-url "$imds_closed"

fi

# Fixture /dev and sysfs trees: LUN 0 and 1 linked by WALinuxAgent's rules,
# the OS disk by azure-vm-utils', and an LVM volume over both data disks.
sys=$scratch/sys dev=$scratch/dev
mkdir -p "$sys/block/sda" "$sys/block/sdc" "$sys/block/sdd" "$dev/disk/azure/scsi1"
ln -s ../../sda "$dev/disk/azure/os"
ln -s ../../../sdc "$dev/disk/azure/scsi1/lun0"
ln -s ../../../sdd "$dev/disk/azure/scsi1/lun1"
mkdir -p "$sys/devices/virtual/block/dm-2/slaves" "$sys/devices/virtual/block/dm-2/dm" "$sys/dev/block"
echo "253:2" > "$sys/devices/virtual/block/dm-2/dev"
echo "vg_data-lv_stripe" > "$sys/devices/virtual/block/dm-2/dm/name"
ln -s ../devices/virtual/block/dm-2 "$sys/block/dm-2"
ln -s ../../devices/virtual/block/dm-2 "$sys/dev/block/253:2"
ln -s "$sys/block/sdc" "$sys/devices/virtual/block/dm-2/slaves/sdc"
ln -s "$sys/block/sdd" "$sys/devices/virtual/block/dm-2/slaves/sdd"

if [ -z "$part" ]; then
# A hand-written inventory (disks without devices): found in the trees.
cat > "$scratch/inv.json" <<'EOF'
{"vm": {"name": "db-vm-01", "vm_size": "Standard_E8s_v3", "location": "westeurope",
        "resource_group": "rg-db", "tags": {"env": "prod"}},
 "disks": [
   {"name": "db-vm-01-os", "role": "os", "lun": null, "sku": "Premium_LRS", "size_gib": 64, "caching": "ReadWrite"},
   {"name": "db-vm-01-data0", "role": "data", "lun": 0, "sku": "Premium_LRS", "size_gib": 1024, "tier": "P30", "caching": "None"},
   {"name": "db-vm-01-data1", "role": "data", "lun": 1, "sku": "Premium_LRS", "size_gib": 1024, "caching": "None"},
   {"name": "db-vm-01-log", "role": "data", "lun": 2, "sku": "Premium_LRS", "size_gib": 128, "caching": "None", "write_accelerator": true}
 ]}
EOF
if "$agent" inventory --inventory-file "$scratch/inv.json" --sysfs-root "$sys" --dev-root "$dev" \
     >"$scratch/out.txt" 2>"$scratch/err"; then
  grep -Eq '^DISK +ROLE +LUN +SKU +SIZE +TIER +PERF +IOPS +MB/S +CACHING +DEVICE$' "$scratch/out.txt" &&
    grep -Eq '^db-vm-01-data0 +data +0 +Premium_LRS +1024 GiB +P30 +P30 +5000 +200 +None +/dev/sdc$' "$scratch/out.txt" &&
    grep -Eq '^db-vm-01-data1 +data +1 +Premium_LRS +1024 GiB +P30 +- +5000 +200 +None +/dev/sdd$' "$scratch/out.txt" &&
    grep -Eq '^db-vm-01-os +os +- +Premium_LRS +64 GiB +P6 +- +240 +50 +ReadWrite ' "$scratch/out.txt" &&
    grep -Eq '^db-vm-01-data1 +data +1 .*/dev/sdd$' "$scratch/out.txt" &&
    grep -Eq '^db-vm-01-os +os +- .*ReadWrite +/dev/sda$' "$scratch/out.txt" &&
    grep -Eq '^db-vm-01-log +data +2 .*None\+WA +-  \(not found\)$' "$scratch/out.txt" &&
    grep -q 'env=prod' "$scratch/out.txt" &&
    grep -q '/dev/dm-2 (vg_data-lv_stripe) over sd[cd] (db-vm-01-data[01], LUN [01]) sd[cd]' "$scratch/out.txt" &&
    ok || bad "inventory table: $(cat "$scratch/out.txt")"
  [ -s "$scratch/err" ] && bad "stderr on success: $(cat "$scratch/err")" || ok
else
  bad "inventory --inventory-file failed: $(cat "$scratch/err")"
fi
# The same through the environment, as JSON; the JSON reads back as it is.
if TW_SYSFS_ROOT=$sys TW_DEV_ROOT=$dev "$agent" inventory --json --inventory-file "$scratch/inv.json" \
     >"$scratch/inv2.json" 2>"$scratch/err"; then
  grep -q '"device": "/dev/sdc"' "$scratch/inv2.json" &&
    grep -q '"device": null' "$scratch/inv2.json" &&
    grep -q '"lun": null' "$scratch/inv2.json" &&
    grep -q '"write_accelerator": true' "$scratch/inv2.json" &&
    grep -q '"tier": "P30"' "$scratch/inv2.json" &&
    grep -q '"size_tier": "P30"' "$scratch/inv2.json" &&
    grep -q '"performance_tier": "P30"' "$scratch/inv2.json" &&
    grep -q '"rated_iops": 5000' "$scratch/inv2.json" &&
    grep -q '"size_tier": "P6"' "$scratch/inv2.json" && ok || bad "inventory JSON: $(cat "$scratch/inv2.json")"
  "$agent" inventory --json --inventory-file "$scratch/inv2.json" --sysfs-root "$sys" \
    --dev-root "$dev" >"$scratch/inv3.json" 2>&1 && cmp -s "$scratch/inv2.json" "$scratch/inv3.json" &&
    ok || bad "JSON does not read back the same: $(diff "$scratch/inv2.json" "$scratch/inv3.json")"
else
  bad "inventory --json --inventory-file failed: $(cat "$scratch/err")"
fi
# Tiers and ratings: the size tier of each family (exactly a tier's size,
# one GiB over, the largest), a performance tier above the size's own and
# one below it, and the disks that have none, each saying why.
cat > "$scratch/tiers.json" <<'EOF'
{"vm": {"name": "tier-vm", "vm_size": "Standard_E8s_v3", "location": "westeurope"},
 "disks": [
   {"name": "prem-2t", "role": "data", "lun": 0, "sku": "Premium_LRS", "size_gib": 2048},
   {"name": "prem-128", "role": "data", "lun": 1, "sku": "Premium_LRS", "size_gib": 128},
   {"name": "prem-129", "role": "data", "lun": 2, "sku": "Premium_LRS", "size_gib": 129},
   {"name": "prem-perf", "role": "data", "lun": 3, "sku": "Premium_LRS", "size_gib": 1024, "tier": "P50"},
   {"name": "prem-stale", "role": "data", "lun": 4, "sku": "Premium_LRS", "size_gib": 1024, "tier": "P10"},
   {"name": "ssd-200", "role": "data", "lun": 5, "sku": "StandardSSD_LRS", "size_gib": 200},
   {"name": "hdd-max", "role": "data", "lun": 6, "sku": "Standard_LRS", "size_gib": 32767},
   {"name": "prem-huge", "role": "data", "lun": 7, "sku": "Premium_LRS", "size_gib": 32768},
   {"name": "v2", "role": "data", "lun": 8, "sku": "PremiumV2_LRS", "size_gib": 512},
   {"name": "ultra", "role": "data", "lun": 9, "sku": "UltraSSD_LRS", "size_gib": 1024}
 ]}
EOF
if "$agent" inventory --inventory-file "$scratch/tiers.json" --sysfs-root "$sys" --dev-root "$dev" \
     >"$scratch/tiers.txt" 2>"$scratch/err"; then
  t=$scratch/tiers.txt
  grep -Eq '^prem-2t +data +0 +Premium_LRS +2048 GiB +P40 +- +7500 +250 ' "$t" &&
    grep -Eq '^prem-128 +data +1 +Premium_LRS +128 GiB +P10 +- +500 +100 ' "$t" &&
    grep -Eq '^prem-129 +data +2 +Premium_LRS +129 GiB +P15 +- +1100 +125 ' "$t" &&
    grep -Eq '^prem-perf +data +3 +Premium_LRS +1024 GiB +P30 +P50 +7500 +250 ' "$t" &&
    grep -Eq '^prem-stale +data +4 +Premium_LRS +1024 GiB +P30 +P10 +5000 +200 ' "$t" &&
    grep -Eq '^ssd-200 +data +5 +StandardSSD_LRS +200 GiB +E15 +- +500 +60 ' "$t" &&
    grep -Eq '^hdd-max +data +6 +Standard_LRS +32767 GiB +S80 +- +2000 +500 ' "$t" &&
    grep -Eq '^prem-huge +data +7 +Premium_LRS +32768 GiB +- +- +- +- ' "$t" &&
    grep -Eq '^v2 +data +8 +PremiumV2_LRS +512 GiB +- +- +- +- ' "$t" &&
    grep -Eq '^ultra +data +9 +UltraSSD_LRS +1024 GiB +- +- +- +- ' "$t" &&
    grep -qx 'Ratings' "$t" &&
    grep -q '^  prem-huge: a Premium_LRS disk of 32768 GiB is beyond the largest tier (P80, 32767 GiB)$' "$t" &&
    grep -q "^  prem-stale: performance tier P10 is below the size's own tier P30" "$t" &&
    grep -q '^  v2: Premium SSD v2 disks have no size tiers: their IOPS and MB/s are provisioned per disk (3000 to 80000 IOPS' "$t" &&
    grep -q '^  ultra: Ultra disks have no size tiers' "$t" &&
    [ "$(grep -c '^  [a-z0-9-]*: ' "$t")" = 4 ] &&
    ok || bad "inventory tiers table: $(cat "$t")"
else
  bad "inventory of tiers.json failed: $(cat "$scratch/err")"
fi
if "$agent" inventory --json --inventory-file "$scratch/tiers.json" --sysfs-root "$sys" --dev-root "$dev" \
     >"$scratch/tiers2.json" 2>"$scratch/err"; then
  if command -v jq >/dev/null; then
    jq -e '[.disks[] | {(.name): [.tier, .size_tier, .performance_tier, .rating, .rated_iops, .rated_mbps]}] | add ==
           {"prem-2t": ["P40", "P40", null, "tier", 7500, 250],
            "prem-128": ["P10", "P10", null, "tier", 500, 100],
            "prem-129": ["P15", "P15", null, "tier", 1100, 125],
            "prem-perf": ["P50", "P30", "P50", "tier", 7500, 250],
            "prem-stale": ["P30", "P30", "P10", "tier", 5000, 200],
            "ssd-200": ["E15", "E15", null, "tier", 500, 60],
            "hdd-max": ["S80", "S80", null, "tier", 2000, 500],
            "prem-huge": [null, null, null, "none", null, null],
            "v2": [null, null, null, "provisioned", null, null],
            "ultra": [null, null, null, "provisioned", null, null]}' "$scratch/tiers2.json" >/dev/null &&
      jq -e '[.disks[] | select(.rated_why != null) | .name] == ["prem-stale", "prem-huge", "v2", "ultra"]' \
        "$scratch/tiers2.json" >/dev/null && ok || bad "inventory tiers JSON: $(cat "$scratch/tiers2.json")"
  else
    grep -q '"rating": "provisioned"' "$scratch/tiers2.json" && ok || bad "inventory tiers JSON: $(cat "$scratch/tiers2.json")"
  fi
  # Read back (the rated inventory as --inventory-file), it is rated the same.
  "$agent" inventory --json --inventory-file "$scratch/tiers2.json" --sysfs-root "$sys" \
    --dev-root "$dev" >"$scratch/tiers3.json" 2>&1 && cmp -s "$scratch/tiers2.json" "$scratch/tiers3.json" &&
    ok || bad "rated JSON does not read back the same: $(diff "$scratch/tiers2.json" "$scratch/tiers3.json")"
else
  bad "inventory --json of tiers.json failed: $(cat "$scratch/err")"
fi
printf '{"vm": {"name": "v", "location": "l", "vm_size": "S"}, "disks": [{"name": "d", "role": "data", "sku": "Premium_LRS", "size_gib": 1, "rating": "big"}]}' > "$scratch/rating.json"
expect 2 'disks[0].rating "big" is not tier, provisioned or none' -- "$agent" inventory --inventory-file "$scratch/rating.json"

# A whole report is accepted too (its "inventory" member).
printf '{"schema_version": "tierwise.report/1", "inventory": %s, "results": []}' \
  "$(cat "$scratch/inv.json")" > "$scratch/report.json"
"$agent" inventory --inventory-file "$scratch/report.json" --sysfs-root "$sys" --dev-root "$dev" |
  grep -q 'db-vm-01-data1' && ok || bad "a report as --inventory-file"

# Bad inventory files: exit 2 with the file and the field.
expect 2 "can't open $scratch/none.json" -- "$agent" inventory --inventory-file "$scratch/none.json"
: > "$scratch/empty.json"
expect 2 "is empty" -- "$agent" inventory --inventory-file "$scratch/empty.json"
printf '{"vm": ' > "$scratch/trunc.json"
expect 2 "trunc.json: not valid JSON at line 1" -- "$agent" inventory --inventory-file "$scratch/trunc.json"
printf '{"vm": {"name": "v", "location": "l", "vm_size": "S"}, "disks": [{"name": "d", "role": "data", "lun": "0", "sku": "P", "size_gib": 1}]}' > "$scratch/lun.json"
expect 2 "disks[0].lun must be an integer" -- "$agent" inventory --inventory-file "$scratch/lun.json"
printf '{"vm": {"name": "v", "location": "l"}, "disks": []}' > "$scratch/nosize.json"
expect 2 "vm.vm_size is missing" -- "$agent" inventory --inventory-file "$scratch/nosize.json"
printf '{"inventory": [], "results": []}' > "$scratch/badreport.json"
expect 2 "inventory must be an object" -- "$agent" inventory --inventory-file "$scratch/badreport.json"
expect 2 "is empty" -- "$agent" inventory --inventory-file /dev/null

fi

# Against a real HTTP server on 127.0.0.1 (python3's), serving the
# documented IMDS sample at /metadata/instance.
if [ "$part" = imds ]; then
  command -v python3 >/dev/null || { echo "python3 is not installed: skipped"; exit 77; }
  mkdir -p "$scratch/www/metadata"
  cp "$fixtures/imds/constructed-d2s-v3-two-data-disks.json" "$scratch/www/metadata/instance"
  python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$scratch/www" \
    >"$scratch/server.log" 2>&1 &
  server_pid=$!
  port=
  for _ in $(seq 50); do
    port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$scratch/server.log" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -n "$port" ]; then
    rm -f "$dev/disk/azure/os"   # this VM's OS disk is not in the trees
    if "$agent" inventory --imds-url "http://127.0.0.1:$port" --sysfs-root "$sys" --dev-root "$dev" \
         >"$scratch/imds.txt" 2>"$scratch/err"; then
      grep -q '^VM  *advisor-vm-01$' "$scratch/imds.txt" &&
        grep -q '^Size  *Standard_D2s_v3$' "$scratch/imds.txt" &&
        grep -Eq '^advisor-vm-01-data0 +data +0 +Premium_LRS +128 GiB +P10 +- +500 +100 +ReadOnly +/dev/sdc$' "$scratch/imds.txt" &&
        grep -Eq '^advisor-vm-01-data1 +data +1 +StandardSSD_LRS +256 GiB .*/dev/sdd$' "$scratch/imds.txt" &&
        grep -q 'env=test, owner=advisor' "$scratch/imds.txt" && ok || bad "IMDS table: $(cat "$scratch/imds.txt")"
    else
      bad "inventory from the loopback IMDS failed: $(cat "$scratch/err")"
    fi
    TIERWISE_IMDS_URL="http://127.0.0.1:$port" "$agent" inventory --json >"$scratch/imds.json" 2>/dev/null &&
      grep -q '"vm_size": "Standard_D2s_v3"' "$scratch/imds.json" &&
      grep -q '"size_tier": "E15"' "$scratch/imds.json" && ok || bad "IMDS JSON: $(cat "$scratch/imds.json")"
    # IMDS documents no tier; one it sends (a performance tier) is kept
    # and, above the size's own, is the tier in use.
    python3 - "$scratch/www/metadata/instance" <<'PY'
import json, sys
p = sys.argv[1]
with open(p) as f:
    d = json.load(f)
d["compute"]["storageProfile"]["dataDisks"][0]["tier"] = "P20"
with open(p, "w") as f:
    json.dump(d, f)
PY
    if "$agent" inventory --imds-url "http://127.0.0.1:$port" --sysfs-root "$sys" --dev-root "$dev" \
         >"$scratch/imds-perf.txt" 2>"$scratch/err"; then
      grep -Eq '^advisor-vm-01-data0 +data +0 +Premium_LRS +128 GiB +P10 +P20 +2300 +150 +ReadOnly ' \
        "$scratch/imds-perf.txt" && ok || bad "IMDS performance tier: $(cat "$scratch/imds-perf.txt")"
    else
      bad "inventory from the loopback IMDS (tier) failed: $(cat "$scratch/err")"
    fi
    "$agent" inventory --json --imds-url "http://127.0.0.1:$port" >"$scratch/imds-perf.json" 2>/dev/null &&
      grep -q '"performance_tier": "P20"' "$scratch/imds-perf.json" &&
      grep -q '"tier": "P20"' "$scratch/imds-perf.json" && ok || bad "IMDS performance tier JSON: $(cat "$scratch/imds-perf.json")"
    # An answer that is not an instance document: exit 1 (IMDS failed), not 3.
    echo '{"compute": {}}' > "$scratch/www/metadata/instance"
    expect 1 "compute.name is missing" -- "$agent" inventory --imds-url "http://127.0.0.1:$port"
    rm "$scratch/www/metadata/instance"
    expect 1 "HTTP 404" -- "$agent" inventory --imds-url "http://127.0.0.1:$port"
  else
    bad "the python3 HTTP server did not start: $(cat "$scratch/server.log")"
  fi
fi

finish "inventory CLI${part:+/$part}"
