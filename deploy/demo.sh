#!/usr/bin/env bash
# The main job on this machine: set up, build, then benchmark the local
# disk the way Azure's ratings are measured, and show the result records.
#
#   ./deploy/demo.sh
#   TW_DEMO_DIR=/mnt/data TW_DEMO_SECONDS=30 ./deploy/demo.sh
#
# It lays out a scratch file (TW_DEMO_SIZE, default 512M) in TW_DEMO_DIR
# (default /var/tmp), runs the rated-iops and rated-throughput profiles for
# TW_DEMO_SECONDS each (default 5), prints the results, imports an fio run
# of the same kind for comparison, keeps the JSON records under
# build/demo-results/, and removes the scratch file unless TW_DEMO_KEEP=1.
# No network traffic.
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/setup.sh
build=${TW_BUILD_DIR:-build/release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
agent="$build/src/tierwise-agent"
tierwise="$build/src/tierwise"

dir=${TW_DEMO_DIR:-/var/tmp}
size=${TW_DEMO_SIZE:-512M}
secs=${TW_DEMO_SECONDS:-5}
target="$dir/tierwise-demo.bench"
out=build/demo-results
mkdir -p "$out"
cleanup() {
  [ "${TW_DEMO_KEEP:-0}" = 1 ] || rm -f "$target"
}
trap cleanup EXIT

echo "== tierwise demo: benchmarking the disk under $dir"
echo "   scratch file $target ($size), ${secs}s per profile"
echo
"$agent" bench --list-profiles
for profile in rated-iops rated-throughput; do
  echo
  echo "== $profile"
  "$agent" bench --target "$target" --size "$size" --profile "$profile" \
           --runtime "$secs" --ramp 1 --json >"$out/$profile.json"
  "$tierwise" result "$out/$profile.json"
done

echo
echo "== the same record from fio's output (tierwise-agent import-fio)"
if command -v fio >/dev/null; then
  fio --name=rated-iops --filename="$target" --size="$size" --direct=1 --rw=randread \
      --bs=8k --ioengine=libaio --iodepth=256 --numjobs=4 --group_reporting \
      --norandommap --randrepeat=0 --lat_percentiles=1 --runtime="$secs" --ramp_time=1 \
      --time_based --output-format=json --output="$out/fio-rated-iops.json" >/dev/null
  "$agent" import-fio "$out/fio-rated-iops.json" --json >"$out/fio-rated-iops.record.json"
  "$tierwise" result "$out/fio-rated-iops.record.json"
fi

echo
echo "The result records (JSON, tierwise.bench-result/1) are in $out/:"
ls -1 "$out" | sed 's/^/  /'
echo "Run '$agent bench --help' for custom methods and block devices."
