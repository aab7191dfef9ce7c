#!/usr/bin/env bash
# The agent against the Azure simulator, end to end on 127.0.0.1:
# inventory from the simulated IMDS (also through injected 503s, a 429 and
# a truncated answer), "not on Azure" once the simulator is gone, and a
# benchmark of a scratch file mapped as data disk LUN 0 judged by
# tierwise compliance.  Needs jq and curl: exits 77 (skipped) without.
#
# ctest-parts: lun0
#   (no part)  inventory, faults, "not on Azure"
#   lun0       the benchmark mapped to LUN 0: needs O_DIRECT under $TMPDIR
#              (or /var/tmp) and that folder on a block device in sysfs;
#              exits 77 (skipped) without
set -u
part=${1:-}
case "$part" in
  ""|lun0) ;;
  *) echo "unknown part \"$part\" (none, or lun0)"; exit 2 ;;
esac
agent=${TW_AGENT:?run through ctest}
cli=${TW_CLI:?}
azsim=${TW_AZSIM:?}
src=${TW_SOURCE_DIR:?}
for tool in jq curl; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
done
export TIERWISE_LOOPBACK_ONLY=1
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-agent-sim-XXXXXX")
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
if [ "$part" = lun0 ]; then
  # What the part needs, before anything starts.
  f="$scratch/data0.bench"
  if ! dd if=/dev/zero of="$scratch/probe" bs=4096 count=1 oflag=direct 2>/dev/null; then
    echo "O_DIRECT is not supported under $scratch: skipped"
    exit 77
  fi
  mm=$(stat -c '%Hd:%Ld' "$scratch")
  sys=$(readlink -f "/sys/dev/block/$mm" 2>/dev/null)
  [ -n "$sys" ] && [ -e "$sys/partition" ] && sys=$(dirname "$sys")
  if [ -z "$sys" ] || [ ! -d "$sys" ]; then
    echo "$scratch is on no block device in sysfs (device $mm): skipped"
    exit 77
  fi
  disk=$(basename "$sys")
fi

"$azsim" --scenario "$src/deploy/demo-scenario.json" --port-file "$scratch/port" \
  >/dev/null 2>"$scratch/azsim.err" &
pid=$!
for _ in $(seq 100); do [ -s "$scratch/port" ] && break; sleep 0.1; done
[ -s "$scratch/port" ] || { echo "the simulator did not start: $(cat "$scratch/azsim.err")"; exit 1; }
port=$(cat "$scratch/port")
base="http://127.0.0.1:$port"
export TIERWISE_IMDS_URL=$base

# 3. A benchmark of a scratch file on this machine's disk, mapped as LUN 0
#    (the P10 data disk) through a fixture /dev tree, judged against it.
if [ "$part" = lun0 ]; then
  mkdir -p "$scratch/dev/disk/azure/scsi1"
  ln -s "../../../$disk" "$scratch/dev/disk/azure/scsi1/lun0"
  TW_DEV_ROOT="$scratch/dev" "$agent" inventory --json >"$scratch/inv0.json" 2>"$scratch/err"
  jq -e --arg d "/dev/$disk" '.disks[] | select(.lun == 0) | .device == $d' "$scratch/inv0.json" >/dev/null &&
    ok || bad "LUN 0 not mapped to /dev/$disk: $(cat "$scratch/inv0.json" "$scratch/err")"
  "$agent" bench --target "$f" --size 16M --profile rated-iops --runtime 1 --ramp 0 --json \
    >"$scratch/r.json" 2>"$scratch/err" && ok || bad "bench: $(cat "$scratch/err")"
  if "$cli" compliance --inventory "$scratch/inv0.json" --result "$scratch/r.json" --json \
       >"$scratch/v.json" 2>"$scratch/err"; then
    jq -e '.verdicts | length == 1' "$scratch/v.json" >/dev/null &&
      jq -e '.verdicts[0].disks == ["tw-demo-data0"] and .verdicts[0].verdict == "inconclusive"' \
        "$scratch/v.json" >/dev/null && ok || bad "verdict: $(cat "$scratch/v.json")"
  else
    bad "compliance: $(cat "$scratch/err")"
  fi
  # The VM's caps from the simulated ARM (token from the simulated IMDS).
  if TIERWISE_ARM_URL=$base "$cli" compliance --caps-from-arm --inventory "$scratch/inv0.json" \
       --result "$scratch/r.json" --json >"$scratch/va.json" 2>"$scratch/err"; then
    jq -e '.verdicts[0].vm.size == "Standard_D8s_v3" and .verdicts[0].vm.iops == 12800 and
           .verdicts[0].vm.mbps == 192' "$scratch/va.json" >/dev/null &&
      ok || bad "caps from ARM: $(jq -c '.verdicts[0].vm' "$scratch/va.json")"
  else
    bad "compliance --caps-from-arm: $(cat "$scratch/err")"
  fi
  kill -TERM "$pid"; wait "$pid"; pid=""
  finish agent-sim/lun0
  exit
fi

# 1. The inventory, as the scenario says.
if "$agent" inventory --json >"$scratch/inv.json" 2>"$scratch/err"; then
  jq -e '.vm.name == "tw-demo-vm" and .vm.vm_size == "Standard_D8s_v3" and
         .vm.location == "westeurope" and (.disks | length) == 4 and
         .vm.tags.app == "sap-erp" and
         ([.disks[] | select(.role == "data")] | length) == 3 and
         (.disks[] | select(.lun == 1) | .sku == "Premium_LRS" and .size_gib == 2048)' \
    "$scratch/inv.json" >/dev/null && ok || bad "inventory: $(cat "$scratch/inv.json")"
else
  bad "inventory failed: $(cat "$scratch/err")"
fi
"$agent" inventory >"$scratch/inv.txt" 2>&1 && grep -q "tw-demo-data1" "$scratch/inv.txt" && ok ||
  bad "inventory table: $(cat "$scratch/inv.txt")"

# 2. Transient faults are retried; a broken answer is an error, not a guess.
fault() { curl -s --noproxy '*' -X POST -d "$1" "$base/_sim/faults" >/dev/null; }
fault '{"kind":"error","path":"/metadata/instance","status":503,"count":2}'
"$agent" inventory --json >/dev/null 2>"$scratch/err" && ok || bad "no retry past two 503s: $(cat "$scratch/err")"
fault '{"kind":"throttle","path":"/metadata/instance","retry_after":1,"count":1}'
"$agent" inventory --json >/dev/null 2>"$scratch/err" && ok || bad "no retry after a 429: $(cat "$scratch/err")"
fault '{"kind":"truncate","path":"/metadata/instance","count":1}'
"$agent" inventory --json >"$scratch/out" 2>"$scratch/err"
st=$?
[ $st -eq 1 ] && [ ! -s "$scratch/out" ] && [ -s "$scratch/err" ] && ok ||
  bad "truncated IMDS answer: exit $st, $(cat "$scratch/err")"
curl -s --noproxy '*' -X DELETE "$base/_sim/faults" >/dev/null

# 4. The simulator stops cleanly; then the agent says this is not Azure.
kill -TERM "$pid"; wait "$pid"; st=$?; pid=""
[ $st -eq 0 ] && ok || bad "simulator exit $st after SIGTERM"
start=$(date +%s)
"$agent" inventory --json >"$scratch/out" 2>"$scratch/err"
st=$?
[ $st -eq 3 ] && [ $(( $(date +%s) - start )) -le 5 ] && ok || bad "off Azure: exit $st, $(cat "$scratch/err")"

finish agent-sim
