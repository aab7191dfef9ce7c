#!/usr/bin/env bash
# The main job on this machine, against a simulated Azure on 127.0.0.1:
#
#  1. set up and build;
#  2. start tierwise-azsim with deploy/demo-scenario.json (a Standard_D8s_v3
#     VM in westeurope with a P10, a P40 and an E10 data disk);
#  3. read the VM's inventory from the simulated Instance Metadata Service,
#     with this machine's own disk standing in for data disk LUN 0;
#  4. benchmark a scratch file on that disk with the rated-iops and
#     rated-throughput profiles, and run fio the same way for comparison;
#  5. judge the results against the disk's tier (tierwise compliance), then
#     judge a constructed field example (an LVM stripe over three P40s).
#
#   ./deploy/demo.sh
#   TW_DEMO_DIR=/mnt/data TW_DEMO_SECONDS=30 ./deploy/demo.sh
#
# Settings: TW_DEMO_DIR (folder on the disk to measure, default /var/tmp),
# TW_DEMO_SIZE (scratch file, default 512M), TW_DEMO_SECONDS (measured
# seconds per profile, default 10: shorter runs are judged inconclusive),
# TW_DEMO_KEEP=1 keeps the scratch file.  The records are kept under
# build/demo-results/.  Every Azure endpoint points at the simulator and the
# HTTP client refuses any address outside 127.0.0.0/8.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/setup.sh
build=${TW_BUILD_DIR:-build/release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
agent="$build/src/tierwise-agent"
tierwise="$build/src/tierwise"
azsim="$build/src/tierwise-azsim"

dir=${TW_DEMO_DIR:-/var/tmp}
size=${TW_DEMO_SIZE:-512M}
secs=${TW_DEMO_SECONDS:-10}
target="$dir/tierwise-demo.bench"
out=build/demo-results
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/tierwise-demo-XXXXXX")
sim_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill -TERM "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  [ "${TW_DEMO_KEEP:-0}" = 1 ] || rm -f "$target"
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }

step "starting the Azure simulator (tierwise-azsim) on 127.0.0.1"
"$azsim" --scenario deploy/demo-scenario.json --port-file "$work/port" >/dev/null 2>"$work/azsim.err" &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { cat "$work/azsim.err" >&2; exit 1; }
port=$(cat "$work/port")
export TIERWISE_IMDS_URL="http://127.0.0.1:$port" TIERWISE_ARM_URL="http://127.0.0.1:$port"
export TIERWISE_LOGIN_URL="http://127.0.0.1:$port" TIERWISE_PRICES_URL="http://127.0.0.1:$port"
export TIERWISE_LOOPBACK_ONLY=1
echo "   IMDS, ARM, login and Retail Prices at http://127.0.0.1:$port"

# The disk under TW_DEMO_DIR plays data disk LUN 0: a /dev/disk/azure link
# to it in a scratch /dev tree, as udev makes on an Azure VM.
mm=$(stat -c '%Hd:%Ld' "$dir")
sys=$(readlink -f "/sys/dev/block/$mm" 2>/dev/null || true)
[ -n "$sys" ] && [ -e "$sys/partition" ] && sys=$(dirname "$sys")
disk=$(basename "${sys:-none}")
if [ -n "$sys" ] && [ -d "$sys" ]; then
  mkdir -p "$work/dev/disk/azure/scsi1"
  ln -s "../../../$disk" "$work/dev/disk/azure/scsi1/lun0"
  export TW_DEV_ROOT="$work/dev"
fi

step "inventory: the VM and its disks, from the (simulated) Instance Metadata Service"
echo "   ($dir is on /dev/$disk, which stands in for data disk LUN 0)"
"$agent" inventory
"$agent" inventory --json >"$out/inventory.json"

step "benchmark profiles"
"$agent" bench --list-profiles
for profile in rated-iops rated-throughput; do
  step "$profile on $target ($size), ${secs}s after a 1s ramp"
  "$agent" bench --target "$target" --size "$size" --profile "$profile" \
           --runtime "$secs" --ramp 1 --json >"$out/$profile.json"
  "$tierwise" result "$out/$profile.json"
done

if command -v fio >/dev/null; then
  step "fio with the rated-iops method on the same file, imported into the same record"
  fio --name=rated-iops --filename="$target" --size="$size" --direct=1 --rw=randread \
      --bs=8k --ioengine=libaio --iodepth=256 --numjobs=4 --group_reporting \
      --norandommap --randrepeat=0 --lat_percentiles=1 --runtime="$secs" --ramp_time=1 \
      --time_based --output-format=json --output="$out/fio-rated-iops.json" >/dev/null
  "$agent" import-fio "$out/fio-rated-iops.json" --json >"$out/fio-rated-iops.record.json"
  "$tierwise" result "$out/fio-rated-iops.record.json"
fi

step "compliance: does data disk LUN 0 (Premium_LRS 128 GiB = P10: 500 IOPS, 100 MB/s) deliver?"
echo "   (this machine's disk is not a P10, so expect the verdict to say the figures came"
echo "    from somewhere else than the disk the inventory names)"
"$tierwise" compliance --inventory "$out/inventory.json" \
  --result "$out/rated-iops.json" --result "$out/rated-throughput.json"

step "compliance on a constructed field example: an SAP database VM (Standard_E16ds_v5)"
echo "   with an LVM stripe over three P40s (3 x 7,500 IOPS, 3 x 250 MB/s), see"
echo "   tests/fixtures/compliance/README.md"
fx=tests/fixtures/compliance
"$tierwise" compliance --inventory "$fx/inventory.json" \
  --result "$fx/stripe-randread-under.json" --result "$fx/stripe-psync-qd1.json" \
  --result "$fx/stripe-seq-1m-vm-capped.json" --result "$fx/log-perf-tier-delivers.json" \
  --result "$fx/apps-burst.json"

step "done"
echo "The records (inventory, results, fio's output) are in $out/."
echo "'$agent --help' and '$tierwise --help' list the commands."
