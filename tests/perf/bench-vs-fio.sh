#!/usr/bin/env bash
# tierwise-agent bench against fio on the same laid-out file, same method.
#
# For each case it runs fio and tierwise alternately (PAIRS pairs, fio
# first in odd pairs, tierwise first in even ones, so neither always gets
# the warmer disk), RUNTIME seconds each, and prints the medians side by
# side with their ratio, and the median of the ratios within each pair
# ("paired"), which the targets are judged on because the two runs of a pair
# share the disk's state while a cloud disk drifts by several per cent from
# one minute to the next:
#   IOPS and MB/s >= 0.97 x fio's;  CPU per I/O <= 1.0 x fio's;
#   p50 and p99 latency within 10 % of fio's.
#
# Method shared by both tools: libaio, O_DIRECT, uniform random offsets with
# replacement (fio: norandommap, randrepeat=0), latency measured from
# submission to completion (fio: lat_percentiles=1), no ramp, time-based.
# CPU is the whole process's user+system time (bash `time`, which includes
# fio's job processes) divided by the I/Os it completed.  fio's JSON is
# read through tierwise-agent import-fio, so both sides are the same record.
#
#   tests/perf/bench-vs-fio.sh [--pairs N] [--runtime SEC] [--dir DIR] [--size SIZE]
#                              [--cases rated-iops,qd1-randread,rated-throughput]
set -euo pipefail
cd "$(dirname "$0")/../.."

pairs=3 runtime=10 dir=${TMPDIR:-/var/tmp} size=1G
cases="rated-iops,qd1-randread,rated-throughput"
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "bench-vs-fio: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$pairs" -ge 1 ] || { echo "bench-vs-fio: --pairs must be 1 or more" >&2; exit 2; }

./deploy/setup.sh >/dev/null
build=${TW_BUILD_DIR:-build/release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
agent="$build/src/tierwise-agent"
out=$(mktemp -d "${TMPDIR:-/tmp}/tw-perf-XXXXXX")
file="$dir/tw-perf.bench"
trap 'rm -rf "$out"; rm -f "$file"' EXIT

# Lay the file out once (random data, not sparse), through tierwise.
"$agent" bench --target "$file" --size "$size" --engine null --rw read --bs 1M \
  --runtime 0 --io-size 1M --ramp 0 >/dev/null

# case -> "rw bs qd jobs"
spec() {
  case "$1" in
    rated-iops) echo "randread 8k 256 4" ;;
    qd1-randread) echo "randread 8k 1 1" ;;
    rated-throughput) echo "read 1M 64 1" ;;
    *) echo "bench-vs-fio: unknown case $1" >&2; exit 2 ;;
  esac
}

# run TOOL CASE N: leaves $out/TOOL-CASE-N.json (a tierwise record) and
# $out/TOOL-CASE-N.cpu (user+sys seconds).
run() {
  local tool=$1 c=$2 n=$3 rw bs qd jobs
  read -r rw bs qd jobs <<<"$(spec "$c")"
  local base="$out/$tool-$c-$n" TIMEFORMAT='%U %S'
  if [ "$tool" = fio ]; then
    { time fio --name="$c" --filename="$file" --size="$size" --direct=1 --ioengine=libaio \
        --rw="$rw" --bs="$bs" --iodepth="$qd" --numjobs="$jobs" --group_reporting \
        --norandommap --randrepeat=0 --lat_percentiles=1 --time_based --runtime="$runtime" \
        --output-format=json --output="$base.fio.json" >/dev/null 2>"$base.err"; } 2>"$base.time"
    "$agent" import-fio --json "$base.fio.json" >"$base.json"
  else
    { time "$agent" bench --target "$file" --size "$size" --rw "$rw" --bs "$bs" --qd "$qd" \
        --jobs "$jobs" --runtime "$runtime" --ramp 0 --json >"$base.json" 2>"$base.err"; } 2>"$base.time"
  fi
  awk '{print $1 + $2}' "$base.time" >"$base.cpu"
}

# Figures of one run: iops mbps p50_us p99_us cpu_per_100k
figures() {
  local base=$1
  jq -r --argjson cpu "$(cat "$base.cpu")" '
    (.read.ios) as $ios |
    [.read.iops, .read.mbps, .read.lat_ns.percentiles.p50 / 1000,
     .read.lat_ns.percentiles.p99 / 1000, ($cpu / $ios * 100000)] | @tsv' "$base.json"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo "bench-vs-fio: $(fio --version), tierwise $("$agent" --version | awk '{print $2}'), $(nproc) cores"
echo "file $file ($size), $pairs pairs x ${runtime}s per tool and case"
echo
printf '%-17s %-22s %12s %12s %8s %8s  %s\n' case metric fio tierwise ratio paired target
IFS=, read -ra list <<<"$cases"
misses=0
for c in "${list[@]}"; do
  spec "$c" >/dev/null
  for n in $(seq 1 "$pairs"); do
    if [ $((n % 2)) -eq 1 ]; then run fio "$c" "$n"; run tw "$c" "$n"
    else run tw "$c" "$n"; run fio "$c" "$n"; fi
  done
  for tool in fio tw; do
    for n in $(seq 1 "$pairs"); do figures "$out/$tool-$c-$n"; done >"$out/$tool-$c.tsv"
  done
  names=("IOPS" "MB/s" "p50 latency (us)" "p99 latency (us)" "CPU s per 100k I/O")
  for k in 0 1 2 3 4; do
    f=$(cut -f$((k + 1)) "$out/fio-$c.tsv" | median)
    t=$(cut -f$((k + 1)) "$out/tw-$c.tsv" | median)
    ratio=$(awk -v a="$t" -v b="$f" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')
    # The median of the ratios within each pair: the two runs of a pair are
    # back to back, so a shared disk's drift between pairs cancels out.
    paired=$(paste <(cut -f$((k + 1)) "$out/tw-$c.tsv") <(cut -f$((k + 1)) "$out/fio-$c.tsv") |
             awk '{printf "%.6f\n", ($2 > 0 ? $1 / $2 : 0)}' | median)
    paired=$(awk -v r="$paired" 'BEGIN {printf "%.3f", r}')
    case $k in
      0|1) target=">= 0.97"; ok=$(awk -v r="$paired" 'BEGIN {print (r >= 0.97)}') ;;
      2|3) target="0.90..1.10"; ok=$(awk -v r="$paired" 'BEGIN {print (r >= 0.9 && r <= 1.1)}') ;;
      4) target="<= 1.00"; ok=$(awk -v r="$paired" 'BEGIN {print (r <= 1.0)}') ;;
    esac
    verdict=met; [ "$ok" = 1 ] || { verdict=MISSED; misses=$((misses + 1)); }
    printf '%-17s %-22s %12.2f %12.2f %8s %8s  %s %s\n' "$([ $k -eq 0 ] && echo "$c")" \
      "${names[$k]}" "$f" "$t" "$ratio" "$paired" "$target" "$verdict"
  done
done
echo
echo "targets missed: $misses"
